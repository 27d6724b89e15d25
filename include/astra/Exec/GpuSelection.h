//===- GpuSelection.h - Which local GPUs get a worker -----------*- C++ -*-===//
#ifndef ASTRA_EXEC_GPUSELECTION_H
#define ASTRA_EXEC_GPUSELECTION_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace astra {
namespace exec {

/// Parses `--gpus`: "all" (every visible GPU), a count "N" (the first N),
/// or a list of device numbers "0,2" (as this process numbers them), given
/// \p Visible devices. \p ParentVisible is this process's own
/// CUDA_VISIBLE_DEVICES (empty: unset): a worker's value names the same
/// device through it ("2,3" and --gpus 1 give "3"). Returns the
/// CUDA_VISIBLE_DEVICES value of each worker, in order.
llvm::Expected<std::vector<std::string>>
selectGpus(llvm::StringRef Spec, unsigned Visible,
           llvm::StringRef ParentVisible = "");

} // namespace exec
} // namespace astra

#endif
