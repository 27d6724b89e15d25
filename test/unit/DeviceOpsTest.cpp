//===- DeviceOpsTest.cpp - The verifier's device helpers ------------------===//
//
// The helpers run on the GPU machine, where no ptxas or LLVM is installed;
// assembling their PTX here for the GPUs clang-astra targets catches a
// syntax or type error before a GPU is spent on it. The GPU tests
// (test/gpu/engine) check what they compute.
//
//===----------------------------------------------------------------------===//
#include "astra/Engine/DeviceOps.h"

#include "../../lib/Compile/CudaTools.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace astra;

namespace {

std::string findPtxas() {
  for (const char *P : {"/usr/local/cuda/bin/ptxas", "/usr/lib/cuda/bin/ptxas"})
    if (llvm::sys::fs::can_execute(P))
      return P;
  if (auto Found = llvm::sys::findProgramByName("ptxas"))
    return *Found;
  return "";
}

TEST(DeviceOpsTest, PtxHasBothEntries) {
  std::vector<std::string> E = ptxEntries(ptxDeviceOps());
  EXPECT_EQ(E, (std::vector<std::string>{"astra_fill", "astra_differs"}));
}

TEST(DeviceOpsTest, GeneratedPtxHasEveryEntry) {
  std::vector<std::string> E = ptxEntries(ptxVerifierKernels());
  EXPECT_EQ(E, (std::vector<std::string>{"astra_generate", "astra_compare",
                                         "astra_moments", "astra_counts",
                                         "astra_constant"}));
  // Compiled without contraction: a fused multiply-add rounds once where
  // the host rounds twice, and the values would differ. Every multiply and
  // add also names its rounding (.rn): ptxas may fuse those that do not.
  llvm::StringRef Ptx = ptxVerifierKernels();
  EXPECT_EQ(Ptx.find("fma."), llvm::StringRef::npos);
  for (const char *Loose : {"mul.f64", "add.f64", "sub.f64", "mul.f32",
                            "add.f32", "sub.f32"})
    EXPECT_EQ(Ptx.find(Loose), llvm::StringRef::npos) << Loose;
  EXPECT_NE(Ptx.find("mul.rn.f64"), llvm::StringRef::npos);
}

TEST(DeviceOpsTest, PtxAssemblesForEveryTargetedGpu) {
  std::string Ptxas = findPtxas();
  if (Ptxas.empty())
    GTEST_SKIP() << "no ptxas (CUDA toolkit) on this machine";
  TempFiles T;
  auto Ptx = T.file("device-ops", "ptx");
  ASSERT_TRUE(bool(Ptx)) << llvm::toString(Ptx.takeError());
  auto Cubin = T.file("device-ops", "cubin");
  ASSERT_TRUE(bool(Cubin)) << llvm::toString(Cubin.takeError());
  for (llvm::StringRef Text : {ptxDeviceOps(), ptxVerifierKernels()}) {
    {
      std::error_code EC;
      llvm::raw_fd_ostream OS(*Ptx, EC);
      ASSERT_FALSE(EC) << EC.message();
      OS << Text;
    }
    for (const char *Arch : {"sm_75", "sm_80", "sm_90"}) {
      auto R = runTool(Ptxas, {Ptxas, std::string("-arch=") + Arch, *Ptx,
                               "-o", *Cubin});
      ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
      EXPECT_EQ(R->ExitCode, 0) << Arch << ":\n" << R->Output;
    }
  }
}

} // namespace
