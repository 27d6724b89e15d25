//===- HelperReach.h - Passes that rewrite the kernel's helpers -*- C++ -*-===//
//
// Real kernels keep their math in device functions they call (`sigmoid(v)`,
// `silu(x)`, a `dot` over two rows). A pass that rewrites expressions
// (fast-math, hoist, ldg, unroll) reaches them through HelperReach:
//
//  - Reach: the free functions the kernel calls, directly or through other
//    helpers, that are defined in the file being rewritten (the main file, or
//    the header that defines the kernel: the files the tool edits anyway).
//    Each helper's bodies are the instantiations the kernel reaches (a
//    template helper is edited in its pattern and judged on those, through
//    SiteVotes like a template kernel).
//  - Ownership: a helper whose every caller, transitively, is the kernel is
//    edited in place. A helper that other code may also call (another
//    kernel, host code, a function whose address escapes, a header other
//    files include, a __host__ __device__ function, external linkage under
//    -fgpu-rdc) is never changed for them: when the pass changes it, it is
//    cloned for the kernel (`sigmoid_astra_<kernel>`, placed right after the
//    original) and the kernel's calls, and the calls in the kernel's other
//    clones, are pointed at the clone. A helper that cannot be cloned (its
//    text comes from a macro, a call to it cannot be renamed, ...) is left
//    alone, with the reason.
//  - Calls: which kernel parameters a helper's pointer parameter points into
//    at every call the kernel makes (ldg and hoist need that to know a buffer
//    is read-only).
//
// The pass visits each helper's bodies as it visits the kernel's, with the
// messages it records named after the helper (Scope), hands over the edits
// (setEdits) and commits everything at once (commit).
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_PASSES_UTILS_HELPERREACH_H
#define ASTRA_PASSES_UTILS_HELPERREACH_H

#include "utils/PassSupport.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace astra {

/// A device function the kernel calls that a pass may rewrite.
struct Helper {
  /// The definition whose text is edited (the pattern of a template).
  const clang::FunctionDecl *Def = nullptr;
  /// The bodies the kernel reaches: instantiations of a template (Label
  /// "sigmoid<float>") or the definition itself (Label empty).
  std::vector<KernelBody> Bodies;
  /// Other code may call it: the pass's changes go into a clone.
  bool Shared = false;
  std::string SharedWhy;  ///< "'other' also calls it", ...
  std::string CloneName;  ///< The clone's name, should it be cloned.
  std::string Name;       ///< As written in messages: "sigmoid".
  std::string Prefix;     ///< "in helper 'sigmoid' (called from ...): ".

  bool isTemplate() const {
    return Def->getDescribedFunctionTemplate() != nullptr;
  }
};

class HelperReach {
public:
  /// Finds the helpers of PC.kernel(), decides which are the kernel's alone,
  /// and records a refusal for each helper a pass cannot reach (a member
  /// function, a helper in another header, one that must be cloned but
  /// cannot be).
  explicit HelperReach(PassContext &PC);
  ~HelperReach();
  HelperReach(const HelperReach &) = delete;
  HelperReach &operator=(const HelperReach &) = delete;

  /// The helpers the pass may rewrite, in the order the kernel reaches them.
  std::vector<Helper *> helpers();

  /// While it lives, every message the pass records names the helper.
  class Scope {
  public:
    Scope(PassContext &PC, const Helper &H);
    ~Scope();

  private:
    PassContext &PC;
  };

  /// The kernel parameters (indices) the pointer parameter \p Param of the
  /// helper body \p Body may point into, over every call the kernel makes
  /// of it (through the helpers between); nullopt when some call passes a
  /// pointer of other origin (a local, a global, a struct member, a
  /// parameter that is reassigned).
  std::optional<llvm::SmallVector<unsigned, 2>>
  kernelParams(const clang::FunctionDecl *Body, unsigned Param) const;

  /// The pass's edits inside helper \p H (what SiteVotes resolved for it).
  void setEdits(const Helper &H, const EditSet &ES);

  /// Hands every edit to PassContext: \p KernelEdits, the edits of helpers
  /// that are the kernel's alone in place, and for each changed shared
  /// helper a clone after the original with the kernel's calls pointed at
  /// it. Records what was cloned and why.
  bool commit(const EditSet &KernelEdits);

  struct Impl;

private:
  PassContext &PC;
  std::unique_ptr<Impl> I;
};

} // namespace astra

#endif
