//===- Ldg.h - Read-only loads through __ldg --------------------*- C++ -*-===//
//
// Wraps loads from read-only kernel buffers in __ldg(&p[i]), which reads
// through the non-coherent read-only data cache. That is correct only while
// nothing writes the buffer during the kernel: the pass fires for pointers
// the kernel never writes through and that provably do not alias a buffer it
// writes.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_LDG_H
#define ASTRA_PASSES_LDG_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class LdgPass : public Pass {
public:
  llvm::StringRef name() const override { return "ldg"; }
  llvm::StringRef description() const override {
    return "__ldg(&p[i]) for loads from buffers the kernel never writes and "
           "that do not alias a written buffer";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::boolean("assume-noalias", "0",
                               "read-only parameters alias no written "
                               "buffer")};
  }
};

} // namespace astra

#endif
