//===- ConfigFile.h - .clang-astra files for rewrite ------------*- C++ -*-===//
//
// A `.clang-astra` file (YAML) holds a project's rewrite settings, found the
// way clang-tidy finds `.clang-tidy`: the nearest one in the source file's
// folder or a folder above it. The command line overrides what it says.
//
//   Passes: 'restrict-const,fast-math,-vectorize'
//   PassOptions:
//     unroll.factor: 4
//   HeaderFilterRegex: '.*'
//   ExcludeHeaderFilterRegex: ''
//   FastMath: false
//   AllowDouble: false
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_TOOLS_CONFIGFILE_H
#define ASTRA_TOOLS_CONFIGFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>

namespace astra {
namespace tool {

/// The name looked for upward from each source file.
constexpr llvm::StringLiteral ConfigFileName = ".clang-astra";

/// What a config file sets; unset fields fall back to the defaults.
struct RewriteConfig {
  std::optional<std::string> Passes;
  std::map<std::string, std::string> PassOptions;
  std::optional<std::string> HeaderFilterRegex, ExcludeHeaderFilterRegex;
  std::optional<bool> FastMath, AllowDouble;
  /// The file it was read from; empty for the built-in defaults.
  std::string Source;
};

/// Reads and checks one config file: unknown keys, unknown passes, bad pass
/// parameters and invalid regular expressions are errors naming the file
/// (and line, for YAML errors).
llvm::Expected<RewriteConfig> readConfigFile(llvm::StringRef Path);

/// The config of \p SourceFile: \p Explicit when given (`--config-file`),
/// else the nearest `.clang-astra` from its folder up, else the defaults.
llvm::Expected<RewriteConfig> configFor(llvm::StringRef SourceFile,
                                        llvm::StringRef Explicit);

/// \p C as a config file (what `--dump-config` prints); it reads back as
/// the same settings.
std::string dumpConfig(const RewriteConfig &C);

} // namespace tool
} // namespace astra

#endif
