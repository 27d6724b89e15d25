//===- CudaTools.cpp ------------------------------------------------------===//
#include "CudaTools.h"
#include "astra/Support/FileIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <optional>

using namespace llvm;

namespace astra {

TempFiles::~TempFiles() {
  for (const std::string &F : Files)
    sys::fs::remove(F);
  for (const std::string &D : Dirs)
    sys::fs::remove_directories(D);
}

Expected<std::string> TempFiles::file(StringRef Prefix, StringRef Suffix) {
  SmallString<256> Path;
  if (std::error_code EC = sys::fs::createTemporaryFile(Prefix, Suffix, Path))
    return createStringError(EC, "cannot create a temporary file: %s",
                             EC.message().c_str());
  Files.push_back(std::string(Path));
  return Files.back();
}

Expected<std::string> TempFiles::directory(StringRef Prefix) {
  SmallString<256> Path;
  if (std::error_code EC = sys::fs::createUniqueDirectory(Prefix, Path))
    return createStringError(EC, "cannot create a temporary directory: %s",
                             EC.message().c_str());
  Dirs.push_back(std::string(Path));
  return Dirs.back();
}

Expected<ToolRun> runTool(StringRef Program, ArrayRef<std::string> Args) {
  TempFiles Tmp;
  auto Log = Tmp.file(sys::path::filename(Program), "log");
  if (!Log)
    return Log.takeError();
  SmallVector<StringRef, 16> Argv(Args.begin(), Args.end());
  std::optional<StringRef> Redirects[] = {StringRef(""), StringRef(*Log),
                                          StringRef(*Log)};
  std::string ErrMsg;
  bool Failed = false;
  ToolRun R;
  R.ExitCode = sys::ExecuteAndWait(Program, Argv, std::nullopt, Redirects,
                                   /*SecondsToWait=*/0, /*MemoryLimit=*/0,
                                   &ErrMsg, &Failed);
  if (Failed)
    return createStringError(inconvertibleErrorCode(), "cannot run %s: %s",
                             Program.str().c_str(), ErrMsg.c_str());
  auto Out = readFile(*Log);
  if (!Out)
    return Out.takeError();
  R.Output = std::move(*Out);
  if (R.ExitCode < 0 && !ErrMsg.empty())
    R.Output += (R.Output.empty() ? "" : "\n") + ErrMsg;
  return R;
}

std::string firstLines(StringRef Output, unsigned MaxLines) {
  SmallVector<StringRef, 32> Lines;
  Output.trim().split(Lines, '\n', MaxLines + 1);
  std::string S;
  for (unsigned I = 0; I < Lines.size() && I < MaxLines; ++I)
    S += (I ? "\n" : "") + Lines[I].rtrim().str();
  if (Lines.size() > MaxLines)
    S += "\n...";
  return S;
}

} // namespace astra
