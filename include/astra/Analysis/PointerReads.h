//===- PointerReads.h - Which pointer parameters a kernel reads -*- C++ -*-===//
//
// The spec drafter tells an output (written only: the verifier poisons it
// before each run) from an in-place buffer (read and written: it must be
// initialized, like fused_add_rmsnorm's residual). The answer errs on the
// side of "read": calling a read buffer an output would feed the kernel
// poison, while calling an output in-out only costs an initialization.
//
// Kept apart from PointerAccess.h (the write analysis) so the two can evolve
// separately; both resolve aliases through locals the same way.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ANALYSIS_POINTERREADS_H
#define ASTRA_ANALYSIS_POINTERREADS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace astra {

struct PointerReadInfo {
  /// Parameters (of the analyzed definition) whose memory may be read, with
  /// the first reason found ("read at 12:9").
  llvm::DenseMap<const clang::ParmVarDecl *, std::string> Read;

  bool isRead(const clang::ParmVarDecl *P) const { return Read.count(P); }
  std::string reason(const clang::ParmVarDecl *P) const {
    auto It = Read.find(P);
    return It == Read.end() ? std::string() : It->second;
  }
};

/// Analyzes \p FD's body: loads through a parameter (directly, through local
/// aliases or helpers), read-modify-writes (+=, ++, atomics), and any use
/// the analysis cannot follow (an unknown callee, inline asm, a stored
/// pointer) count as reads. For a function template the instantiations are
/// analyzed and merged onto the pattern's parameters; a template without
/// instantiations reports every pointer parameter as read.
PointerReadInfo analyzePointerReads(clang::ASTContext &Ctx,
                                    const clang::FunctionDecl *FD);

} // namespace astra

#endif
