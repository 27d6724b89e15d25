//===- Mutation.h - Whether code may change a variable ---------*- C++ -*-===//
//
// Passes prove that a value stays what it was (an index, a bound, a launch
// dimension, a pointer parameter) before they copy, move or re-read it.
// Two questions, answered from the AST:
//  - mayModify: may anything under a statement change the variable?
//  - isModifyingUse: may this one use of it change it (which use, for the
//    message and for analyses that allow some writes, a reduction's own)?
// clang's ExprMutationAnalyzer (lib/Frontend/LaunchFacts.cpp uses it for
// launch locals) answers the first question differently: an argument bound
// to a const reference, or an address passed as a pointer to const, is no
// change there but is one for mayModify; a store to an element of a local
// array is a change there but not for mayModify, whose callers ask about
// scalars, pointers and dim3s. Replacing mayModify by it changes which code
// passes rewrite, so it is a change of its own, shown by a rewrite snapshot
// (scripts/rewrite-snapshot.sh).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_UTILS_MUTATION_H
#define ASTRA_PASSES_UTILS_MUTATION_H

#include "clang/AST/Expr.h"
#include "clang/AST/ParentMap.h"

#include <vector>

namespace astra {

/// Whether \p S may change \p V: assigned (or a member of it), incremented,
/// its address taken, bound to a non-const reference, passed as an lvalue to
/// a call or a non-const method called on it.
bool mayModify(const clang::Stmt *S, const clang::VarDecl *V);

/// Whether this use of a variable may change it: assigned, incremented,
/// address taken, bound to a non-const reference or passed to one, or a
/// non-const member function called on it. \p PM is the parent map of the
/// enclosing function body.
bool isModifyingUse(const clang::DeclRefExpr *DRE, const clang::ParentMap &PM);

/// Every DeclRefExpr under \p S naming \p V.
std::vector<const clang::DeclRefExpr *> referencesTo(const clang::Stmt *S,
                                                     const clang::VarDecl *V);

/// The variable an lvalue names, through member accesses (`b.x` names `b`)
/// and, with \p ThroughLocalArrays, subscripts of arrays (`a[i]` names `a`
/// when `a` is an array, not a pointer); null when it is not a variable.
const clang::VarDecl *lvalueVar(const clang::Expr *E,
                                bool ThroughLocalArrays = false);

} // namespace astra

#endif
