//===- CodeExtract.cpp - The code in an LLM reply -------------------------===//
#include "astra/LLM/CodeExtract.h"

#include "astra/LLM/Chat.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace astra {

namespace {

/// \p Text without <think>...</think> sections. An unclosed <think> hides
/// the rest; a "</think>" with no opening tag (templates that put the
/// opening tag in the prompt) hides everything before it.
std::string withoutThinking(StringRef Text) {
  if (size_t Close = Text.find("</think>");
      Close != StringRef::npos &&
      Text.take_front(Close).find("<think>") == StringRef::npos)
    Text = Text.drop_front(Close + strlen("</think>"));
  std::string Out;
  while (true) {
    size_t Open = Text.find("<think>");
    if (Open == StringRef::npos) {
      Out += Text;
      return Out;
    }
    Out += Text.take_front(Open);
    size_t Close = Text.find("</think>", Open);
    if (Close == StringRef::npos)
      return Out;
    Text = Text.drop_front(Close + strlen("</think>"));
  }
}

/// A fence line: up to three spaces, then three or more ` or ~.
struct Fence {
  char Char = 0;
  size_t Length = 0, Indent = 0;
  StringRef Info;
};

bool parseFence(StringRef Line, Fence &F) {
  Line = Line.rtrim("\r\n");
  size_t Indent = Line.find_first_not_of(' ');
  if (Indent == StringRef::npos || Indent > 3)
    return false;
  StringRef Rest = Line.drop_front(Indent);
  char C = Rest.front();
  if (C != '`' && C != '~')
    return false;
  size_t Len = Rest.find_first_not_of(C);
  if (Len == StringRef::npos)
    Len = Rest.size();
  if (Len < 3)
    return false;
  F.Char = C;
  F.Length = Len;
  F.Indent = Indent;
  F.Info = Rest.drop_front(Len).trim();
  // A backtick fence's info string holds no backtick (CommonMark), which
  // keeps inline ```code``` spans on one line from opening a block.
  return !(C == '`' && F.Info.contains('`'));
}

std::string languageOf(StringRef Info) {
  StringRef Word = Info.take_until([](char C) { return isSpace(C); });
  Word = Word.take_until([](char C) { return C == ':' || C == '{'; });
  return Word.lower();
}

} // namespace

bool isCodeLanguage(StringRef Language) {
  static const char *const Known[] = {"",    "cuda", "cu", "cuh", "cpp", "c++",
                                      "cxx", "cc",   "c",  "h",   "hpp"};
  return is_contained(Known, Language.lower());
}

std::vector<CodeBlock> findCodeBlocks(StringRef Text) {
  std::string Visible = withoutThinking(Text);
  std::vector<CodeBlock> Blocks;
  Fence Open; // The fence of the block we are in, when InBlock.
  bool InBlock = false;
  CodeBlock Cur;
  StringRef Rest = Visible;
  while (!Rest.empty()) {
    size_t NL = Rest.find('\n');
    StringRef Line = NL == StringRef::npos ? Rest : Rest.take_front(NL + 1);
    Rest = Rest.drop_front(Line.size());
    Fence F;
    if (!InBlock) {
      if (parseFence(Line, F)) {
        Open = F;
        InBlock = true;
        Cur = CodeBlock();
        Cur.Language = languageOf(F.Info);
      }
      continue;
    }
    if (parseFence(Line, F) && F.Char == Open.Char && F.Length >= Open.Length &&
        F.Info.empty()) {
      Blocks.push_back(std::move(Cur));
      InBlock = false;
      continue;
    }
    // Content lines lose as many leading spaces as the opening fence had.
    size_t Strip = 0;
    while (Strip < Open.Indent && Strip < Line.size() && Line[Strip] == ' ')
      ++Strip;
    StringRef Content = Line.drop_front(Strip);
    if (Content.ends_with("\r\n"))
      Content = Content.drop_back(2);
    else if (Content.ends_with("\n"))
      Content = Content.drop_back();
    Cur.Code += Content;
    Cur.Code += '\n';
  }
  if (InBlock) {
    Cur.Closed = false;
    Blocks.push_back(std::move(Cur));
  }
  return Blocks;
}

Expected<std::string> extractCode(StringRef Reply,
                                  const CodeExtractOptions &Opts) {
  std::vector<CodeBlock> Blocks = findCodeBlocks(Reply);
  auto NoBlock = [&](const Twine &Why) {
    return createStringError(inconvertibleErrorCode(),
                             "the reply has no code block%s: %s",
                             Why.str().c_str(), excerpt(Reply, 160).c_str());
  };
  if (Blocks.empty())
    return NoBlock(" (the code must be in a ```cuda fenced block)");

  const CodeBlock *Best = nullptr;
  std::vector<std::string> OtherLanguages;
  bool HadCode = false, Unclosed = false;
  for (const CodeBlock &B : Blocks) {
    if (!B.Closed) {
      Unclosed = true;
      continue;
    }
    if (!isCodeLanguage(B.Language)) {
      if (!is_contained(OtherLanguages, B.Language))
        OtherLanguages.push_back(B.Language);
      continue;
    }
    HadCode = true;
    if (!Opts.MustContain.empty() &&
        StringRef(B.Code).find(Opts.MustContain) == StringRef::npos)
      continue;
    Best = &B; // The last one that counts wins.
  }
  if (Best)
    return Best->Code;
  if (Unclosed)
    return NoBlock(" that is complete: a ``` fence is never closed, so the "
                   "reply was probably cut off at the server's max tokens "
                   "limit");
  if (HadCode)
    return NoBlock(" containing '" + Opts.MustContain + "'");
  return NoBlock(" in C++/CUDA (found only ```" +
                 join(OtherLanguages, ", ```") + " blocks)");
}

} // namespace astra
