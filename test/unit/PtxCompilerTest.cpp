#include "astra/Compile/PtxCompiler.h"
#include "astra/Config.h"
#include "astra/Frontend/CompileCommands.h"
#include "astra/Support/FileIO.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <cstdlib>
#include <set>

using namespace astra;
using namespace llvm;

namespace {

// Captured here from `ptxas -v -arch=sm_90` of CUDA 13.0 (V13.0.88) on PTX
// that clang 22 made: kernels with shared memory and a barrier, a local
// array (stack), template instantiations, and a __noinline__ device function
// whose "Function properties" must not become a kernel.
constexpr const char *Cuda13Report = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z4tmplI6__halfEvPT_' for 'sm_90'
ptxas info    : Function properties for _Z4tmplI6__halfEvPT_
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 39.192 ms
ptxas info    : Compiling entry function '_Z4tmplIfEvPT_' for 'sm_90'
ptxas info    : Function properties for _Z4tmplIfEvPT_
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 1.441 ms
ptxas info    : Compiling entry function '_Z5stackPfi' for 'sm_90'
ptxas info    : Function properties for _Z5stackPfi
    400 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 17 registers, used 0 barriers, 400 bytes cumulative stack size
ptxas info    : Compile time = 13.038 ms
ptxas info    : Compiling entry function '_Z4smemPfPKf' for 'sm_90'
ptxas info    : Function properties for _Z4smemPfPKf
    256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 30 registers, used 1 barriers, 256 bytes cumulative stack size, 1024 bytes smem
ptxas info    : Compile time = 9.608 ms
ptxas info    : Function properties for _Z6helperPfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z3addPfPKfS1_i' for 'sm_90'
ptxas info    : Function properties for _Z3addPfPKfS1_i
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 14 registers, used 0 barriers
ptxas info    : Compile time = 6.472 ms
)";

// Captured the same way from a kernel with __launch_bounds__(1024, 2) and a
// 48-float live array: ptxas caps it at 32 registers and spills.
constexpr const char *Cuda13SpillReport = R"(ptxas info    : 4000 bytes gmem
ptxas info    : Compiling entry function '_Z5spillPfPKfi' for 'sm_90'
ptxas info    : Function properties for _Z5spillPfPKfi
    256 bytes stack frame, 664 bytes spill stores, 672 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 256 bytes cumulative stack size
ptxas info    : Compile time = 182.197 ms
)";

const KernelResources *find(const std::vector<KernelResources> &Rs,
                            StringRef Entry) {
  for (const KernelResources &R : Rs)
    if (R.Entry == Entry)
      return &R;
  return nullptr;
}

TEST(PtxasReport, ParsesCapturedCuda13Report) {
  std::vector<KernelResources> Rs = parsePtxasReport(Cuda13Report);
  ASSERT_EQ(Rs.size(), 5u) << "the __noinline__ helper is not a kernel";
  EXPECT_EQ(Rs[0].Entry, "_Z4tmplI6__halfEvPT_") << "in ptxas's order";
  const KernelResources *Smem = find(Rs, "_Z4smemPfPKf");
  ASSERT_TRUE(Smem);
  EXPECT_EQ(Smem->Registers, 30u);
  EXPECT_EQ(Smem->Barriers, 1u);
  EXPECT_EQ(Smem->SharedBytes, 1024u);
  EXPECT_EQ(Smem->StackFrameBytes, 256u);
  EXPECT_EQ(Smem->SpillStoreBytes, 0u);
  const KernelResources *Stack = find(Rs, "_Z5stackPfi");
  ASSERT_TRUE(Stack);
  EXPECT_EQ(Stack->Registers, 17u);
  EXPECT_EQ(Stack->StackFrameBytes, 400u);
  EXPECT_EQ(Stack->SharedBytes, 0u);
  const KernelResources *Add = find(Rs, "_Z3addPfPKfS1_i");
  ASSERT_TRUE(Add);
  EXPECT_EQ(Add->Registers, 14u);
  EXPECT_EQ(Add->StackFrameBytes, 0u);
  EXPECT_FALSE(find(Rs, "_Z6helperPfi"));
}

TEST(PtxasReport, ParsesSpills) {
  std::vector<KernelResources> Rs = parsePtxasReport(Cuda13SpillReport);
  ASSERT_EQ(Rs.size(), 1u);
  EXPECT_EQ(Rs[0].Registers, 32u);
  EXPECT_EQ(Rs[0].SpillStoreBytes, 664u);
  EXPECT_EQ(Rs[0].SpillLoadBytes, 672u);
  EXPECT_EQ(Rs[0].StackFrameBytes, 256u);
}

TEST(PtxasReport, SumsConstantBanks) {
  // Older ptxas versions list constant banks on the "Used" line; this line is
  // written by hand in that format (CUDA 13's ptxas does not print it for the
  // kernels above).
  std::vector<KernelResources> Rs = parsePtxasReport(
      "ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
      "ptxas info    : Used 10 registers, 4096 bytes smem, 360 bytes "
      "cmem[0], 8 bytes cmem[2]\n");
  ASSERT_EQ(Rs.size(), 1u);
  EXPECT_EQ(Rs[0].Registers, 10u);
  EXPECT_EQ(Rs[0].SharedBytes, 4096u);
  EXPECT_EQ(Rs[0].ConstantBytes, 368u);
}

TEST(PtxasReport, NoKernelsInOtherText) {
  EXPECT_TRUE(parsePtxasReport("").empty());
  EXPECT_TRUE(parsePtxasReport("ptxas fatal   : Unresolved extern function "
                               "'foo'\n")
                  .empty());
}

TEST(PtxEntries, VisibleAndWeakEntriesInOrder) {
  std::vector<std::string> E = parsePtxEntries(
      "// .entry in_a_comment(\n"
      ".visible .func  (.param .b32 func_retval0) _Z6helperPfi(\n"
      ".visible .entry _Z3addPfPKfS1_i(\n"
      "\t.param .u64 _Z3addPfPKfS1_i_param_0\n"
      ".weak .entry _Z4tmplIfEvPT_(\n"
      ".entry plain\n");
  EXPECT_EQ(E, (std::vector<std::string>{"_Z3addPfPKfS1_i", "_Z4tmplIfEvPT_",
                                         "plain"}));
}

std::string cudaPath() {
  for (const char *V : {"CUDA_PATH", "CUDA_HOME"})
    if (const char *E = std::getenv(V); E && *E)
      return E;
  return "/usr/local/cuda";
}

/// A directory with a kernel file and a header it includes, a toolchain, and
/// the compile command; every compile test starts from here.
class CompileTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    // One cache directory for the suite, so the runtime PCH is built once;
    // each test's sources live in their own directory, so their keys differ.
    SmallString<128> P;
    sys::fs::createUniqueDirectory("astra-ptxcache", P);
    SharedCache = new std::string(P);
  }
  static void TearDownTestSuite() {
    sys::fs::remove_directories(*SharedCache);
    delete SharedCache;
  }

  void SetUp() override {
    if (!isCudaInstallation(cudaPath()))
      GTEST_SKIP() << "no CUDA installation at " << cudaPath();
    SmallString<128> P;
    sys::fs::createUniqueDirectory("astra-ptxcompile", P);
    Dir = std::string(P);
    Header = path("scale.cuh");
    Main = path("k.cu");
    write(Header, "#pragma once\n__device__ inline float scale(float x) { "
                  "return 2.0f * x; }\n");
    write(Main, "#include \"scale.cuh\"\n"
                "__global__ void add(float *out, const float *a, int n) {\n"
                "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                "  if (i < n) out[i] = scale(a[i]);\n"
                "}\n");
  }
  void TearDown() override {
    if (!Dir.empty())
      sys::fs::remove_directories(Dir);
  }

  std::string path(StringRef Name) const {
    SmallString<128> P(Dir);
    sys::path::append(P, Name);
    return std::string(P);
  }
  static void write(const std::string &F, StringRef Text) {
    ASSERT_FALSE(bool(writeFileAtomically(F, Text)));
  }
  CudaToolchain toolchain() const {
    return CudaToolchain(cudaPath(), "sm_90", ASTRA_BUILD_RESOURCE_DIR);
  }
  std::vector<std::string> command(const std::vector<std::string> &Flags = {}) {
    CudaToolchain TC = toolchain();
    std::vector<std::string> Cmd = {"clang++"};
    Cmd.insert(Cmd.end(), Flags.begin(), Flags.end());
    Cmd.push_back(Main);
    return makeDeviceCommand(Cmd, Main, TC);
  }
  CompileOptions options() const {
    CompileOptions O;
    O.CacheDir = *SharedCache;
    O.DiagOS = nullptr;
    return O;
  }
  PtxResult compile(const CompileOptions &O) {
    auto R = compileToPtx(toolchain(), command(), O);
    if (!R) {
      ADD_FAILURE() << toString(R.takeError());
      return {};
    }
    return std::move(*R);
  }
  std::set<std::string> listDir() const {
    std::set<std::string> Names;
    std::error_code EC;
    for (sys::fs::directory_iterator It(Dir, EC), E; !EC && It != E;
         It.increment(EC))
      Names.insert(It->path());
    return Names;
  }

  static std::string *SharedCache;
  std::string Dir, Main, Header;
};
std::string *CompileTest::SharedCache = nullptr;

TEST_F(CompileTest, CompilesToPtxForTheArch) {
  CompileOptions O = options();
  O.UseCache = false;
  PtxResult R = compile(O);
  EXPECT_NE(R.Ptx.find(".target sm_90"), std::string::npos);
  EXPECT_EQ(R.Entries, std::vector<std::string>{"_Z3addPfPKfi"});
  // scale() inlined at -O3: a multiply by 2 (or an add to itself), no call.
  EXPECT_EQ(R.Ptx.find("call"), std::string::npos);
  EXPECT_FALSE(R.FromCache);
  EXPECT_TRUE(R.CacheEntry.empty());
  EXPECT_GT(R.Seconds, 0);
}

TEST_F(CompileTest, LinksLibdevice) {
  write(Main, "__global__ void k(float *x) { x[0] = erfcinvf(x[1]); }\n");
  CompileOptions O = options();
  O.UseCache = false;
  PtxResult R = compile(O);
  // erfcinvf comes from libdevice's __nv_erfcinvf; linked and inlined, the
  // PTX has no call to it and no extern declaration.
  EXPECT_EQ(R.Ptx.find("__nv_erfcinvf"), std::string::npos) << R.Ptx;
  EXPECT_EQ(R.Entries, std::vector<std::string>{"_Z1kPf"});
}

TEST_F(CompileTest, ErrorNamesFileLineColumn) {
  write(Main, "__global__ void k(float *x) {\n  x[0] = undeclared;\n}\n");
  std::string Diags;
  raw_string_ostream OS(Diags);
  CompileOptions O = options();
  O.DiagOS = &OS;
  auto R = compileToPtx(toolchain(), command(), O);
  ASSERT_FALSE(bool(R));
  std::string Msg = toString(R.takeError());
  EXPECT_NE(Msg.find(Main + ":2:10: error: use of undeclared identifier "
                            "'undeclared'"),
            std::string::npos)
      << Msg;
  EXPECT_NE(Diags.find(Main + ":2:10: error"), std::string::npos) << Diags;
  // Reported once, even though the compile with the PCH failed first.
  EXPECT_EQ(Diags.find(Main + ":2:10"), Diags.rfind(Main + ":2:10")) << Diags;
}

TEST_F(CompileTest, MissingFileIsAnError) {
  sys::fs::remove(Main);
  auto R = compileToPtx(toolchain(), command(), options());
  ASSERT_FALSE(bool(R));
  std::string Msg = toString(R.takeError());
  EXPECT_NE(Msg.find(Main + ": cannot read"), std::string::npos) << Msg;
}

TEST_F(CompileTest, SecondCompileIsACacheHit) {
  PtxResult First = compile(options());
  EXPECT_FALSE(First.FromCache);
  ASSERT_FALSE(First.CacheEntry.empty());
  EXPECT_TRUE(sys::fs::exists(First.CacheEntry));
  PtxResult Second = compile(options());
  EXPECT_TRUE(Second.FromCache);
  EXPECT_EQ(Second.Ptx, First.Ptx);
  EXPECT_EQ(Second.Entries, First.Entries);
  EXPECT_EQ(Second.Seconds, 0);
}

TEST_F(CompileTest, ChangedHeaderMisses) {
  PtxResult First = compile(options());
  ASSERT_TRUE(compile(options()).FromCache);
  write(Header, "#pragma once\n__device__ inline float scale(float x) { "
                "return 3.0f * x; }\n");
  PtxResult Changed = compile(options());
  EXPECT_FALSE(Changed.FromCache);
  EXPECT_NE(Changed.Ptx, First.Ptx);
  EXPECT_NE(Changed.Ptx.find("0f40400000"), std::string::npos)
      << "3.0f in the PTX";
  EXPECT_TRUE(compile(options()).FromCache);
}

TEST_F(CompileTest, OverlayChangesMissAndNeverTouchDisk) {
  PtxResult Disk = compile(options());
  std::set<std::string> Before = listDir();

  // A candidate rewrite of the main file, in memory only.
  CompileOptions O = options();
  O.Overlay[Main] = "#include \"scale.cuh\"\n"
                    "__global__ void add2(float *out, const float *a) {\n"
                    "  out[threadIdx.x] = scale(a[threadIdx.x]);\n"
                    "}\n";
  PtxResult Cand = compile(O);
  EXPECT_FALSE(Cand.FromCache);
  EXPECT_EQ(Cand.Entries, std::vector<std::string>{"_Z4add2PfPKf"});
  EXPECT_TRUE(compile(O).FromCache);

  // The header changed in the overlay: the entry's file list notices.
  CompileOptions H = options();
  H.Overlay[Header] = "#pragma once\n__device__ inline float scale(float x) "
                      "{ return -x; }\n";
  PtxResult Hdr = compile(H);
  EXPECT_FALSE(Hdr.FromCache);
  EXPECT_NE(Hdr.Ptx, Disk.Ptx);
  EXPECT_NE(Hdr.Ptx.find("neg.f32"), std::string::npos) << Hdr.Ptx;
  EXPECT_TRUE(compile(H).FromCache);

  // Back to the disk header: the entry now lists the overlay's hash, a miss.
  PtxResult Again = compile(options());
  EXPECT_FALSE(Again.FromCache);
  EXPECT_EQ(Again.Ptx, Disk.Ptx);
  EXPECT_EQ(listDir(), Before) << "the overlay compile wrote to the source "
                                  "directory";
}

TEST_F(CompileTest, CorruptEntryIsIgnoredAndRewritten) {
  PtxResult First = compile(options());
  ASSERT_FALSE(First.CacheEntry.empty());
  auto Text = readFile(First.CacheEntry);
  ASSERT_TRUE(bool(Text));
  // Same length, one byte of the PTX changed: only the checksum can tell.
  std::string Bad = *Text;
  Bad[Bad.size() - 2] ^= 1;
  write(First.CacheEntry, Bad);
  PtxResult R = compile(options());
  EXPECT_FALSE(R.FromCache);
  EXPECT_EQ(R.Ptx, First.Ptx);
  bool Noted = llvm::any_of(R.Notes, [](const std::string &N) {
    return StringRef(N).contains("corrupt");
  });
  EXPECT_TRUE(Noted);
  // A truncated entry too.
  write(First.CacheEntry, Text->substr(0, Text->size() / 2));
  EXPECT_FALSE(compile(options()).FromCache);
  // Rewritten: a hit again.
  PtxResult Hit = compile(options());
  EXPECT_TRUE(Hit.FromCache);
  EXPECT_EQ(Hit.Ptx, First.Ptx);
}

TEST_F(CompileTest, OptLevelIsPartOfTheKey) {
  PtxResult O3 = compile(options());
  CompileOptions O = options();
  O.OptLevel = 0;
  PtxResult O0 = compile(O);
  EXPECT_FALSE(O0.FromCache);
  EXPECT_NE(O0.Ptx, O3.Ptx);
  EXPECT_NE(O0.CacheEntry, O3.CacheEntry);
}

TEST_F(CompileTest, FlagsArePartOfTheKey) {
  write(Main, "__global__ void k(float *x) { x[0] = FACTOR * x[1]; }\n");
  auto A = compileToPtx(toolchain(), command({"-DFACTOR=2.0f"}), options());
  auto B = compileToPtx(toolchain(), command({"-DFACTOR=4.0f"}), options());
  ASSERT_TRUE(bool(A)) << toString(A.takeError());
  ASSERT_TRUE(bool(B)) << toString(B.takeError());
  EXPECT_FALSE(B->FromCache);
  EXPECT_NE(A->Ptx, B->Ptx);
}

/// Half, bf16, math functions and a template: the headers the PCH stands
/// for are exercised widely; the PTX must not change by a byte.
constexpr const char *MixedKernels = R"(#include <cuda_fp16.h>
#include <cuda_bf16.h>
template <typename T> __global__ void scale(T *x, float f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = T(float(x[i]) * f);
}
template __global__ void scale<__half>(__half *, float, int);
template __global__ void scale<__nv_bfloat16>(__nv_bfloat16 *, float, int);
__global__ void silu(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] / (1.0f + __expf(-x[i])) + sinf(x[i]) + rsqrtf(x[i]);
}
__global__ void h2(__half2 *y, const __half2 *a) {
  y[threadIdx.x] = __hmul2(a[threadIdx.x], __float2half2_rn(0.5f));
}
)";

TEST_F(CompileTest, PchGivesIdenticalPtx) {
  write(Main, MixedKernels);
  CompileOptions WithPch = options();
  PtxResult A = compile(WithPch);
  EXPECT_TRUE(A.UsedPch);
  CompileOptions NoPch = options();
  NoPch.UsePch = false;
  NoPch.UseCache = false;
  PtxResult B = compile(NoPch);
  EXPECT_FALSE(B.UsedPch);
  EXPECT_EQ(A.Ptx, B.Ptx);
  EXPECT_EQ(A.Entries.size(), 4u);
}

TEST_F(CompileTest, BrokenPchFallsBackToThePlainCompile) {
  // Its own cache directory, so breaking the PCH affects no other test.
  SmallString<128> Cache(Dir);
  sys::path::append(Cache, "cache");
  CompileOptions O = options();
  O.CacheDir = std::string(Cache);
  PtxResult Good = compile(O);
  ASSERT_TRUE(Good.UsedPch);
  std::string Pch;
  std::error_code EC;
  for (sys::fs::directory_iterator It(Cache + "/pch", EC), E; !EC && It != E;
       It.increment(EC))
    if (StringRef(It->path()).ends_with(".pch"))
      Pch = It->path();
  ASSERT_FALSE(Pch.empty());
  write(Pch, "not a precompiled header");
  sys::fs::remove(Good.CacheEntry);
  PtxResult R = compile(O);
  EXPECT_FALSE(R.UsedPch);
  EXPECT_EQ(R.Ptx, Good.Ptx);
  EXPECT_TRUE(llvm::any_of(R.Notes, [](const std::string &N) {
    return StringRef(N).contains("could not be used");
  }));
  // Removed, so the next compile builds a good one again.
  sys::fs::remove(Good.CacheEntry);
  EXPECT_TRUE(compile(O).UsedPch);
}

TEST_F(CompileTest, PtxasReportsResourcesOfCompiledPtx) {
  CudaToolchain TC = toolchain();
  if (TC.ptxasPath().empty())
    GTEST_SKIP() << "no ptxas";
  write(Main, "__global__ void tile(float *out, const float *in) {\n"
              "  __shared__ float t[256];\n"
              "  t[threadIdx.x] = in[threadIdx.x];\n"
              "  __syncthreads();\n"
              "  out[threadIdx.x] = t[255 - threadIdx.x];\n"
              "}\n"
              "__global__ void copy(float *out, const float *in) {\n"
              "  out[threadIdx.x] = in[threadIdx.x];\n"
              "}\n");
  PtxResult R = compile(options());
  auto Res = ptxasResources(TC, R.Ptx);
  ASSERT_TRUE(bool(Res)) << toString(Res.takeError());
  ASSERT_EQ(Res->size(), 2u);
  EXPECT_EQ((*Res)[0].Entry, "_Z4tilePfPKf") << "in the PTX's order";
  EXPECT_EQ((*Res)[0].SharedBytes, 1024u);
  EXPECT_EQ((*Res)[0].Barriers, 1u);
  EXPECT_GT((*Res)[0].Registers, 0u);
  EXPECT_EQ((*Res)[1].Entry, "_Z4copyPfPKf");
  EXPECT_EQ((*Res)[1].SharedBytes, 0u);
}

TEST_F(CompileTest, PtxasRejectionIsAnError) {
  CudaToolchain TC = toolchain();
  if (TC.ptxasPath().empty())
    GTEST_SKIP() << "no ptxas";
  auto Res = ptxasResources(TC, ".version 8.8\n.target sm_90\nnot ptx\n");
  ASSERT_FALSE(bool(Res));
  EXPECT_NE(toString(Res.takeError()).find("ptxas -arch=sm_90 rejected"),
            std::string::npos);
}

TEST(Ptxas, MissingPtxasIsExplained) {
  CudaToolchain TC("/nonexistent/cuda", "sm_90", "/r");
  std::string OldPath = std::getenv("PATH") ? std::getenv("PATH") : "";
  setenv("PATH", "/nonexistent/bin", 1);
  auto Res = ptxasResources(TC, "");
  setenv("PATH", OldPath.c_str(), 1);
  ASSERT_FALSE(bool(Res));
  std::string Msg = toString(Res.takeError());
  EXPECT_NE(Msg.find("ptxas not found"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("/nonexistent/cuda/bin"), std::string::npos) << Msg;
}

TEST_F(CompileTest, NvccBuildSeesTheOverlay) {
  CudaToolchain TC = toolchain();
  if (TC.nvccPath().empty())
    GTEST_SKIP() << "no nvcc";
  FileOverlay Overlay;
  Overlay[Header] = "#pragma once\n__device__ inline float scale(float x) { "
                    "return -x; }\n";
  Overlay[Main] = "#include \"scale.cuh\"\n"
                  "__global__ void cand(float *out, const float *a) {\n"
                  "  out[threadIdx.x] = scale(a[threadIdx.x]);\n"
                  "}\n";
  auto Ptx = compileWithNvcc(TC, command(), Overlay, /*Cubin=*/false);
  ASSERT_TRUE(bool(Ptx)) << toString(Ptx.takeError());
  EXPECT_EQ(parsePtxEntries(*Ptx), std::vector<std::string>{"_Z4candPfPKf"});
  EXPECT_NE(Ptx->find("neg.f32"), std::string::npos) << "the overlay header";
  auto Cubin = compileWithNvcc(TC, command(), {}, /*Cubin=*/true);
  ASSERT_TRUE(bool(Cubin)) << toString(Cubin.takeError());
  EXPECT_EQ(StringRef(*Cubin).take_front(4), "\x7f" "ELF");
}

TEST_F(CompileTest, NvccErrorCarriesItsOutput) {
  CudaToolchain TC = toolchain();
  if (TC.nvccPath().empty())
    GTEST_SKIP() << "no nvcc";
  write(Main, "__global__ void k(float *x) { x[0] = undeclared; }\n");
  auto Ptx = compileWithNvcc(TC, command(), {}, false);
  ASSERT_FALSE(bool(Ptx));
  std::string Msg = toString(Ptx.takeError());
  EXPECT_NE(Msg.find("nvcc failed"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("undeclared"), std::string::npos) << Msg;
}

TEST(PtxCacheDir, FollowsTheDocumentedOrder) {
  auto Save = [](const char *V) -> std::optional<std::string> {
    if (const char *E = std::getenv(V))
      return std::string(E);
    return std::nullopt;
  };
  auto Restore = [](const char *V, const std::optional<std::string> &S) {
    if (S)
      setenv(V, S->c_str(), 1);
    else
      unsetenv(V);
  };
  auto A = Save("ASTRA_CACHE_DIR"), X = Save("XDG_CACHE_HOME"),
       H = Save("HOME");
  CompileOptions O;
  setenv("ASTRA_CACHE_DIR", "/a/astra", 1);
  setenv("XDG_CACHE_HOME", "/x", 1);
  setenv("HOME", "/h", 1);
  EXPECT_EQ(ptxCacheDirectory(O), "/a/astra");
  unsetenv("ASTRA_CACHE_DIR");
  EXPECT_EQ(ptxCacheDirectory(O), "/x/clang-astra");
  setenv("XDG_CACHE_HOME", "relative", 1);
  EXPECT_EQ(ptxCacheDirectory(O), "/h/.cache/clang-astra")
      << "a relative XDG_CACHE_HOME is ignored";
  O.CacheDir = "/explicit";
  EXPECT_EQ(ptxCacheDirectory(O), "/explicit");
  Restore("ASTRA_CACHE_DIR", A);
  Restore("XDG_CACHE_HOME", X);
  Restore("HOME", H);
}

} // namespace
