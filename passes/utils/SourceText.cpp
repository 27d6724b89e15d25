//===- SourceText.cpp -----------------------------------------------------===//
#include "utils/SourceText.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Lex/Lexer.h"

using namespace clang;
using namespace llvm;

namespace astra {

/// The statement whose end is the end of \p S (the body of a loop, the last
/// branch of an if, ...).
static const Stmt *trailingStmt(const Stmt *S) {
  while (true) {
    const Stmt *Next = nullptr;
    if (const auto *If = dyn_cast<IfStmt>(S))
      Next = If->getElse() ? If->getElse() : If->getThen();
    else if (const auto *F = dyn_cast<ForStmt>(S))
      Next = F->getBody();
    else if (const auto *W = dyn_cast<WhileStmt>(S))
      Next = W->getBody();
    else if (const auto *R = dyn_cast<CXXForRangeStmt>(S))
      Next = R->getBody();
    else if (const auto *Sw = dyn_cast<SwitchStmt>(S))
      Next = Sw->getBody();
    else if (const auto *L = dyn_cast<LabelStmt>(S))
      Next = L->getSubStmt();
    else if (const auto *A = dyn_cast<AttributedStmt>(S))
      Next = A->getSubStmt();
    if (!Next)
      return S;
    S = Next;
  }
}

SourceLocation endOfStatement(const Stmt *S, const SourceManager &SM,
                              const LangOptions &LO) {
  const Stmt *T = trailingStmt(S);
  SourceLocation End = SM.getExpansionRange(T->getEndLoc()).getEnd();
  if (isa<CompoundStmt>(T))
    return Lexer::getLocForEndOfToken(End, 0, SM, LO);
  Token Tok;
  if (!Lexer::getRawToken(End, Tok, SM, LO, /*IgnoreWhiteSpace=*/true) &&
      Tok.is(tok::semi))
    return Tok.getEndLoc();
  std::optional<Token> Next = Lexer::findNextToken(End, SM, LO);
  if (Next && Next->is(tok::semi))
    return Next->getEndLoc();
  return SourceLocation();
}

std::string lineIndent(SourceLocation Loc, const SourceManager &SM) {
  return Lexer::getIndentationForLine(SM.getExpansionLoc(Loc), SM).str();
}

bool startsLine(SourceLocation Loc, const SourceManager &SM) {
  Loc = SM.getExpansionLoc(Loc);
  auto [FID, Offset] = SM.getDecomposedLoc(Loc);
  bool Invalid = false;
  StringRef Buf = SM.getBufferData(FID, &Invalid);
  if (Invalid || Offset > Buf.size())
    return false;
  // StringRef::rfind looks at [0, Offset): a newline just before Loc counts.
  size_t Start = Buf.rfind('\n', Offset);
  Start = Start == StringRef::npos ? 0 : Start + 1;
  return Buf.slice(Start, Offset).find_first_not_of(" \t") == StringRef::npos;
}

std::string reindent(StringRef Text, StringRef Indent) {
  if (Text.contains("\\\n") || Text.contains("R\""))
    return Text.str();
  std::string Out;
  Out.reserve(Text.size() + Indent.size() * 8);
  for (size_t I = 0; I < Text.size(); ++I) {
    Out += Text[I];
    if (Text[I] != '\n')
      continue;
    size_t J = I + 1;
    while (J < Text.size() && (Text[J] == ' ' || Text[J] == '\t'))
      ++J;
    if (J < Text.size() && Text[J] != '\n' && Text[J] != '\r')
      Out += Indent;
  }
  return Out;
}

std::string freshIdentifier(const ASTContext &Ctx, StringRef Base,
                            const std::set<std::string> &Taken) {
  std::string Name = Base.str();
  for (unsigned I = 1; Ctx.Idents.find(Name) != Ctx.Idents.end() ||
                       Taken.count(Name);
       ++I)
    Name = (Base + Twine(I)).str();
  return Name;
}

} // namespace astra
