//===- ParseCudaForTest.h - A .cu file parsed for a unit test ---*- C++ -*-===//
//
// Unit tests of AST logic parse their code with the real clang and the real
// CUDA headers (CUDA_PATH, else /usr/local/cuda), as the tool does.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_TEST_UNIT_PARSECUDAFORTEST_H
#define ASTRA_TEST_UNIT_PARSECUDAFORTEST_H

#include "astra/Config.h"
#include "astra/Frontend/CompileCommands.h"
#include "astra/Frontend/CudaParser.h"
#include "astra/Frontend/CudaToolchain.h"

#include <cstdlib>

namespace astra {

/// \p Code parsed as the .cu file \p Path (in memory only).
inline llvm::Expected<std::unique_ptr<ParsedFile>>
parseCudaForTest(llvm::StringRef Path, llvm::StringRef Code) {
  const char *Cuda = std::getenv("CUDA_PATH");
  CudaToolchain TC(Cuda ? Cuda : "/usr/local/cuda", "sm_90",
                   ASTRA_BUILD_RESOURCE_DIR);
  auto CC = CompileCommands::create("", {"-std=c++17"});
  if (!CC)
    return CC.takeError();
  auto Cmd = CC->deviceCommand(Path.str(), TC);
  if (!Cmd)
    return Cmd.takeError();
  ParseOptions PO;
  PO.Overlay[Path.str()] = Code.str();
  return parseCuda(*Cmd, PO);
}

} // namespace astra

#endif
