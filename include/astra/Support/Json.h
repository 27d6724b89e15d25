//===- Json.h - Small JSON writer over RapidJSON ---------------*- C++ -*-===//
//
// Machine-readable output (list, reports, jobs) goes through this writer so
// that every JSON file we emit is indented the same way and valid by
// construction.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SUPPORT_JSON_H
#define ASTRA_SUPPORT_JSON_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace astra {

/// Reads fields of a parsed document with errors that name the file and the
/// field path ("job.json: runs[0].timing.median_us: expected a number").
/// Absent and null members are the same; a getter given Required = false
/// leaves its output as it was for them.
class JsonFieldReader {
public:
  explicit JsonFieldReader(llvm::StringRef Path) : Path(Path.str()) {}

  llvm::Error fail(llvm::StringRef Field, const llvm::Twine &What) const;

  /// The member \p Key of object \p O, or null when absent (and not
  /// \p Required).
  llvm::Expected<const rapidjson::Value *> get(const rapidjson::Value &O,
                                               llvm::StringRef Field,
                                               llvm::StringRef Key,
                                               bool Required = true) const;
  llvm::Error str(const rapidjson::Value &O, llvm::StringRef Field,
                  llvm::StringRef Key, std::string &Out,
                  bool Required = true) const;
  llvm::Error boolean(const rapidjson::Value &O, llvm::StringRef Field,
                      llvm::StringRef Key, bool &Out,
                      bool Required = false) const;
  llvm::Error number(const rapidjson::Value &O, llvm::StringRef Field,
                     llvm::StringRef Key, double &Out,
                     bool Required = false) const;
  /// A number into an optional: null or absent leaves it empty.
  llvm::Error optionalNumber(const rapidjson::Value &O, llvm::StringRef Field,
                             llvm::StringRef Key,
                             std::optional<double> &Out) const;
  template <typename T>
  llvm::Error integer(const rapidjson::Value &O, llvm::StringRef Field,
                      llvm::StringRef Key, T &Out, int64_t Min,
                      bool Required = false) const {
    auto V = get(O, Field, Key, Required);
    if (!V)
      return V.takeError();
    if (!*V)
      return llvm::Error::success();
    if ((*V)->IsUint64()) {
      uint64_t U = (*V)->GetUint64();
      if (Min >= 0 && U < uint64_t(Min))
        return atLeast(Field, Key, Min);
      Out = T(U);
      return llvm::Error::success();
    }
    if (!(*V)->IsInt64())
      return fail(join(Field, Key), "expected an integer");
    int64_t I = (*V)->GetInt64();
    if (I < Min)
      return atLeast(Field, Key, Min);
    Out = T(I);
    return llvm::Error::success();
  }
  llvm::Error seeds(const rapidjson::Value &O, llvm::StringRef Field,
                    llvm::StringRef Key, std::vector<uint64_t> &Out) const;
  llvm::Error strings(const rapidjson::Value &O, llvm::StringRef Field,
                      llvm::StringRef Key,
                      std::vector<std::string> &Out) const;

  /// "field.key" ("key" at the top).
  static std::string join(llvm::StringRef Field, llvm::StringRef Key);

  std::string Path;

private:
  /// get(), and a "<Expected>" error unless the member passes \p Is.
  llvm::Expected<const rapidjson::Value *>
  typed(const rapidjson::Value &O, llvm::StringRef Field, llvm::StringRef Key,
        bool Required, bool (rapidjson::Value::*Is)() const,
        llvm::StringRef Expected) const;
  llvm::Error atLeast(llvm::StringRef Field, llvm::StringRef Key,
                      int64_t Min) const;
};

class JsonWriter {
public:
  JsonWriter() : W(Buf) { W.SetIndent(' ', 2); }

  void objectBegin() { W.StartObject(); }
  void objectEnd() { W.EndObject(); }
  void arrayBegin() { W.StartArray(); }
  void arrayEnd() { W.EndArray(); }
  void key(llvm::StringRef K) { W.Key(K.data(), K.size()); }
  void value(llvm::StringRef S) { W.String(S.data(), S.size()); }
  void value(const char *S) { value(llvm::StringRef(S)); }
  void value(const std::string &S) { value(llvm::StringRef(S)); }
  void value(bool B) { W.Bool(B); }
  void value(int V) { W.Int64(V); }
  void value(unsigned V) { W.Uint64(V); }
  void value(long V) { W.Int64(V); }
  void value(unsigned long V) { W.Uint64(V); }
  void value(long long V) { W.Int64(V); }
  void value(unsigned long long V) { W.Uint64(V); }
  /// Non-finite doubles have no JSON spelling; they are written as null.
  void value(double V);
  void null() { W.Null(); }
  template <typename T> void value(const std::optional<T> &V) {
    if (V)
      value(*V);
    else
      null();
  }
  template <typename T> void field(llvm::StringRef K, const T &V) {
    key(K);
    value(V);
  }
  /// Inserts an already serialized JSON value.
  void raw(llvm::StringRef Json) {
    W.RawValue(Json.data(), Json.size(), rapidjson::kObjectType);
  }

  std::string str() const { return std::string(Buf.GetString(), Buf.GetSize()) + "\n"; }

private:
  rapidjson::StringBuffer Buf;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> W;
};

/// The deepest nesting of arrays and objects in any JSON clang-astra reads.
/// RapidJSON's DOM parser and its destructor recurse once per level, so
/// deeper input (a hostile spec, a broken server) could exhaust the stack;
/// no file or reply of ours comes near it.
constexpr unsigned MaxJsonDepth = 64;

/// Fails, with the offset, when \p Text nests arrays and objects deeper
/// than MaxJsonDepth; says nothing about other syntax (the DOM parse that
/// follows reports it). Linear time, constant stack. \p Comments accepts
/// what parseJsonWithComments accepts.
llvm::Error checkJsonNesting(llvm::StringRef Text, bool Comments = false);

/// Parses JSON that may hold comments and trailing commas (spec files are
/// written by hand), nested no deeper than MaxJsonDepth. The error names
/// \p Path, line and column.
llvm::Error parseJsonWithComments(llvm::StringRef Text, llvm::StringRef Path,
                                  rapidjson::Document &Doc);

/// 1-based line and column of byte \p Offset in \p Text.
std::pair<unsigned, unsigned> lineColumn(llvm::StringRef Text, size_t Offset);

/// lineColumn for many offsets into one text: O(log lines) per lookup after
/// one pass over the text, where lineColumn is O(offset) per call.
class LineTable {
public:
  explicit LineTable(llvm::StringRef Text);
  std::pair<unsigned, unsigned> lineColumn(size_t Offset) const;

private:
  std::vector<size_t> Starts; ///< Offset of each line's first byte.
  size_t Size;
};

} // namespace astra

#endif
