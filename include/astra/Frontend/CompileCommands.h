//===- CompileCommands.h - Compile flags for each input file ---*- C++ -*-===//
//
// Users give flags the way clang-tidy takes them: `-p <build-dir>` with a
// compile_commands.json, or `-- <flags>` after the files. This class answers
// "how is this file compiled" and turns the answer into a device-side CUDA
// parse. Translation of nvcc command lines lives here too, so every subcommand
// sees clang flags.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_FRONTEND_COMPILECOMMANDS_H
#define ASTRA_FRONTEND_COMPILECOMMANDS_H

#include "astra/Frontend/CudaToolchain.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace astra {

class CompileCommands {
public:
  /// \p BuildDir is the -p argument (empty: none). \p ExtraFlags are the flags
  /// after `--`; with a database they are appended to each file's command,
  /// without one they are the command. With neither, files are parsed with
  /// the CUDA defaults alone.
  static llvm::Expected<CompileCommands>
  create(llvm::StringRef BuildDir, std::vector<std::string> ExtraFlags);

  /// The clang command line (argv[0] first, the file last) that parses the
  /// device side of \p File. Fails when a database was given but has no entry
  /// for \p File.
  llvm::Expected<std::vector<std::string>>
  deviceCommand(llvm::StringRef File, const CudaToolchain &TC) const;

  /// The flags of the build's nvcc command for \p File that shape device
  /// code (nvccDeviceFlags), when the build compiles it with nvcc (an nvcc
  /// database entry, or nvcc flags after `--`); nullopt for a clang build.
  /// A timing build with nvcc takes them, so that what is timed is what the
  /// build ships.
  llvm::Expected<std::optional<std::vector<std::string>>>
  nvccFlags(llvm::StringRef File) const;

  bool hasDatabase() const { return DB != nullptr; }

  /// The CUDA sources the database lists, as clang-tidy takes a database's
  /// files when `-p` comes without any: absolute, sorted, each once; a file
  /// counts when it ends in `.cu` or an nvcc entry compiles it. Empty
  /// without a database.
  std::vector<std::string> databaseSources() const;

  /// Receives what the translation of a build's command did to it (dropped
  /// nvcc flags, the arch chosen), once per file, so that `--verbose` can
  /// show it whichever component asked for the command.
  using NoteHandler = std::function<void(llvm::StringRef File,
                                         llvm::StringRef Note)>;
  void setNoteHandler(NoteHandler H) { OnNote = std::move(H); }

private:
  static std::string absolutePath(llvm::StringRef File);
  /// The build's command for \p File (\p Abs, its absolute path; argv[0]
  /// first, the file last), with response files expanded and the flags after
  /// `--` added.
  llvm::Expected<std::vector<std::string>>
  buildCommand(llvm::StringRef File, llvm::StringRef Abs,
               std::vector<std::string> &Notes) const;

  std::shared_ptr<clang::tooling::CompilationDatabase> DB;
  mutable std::shared_ptr<clang::tooling::CompilationDatabase> Interpolated;
  std::string BuildDir;
  std::vector<std::string> Extra;
  /// The flags after `--` are nvcc's (--driver-mode=nvcc, or detected).
  bool ExtraAreNvcc = false;
  NoteHandler OnNote;
  /// Files whose notes were already reported.
  mutable std::shared_ptr<std::set<std::string>> Noted =
      std::make_shared<std::set<std::string>>();
};

/// True when \p Argv0 names nvcc (nvcc, nvcc.exe, or a path to either).
bool isNvccCommand(llvm::StringRef Argv0);

/// True when \p Flags (as typed after `--`) hold a flag that only nvcc has:
/// an arch (-arch=sm_90, -gencode), --use_fast_math, -Xcompiler, -Xptxas,
/// -rdc, -lineinfo, --expt-relaxed-constexpr, ... They are then translated
/// as an nvcc command line.
bool looksLikeNvccFlags(const std::vector<std::string> &Flags);

/// The flags of an nvcc command line (argv[0] first) that a timing build
/// with nvcc needs besides what compileWithNvcc takes from the device
/// command (-D, -U, -I, -isystem, -include, -std): --use_fast_math, --ftz,
/// --prec-div, --prec-sqrt, --fmad, -Xptxas, --maxrregcount, -lineinfo,
/// -rdc, --expt-relaxed-constexpr, --extended-lambda, --default-stream,
/// -Xcudafe, and flags this table does not know. Not: outputs, dependency
/// files, inputs, the arch (the timing build's own), the host compiler,
/// linking, and -Werror.
std::vector<std::string>
nvccDeviceFlags(const std::vector<std::string> &Command, llvm::StringRef File);

/// The clang flags for an nvcc command line (argv[0] first; \p File is its
/// source), without the toolchain's flags and the arch (makeDeviceCommand
/// adds both). Every flag dropped gets a note in \p Notes.
std::vector<std::string>
translateNvccFlags(const std::vector<std::string> &Command,
                   llvm::StringRef File, std::vector<std::string> &Notes);

/// Expands `@file` response files (clang, gcc and nvcc) and nvcc's
/// `--options-file FILE` / `-optf FILE` in \p Command. Relative file names are
/// relative to \p Directory (the database entry's directory). Fails, naming
/// the file, when one cannot be read.
llvm::Expected<std::vector<std::string>>
expandResponseFiles(const std::vector<std::string> &Command,
                    llvm::StringRef Directory);

/// The GPU arches an nvcc or clang command line compiles for: every real
/// arch it names (-arch, -gencode, --generate-code, -code, --cuda-gpu-arch,
/// --offload-arch), in order and once each; compute_XX counts as sm_XX when
/// no real arch is named. Empty when the command names none.
std::vector<std::string>
buildGpuArches(const std::vector<std::string> &Command);

/// \p Arch with the `a` or `f` suffix the build's arches give its number
/// (sm_90 and a build of sm_90a: sm_90a), else \p Arch as it is.
std::string gpuArchForBuild(llvm::StringRef Arch,
                            const std::vector<std::string> &BuildArches);

/// Turns a compile command (clang, gcc or nvcc style, argv[0] first) for
/// \p File into a clang device-side command for \p TC. Output, dependency
/// and host-only flags are dropped; the toolchain's CUDA flags are added.
/// Flags that nvcc knows and clang does not are translated or dropped (see
/// docs/compile-flags.md); each dropped flag is reported in \p Notes.
std::vector<std::string>
makeDeviceCommand(const std::vector<std::string> &Command, llvm::StringRef File,
                  const CudaToolchain &TC,
                  std::vector<std::string> *Notes = nullptr);

} // namespace astra

#endif
