//===- LocalAliases.h - Which parameters a function's locals point into -===//
//
// The write and read analyses (PointerAccess.cpp, PointerReads.cpp) both ask
// which of a function's pointer parameters an access may reach, through the
// locals that hold pointers derived from them (q = p + 1; r = q + 2;
// T &x = p[i]; thread-coarsen's `const float *xr[4]` with xr[k] = p + ...).
// This is that shared part; internal to lib/Analysis.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_LIB_ANALYSIS_LOCALALIASES_H
#define ASTRA_LIB_ANALYSIS_LOCALALIASES_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <string>

namespace astra {
namespace analysis {

using VarSet = llvm::SmallPtrSet<const clang::VarDecl *, 4>;

/// The variables a pointer-valued expression is computed from (aliases
/// through locals are resolved by LocalAliases::roots).
void directBases(const clang::Expr *E, VarSet &Out);
/// The variables whose memory the lvalue \p E names: the pointer a
/// subscript, `*` or `->` goes through, or a reference variable; nothing
/// for a plain local.
void lvalueBases(const clang::Expr *E, VarSet &Out);
/// The thread's own local array whose element \p E names (`a[i][j]` with
/// `a` a local array, every level an array, not a pointer); null otherwise.
/// Storing into it writes no buffer.
const clang::VarDecl *localArrayElement(const clang::Expr *E);
/// "line:column" of \p Loc's expansion, for the reasons the analyses give.
std::string locText(const clang::ASTContext &Ctx, clang::SourceLocation Loc);

/// Which variables each local of a function may point into (or, for a
/// reference, be bound into), collected to a fixed point.
class LocalAliases {
public:
  explicit LocalAliases(const clang::FunctionDecl *FD);
  /// The parameters of the function that \p Vars may point into.
  llvm::SmallPtrSet<const clang::ParmVarDecl *, 4>
  roots(const VarSet &Vars) const;

private:
  const clang::FunctionDecl *FD;
  llvm::DenseMap<const clang::VarDecl *, VarSet> Alias;
};

} // namespace analysis
} // namespace astra

#endif
