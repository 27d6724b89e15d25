//===- Common.h - Options and set-up shared by every subcommand -*- C++ -*-===//
#ifndef ASTRA_TOOLS_COMMON_H
#define ASTRA_TOOLS_COMMON_H

#include "astra/Engine/Job.h"
#include "astra/Frontend/CompileCommands.h"
#include "astra/Frontend/CudaParser.h"
#include "astra/Frontend/CudaToolchain.h"
#include "astra/Spec/Spec.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace astra {
namespace tool {

/// Everything a subcommand needs to parse the user's files.
struct Session {
  const char *Argv0 = nullptr;
  std::vector<std::string> ExtraFlags; ///< After `--`.
  bool HasDashDash = false;
  /// The command line as typed, for reports.
  std::string CommandLine;
  /// The arguments before `--`, argv[0] included (bench hands them on to
  /// the processes that run its files).
  std::vector<std::string> Args;
};

extern llvm::cl::OptionCategory AstraCategory;
extern llvm::cl::opt<bool> Verbose;
/// `--quiet`, for every subcommand: no notes and no progress lines;
/// warnings, errors and the output asked for still come.
extern llvm::cl::opt<bool> Quiet;

/// Resolves the CUDA toolchain from the common options.
llvm::Expected<CudaToolchain> makeToolchain(const Session &S);
/// Loads -p / `--` flags.
llvm::Expected<CompileCommands> makeCompileCommands(const Session &S);

/// Prints "clang-astra: error: <msg>" and returns 1.
int reportError(llvm::Error E);
int reportError(const llvm::Twine &Msg);
/// Prints "clang-astra: note: <msg>" unless --quiet.
void note(const llvm::Twine &Msg);
/// A note --quiet keeps: what the run did to the user's files, what it left
/// for a later run, or what mode it fell back to. --quiet is for scripts
/// and hooks (clang-tidy's sense: no progress or chatter), which still need
/// to know that a file was rewritten or that work was left undone.
void outcome(const llvm::Twine &Msg);
void warning(const llvm::Twine &Msg);

/// Messages of work that runs on another thread (`rewrite -j`), kept in
/// order and printed by the main thread, so that the output of several
/// files never interleaves.
class MessageLog {
public:
  enum Kind { Text, Note, Warning, Error };
  void text(llvm::StringRef S) { add(Text, S.str()); }
  void note(const llvm::Twine &S) { add(Note, S.str()); }
  void warning(const llvm::Twine &S) { add(Warning, S.str()); }
  /// Records the error; returns 1, as reportError does.
  int error(llvm::Error E);
  int error(const llvm::Twine &S) {
    add(Error, S.str());
    return 1;
  }
  /// Prints everything on stderr, through note(), warning() and
  /// reportError(), and forgets it.
  void flush();

private:
  void add(Kind K, std::string S) { Items.push_back({K, std::move(S)}); }
  std::vector<std::pair<Kind, std::string>> Items;
};

/// The runtime-wrapper PCH for parsing with \p DeviceCommand (built in the
/// cache on first use; empty without one), its notes shown under --verbose.
std::string runtimePchFor(const CudaToolchain &TC,
                          const std::vector<std::string> &DeviceCommand);

/// Parses \p File on the device side, printing Clang's diagnostics.
llvm::Expected<std::unique_ptr<ParsedFile>>
parseUserFile(llvm::StringRef File, const CudaToolchain &TC,
              const CompileCommands &CC, const FileOverlay &Overlay = {});

/// Says what a parse left out (a warning per skipped host function) and,
/// with --verbose, what it repaired in memory.
void reportView(llvm::StringRef File, const DeviceView &View);

// Entry points of the subcommands; each returns the process exit code.
int runList(const Session &S);

/// The launch a candidate file makes when it differs from \p Base's: from
/// \p Explicit (--candidate-spec) or else the spec beside the candidate
/// (`rewrite -i` keeps it in agreement when a pass changed the launch);
/// nullopt when the candidate launches what \p Base says.
llvm::Expected<std::optional<LaunchSpec>>
candidateLaunch(llvm::StringRef CandidateFile, llvm::StringRef Explicit,
                const KernelSpec &Base);

/// The files of a `verify` or `profile` job as its command line names them.
struct JobFiles {
  std::string File, SpecFile, KernelName;
  std::string CandidateFile, CandidateSpec; ///< Empty: no candidate.
};

/// A job for \p F's kernel: its spec entry and its image compiled from
/// File; with a candidate file, the same kernel compiled from it, found by
/// name (a parameter that became const changes the mangled name), with the
/// launch it makes. With a candidate, errors say which of the two failed
/// ("baseline: ", "candidate: ").
llvm::Expected<VerifyJob> jobFromFiles(const Session &S, const JobFiles &F);

} // namespace tool
} // namespace astra

#endif
