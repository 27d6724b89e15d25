//===- astra-filecheck.cpp - FileCheck for machines without LLVM ----------===//
//
// The GPU machine has no LLVM, so the GPU lit tests cannot use LLVM's
// FileCheck there. This is a small driver over LLVM's FileCheck library with
// the options our tests use; the portable tarball ships it as bin/FileCheck.
//
//===----------------------------------------------------------------------===//
#include "llvm/FileCheck/FileCheck.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::opt<std::string> CheckFilename(cl::Positional, cl::Required,
                                          cl::desc("<check-file>"));
static cl::opt<std::string> InputFilename("input-file", cl::init("-"),
                                          cl::desc("File to check (stdin)"));
static cl::list<std::string> CheckPrefixes("check-prefix",
                                           cl::desc("Prefix to use"));
static cl::alias CheckPrefixesAlias("check-prefixes", cl::aliasopt(CheckPrefixes),
                                    cl::CommaSeparated, cl::NotHidden);
static cl::list<std::string> ImplicitCheckNot("implicit-check-not",
                                              cl::desc("Implicit CHECK-NOT"));
static cl::list<std::string> Defines("D", cl::Prefix,
                                     cl::desc("Define a pattern variable"));
static cl::opt<bool> StrictWhitespace("strict-whitespace");
static cl::opt<bool> MatchFullLines("match-full-lines");
static cl::opt<bool> IgnoreCase("ignore-case");
static cl::opt<bool> AllowEmpty("allow-empty");
static cl::opt<bool> AllowUnusedPrefixes("allow-unused-prefixes");
static cl::opt<bool> EnableVarScope("enable-var-scope");
static cl::opt<std::string> DumpInput("dump-input", cl::init("fail"),
                                      cl::desc("Ignored: the input is always "
                                               "printed on failure"));

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "astra-filecheck\n");

  FileCheckRequest Req;
  for (const std::string &P : CheckPrefixes)
    Req.CheckPrefixes.push_back(P);
  for (const std::string &P : ImplicitCheckNot)
    Req.ImplicitCheckNot.push_back(P);
  for (const std::string &D : Defines)
    Req.GlobalDefines.push_back(D);
  Req.NoCanonicalizeWhiteSpace = StrictWhitespace;
  Req.MatchFullLines = MatchFullLines;
  Req.IgnoreCase = IgnoreCase;
  Req.AllowEmptyInput = AllowEmpty;
  Req.AllowUnusedPrefixes = AllowUnusedPrefixes;
  Req.EnableVarScope = EnableVarScope;
  if (Req.CheckPrefixes.empty()) {
    Req.CheckPrefixes.push_back("CHECK");
    Req.IsDefaultCheckPrefix = true;
  }
  Req.CommentPrefixes = {"COM", "RUN"};

  FileCheck FC(Req);
  if (!FC.ValidateCheckPrefixes()) {
    errs() << "astra-filecheck: invalid check prefix\n";
    return 2;
  }
  SourceMgr SM;
  auto CheckBuf = MemoryBuffer::getFileOrSTDIN(CheckFilename, /*IsText=*/true);
  if (!CheckBuf) {
    errs() << "astra-filecheck: cannot read " << CheckFilename << "\n";
    return 2;
  }
  SmallString<4096> CheckStorage;
  StringRef CheckText = FC.CanonicalizeFile(**CheckBuf, CheckStorage);
  SM.AddNewSourceBuffer(MemoryBuffer::getMemBuffer(CheckText, CheckFilename),
                        SMLoc());
  if (FC.readCheckFile(SM, CheckText))
    return 2;

  auto InputBuf = MemoryBuffer::getFileOrSTDIN(InputFilename, /*IsText=*/true);
  if (!InputBuf) {
    errs() << "astra-filecheck: cannot read " << InputFilename << "\n";
    return 2;
  }
  if ((*InputBuf)->getBufferSize() == 0 && !AllowEmpty) {
    errs() << "astra-filecheck: error: empty input\n";
    return 2;
  }
  SmallString<4096> InputStorage;
  StringRef InputText = FC.CanonicalizeFile(**InputBuf, InputStorage);
  SM.AddNewSourceBuffer(MemoryBuffer::getMemBuffer(InputText, "<stdin>"),
                        SMLoc());
  if (FC.checkInput(SM, InputText))
    return 0;
  errs() << "\nInput was:\n<<<<<<\n" << InputText << ">>>>>>\n";
  return 1;
}
