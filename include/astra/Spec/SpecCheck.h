//===- SpecCheck.h - Does a spec fit its kernel? ---------------*- C++ -*-===//
//
// A spec that parses can still describe a different kernel than the one in
// the file: a renamed parameter, a float buffer the spec calls bf16, an
// "input" the kernel writes (whose changes the verifier would then never
// compare). These checks read the kernel from the AST and reject such specs
// before anything runs.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SPEC_SPECCHECK_H
#define ASTRA_SPEC_SPECCHECK_H

#include "astra/Frontend/KernelModel.h"
#include "astra/Spec/Spec.h"

#include "clang/AST/ASTContext.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace astra {

/// The kernel a spec entry names, and the function whose parameter types
/// count: the definition, or for a template the named instantiation.
struct SpecTarget {
  const KernelInfo *Kernel = nullptr;
  const clang::FunctionDecl *Function = nullptr;
  std::string Name; ///< As `list` prints it ("scale<float, 2>").
};

/// Finds the kernel \p Name names, as `clang-astra list` prints it: the
/// qualified name, or for a template an instantiation ("scale<float, 2>",
/// also "ns::scale<float, 2>"). The error names \p File and lists the
/// kernels (and instantiations) that exist.
llvm::Expected<SpecTarget> findSpecTarget(const std::vector<KernelInfo> &Kernels,
                                          llvm::StringRef Name,
                                          llvm::StringRef File);

/// Every name a spec can use for the kernels of a file, for messages and
/// drafting: plain kernels by qualified name, templates by instantiation.
std::vector<std::string> specKernelNames(const std::vector<KernelInfo> &Kernels);

/// How a C++ type (a pointee, or a scalar parameter) maps to a spec dtype.
struct SpecType {
  DType Type = DType::F32;
  /// Vector types (float4, __half2): elements of Type per C++ element; the
  /// spec counts Type elements, so a count must be a multiple of Lanes.
  unsigned Lanes = 1;
  /// void: any dtype fits.
  bool Any = false;
};
/// The spec dtype of \p T (qualifiers and typedefs ignored), or nullopt
/// when a spec cannot describe it (a struct, a pointer to pointers, ...).
std::optional<SpecType> specTypeOf(const clang::ASTContext &Ctx,
                                   clang::QualType T);

/// Checks \p Spec against \p Kernel: every parameter has an entry and every
/// entry a parameter; pointers are buffers and other parameters scalars;
/// dtypes match the parameter types (of the named instantiation, for a
/// template); an input buffer is not written by the kernel and an output
/// is not const. On success fills ArgSpec::Index and ScalarType and puts
/// Args in parameter order. Errors name the spec file, line, kernel and
/// field; every problem is reported.
llvm::Error checkSpecAgainstKernel(KernelSpec &Spec, const KernelInfo &Kernel);

} // namespace astra

#endif
