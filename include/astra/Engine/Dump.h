//===- Dump.h - One baseline run written to disk ---------------*- C++ -*-===//
//
// `clang-astra run --dump DIR` runs a kernel once and writes what went in
// and what came out, so a reference written in another language (the
// kernel suite's Python checks) can judge the kernel itself:
//
//   DIR/manifest.json   {"version": 1, "kernel", "entry", "shape_name",
//                        "shape": {var: value}, "seed", "device",
//                        "args": [{"name", "dtype", "count", "role",
//                                  "in": "x.in.bin" | null,
//                                  "out": "x.out.bin" | null},
//                                 {"name", "dtype", "value"} ...]}
//   DIR/<arg>.in.bin    inputs and in-outs before the run
//   DIR/<arg>.out.bin   outputs and in-outs after the run
//
// Binaries are the raw little-endian elements, exactly as the kernel saw
// them (bf16 as its 16 bits, fp8 as bytes).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_ENGINE_DUMP_H
#define ASTRA_ENGINE_DUMP_H

#include "astra/Engine/Job.h"

#include "llvm/Support/Error.h"

namespace astra {

/// Runs the baseline of \p J once on shape set J.Shapes[0] with seed
/// J.Seeds[0] and writes the manifest and binaries into \p Dir (created
/// when missing). Files are written atomically.
llvm::Error dumpBaselineRun(const VerifyJob &J, llvm::StringRef Dir);

} // namespace astra

#endif
