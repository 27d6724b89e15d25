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
#include <vector>

namespace astra {

struct Capture;
struct CapturedKernel;

/// A whole spec file (JSON with comments) with one entry per target, for
/// the kernels of \p CuFile (named in comments).
std::string draftSpecFile(clang::ASTContext &Ctx,
                          llvm::ArrayRef<SpecTarget> Targets,
                          llvm::StringRef CuFile);

/// A whole spec file for \p Targets from the capture \p C (init-spec
/// --from-capture, docs/capture.md): one shape set per distinct
/// configuration the program launched (the \p MaxSets most launched when
/// non-zero), weighted by its launch count; integer scalars as shape
/// variables with their launched values; buffer counts from the
/// allocations; the launch as observed (the launch site's expressions where
/// they give it); roles from the AST; inputs whose contents were captured
/// replayed through captured(<generator>), the generator's parameters read
/// off the program's values. \p DirInSpec is the capture folder as the spec
/// names it (relative to the spec file). Errors: a target the capture does
/// not have (naming what it has), a parameter list that differs. \p Notes
/// gets what a user should know (configurations left out).
llvm::Expected<std::string>
draftSpecFileFromCapture(clang::ASTContext &Ctx,
                         llvm::ArrayRef<SpecTarget> Targets,
                         llvm::StringRef CuFile, const Capture &C,
                         llvm::StringRef DirInSpec, unsigned MaxSets,
                         std::vector<std::string> &Notes);

/// The captured kernel \p T names: by the symbol the device compiler gives
/// it, else by name; null when none (or several) match.
const CapturedKernel *findCapturedKernel(clang::ASTContext &Ctx,
                                         const SpecTarget &T,
                                         const Capture &C);

} // namespace astra

#endif
