//===- RestrictConst.h - const and __restrict__ on kernel pointers -*- C++ -*-===//
//
// `const` on pointer parameters the kernel never writes through, and
// `__restrict__` on pointer parameters where every known launch site passes
// distinct buffers. Both let the compiler keep loads in registers and use the
// read-only data path; neither changes what a correct caller observes.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_RESTRICTCONST_H
#define ASTRA_PASSES_RESTRICTCONST_H

#include "astra/Rewrite/Pass.h"

namespace astra {

class RestrictConstPass : public Pass {
public:
  llvm::StringRef name() const override { return "restrict-const"; }
  llvm::StringRef description() const override {
    return "const on pointer parameters never written through; __restrict__ "
           "where no launch site passes aliasing pointers";
  }
  void run(PassContext &PC) override;
  std::vector<PassParam> params() const override {
    return {PassParam::boolean("assume-noalias", "0",
                               "the kernel's pointer parameters never "
                               "alias")};
  }
};

} // namespace astra

#endif
