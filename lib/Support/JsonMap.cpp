//===- JsonMap.cpp --------------------------------------------------------===//
#include "astra/Support/JsonMap.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace astra {

void JsonIO::member(StringRef Key, bool Required, function_ref<void()> Fn) {
  if (writing()) {
    W->key(Key);
    Fn();
    return;
  }
  if (!ok())
    return;
  if (!Cur->IsObject())
    return fail("expected an object");
  auto It = Cur->FindMember(rapidjson::StringRef(Key.data(), Key.size()));
  if (It == Cur->MemberEnd() || It->value.IsNull()) {
    if (Required)
      fail(Key, "missing");
    return;
  }
  at(Key, &It->value, Fn);
}

void JsonIO::object(function_ref<void()> Members) {
  if (writing()) {
    W->objectBegin();
    Members();
    W->objectEnd();
    return;
  }
  if (expect(&rapidjson::Value::IsObject, "expected an object"))
    Members();
}

void JsonIO::at(StringRef Key, const rapidjson::Value *V,
                function_ref<void()> Fn) {
  const rapidjson::Value *Saved = Cur;
  Cur = V;
  Path.push_back({Key.str(), 0});
  Fn();
  Path.pop_back();
  Cur = Saved;
}

void JsonIO::at(size_t Index, const rapidjson::Value *V,
                function_ref<void()> Fn) {
  const rapidjson::Value *Saved = Cur;
  Cur = V;
  Path.push_back({"", Index});
  Fn();
  Path.pop_back();
  Cur = Saved;
}

std::string JsonIO::path() const {
  std::string S;
  for (const Segment &Seg : Path) {
    if (Seg.Key.empty()) {
      S += "[" + std::to_string(Seg.Index) + "]";
      continue;
    }
    if (!S.empty())
      S += ".";
    S += Seg.Key;
  }
  return S;
}

void JsonIO::fail(const Twine &What) {
  if (Err)
    return;
  std::string P = path();
  Err = File + ": " + (P.empty() ? "<top>" : P) + ": " + What.str();
}

void JsonIO::fail(StringRef Key, const Twine &What) {
  Path.push_back({Key.str(), 0});
  fail(What);
  Path.pop_back();
}

bool JsonIO::expect(bool (rapidjson::Value::*Is)() const, StringRef What) {
  if (!ok())
    return false;
  if ((Cur->*Is)())
    return true;
  fail(What);
  return false;
}

void JsonIO::failEnum(StringRef Got, ArrayRef<StringRef> Names) {
  fail("expected one of " + join(Names, ", ") + ", got '" + Got + "'");
}

Error JsonIO::takeError() {
  if (!Err)
    return Error::success();
  std::string E = std::move(*Err);
  Err.reset();
  return createStringError(inconvertibleErrorCode(), E);
}

void mapJson(JsonIO &IO, std::string &V) {
  if (IO.writing())
    return IO.writer().value(V);
  if (IO.expect(&rapidjson::Value::IsString, "expected a string"))
    V.assign(IO.value().GetString(), IO.value().GetStringLength());
}

void mapJson(JsonIO &IO, bool &V) {
  if (IO.writing())
    return IO.writer().value(V);
  if (IO.expect(&rapidjson::Value::IsBool, "expected true or false"))
    V = IO.value().GetBool();
}

void mapJson(JsonIO &IO, double &V) {
  if (IO.writing())
    return IO.writer().value(V);
  if (IO.expect(&rapidjson::Value::IsNumber, "expected a number"))
    V = IO.value().GetDouble();
}

template <typename T> static void mapInteger(JsonIO &IO, T &V) {
  if (IO.writing())
    return IO.writer().value(V);
  const rapidjson::Value &J = IO.value();
  using Limits = std::numeric_limits<T>;
  if (J.IsUint64()) {
    if (J.GetUint64() > uint64_t(Limits::max()))
      return IO.fail("must be at most " + std::to_string(Limits::max()));
    V = T(J.GetUint64());
    return;
  }
  if (!IO.expect(&rapidjson::Value::IsInt64, "expected an integer"))
    return;
  // Negative: a uint64 was handled above.
  if (J.GetInt64() < int64_t(Limits::min()))
    return IO.fail("must be at least " + std::to_string(Limits::min()));
  V = T(J.GetInt64());
}

void mapJson(JsonIO &IO, int &V) { mapInteger(IO, V); }
void mapJson(JsonIO &IO, unsigned &V) { mapInteger(IO, V); }
void mapJson(JsonIO &IO, long &V) { mapInteger(IO, V); }
void mapJson(JsonIO &IO, unsigned long &V) { mapInteger(IO, V); }
void mapJson(JsonIO &IO, long long &V) { mapInteger(IO, V); }
void mapJson(JsonIO &IO, unsigned long long &V) { mapInteger(IO, V); }

} // namespace astra
