//===- Json.h - Small JSON writer over RapidJSON ---------------*- C++ -*-===//
//
// Machine-readable output (list, reports, jobs) goes through this writer so
// that every JSON file we emit is indented the same way and valid by
// construction. Formats that are also read back map their structs both ways
// with JsonIO (JsonMap.h), which writes through this writer.
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
