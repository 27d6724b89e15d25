//===- Subcommands.h - Registry of clang-astra subcommands -----*- C++ -*-===//
//
// Each subcommand lives in its own file with its options and registers
// itself here, so adding one touches no central switch.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_TOOLS_SUBCOMMANDS_H
#define ASTRA_TOOLS_SUBCOMMANDS_H

#include "Common.h"
#include "llvm/Support/CommandLine.h"

namespace astra {
namespace tool {

using RunFn = int (*)(const Session &);

struct SubcommandRegistration {
  SubcommandRegistration(llvm::cl::SubCommand &Cmd, RunFn Run);
};

/// Runs the subcommand named on the command line; prints usage when none.
int dispatchSubcommand(const Session &S);

/// Checks the subcommand word before llvm::cl parses the line: llvm::cl
/// takes an unknown one for a stray argument and, given --help too, prints
/// the overview and exits 0. Returns 0, or 1 after printing the error.
int checkSubcommandName(int Argc, const char **Argv);

/// llvm::cl makes every one-letter option groupable, -h (help) included, so
/// `-header-filter=.*` given to a subcommand without that option would
/// print help and exit 0, doing nothing. An argument that starts with -h
/// and is not an option of the subcommand is an error here instead.
/// Returns 0, or 1 after printing the error.
int checkHelpPrefixes(int Argc, const char **Argv);

} // namespace tool
} // namespace astra

#endif
