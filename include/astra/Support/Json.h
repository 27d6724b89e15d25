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
#include "llvm/Support/Error.h"

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <cstdint>
#include <optional>
#include <string>

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

/// Parses JSON that may hold comments and trailing commas (spec files are
/// written by hand). The error names \p Path, line and column.
llvm::Error parseJsonWithComments(llvm::StringRef Text, llvm::StringRef Path,
                                  rapidjson::Document &Doc);

/// 1-based line and column of byte \p Offset in \p Text.
std::pair<unsigned, unsigned> lineColumn(llvm::StringRef Text, size_t Offset);

} // namespace astra

#endif
