//===- Json.cpp -----------------------------------------------------------===//
#include "astra/Support/Json.h"

#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <algorithm>

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

LineTable::LineTable(StringRef Text) : Size(Text.size()) {
  Starts.push_back(0);
  for (size_t I = 0; I < Text.size(); ++I)
    if (Text[I] == '\n')
      Starts.push_back(I + 1);
}

std::pair<unsigned, unsigned> LineTable::lineColumn(size_t Offset) const {
  Offset = std::min(Offset, Size);
  auto It = std::upper_bound(Starts.begin(), Starts.end(), Offset);
  size_t Line = size_t(It - Starts.begin());
  return {unsigned(Line), unsigned(Offset - Starts[Line - 1] + 1)};
}

namespace {
/// Counts nesting; stops the reader when it goes past MaxJsonDepth.
struct DepthLimiter
    : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, DepthLimiter> {
  unsigned Depth = 0;
  bool TooDeep = false;
  bool Default() { return true; }
  bool StartObject() { return enter(); }
  bool StartArray() { return enter(); }
  bool EndObject(rapidjson::SizeType) { return leave(); }
  bool EndArray(rapidjson::SizeType) { return leave(); }
  bool enter() {
    if (++Depth > MaxJsonDepth) {
      TooDeep = true;
      return false;
    }
    return true;
  }
  bool leave() {
    --Depth;
    return true;
  }
};
} // namespace

/// The offset where \p Text goes deeper than MaxJsonDepth, if it does.
static std::optional<size_t> tooDeepAt(StringRef Text, bool Comments) {
  rapidjson::MemoryStream MS(Text.data(), Text.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> S(
      MS);
  DepthLimiter H;
  rapidjson::Reader R;
  constexpr unsigned Iterative = rapidjson::kParseIterativeFlag;
  rapidjson::ParseResult Res =
      Comments ? R.Parse<Iterative | rapidjson::kParseCommentsFlag |
                         rapidjson::kParseTrailingCommasFlag |
                         rapidjson::kParseNanAndInfFlag>(S, H)
               : R.Parse<Iterative>(S, H);
  if (!Res && H.TooDeep)
    return Res.Offset();
  return std::nullopt;
}

Error checkJsonNesting(StringRef Text, bool Comments) {
  if (std::optional<size_t> At = tooDeepAt(Text, Comments))
    return createStringError(inconvertibleErrorCode(),
                             "arrays and objects nested deeper than %u levels "
                             "at offset %zu",
                             MaxJsonDepth, *At);
  return Error::success();
}

Error parseJsonWithComments(StringRef Text, StringRef Path,
                            rapidjson::Document &Doc) {
  if (std::optional<size_t> At = tooDeepAt(Text, /*Comments=*/true)) {
    auto [Line, Col] = lineColumn(Text, *At);
    return createStringError(inconvertibleErrorCode(),
                             "%s:%u:%u: invalid JSON: arrays and objects "
                             "nested deeper than %u levels",
                             Path.str().c_str(), Line, Col, MaxJsonDepth);
  }
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
