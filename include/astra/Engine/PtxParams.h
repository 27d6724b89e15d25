//===- PtxParams.h - Kernel parameters as the PTX declares them -*- C++ -*-===//
//
// The driver copies each kernel parameter with the size the compiled kernel
// declares, whatever the caller meant. Reading the .entry's parameter list
// from the PTX lets the engine check the spec against the kernel before the
// first launch (a spec that calls a 64-bit seed an i32 would otherwise pass
// garbage), and check that a candidate kept the baseline's signature.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_PTXPARAMS_H
#define ASTRA_ENGINE_PTXPARAMS_H

#include "astra/Spec/Spec.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace astra {

struct PtxParam {
  std::string Type; ///< ".u64", ".f32", ".b8", ...
  unsigned Bytes = 0; ///< Whole parameter (arrays: element size * length).
  bool IsArray = false; ///< A struct passed by value (.b8 name[N]).
};

/// The parameters of `.entry Entry(...)` in \p Ptx; nullopt when the entry
/// is not there.
std::optional<std::vector<PtxParam>> ptxEntryParams(llvm::StringRef Ptx,
                                                    llvm::StringRef Entry);

/// Checks \p S's arguments against the kernel's parameters: same count,
/// buffers are 8-byte pointers, scalars have the declared size. Scalar
/// types the spec does not give are taken from the PTX (.f32 -> f32, .u32
/// -> i32, ...). Errors name the spec, the argument and both sizes.
llvm::Error checkSpecAgainstPtx(KernelSpec &S,
                                const std::vector<PtxParam> &Params,
                                llvm::StringRef Entry);

/// Whether \p Ptx launches kernels from the device (dynamic parallelism):
/// such work can escape the launched grid and the timed stream.
bool usesDeviceLaunch(llvm::StringRef Ptx);

} // namespace astra

#endif
