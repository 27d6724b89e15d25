//===- CompileCommandsTest.cpp - nvcc command lines as clang flags --------===//
//
// The translation table of docs/compile-flags.md, one row or a few per test:
// what clang receives for each nvcc flag, which arch is parsed for, and that
// every dropped flag is reported.
//
//===----------------------------------------------------------------------===//
#include "astra/Frontend/CompileCommands.h"
#include "astra/Frontend/CudaToolchain.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace astra;

namespace {

const char *const Src = "/src/k.cu";

/// The toolchain as `detect` makes it when no --cuda-gpu-arch was given.
CudaToolchain defaultToolchain() {
  CudaToolchain TC("/opt/cuda", "sm_90", "/res");
  TC.setGpuArchIsExplicit(false);
  return TC;
}

struct Translated {
  std::vector<std::string> Cmd, Notes;
  bool has(const std::string &A) const {
    return std::find(Cmd.begin(), Cmd.end(), A) != Cmd.end();
  }
  bool hasPair(const std::string &A, const std::string &B) const {
    for (size_t I = 0; I + 1 < Cmd.size(); ++I)
      if (Cmd[I] == A && Cmd[I + 1] == B)
        return true;
    return false;
  }
  bool noted(const std::string &Part) const {
    return std::any_of(Notes.begin(), Notes.end(), [&](const std::string &N) {
      return N.find(Part) != std::string::npos;
    });
  }
  /// The --cuda-gpu-arch the command parses for.
  std::string arch() const {
    std::string A;
    for (const std::string &F : Cmd)
      if (F.rfind("--cuda-gpu-arch=", 0) == 0) {
        EXPECT_TRUE(A.empty()) << "two --cuda-gpu-arch flags";
        A = F.substr(16);
      }
    return A;
  }
};

Translated nvcc(std::vector<std::string> Args,
                const CudaToolchain &TC = defaultToolchain()) {
  std::vector<std::string> Cmd = {"/usr/local/cuda/bin/nvcc"};
  Cmd.insert(Cmd.end(), Args.begin(), Args.end());
  Cmd.push_back(Src);
  Translated T;
  T.Cmd = makeDeviceCommand(Cmd, Src, TC, &T.Notes);
  EXPECT_EQ(T.Cmd.front(), "clang++");
  EXPECT_EQ(T.Cmd.back(), Src);
  return T;
}

TEST(CompileCommandsNvcc, DetectsNvccByBaseName) {
  EXPECT_TRUE(isNvccCommand("nvcc"));
  EXPECT_TRUE(isNvccCommand("/usr/local/cuda/bin/nvcc"));
  EXPECT_TRUE(isNvccCommand("nvcc.exe"));
  EXPECT_TRUE(isNvccCommand("C:\\CUDA\\bin\\nvcc.exe"));
  EXPECT_FALSE(isNvccCommand("/usr/bin/clang++"));
  EXPECT_FALSE(isNvccCommand("g++"));
  EXPECT_FALSE(isNvccCommand("/opt/nvcc-wrapper"));
}

using Arches = std::vector<std::string>;

Arches archesOf(std::vector<std::string> Args) {
  Args.insert(Args.begin(), "nvcc");
  return buildGpuArches(Args);
}

TEST(CompileCommandsNvcc, ArchForms) {
  EXPECT_EQ(archesOf({"-arch=sm_80"}), Arches{"sm_80"});
  EXPECT_EQ(archesOf({"-arch", "sm_75"}), Arches{"sm_75"});
  EXPECT_EQ(archesOf({"--gpu-architecture=sm_86"}), Arches{"sm_86"});
  EXPECT_EQ(archesOf({"--gpu-architecture", "compute_80"}), Arches{"sm_80"});
  EXPECT_EQ(archesOf({"-gencode", "arch=compute_80,code=sm_80"}),
            Arches{"sm_80"});
  EXPECT_EQ(archesOf({"-gencode=arch=compute_90a,code=sm_90a"}),
            Arches{"sm_90a"});
  // CMake's spelling for CUDA_ARCHITECTURES 90.
  EXPECT_EQ(archesOf({"--generate-code=arch=compute_90,code=[compute_90,sm_90]"}),
            Arches{"sm_90"});
  EXPECT_EQ(
      archesOf({"--generate-code", "arch=compute_75,code=\"sm_75,compute_75\""}),
      Arches{"sm_75"});
  EXPECT_EQ(archesOf({"-code=sm_86", "-arch=compute_80"}), Arches{"sm_86"});
  EXPECT_EQ(archesOf({"-gencode", "arch=compute_70,code=sm_70", "-gencode",
                      "arch=compute_90,code=sm_90", "-gencode",
                      "arch=compute_80,code=sm_80"}),
            (Arches{"sm_70", "sm_90", "sm_80"}));
  // A real arch is preferred over a virtual one (the build runs SASS).
  EXPECT_EQ(archesOf({"-gencode=arch=compute_100,code=compute_100",
                      "-gencode=arch=compute_80,code=sm_80"}),
            Arches{"sm_80"});
  EXPECT_EQ(archesOf({"-O3"}), Arches{});
  // -arch=native names no arch that can be read off the command.
  EXPECT_EQ(archesOf({"-arch=native"}), Arches{});
}

TEST(CompileCommandsNvcc, ArchIsTheGpusWithTheBuildsSuffix) {
  // The toolchain's arch (the GPU's, or sm_90) is parsed for, not the
  // newest of the build's: sgl-kernel builds sm_90a, sm_100a and sm_120a.
  EXPECT_EQ(nvcc({"-gencode=arch=compute_90a,code=sm_90a",
                  "-gencode=arch=compute_100a,code=sm_100a",
                  "-gencode=arch=compute_120a,code=sm_120a"})
                .arch(),
            "sm_90a");
  Translated T = nvcc({"-gencode", "arch=compute_75,code=sm_75", "-gencode",
                       "arch=compute_86,code=sm_86"});
  EXPECT_EQ(T.arch(), "sm_90");
  EXPECT_TRUE(T.noted("GPU arch sm_90 (the default); the build compiles for "
                      "sm_75, sm_86"));
  EXPECT_TRUE(nvcc({"-arch=sm_90a"}).noted(
      "GPU arch sm_90a (the default, sm_90, with the build's suffix)"));
  EXPECT_EQ(nvcc({"-O3"}).arch(), "sm_90");
  // The `a` features are a superset of the plain and the `f` ones.
  EXPECT_EQ(gpuArchForBuild("sm_90", {"sm_90", "sm_90a"}), "sm_90a");
  EXPECT_EQ(gpuArchForBuild("sm_100", {"sm_100f"}), "sm_100f");
  EXPECT_EQ(gpuArchForBuild("sm_100", {"sm_100a", "sm_100f"}), "sm_100a");
  EXPECT_EQ(gpuArchForBuild("sm_100", {"sm_100f", "sm_100a"}), "sm_100a");
  EXPECT_EQ(gpuArchForBuild("sm_90", {"sm_100a"}), "sm_90");
}

TEST(CompileCommandsNvcc, CommandLineArchWinsOverTheBuild) {
  CudaToolchain TC("/opt/cuda", "sm_80", "/res"); // --cuda-gpu-arch=sm_80
  ASSERT_TRUE(TC.gpuArchIsExplicit());
  Translated T = nvcc({"-arch=sm_90"}, TC);
  EXPECT_EQ(T.arch(), "sm_80");
  EXPECT_TRUE(T.noted("the build compiles for sm_90; parsing for sm_80"));
}

TEST(CompileCommandsNvcc, FlagsAfterDashDashAreNvccsWhenOnlyNvccHasThem) {
  EXPECT_TRUE(looksLikeNvccFlags({"-O3", "--use_fast_math"}));
  EXPECT_TRUE(looksLikeNvccFlags({"-arch=sm_90", "-Iinc"}));
  EXPECT_TRUE(looksLikeNvccFlags({"-gencode", "arch=compute_90,code=sm_90"}));
  EXPECT_TRUE(looksLikeNvccFlags({"-Xptxas", "-v"}));
  EXPECT_TRUE(looksLikeNvccFlags({"-Xcompiler=-fPIC"}));
  EXPECT_TRUE(looksLikeNvccFlags({"--expt-relaxed-constexpr"}));
  EXPECT_TRUE(looksLikeNvccFlags({"-rdc=true"}));
  EXPECT_TRUE(looksLikeNvccFlags({"-lineinfo"}));
  EXPECT_FALSE(looksLikeNvccFlags({"-O3", "-DN=4", "-Iinc", "-std=c++17"}));
  EXPECT_FALSE(looksLikeNvccFlags({"-ffast-math", "-include", "x.h"}));
  EXPECT_FALSE(looksLikeNvccFlags({}));
}

std::vector<std::string> afterDashDash(std::vector<std::string> Extra,
                                       const CudaToolchain &TC,
                                       std::vector<std::string> *Notes =
                                           nullptr) {
  auto CC = CompileCommands::create("", std::move(Extra));
  EXPECT_TRUE(bool(CC));
  if (!CC)
    return {};
  if (Notes)
    CC->setNoteHandler([Notes](llvm::StringRef, llvm::StringRef N) {
      Notes->push_back(N.str());
    });
  auto Cmd = CC->deviceCommand(Src, TC);
  EXPECT_TRUE(bool(Cmd));
  return Cmd ? *Cmd : std::vector<std::string>{};
}

TEST(CompileCommandsNvcc, NvccFlagsAfterDashDash) {
  Translated T;
  T.Cmd = afterDashDash({"-O3", "--use_fast_math", "-arch=sm_90a", "-Iinc",
                         "-Xptxas", "-v", "-lineinfo"},
                        defaultToolchain(), &T.Notes);
  EXPECT_EQ(T.arch(), "sm_90a");
  EXPECT_TRUE(T.has("-ffast-math"));
  EXPECT_TRUE(T.has("-fcuda-flush-denormals-to-zero"));
  EXPECT_TRUE(T.has("-Iinc"));
  EXPECT_FALSE(T.has("-Xptxas"));
  EXPECT_FALSE(T.has("-v"));
  EXPECT_TRUE(T.noted("dropped nvcc flag '-lineinfo'"));
  // --driver-mode=nvcc says so where no flag is nvcc's alone.
  Translated D;
  D.Cmd = afterDashDash({"--driver-mode=nvcc", "-DN=4"}, defaultToolchain());
  EXPECT_TRUE(D.has("-DN=4"));
  EXPECT_FALSE(D.has("--driver-mode=nvcc"));
  // Clang flags stay clang's.
  Translated C;
  C.Cmd = afterDashDash({"-ffast-math", "-DN=4"}, defaultToolchain());
  EXPECT_TRUE(C.has("-ffast-math"));
  EXPECT_EQ(C.arch(), "sm_90");
  EXPECT_FALSE(bool(CompileCommands::create("", {"--driver-mode=icc"})));
}

TEST(CompileCommandsNvcc, CompatFlagsComeFirst) {
  CudaToolchain TC = defaultToolchain();
  CudaVersion V;
  V.Major = 13;
  V.Minor = 0;
  V.Build = 88;
  TC.setNvccCompat(true, "/share/__astra_nvcc_compat.h", V);
  Translated T = nvcc({"-include", "user.h", "-DX"}, TC);
  auto At = [&](const std::string &A) {
    return std::find(T.Cmd.begin(), T.Cmd.end(), A) - T.Cmd.begin();
  };
  EXPECT_TRUE(T.has("-D__NVCC__=1"));
  EXPECT_TRUE(T.has("-D__CUDACC_VER_MAJOR__=13"));
  EXPECT_TRUE(T.has("-D__CUDACC_VER_MINOR__=0"));
  EXPECT_TRUE(T.has("-D__CUDACC_VER_BUILD__=88"));
  EXPECT_LT(At("/share/__astra_nvcc_compat.h"), At("user.h"));
  EXPECT_TRUE(hasNvccCompat(T.Cmd));
  EXPECT_FALSE(hasNvccCompat(nvcc({"-DX"}).Cmd));
}

TEST(CompileCommandsNvcc, DefinesIncludesAndStd) {
  Translated T = nvcc({"-DA=1", "-D", "B", "--define-macro=C", "-UD", "-I/inc1",
                       "-I", "/inc2", "--include-path=/inc3", "-isystem",
                       "/sys1", "-isystem/sys2", "--system-include=/sys3",
                       "--pre-include", "/pre.h", "--std", "c++17"});
  for (const char *F : {"-DA=1", "-DB", "-DC", "-UD", "-I/inc1", "-I/inc2",
                        "-I/inc3", "-std=c++17"})
    EXPECT_TRUE(T.has(F)) << F;
  EXPECT_TRUE(T.hasPair("-isystem", "/sys1"));
  EXPECT_TRUE(T.hasPair("-isystem", "/sys2"));
  EXPECT_TRUE(T.hasPair("-isystem", "/sys3"));
  EXPECT_TRUE(T.hasPair("-include", "/pre.h"));
  EXPECT_TRUE(nvcc({"-std=c++20"}).has("-std=c++20"));
}

TEST(CompileCommandsNvcc, RdcAndFastMath) {
  EXPECT_TRUE(nvcc({"-rdc=true"}).has("-fgpu-rdc"));
  EXPECT_TRUE(nvcc({"--relocatable-device-code", "true"}).has("-fgpu-rdc"));
  EXPECT_TRUE(nvcc({"-dc"}).has("-fgpu-rdc"));
  EXPECT_FALSE(nvcc({"-rdc=false"}).has("-fgpu-rdc"));

  Translated FM = nvcc({"--use_fast_math"});
  for (const char *F : {"-ffast-math", "-fno-finite-math-only",
                        "-fgpu-approx-transcendentals",
                        "-fcuda-flush-denormals-to-zero"})
    EXPECT_TRUE(FM.has(F)) << F;
  Translated Ftz = nvcc({"--ftz=true"});
  EXPECT_TRUE(Ftz.has("-fcuda-flush-denormals-to-zero"));
  EXPECT_FALSE(Ftz.has("-ffast-math"));
  EXPECT_TRUE(nvcc({"--fmad=false"}).has("-ffp-contract=off"));
  EXPECT_TRUE(nvcc({"--default-stream", "per-thread"})
                  .has("-fgpu-default-stream=per-thread"));
}

TEST(CompileCommandsNvcc, HostCompilerFlags) {
  Translated T = nvcc({"-Xcompiler=-Wall,-DHOST=1,-fPIC", "-Xcompiler",
                       "-O2,-I/hinc", "--compiler-options", "-fopenmp",
                       "-Xcompiler=-isystem,/hsys"});
  EXPECT_TRUE(T.has("-DHOST=1"));
  EXPECT_TRUE(T.has("-I/hinc"));
  EXPECT_TRUE(T.hasPair("-isystem", "/hsys"));
  for (const char *F : {"-Wall", "-fPIC", "-O2", "-fopenmp"}) {
    EXPECT_FALSE(T.has(F)) << F;
    EXPECT_TRUE(T.noted(std::string("'") + F + "' (from -Xcompiler)")) << F;
  }
}

TEST(CompileCommandsNvcc, DroppedFlagsAndTheirValues) {
  Translated T = nvcc(
      {"--expt-relaxed-constexpr", "--extended-lambda", "--expt-extended-lambda",
       "-lineinfo", "-G", "-g", "-ccbin", "/usr/bin/g++-12",
       "--compiler-bindir=/opt/gcc", "--threads", "4", "-t=2",
       "-Werror=all-warnings", "--diag-suppress=177,550", "-diag-suppress",
       "20012", "-Xptxas", "-v,-O3", "-Xnvlink=--verbose", "-Xcudafe",
       "--display_error_number", "-x", "cu", "-forward-unknown-to-host-compiler",
       "-Wno-deprecated-gpu-targets"});
  // Only clang's flags and the toolchain's remain.
  for (const std::string &A : T.Cmd) {
    EXPECT_NE(A, "/usr/bin/g++-12");
    EXPECT_NE(A, "4");
    EXPECT_NE(A, "20012");
    EXPECT_NE(A, "cu");
    EXPECT_NE(A, "-v,-O3");
    EXPECT_EQ(A.find("diag"), std::string::npos) << A;
    EXPECT_EQ(A.find("lambda"), std::string::npos) << A;
    EXPECT_NE(A, "-G");
    EXPECT_NE(A, "-g");
  }
  for (const char *N :
       {"'--expt-relaxed-constexpr'", "'--extended-lambda'", "'-lineinfo'",
        "'-G'", "'-ccbin /usr/bin/g++-12'", "'--threads 4'",
        "'-Werror=all-warnings'", "'--diag-suppress=177,550'",
        "'-Xptxas -v,-O3'", "'-Xcudafe --display_error_number'", "'-x cu'"})
    EXPECT_TRUE(T.noted(N)) << N;
  EXPECT_TRUE(T.hasPair("-x", "cuda"));
}

TEST(CompileCommandsNvcc, UnknownFlagsAreDroppedWithANote) {
  Translated T = nvcc({"--some-future-flag", "-O3", "extra.o"});
  EXPECT_FALSE(T.has("--some-future-flag"));
  EXPECT_FALSE(T.has("extra.o"));
  EXPECT_TRUE(T.has("-O3"));
  EXPECT_TRUE(T.noted("dropped unknown nvcc flag '--some-future-flag'"));
  EXPECT_TRUE(T.noted("'extra.o'"));
}

TEST(CompileCommandsNvcc, OutputsAreDropped) {
  Translated T = nvcc({"-c", "-o", "k.o", "-MD", "-MT", "k.o", "-MF", "k.d"});
  for (const char *F : {"-c", "-o", "k.o", "-MD", "-MT", "-MF", "k.d"})
    EXPECT_FALSE(T.has(F)) << F;
}

TEST(CompileCommandsNvcc, ClangCommandsKeepTheirBehaviour) {
  CudaToolchain TC = defaultToolchain();
  std::vector<std::string> Notes;
  std::vector<std::string> Out =
      makeDeviceCommand({"clang++", "--cuda-gpu-arch=sm_80", "-ffast-math",
                         "-Xclang", "-foo", "-DX", Src},
                        Src, TC, &Notes);
  EXPECT_TRUE(std::count(Out.begin(), Out.end(), "--cuda-gpu-arch=sm_90"));
  EXPECT_TRUE(std::count(Out.begin(), Out.end(), "-ffast-math"));
  EXPECT_TRUE(std::count(Out.begin(), Out.end(), "-foo"));
  EXPECT_TRUE(Notes.empty());
}

class ResponseFiles : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("astra-rsp", Dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Dir); }
  void write(llvm::StringRef Name, llvm::StringRef Text) {
    llvm::SmallString<256> P(Dir);
    llvm::sys::path::append(P, Name);
    std::error_code EC;
    llvm::raw_fd_ostream OS(P, EC);
    ASSERT_FALSE(EC);
    OS << Text;
  }
  llvm::SmallString<256> Dir;
};

TEST_F(ResponseFiles, NvccOptionsFileAndAtFile) {
  write("inc.rsp", "-I\"/with space/inc\" -DFROM_RSP\n");
  write("more.rsp", "-DMORE @inc.rsp\n");
  auto Out = expandResponseFiles(
      {"nvcc", "--options-file", "inc.rsp", "-optf=more.rsp", "@more.rsp",
       "-c", Src},
      Dir);
  ASSERT_TRUE(bool(Out)) << llvm::toString(Out.takeError());
  std::vector<std::string> Want = {"nvcc", "-I/with space/inc", "-DFROM_RSP",
                                   "-DMORE", "-I/with space/inc", "-DFROM_RSP",
                                   "-DMORE", "-I/with space/inc", "-DFROM_RSP",
                                   "-c", Src};
  EXPECT_EQ(*Out, Want);
}

TEST_F(ResponseFiles, MissingFileIsAnErrorNamingIt) {
  auto Out = expandResponseFiles({"nvcc", "--options-file", "gone.rsp", Src},
                                 Dir);
  ASSERT_FALSE(bool(Out));
  std::string Msg = llvm::toString(Out.takeError());
  EXPECT_NE(Msg.find("gone.rsp"), std::string::npos) << Msg;
}

TEST_F(ResponseFiles, SelfInclusionEnds) {
  write("loop.rsp", "-DX @loop.rsp\n");
  auto Out = expandResponseFiles({"clang++", "@loop.rsp", Src}, Dir);
  ASSERT_FALSE(bool(Out));
  std::string Msg = llvm::toString(Out.takeError());
  EXPECT_NE(Msg.find("loop.rsp"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("does one include itself?"), std::string::npos) << Msg;
}

} // namespace
