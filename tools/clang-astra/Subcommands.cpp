//===- Subcommands.cpp ----------------------------------------------------===//
#include "Subcommands.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <vector>

using namespace llvm;

namespace astra {
namespace tool {

namespace {
struct Entry {
  cl::SubCommand *Cmd;
  RunFn Run;
};
std::vector<Entry> &registry() {
  static std::vector<Entry> R;
  return R;
}
} // namespace

SubcommandRegistration::SubcommandRegistration(cl::SubCommand &Cmd, RunFn Run) {
  registry().push_back({&Cmd, Run});
}

int dispatchSubcommand(const Session &S) {
  for (const Entry &E : registry())
    if (*E.Cmd)
      return E.Run(S);
  errs() << "clang-astra: no subcommand given. Subcommands:\n";
  std::vector<Entry> Sorted = registry();
  std::sort(Sorted.begin(), Sorted.end(), [](const Entry &A, const Entry &B) {
    return A.Cmd->getName() < B.Cmd->getName();
  });
  for (const Entry &E : Sorted)
    errs() << "  " << E.Cmd->getName() << "\t" << E.Cmd->getDescription() << "\n";
  errs() << "Run 'clang-astra <subcommand> --help' for its options.\n";
  return 1;
}

} // namespace tool
} // namespace astra
