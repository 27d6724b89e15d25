//===- PointerAccess.h - Which pointer parameters a kernel writes -*- C++ -*-===//
//
// Several passes (restrict-const, ldg) and the spec drafter need to know
// whether a kernel may write through a pointer parameter. The answer must err
// on the side of "written": a read-only claim that is wrong turns into a
// wrong `const`, a stale `__ldg` or an output the verifier never checks.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ANALYSIS_POINTERACCESS_H
#define ASTRA_ANALYSIS_POINTERACCESS_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <string>

namespace astra {

struct PointerWriteInfo {
  /// Parameters (of the analyzed definition) that may be written through,
  /// with the first reason found.
  llvm::DenseMap<const clang::ParmVarDecl *, std::string> Written;
  /// Parameters whose value leaves the analysis (stored to memory, passed to
  /// code we cannot see): they may be written and may alias anything.
  llvm::SmallPtrSet<const clang::ParmVarDecl *, 4> Escaped;

  bool isWritten(const clang::ParmVarDecl *P) const {
    return Written.count(P) || Escaped.count(P);
  }
  std::string reason(const clang::ParmVarDecl *P) const;
};

/// Analyzes \p FD's body. For a function template, the pattern and every
/// instantiation are analyzed and the results merged onto the pattern's
/// parameters, since only instantiations show which helper each call reaches.
PointerWriteInfo analyzePointerWrites(clang::ASTContext &Ctx,
                                      const clang::FunctionDecl *FD);

/// The parameters or local variables whose pointer value \p E may be derived
/// from (through arithmetic, casts, conditionals and local aliases). Used by
/// passes that rewrite accesses and must know which buffer an access touches.
llvm::SmallPtrSet<const clang::VarDecl *, 4>
pointerBases(const clang::Expr *E);

} // namespace astra

#endif
