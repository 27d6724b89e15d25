//===- LocalBackend.h - One worker per local GPU ----------------*- C++ -*-===//
//
// Each worker is one of this machine's GPUs: an attempt is a child process
// (in a process group of its own) that sees only that GPU through
// CUDA_VISIBLE_DEVICES, so everything it times, a baseline and its
// candidate, runs on that one device.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_EXEC_LOCALBACKEND_H
#define ASTRA_EXEC_LOCALBACKEND_H

#include "astra/Exec/Executor.h"
#include "astra/Support/ChildProcess.h"

#include <chrono>
#include <optional>

namespace astra {
namespace exec {

class LocalBackend : public Backend {
public:
  /// \p Gpus: the CUDA_VISIBLE_DEVICES value of each worker ("0", "2").
  /// \p TaskDir: where the tasks' files go (created by the caller).
  LocalBackend(std::vector<std::string> Gpus, std::string TaskDir)
      : Gpus(std::move(Gpus)), TaskDir(std::move(TaskDir)),
        Slots(this->Gpus.size()) {}
  ~LocalBackend() override;

  unsigned workers() const override { return Gpus.size(); }
  std::string workerName(unsigned W) const override {
    return "gpu " + Gpus[W];
  }
  std::string taskDirectory() const override { return TaskDir; }
  llvm::Error start(unsigned W, const Task &T) override;
  std::vector<std::pair<unsigned, AttemptEnd>> poll(double Seconds) override;
  void cancelAll() override;

private:
  struct Running {
    ChildProcess P;
    Task T;
    std::chrono::steady_clock::time_point Deadline;
  };
  std::vector<std::string> Gpus;
  std::string TaskDir;
  std::vector<std::optional<Running>> Slots;
};

/// How an attempt whose process ended is classified, from its exit status,
/// whether its result file exists and the last line of its output
/// (exposed for tests).
AttemptEnd classifyEnd(const ChildStatus &S, bool HaveResult,
                       llvm::StringRef LastOutput);

} // namespace exec
} // namespace astra

#endif
