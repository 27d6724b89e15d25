//===- Json.cpp -----------------------------------------------------------===//
#include "astra/Support/Json.h"

#include <rapidjson/error/en.h>

#include <cmath>

using namespace llvm;

namespace astra {

void JsonWriter::value(double V) {
  if (std::isfinite(V))
    W.Double(V);
  else
    W.Null();
}

std::pair<unsigned, unsigned> lineColumn(StringRef Text, size_t Offset) {
  unsigned Line = 1, Col = 1;
  for (size_t I = 0; I < Offset && I < Text.size(); ++I) {
    if (Text[I] == '\n') {
      ++Line;
      Col = 1;
    } else {
      ++Col;
    }
  }
  return {Line, Col};
}

Error parseJsonWithComments(StringRef Text, StringRef Path,
                            rapidjson::Document &Doc) {
  std::string Copy = Text.str();
  Doc.Parse<rapidjson::kParseCommentsFlag | rapidjson::kParseTrailingCommasFlag |
            rapidjson::kParseNanAndInfFlag>(Copy.c_str());
  if (!Doc.HasParseError())
    return Error::success();
  auto [Line, Col] = lineColumn(Text, Doc.GetErrorOffset());
  return createStringError(inconvertibleErrorCode(), "%s:%u:%u: invalid JSON: %s",
                           Path.str().c_str(), Line, Col,
                           rapidjson::GetParseError_En(Doc.GetParseError()));
}

Error JsonFieldReader::fail(StringRef Field, const Twine &What) const {
  return createStringError(inconvertibleErrorCode(),
                           Path + ": " + Field + ": " + What);
}

Error JsonFieldReader::atLeast(StringRef Field, StringRef Key,
                               int64_t Min) const {
  return fail(join(Field, Key), "must be at least " + Twine(Min));
}

std::string JsonFieldReader::join(StringRef Field, StringRef Key) {
  return Field.empty() ? Key.str() : (Field + "." + Key).str();
}

Expected<const rapidjson::Value *>
JsonFieldReader::get(const rapidjson::Value &O, StringRef Field, StringRef Key,
                     bool Required) const {
  std::string F = join(Field, Key);
  if (!O.IsObject())
    return fail(Field.empty() ? "<top>" : Field, "expected an object");
  auto It = O.FindMember(rapidjson::StringRef(Key.data(), Key.size()));
  if (It == O.MemberEnd() || It->value.IsNull()) {
    if (Required)
      return fail(F, "missing");
    return nullptr;
  }
  return &It->value;
}

Expected<const rapidjson::Value *>
JsonFieldReader::typed(const rapidjson::Value &O, StringRef Field,
                       StringRef Key, bool Required,
                       bool (rapidjson::Value::*Is)() const,
                       StringRef Expected) const {
  auto V = get(O, Field, Key, Required);
  if (!V || !*V)
    return V;
  if (!((*V)->*Is)())
    return fail(join(Field, Key), Expected);
  return *V;
}

Error JsonFieldReader::str(const rapidjson::Value &O, StringRef Field,
                           StringRef Key, std::string &Out,
                           bool Required) const {
  auto V = typed(O, Field, Key, Required, &rapidjson::Value::IsString, "expected a string");
  if (!V)
    return V.takeError();
  if (!*V)
    return Error::success();
  Out.assign((*V)->GetString(), (*V)->GetStringLength());
  return Error::success();
}

Error JsonFieldReader::boolean(const rapidjson::Value &O, StringRef Field,
                               StringRef Key, bool &Out, bool Required) const {
  auto V = typed(O, Field, Key, Required, &rapidjson::Value::IsBool, "expected true or false");
  if (!V)
    return V.takeError();
  if (!*V)
    return Error::success();
  Out = (*V)->GetBool();
  return Error::success();
}

Error JsonFieldReader::number(const rapidjson::Value &O, StringRef Field,
                              StringRef Key, double &Out,
                              bool Required) const {
  auto V = typed(O, Field, Key, Required, &rapidjson::Value::IsNumber, "expected a number");
  if (!V)
    return V.takeError();
  if (!*V)
    return Error::success();
  Out = (*V)->GetDouble();
  return Error::success();
}

Error JsonFieldReader::optionalNumber(const rapidjson::Value &O,
                                      StringRef Field, StringRef Key,
                                      std::optional<double> &Out) const {
  double D = 0;
  auto V = get(O, Field, Key, false);
  if (!V)
    return V.takeError();
  if (!*V)
    return Error::success();
  if (Error E = number(O, Field, Key, D))
    return E;
  Out = D;
  return Error::success();
}

Error JsonFieldReader::seeds(const rapidjson::Value &O, StringRef Field,
                             StringRef Key, std::vector<uint64_t> &Out) const {
  auto V = typed(O, Field, Key, false, &rapidjson::Value::IsArray, "expected an array of seeds");
  if (!V)
    return V.takeError();
  if (!*V)
    return Error::success();
  for (const rapidjson::Value &S : (*V)->GetArray()) {
    if (!S.IsUint64())
      return fail(join(Field, Key),
                  "expected unsigned 64-bit integers as seeds");
    Out.push_back(S.GetUint64());
  }
  return Error::success();
}

Error JsonFieldReader::strings(const rapidjson::Value &O, StringRef Field,
                               StringRef Key,
                               std::vector<std::string> &Out) const {
  auto V = typed(O, Field, Key, false, &rapidjson::Value::IsArray, "expected an array of strings");
  if (!V)
    return V.takeError();
  if (!*V)
    return Error::success();
  for (const rapidjson::Value &S : (*V)->GetArray()) {
    if (!S.IsString())
      return fail(join(Field, Key), "expected an array of strings");
    Out.emplace_back(S.GetString(), S.GetStringLength());
  }
  return Error::success();
}

} // namespace astra
