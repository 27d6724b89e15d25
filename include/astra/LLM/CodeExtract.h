//===- CodeExtract.h - The code in an LLM reply -----------------*- C++ -*-===//
//
// The coder asks for the rewritten source in a fenced Markdown block. Models
// also think aloud, echo the original first, and add launch snippets or
// build commands after, so which block counts is a rule, documented here:
//
//  * Fences are CommonMark's: a line of at least three ` or ~ characters
//    (indented by at most three spaces), closed by a line of the same
//    character at least as long. Text inside <think>...</think> is ignored
//    (reasoning models draft there).
//  * Only blocks tagged as C/C++/CUDA count: none, cuda, cu, cuh, cpp, c++,
//    cxx, cc, c, h, hpp (any case; "cpp:kernel.cu" counts as cpp). A
//    ```bash or ```python block is never taken for the kernel.
//  * With MustContain set (the coder passes "__global__"), only blocks that
//    contain it count, so a trailing launch snippet is not taken.
//  * Of the blocks that count, the LAST wins, not the largest: models refine
//    as they go and put the final version last, and an echoed original is
//    often larger than the optimized version that follows it.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_LLM_CODEEXTRACT_H
#define ASTRA_LLM_CODEEXTRACT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace astra {

struct CodeBlock {
  /// The info string's first word in lower case ("" for a bare fence).
  std::string Language;
  /// The lines between the fences, ending in a newline.
  std::string Code;
  /// Closed by a matching fence (an unclosed one runs to the end).
  bool Closed = true;
};

/// Every fenced block of \p Text, in order, outside <think> sections.
std::vector<CodeBlock> findCodeBlocks(llvm::StringRef Text);

/// True for the languages whose blocks count as code (see above).
bool isCodeLanguage(llvm::StringRef Language);

struct CodeExtractOptions {
  /// Only blocks that contain this text count (empty: every code block).
  std::string MustContain;
};

/// The code of \p Reply by the rule above. The error starts with "the reply
/// has no code block" and says why (no fence at all, only blocks in other
/// languages, none containing MustContain, or a fence never closed, which
/// usually means the reply was cut off at the max tokens limit).
llvm::Expected<std::string> extractCode(llvm::StringRef Reply,
                                        const CodeExtractOptions &Opts = {});

} // namespace astra

#endif
