//===- PassCoder.h - Plans of passes turned into code ----------*- C++ -*-===//
#ifndef ASTRA_AGENTS_PASSCODER_H
#define ASTRA_AGENTS_PASSCODER_H

#include "astra/Agents/Agents.h"
#include "astra/Frontend/CudaParser.h"
#include "astra/Rewrite/Pass.h"

#include <string>
#include <vector>

namespace astra {

/// Applies a plan's passes with the rewrite driver: deterministic, and the
/// only edits are the passes' own.
class PassCoder : public Coder {
public:
  /// \p DeviceCommand parses the kernel's file; \p KernelName is the name
  /// the rewrite driver matches (the qualified name, without template
  /// arguments); \p Base holds the spec and global pass options.
  /// \p Start: the baseline's text when it is not the files on disk (the
  /// file after shape-split, OptimizeDriver).
  PassCoder(std::vector<std::string> DeviceCommand, std::string KernelName,
            PassOptions Base, FileOverlay Start = {})
      : Command(std::move(DeviceCommand)), KernelName(std::move(KernelName)),
        Base(std::move(Base)), Start(std::move(Start)) {}
  llvm::StringRef name() const override { return "passes"; }
  /// Each realize() parses and rewrites on its own.
  bool concurrent() const override { return true; }
  /// Parse with this runtime-wrapper PCH and the file's preamble PCH
  /// (RewriteRequest::RuntimePch, Preamble); empty: read the headers.
  void setParsePch(std::string Pch) { ParsePch = std::move(Pch); }
  llvm::Expected<Candidate> realize(const Plan &P, const Candidate &Parent,
                                    const PlanningState &S) override;

private:
  std::vector<std::string> Command;
  std::string KernelName;
  PassOptions Base;
  FileOverlay Start;
  std::string ParsePch;
};

} // namespace astra

#endif
