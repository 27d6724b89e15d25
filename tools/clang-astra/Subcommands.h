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

} // namespace tool
} // namespace astra

#endif
