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

} // namespace astra
