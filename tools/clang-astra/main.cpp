//===- main.cpp - clang-astra command line --------------------------------===//
//
// clang-astra <subcommand> [options] <files> [-- <compiler flags>]
//
// The flags after `--` belong to the compiler, not to us, so argv is split
// there before llvm::cl sees it (llvm::cl would turn them into positionals).
//
//===----------------------------------------------------------------------===//
#include "Common.h"
#include "Subcommands.h"
#include "astra/Config.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace llvm;
using namespace astra::tool;

static void printVersion(raw_ostream &OS) {
  OS << "clang-astra " << ASTRA_VERSION << " (" << ASTRA_GIT_REVISION
     << "), built with LLVM " << ASTRA_LLVM_VERSION << "\n";
}

int main(int Argc, const char **Argv) {
  InitLLVM X(Argc, Argv);
  Session S;
  S.Argv0 = Argv[0];
  int CutAt = Argc;
  for (int I = 1; I < Argc; ++I)
    if (std::strcmp(Argv[I], "--") == 0) {
      CutAt = I;
      break;
    }
  for (int I = CutAt + 1; I < Argc; ++I)
    S.ExtraFlags.push_back(Argv[I]);
  S.HasDashDash = CutAt < Argc;
  for (int I = 0; I < CutAt; ++I)
    S.Args.push_back(Argv[I]);
  for (int I = 0; I < Argc; ++I)
    S.CommandLine += (I ? " " : "") + std::string(Argv[I]);

  if (int Bad = checkSubcommandName(CutAt, Argv))
    return Bad;
  if (int Bad = checkHelpPrefixes(CutAt, Argv))
    return Bad;

  cl::SetVersionPrinter(printVersion);
  cl::HideUnrelatedOptions(AstraCategory);
  if (!cl::ParseCommandLineOptions(
          CutAt, Argv,
          "clang-astra: make CUDA kernels faster, in place, with verified "
          "rewrites\n\n"
          "  clang-astra <subcommand> [options] <files> [-- <compiler flags>]\n"
          "  clang-astra <subcommand> --help   for a subcommand's options\n",
          &errs()))
    return 1;
  return dispatchSubcommand(S);
}
