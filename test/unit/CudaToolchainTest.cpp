#include "astra/Frontend/CompileCommands.h"
#include "astra/Frontend/CudaToolchain.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace astra;

namespace {

TEST(CudaToolchain, GpuArchValidation) {
  EXPECT_TRUE(isValidGpuArch("sm_90"));
  EXPECT_TRUE(isValidGpuArch("sm_90a"));
  EXPECT_TRUE(isValidGpuArch("sm_80"));
  EXPECT_FALSE(isValidGpuArch("sm90"));
  EXPECT_FALSE(isValidGpuArch("compute_90"));
  EXPECT_FALSE(isValidGpuArch("sm_"));
  EXPECT_FALSE(isValidGpuArch("sm_9x"));
}

TEST(CudaToolchain, SmVersion) {
  EXPECT_EQ(CudaToolchain("/c", "sm_90a", "/r").smVersion(), 90u);
  EXPECT_EQ(CudaToolchain("/c", "sm_80", "/r").smVersion(), 80u);
}

TEST(CudaToolchain, MissingCudaIsExplained) {
  std::string Why;
  EXPECT_FALSE(isCudaInstallation("/nonexistent/cuda", &Why));
  EXPECT_NE(Why.find("/nonexistent/cuda"), std::string::npos);
}

TEST(CompileCommands, DeviceCommandDropsOutputsAndAddsCudaFlags) {
  CudaToolchain TC("/opt/cuda", "sm_90", "/res");
  std::vector<std::string> Cmd = {"clang++", "-O2", "-c", "-o", "k.o",
                                  "-MD",     "-MF", "k.d", "-DFOO=1",
                                  "-x",      "c++", "/src/k.cu"};
  std::vector<std::string> Out = makeDeviceCommand(Cmd, "/src/k.cu", TC);
  auto Has = [&](const std::string &A) {
    return std::find(Out.begin(), Out.end(), A) != Out.end();
  };
  EXPECT_TRUE(Has("-O2"));
  EXPECT_TRUE(Has("-DFOO=1"));
  EXPECT_FALSE(Has("-c"));
  EXPECT_FALSE(Has("k.o"));
  EXPECT_FALSE(Has("k.d"));
  EXPECT_FALSE(Has("c++")) << "the language is always CUDA";
  EXPECT_TRUE(Has("--cuda-device-only"));
  EXPECT_TRUE(Has("--cuda-gpu-arch=sm_90"));
  EXPECT_TRUE(Has("--cuda-path=/opt/cuda"));
  EXPECT_TRUE(Has("-resource-dir=/res"));
  ASSERT_GE(Out.size(), 3u);
  EXPECT_EQ(Out.back(), "/src/k.cu");
  EXPECT_EQ(Out[Out.size() - 2], "cuda");
  EXPECT_EQ(Out[Out.size() - 3], "-x");
}

TEST(CompileCommands, MissingDatabaseIsAnError) {
  auto CC = CompileCommands::create("/nonexistent/build", {});
  ASSERT_FALSE(bool(CC));
  std::string Msg = llvm::toString(CC.takeError());
  EXPECT_NE(Msg.find("/nonexistent/build"), std::string::npos);
}

} // namespace
