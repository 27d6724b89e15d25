//===- JsonMap.h - One mapping per JSON format, both ways ------*- C++ -*-===//
//
// A format's fields are listed once, in a mapJson(JsonIO &, T &) function,
// and that one list both writes the struct (through JsonWriter, so the
// bytes are what JsonWriter makes) and reads it back from a parsed document
// with errors that name the file and the field path ("job.json:
// runs[0].timing.median_us: expected a number"). The model is LLVM's
// yaml::IO (one mapping, two directions) with llvm::json::Path's messages.
//
// It sits on RapidJSON rather than llvm::json because the formats' bytes
// are RapidJSON's (its shortest round-trip doubles: llvm::json prints 17
// significant digits) and the readers parse with RapidJSON (comments and
// trailing commas in hand-written files, the nesting limit).
//
// Reading: absent and null members are the same; optional() leaves the
// value as it was for them, required() fails. The first problem stops the
// reading (the rest of the mapping does nothing) and is what takeError()
// returns. Unknown members are ignored. A mapping must not change the
// struct when writing (writeJson takes a const struct).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SUPPORT_JSONMAP_H
#define ASTRA_SUPPORT_JSONMAP_H

#include "astra/Support/Json.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace astra {

/// A check for JsonIO::required/optional on an integer: "must be at least
/// \p Min" (also for a negative number read into an unsigned).
struct JsonAtLeast {
  int64_t Min;
  std::string message() const {
    return "must be at least " + std::to_string(Min);
  }
  template <typename T> std::string operator()(const T &V) const {
    bool Below = std::is_unsigned_v<T> ? Min > 0 && uint64_t(V) < uint64_t(Min)
                                       : int64_t(V) < Min;
    return Below ? message() : "";
  }
};
inline JsonAtLeast atLeast(int64_t Min) { return {Min}; }

class JsonIO {
public:
  /// Writes through \p W.
  explicit JsonIO(JsonWriter &W) : W(&W) {}
  /// Reads \p Root; errors name \p File.
  JsonIO(const rapidjson::Value &Root, llvm::StringRef File)
      : Cur(&Root), File(File.str()) {}

  bool writing() const { return W != nullptr; }
  bool reading() const { return W == nullptr; }
  /// Reading: no problem found so far.
  bool ok() const { return !Err; }

  /// Member \p Key; reading fails when it is absent or null.
  template <typename T> void required(llvm::StringRef Key, T &V) {
    member(Key, /*Required=*/true, [&] { mapJson(*this, V); });
  }
  /// Member \p Key; reading leaves \p V as it was when it is absent or null.
  template <typename T> void optional(llvm::StringRef Key, T &V) {
    member(Key, /*Required=*/false, [&] { mapJson(*this, V); });
  }
  /// As required() and optional(), and what \p Check says is wrong with the
  /// value read (an empty string: nothing) is the member's error.
  template <typename T, typename CheckT>
  void required(llvm::StringRef Key, T &V, CheckT Check) {
    member(Key, /*Required=*/true, [&] { mapChecked(V, Check); });
  }
  template <typename T, typename CheckT>
  void optional(llvm::StringRef Key, T &V, CheckT Check) {
    member(Key, /*Required=*/false, [&] { mapChecked(V, Check); });
  }
  /// As optional(), but written only when \p V is not empty (a string, a
  /// container or an optional).
  template <typename T> void nonEmpty(llvm::StringRef Key, T &V) {
    if (writing() && isEmpty(V))
      return;
    optional(Key, V);
  }
  /// Written, never read (a version readers do not check, a summary they
  /// compute again).
  template <typename T> void writeOnly(llvm::StringRef Key, const T &V) {
    if (writing())
      W->field(Key, V);
  }
  void writeOnlyWith(llvm::StringRef Key,
                     llvm::function_ref<void(JsonWriter &)> Write) {
    if (writing()) {
      W->key(Key);
      Write(*W);
    }
  }
  /// Member \p Key mapped by \p Fn (which writes the value, or reads
  /// value()), for what no mapJson overload says.
  void member(llvm::StringRef Key, bool Required,
              llvm::function_ref<void()> Fn);

  /// An object whose members \p Members maps.
  void object(llvm::function_ref<void()> Members);
  /// An object of any keys, each value mapped by mapJson.
  template <typename T, typename C>
  void map(std::map<std::string, T, C> &M) {
    if (writing()) {
      W->objectBegin();
      for (auto &[K, V] : M) {
        W->key(K);
        mapJson(*this, V);
      }
      W->objectEnd();
      return;
    }
    if (!expect(&rapidjson::Value::IsObject, "expected an object"))
      return;
    M.clear();
    for (const auto &E : Cur->GetObject()) {
      std::string K(E.name.GetString(), E.name.GetStringLength());
      at(K, &E.value, [&] { mapJson(*this, M[K]); });
      if (!ok())
        return;
    }
  }
  /// An array, each element mapped by mapJson.
  template <typename T> void array(std::vector<T> &V) {
    if (writing()) {
      W->arrayBegin();
      for (T &X : V)
        mapJson(*this, X);
      W->arrayEnd();
      return;
    }
    if (!expect(&rapidjson::Value::IsArray, "expected an array"))
      return;
    V.clear();
    for (rapidjson::SizeType I = 0; I < Cur->Size(); ++I) {
      T X{};
      at(I, &(*Cur)[I], [&] { mapJson(*this, X); });
      if (!ok())
        return;
      V.push_back(std::move(X));
    }
  }
  /// A string naming one of \p Names' values; reading reports the names.
  template <typename E>
  void enumeration(E &V,
                   llvm::ArrayRef<std::pair<llvm::StringRef, E>> Names) {
    if (writing()) {
      for (auto &[N, X] : Names)
        if (X == V)
          return W->value(N);
      return W->null();
    }
    if (!expect(&rapidjson::Value::IsString, "expected a string"))
      return;
    llvm::StringRef S(Cur->GetString(), Cur->GetStringLength());
    for (auto &[N, X] : Names)
      if (N == S) {
        V = X;
        return;
      }
    std::vector<llvm::StringRef> All;
    for (auto &[N, X] : Names)
      All.push_back(N);
    failEnum(S, All);
  }

  /// Writing: the writer, for values no mapping describes.
  JsonWriter &writer() { return *W; }
  /// Reading: the value at the current path.
  const rapidjson::Value &value() const { return *Cur; }
  /// Reading: records \p What as the problem at the current path (or at its
  /// member \p Key), unless one was found before.
  void fail(const llvm::Twine &What);
  void fail(llvm::StringRef Key, const llvm::Twine &What);
  /// Reading: fails with \p What unless the current value passes \p Is.
  bool expect(bool (rapidjson::Value::*Is)() const, llvm::StringRef What);

  /// The first problem found, or success.
  llvm::Error takeError();

  /// The current path as messages spell it: "runs[0].timing" ("" at the
  /// top).
  std::string path() const;

private:
  struct Segment {
    std::string Key; ///< Empty for an array element.
    size_t Index = 0;
  };
  /// Runs \p Fn with the current value and path moved to \p V at \p Key.
  void at(llvm::StringRef Key, const rapidjson::Value *V,
          llvm::function_ref<void()> Fn);
  void at(size_t Index, const rapidjson::Value *V,
          llvm::function_ref<void()> Fn);
  void failEnum(llvm::StringRef Got, llvm::ArrayRef<llvm::StringRef> Names);

  template <typename T, typename CheckT> void mapChecked(T &V, CheckT &Check) {
    // A bound is checked on the number as written, before the type's own
    // range ("runs": -1 must be at least 1, not 0).
    if constexpr (std::is_same_v<CheckT, JsonAtLeast>)
      if (reading() && Cur->IsInt64() && Cur->GetInt64() < Check.Min)
        return fail(Check.message());
    mapJson(*this, V);
    if (reading() && ok())
      if (std::string Why = Check(std::as_const(V)); !Why.empty())
        fail(Why);
  }
  template <typename T> static bool isEmpty(const T &V) {
    if constexpr (std::is_same_v<T, std::string> ||
                  std::is_same_v<T, std::vector<typename T::value_type>>)
      return V.empty();
    else
      return !V.has_value();
  }

  JsonWriter *W = nullptr;
  const rapidjson::Value *Cur = nullptr;
  std::string File;
  std::vector<Segment> Path;
  std::optional<std::string> Err;
};

// The values every format uses. A format maps its own structs with
// overloads of mapJson in namespace astra, found by argument-dependent
// lookup through JsonIO.
void mapJson(JsonIO &IO, std::string &V);
void mapJson(JsonIO &IO, bool &V);
void mapJson(JsonIO &IO, double &V);
/// Integers: reading fails for other numbers and for values \p T cannot
/// hold ("must be at least 0" for a negative unsigned).
void mapJson(JsonIO &IO, int &V);
void mapJson(JsonIO &IO, unsigned &V);
void mapJson(JsonIO &IO, long &V);
void mapJson(JsonIO &IO, unsigned long &V);
void mapJson(JsonIO &IO, long long &V);
void mapJson(JsonIO &IO, unsigned long long &V);
/// Null when empty.
template <typename T> void mapJson(JsonIO &IO, std::optional<T> &V) {
  if (IO.writing()) {
    if (V)
      mapJson(IO, *V);
    else
      IO.writer().null();
    return;
  }
  if (IO.value().IsNull()) {
    V.reset();
    return;
  }
  T X{};
  mapJson(IO, X);
  if (IO.ok())
    V = std::move(X);
}
template <typename T> void mapJson(JsonIO &IO, std::vector<T> &V) {
  IO.array(V);
}
template <typename T, typename C>
void mapJson(JsonIO &IO, std::map<std::string, T, C> &M) {
  IO.map(M);
}

/// \p V as JSON text.
template <typename T> std::string writeJson(const T &V) {
  JsonWriter W;
  JsonIO IO(W);
  // Writing leaves the struct as it is; the mapping takes it non-const
  // only because the same function reads.
  mapJson(IO, const_cast<T &>(V));
  return W.str();
}

/// Reads \p Root into \p V; errors name \p File and the field.
template <typename T>
llvm::Error readJson(const rapidjson::Value &Root, llvm::StringRef File,
                     T &V) {
  JsonIO IO(Root, File);
  mapJson(IO, V);
  return IO.takeError();
}

} // namespace astra

#endif
