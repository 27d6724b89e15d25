//===- SpecDraft.h - Draft a spec from the AST (init-spec) -----*- C++ -*-===//
//
// Most of a spec can be read off the kernel: dtypes from the parameter
// types, roles from what the kernel reads and writes, shape variables from
// its integer parameters, the launch configuration from a launch site.
// What cannot (element counts, realistic sizes, float scalars) is left as a
// "TODO" string, which check-spec rejects until a person fills it in: a
// draft must never pass as a spec nobody looked at.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SPEC_SPECDRAFT_H
#define ASTRA_SPEC_SPECDRAFT_H

#include "astra/Spec/SpecCheck.h"

#include "clang/AST/ASTContext.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace astra {

/// A whole spec file (JSON with comments) with one entry per target, for
/// the kernels of \p CuFile (named in comments).
std::string draftSpecFile(clang::ASTContext &Ctx,
                          llvm::ArrayRef<SpecTarget> Targets,
                          llvm::StringRef CuFile);

} // namespace astra

#endif
