//===- Subcommands.cpp ----------------------------------------------------===//
#include "Subcommands.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/WithColor.h"
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

int checkSubcommandName(int Argc, const char **Argv) {
  if (Argc < 2 || Argv[1][0] == '-' || Argv[1][0] == '@')
    return 0;
  StringRef Word = Argv[1];
  std::vector<StringRef> Names;
  for (const Entry &E : registry()) {
    if (E.Cmd->getName() == Word)
      return 0;
    Names.push_back(E.Cmd->getName());
  }
  std::sort(Names.begin(), Names.end());
  std::string Best;
  unsigned BestDist = 3;
  for (StringRef N : Names)
    if (unsigned D = Word.edit_distance(N); D < BestDist) {
      BestDist = D;
      Best = N.str();
    }
  WithColor::error(errs(), "clang-astra")
      << "unknown subcommand '" << Word << "'"
      << (Best.empty() ? "" : "; did you mean '" + Best + "'?")
      << " (subcommands: " << join(Names, ", ") << ")\n";
  return 1;
}

int checkHelpPrefixes(int Argc, const char **Argv) {
  cl::SubCommand *Sub = &cl::SubCommand::getTopLevel();
  int First = 1;
  if (Argc > 1 && Argv[1][0] != '-')
    for (const Entry &E : registry())
      if (E.Cmd->getName() == Argv[1]) {
        Sub = E.Cmd;
        First = 2;
      }
  const auto &Options = cl::getRegisteredOptions(*Sub);
  for (int I = First; I < Argc; ++I) {
    StringRef A = Argv[I];
    if (!A.starts_with("-h") || A == "-h")
      continue;
    StringRef Name = A.drop_front().split('=').first;
    if (Options.count(Name))
      continue;
    WithColor::error(errs(), "clang-astra")
        << "unknown option '" << A << "'"
        << (Sub->getName().empty() ? "" : " for " + Sub->getName().str())
        << " (not read as -h: see --help for the options)\n";
    return 1;
  }
  return 0;
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
