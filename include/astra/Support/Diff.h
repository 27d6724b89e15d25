//===- Diff.h - Line diffs for --diff and exported fixes --------*- C++ -*-===//
#ifndef ASTRA_SUPPORT_DIFF_H
#define ASTRA_SUPPORT_DIFF_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace astra {

/// A changed region: lines [OldBegin, OldBegin+OldCount) of the old text
/// become lines [NewBegin, NewBegin+NewCount) of the new text (0-based).
struct DiffHunk {
  size_t OldBegin = 0, OldCount = 0, NewBegin = 0, NewCount = 0;
};

/// Minimal line edits (Myers' algorithm) from \p Old to \p New.
std::vector<DiffHunk> diffLines(llvm::StringRef Old, llvm::StringRef New);

/// A unified diff (as `diff -u` prints it) with \p Context lines, labelled
/// a/<OldLabel> and b/<NewLabel>. Empty when the texts are equal.
std::string unifiedDiff(llvm::StringRef Old, llvm::StringRef New,
                        llvm::StringRef OldLabel, llvm::StringRef NewLabel,
                        unsigned Context = 3);

/// Splits text into lines, each keeping its terminating newline.
std::vector<llvm::StringRef> splitLinesKeepEnds(llvm::StringRef Text);

} // namespace astra

#endif
