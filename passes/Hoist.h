//===- Hoist.h - Loop-invariant code motion at the source level -*- C++ -*-===//
//
// Moves loop-invariant work out of loops into `const` locals declared right
// before the loop: index arithmetic, per-row scalars, calls of pure math
// functions and, under --fast-math, divisions by loop-invariant values
// (`x / d` becomes `x * rcp` with `rcp = 1.0f / d` hoisted). The compiler's
// own LICM stops at what it cannot prove: loads of buffers that a store in
// the loop might alias, calls it does not know to be pure, and the
// reciprocal, which changes rounding. The pass proves those from the source
// (which buffers the kernel never writes, __restrict__, which loops run at
// least once) and states each decision with --explain.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_HOIST_H
#define ASTRA_PASSES_HOIST_H

#include "astra/Rewrite/Pass.h"

#include <set>
#include <string>

namespace astra {

/// An identifier that occurs nowhere in the translation unit (Ctx.Idents
/// holds every identifier the lexer saw, macros and system headers
/// included) and is not in \p Taken: Base, Base1, Base2, ... A declaration
/// with such a name can neither shadow nor be shadowed by a user's name.
/// Shared by the passes that declare new variables (hoist, warp-reduce).
std::string freshIdentifier(const clang::ASTContext &Ctx, llvm::StringRef Base,
                            const std::set<std::string> &Taken = {});

/// Just past the last character of \p S, including the `;` that ends an
/// expression, return or do-while statement (not part of the Stmt's source
/// range). Invalid when that text comes from a macro.
clang::SourceLocation afterStatement(const PassContext &PC,
                                     const clang::Stmt *S);

class HoistPass : public Pass {
public:
  llvm::StringRef name() const override { return "hoist"; }
  llvm::StringRef description() const override {
    return "loop-invariant expressions (index math, pure math calls, "
           "read-only loads; reciprocals with --fast-math) move before the "
           "loop";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::boolean("speculate-loads", "0",
                               "hoist loads out of loops that may run zero "
                               "times")};
  }
};

} // namespace astra

#endif
