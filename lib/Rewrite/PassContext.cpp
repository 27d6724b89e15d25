//===- PassContext.cpp ----------------------------------------------------===//
#include "astra/Rewrite/Pass.h"

#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

using namespace clang;
using namespace llvm;

namespace astra {

Pass::~Pass() = default;

int64_t PassOptions::intParam(StringRef Pass, StringRef Key,
                              int64_t Default) const {
  auto It = Params.find((Pass + "." + Key).str());
  if (It == Params.end())
    return Default;
  int64_t V;
  if (StringRef(It->second).getAsInteger(10, V))
    return Default;
  return V;
}

std::string PassOptions::strParam(StringRef Pass, StringRef Key,
                                  StringRef Default) const {
  auto It = Params.find((Pass + "." + Key).str());
  return It == Params.end() ? Default.str() : It->second;
}

PassContext::PassContext(ASTContext &Ctx, const KernelInfo &Kernel,
                         const std::vector<KernelInfo> &AllKernels,
                         const PassOptions &Opts, StringRef PassName)
    : Ctx(Ctx), Kernel(Kernel), AllKernels(AllKernels), Opts(Opts),
      PassName(PassName.str()) {}

const SourceManager &PassContext::sourceManager() const {
  return Ctx.getSourceManager();
}
const LangOptions &PassContext::langOpts() const { return Ctx.getLangOpts(); }

void PassContext::fired(SourceLocation Loc, const Twine &What) {
  Explains.push_back(
      {PassName, makePos(sourceManager(), Loc), true, MessagePrefix + What.str()});
}

void PassContext::refused(SourceLocation Loc, const Twine &Why) {
  Explains.push_back(
      {PassName, makePos(sourceManager(), Loc), false, MessagePrefix + Why.str()});
}

std::string PassContext::text(SourceRange R) const {
  return sourceText(Ctx, R);
}

bool PassContext::isEditable(SourceRange R) const {
  if (R.isInvalid() || R.getBegin().isMacroID() || R.getEnd().isMacroID())
    return false;
  const SourceManager &SM = sourceManager();
  return !SM.isInSystemHeader(R.getBegin()) &&
         SM.getFileID(R.getBegin()) == SM.getFileID(R.getEnd());
}

bool PassContext::add(const tooling::Replacement &R, SourceLocation Loc) {
  SmallString<256> Path(R.getFilePath());
  sys::path::remove_dots(Path, /*remove_dot_dot=*/true);
  tooling::Replacement Norm(Path, R.getOffset(), R.getLength(),
                            R.getReplacementText());
  tooling::Replacements &Set = Repls[std::string(Path)];
  if (Error E = Set.add(Norm)) {
    consumeError(std::move(E));
    // Two edits of the same text: keep the first, say so.
    Conflicts.push_back(makePos(sourceManager(), Loc).str() + ": " + PassName +
                        ": conflicting replacement of " +
                        std::to_string(R.getLength()) + " bytes with '" +
                        R.getReplacementText().str() +
                        "' overlaps an earlier edit; site left unchanged");
    return false;
  }
  return true;
}

bool PassContext::replace(CharSourceRange Range, StringRef Text) {
  const SourceManager &SM = sourceManager();
  CharSourceRange FR = Lexer::makeFileCharRange(Range, SM, langOpts());
  if (FR.isInvalid() || !isEditable(FR.getAsRange())) {
    refused(Range.getBegin(), "the text to edit comes from a macro expansion");
    return false;
  }
  return add(tooling::Replacement(SM, FR, Text, langOpts()), Range.getBegin());
}

bool PassContext::insertBefore(SourceLocation Loc, StringRef Text) {
  return replace(CharSourceRange::getCharRange(Loc, Loc), Text);
}

bool PassContext::insertAfterToken(SourceLocation Loc, StringRef Text) {
  SourceLocation End =
      Lexer::getLocForEndOfToken(Loc, 0, sourceManager(), langOpts());
  if (End.isInvalid()) {
    refused(Loc, "cannot find the end of the token");
    return false;
  }
  return replace(CharSourceRange::getCharRange(End, End), Text);
}

} // namespace astra
