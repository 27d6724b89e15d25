//===- KernelSource.h - A kernel's text: read, replace, check --*- C++ -*-===//
//
// LLM rewrites come back as text: the kernel's new definition and maybe new
// helper functions. These functions find the kernel's definition in a file
// (on disk or a candidate in memory), splice the new text in its place
// (helpers go just before it, every other byte stays), and check that the
// result still honours the kernel's contract: the same name, the same
// parameters (const and __restrict__ may be added), the same template
// parameters.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_AGENTS_KERNELSOURCE_H
#define ASTRA_AGENTS_KERNELSOURCE_H

#include "astra/Agents/Candidate.h"
#include "astra/Frontend/KernelModel.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace astra {

struct KernelText {
  std::string File;   ///< Absolute path of the file holding the definition.
  unsigned Begin = 0; ///< Offset of the definition (template header included).
  unsigned End = 0;   ///< Offset just past its closing brace.
  std::string Definition;
  /// Definitions of the user-code functions it calls, in call order.
  std::vector<std::string> Helpers;
  /// Parameter list as written, for prompts and contract messages.
  std::string Signature;
};

/// Finds kernel \p Name (qualified name or plain name) in the parse of
/// \p Command with \p Overlay.
llvm::Expected<KernelText> findKernelText(const std::vector<std::string> &Command,
                                          const FileOverlay &Overlay,
                                          llvm::StringRef Name);

/// \p Parent's files with the kernel's definition replaced by \p NewCode.
llvm::Expected<FileOverlay> spliceKernel(const KernelText &Where,
                                         const FileOverlay &ParentFiles,
                                         llvm::StringRef NewCode);

/// Parses \p Files and checks that kernel \p Name still has \p Original's
/// contract. The error says what changed ("parameter 2 'n' was int, is
/// long"), or gives the compile errors when the code does not parse.
llvm::Error checkKernelContract(const std::vector<std::string> &Command,
                                const FileOverlay &Files, llvm::StringRef Name,
                                const KernelInfo &Original);

/// A kernel's contract in words: its parameters and template parameters, to
/// compare two versions (exposed for tests).
std::string contractOf(const KernelInfo &K);

} // namespace astra

#endif
