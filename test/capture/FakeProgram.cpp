//===- FakeProgram.cpp - capture-prog.cu's launches, without a GPU --------===//
//
// Makes the launches of test/gpu/capture/Inputs/capture-prog.cu through the
// fake driver (FakeCuda.cpp), so that `clang-astra capture` and the real
// capture library run end to end on a machine without a GPU: rownorm from
// main at blocks 64, 128, 256, 256, 256 (rows 3000, cols 256), gather_add from
// a second thread on a stream of its own (n 1000 four times, 4000 once, dim
// 64, block 128). The kernels' symbols are clang's (and nvcc's) mangled
// names of the two kernels.
//
//   fake-capture-prog ok [DUMPDIR]   the launches; exit 0 (DUMPDIR: x.bin, the
//                                    bytes of rownorm's x as uploaded)
//   fake-capture-prog small [DUMPDIR] the same launches at capture-prog.cu's
//                                    `small` sizes (rows 40, cols 16; n 10
//                                    and 40, dim 8, table rows 20)
//   fake-capture-prog fail           the launches, then exit 3
//   fake-capture-prog kill           rownorm's launches, then SIGKILL
//   fake-capture-prog none           cuInit, no launch
//   fake-capture-prog nocuda         no CUDA at all
//   fake-capture-prog extra          rownorm once through cuLaunchKernelEx
//                                    with its parameters packed in `extra`
//
//===----------------------------------------------------------------------===//
#include <cuda.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern "C" CUfunction fakeKernel(const char *Name, const size_t *Sizes,
                                 size_t N);

namespace {

#define CHECK(X)                                                               \
  do {                                                                         \
    if ((X) != CUDA_SUCCESS) {                                                 \
      std::fprintf(stderr, "fake-capture-prog: %s failed\n", #X);              \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

unsigned State = 12345;
float next() {
  State = State * 1664525u + 1013904223u;
  return float(State >> 8) / float(1u << 24) * 2.0f - 1.0f;
}

// capture-prog.cu's sizes; `small` divides them as it does.
int Rows = 3000, Cols = 256, TableRows = 500, Dim = 64, NScale = 1;

const size_t RownormSizes[] = {8, 8, 8, 4, 4, 4};
const size_t GatherSizes[] = {8, 8, 8, 4, 4};

void rownorm(const char *DumpDir, bool Extra) {
  CUfunction F = fakeKernel("_Z7rownormPfPKfS1_iif", RownormSizes, 6);
  const float Eps = 1e-6f;
  std::vector<float> X(size_t(Rows) * Cols), W(Cols);
  for (float &V : X)
    V = next();
  for (float &V : W)
    V = 1.0f + 0.5f * next();
  CUdeviceptr Out, DX, DW;
  CHECK(cuMemAlloc(&Out, X.size() * 4));
  CHECK(cuMemAlloc(&DX, X.size() * 4));
  CHECK(cuMemAlloc(&DW, Cols * 4));
  CHECK(cuMemcpyHtoD(DX, X.data(), X.size() * 4));
  CHECK(cuMemcpyHtoD(DW, W.data(), Cols * 4));
  if (DumpDir) {
    std::string P = std::string(DumpDir) + "/x.bin";
    FILE *Fp = std::fopen(P.c_str(), "wb");
    std::fwrite(X.data(), 4, X.size(), Fp);
    std::fclose(Fp);
  }
  int R = Rows, C = Cols;
  float E = Eps;
  if (Extra) {
    // The packed form: the parameters at their device offsets.
    unsigned char Buf[40] = {0};
    std::memcpy(Buf + 0, &Out, 8);
    std::memcpy(Buf + 8, &DX, 8);
    std::memcpy(Buf + 16, &DW, 8);
    std::memcpy(Buf + 24, &R, 4);
    std::memcpy(Buf + 28, &C, 4);
    std::memcpy(Buf + 32, &E, 4);
    size_t Size = 36;
    void *Config[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, Buf,
                      CU_LAUNCH_PARAM_BUFFER_SIZE, &Size, CU_LAUNCH_PARAM_END};
    CUlaunchConfig LC{};
    LC.gridDimX = 24;
    LC.gridDimY = LC.gridDimZ = 1;
    LC.blockDimX = 128;
    LC.blockDimY = LC.blockDimZ = 1;
    CHECK(cuLaunchKernelEx(&LC, F, nullptr, Config));
    return;
  }
  void *Args[] = {&Out, &DX, &DW, &R, &C, &E};
  for (unsigned Block : {64u, 128u, 256u, 256u, 256u}) {
    unsigned Grid = (Rows + Block - 1) / Block;
    CHECK(cuLaunchKernel(F, Grid, 1, 1, Block, 1, 1, 0, nullptr, Args,
                         nullptr));
  }
}

void gather() {
  CUfunction F = fakeKernel("_Z10gather_addPfPKfPKiii", GatherSizes, 5);
  const int Block = 128;
  CUstream S;
  CHECK(cuStreamCreate(&S, CU_STREAM_NON_BLOCKING));
  std::vector<float> Table(size_t(TableRows) * Dim);
  unsigned Local = 777;
  auto Rand = [&] {
    Local = Local * 1664525u + 1013904223u;
    return Local >> 8;
  };
  for (float &V : Table)
    V = float(Rand() % 1000) / 250.0f - 2.0f;
  CUdeviceptr DTable;
  CHECK(cuMemAlloc(&DTable, Table.size() * 4));
  CHECK(cuMemcpyHtoD(DTable, Table.data(), Table.size() * 4));
  for (int N : {1000 / NScale, 1000 / NScale, 4000 / NScale, 1000 / NScale,
                1000 / NScale}) {
    std::vector<int> Idx(N);
    for (int &I : Idx)
      I = int(Rand() % TableRows);
    std::vector<float> Y(size_t(N) * Dim);
    for (size_t I = 0; I < Y.size(); ++I)
      Y[I] = float(I % 7) - 3.0f;
    CUdeviceptr DY, DIdx;
    CHECK(cuMemAlloc(&DY, Y.size() * 4));
    CHECK(cuMemAlloc(&DIdx, size_t(N) * 4));
    CHECK(cuMemcpyHtoD(DY, Y.data(), Y.size() * 4));
    CHECK(cuMemcpyHtoD(DIdx, Idx.data(), size_t(N) * 4));
    int Nn = N, D = Dim;
    void *Args[] = {&DY, &DTable, &DIdx, &Nn, &D};
    unsigned Grid = unsigned((N * Dim + Block - 1) / Block);
    CHECK(cuLaunchKernel(F, Grid, 1, 1, Block, 1, 1, 0, S, Args, nullptr));
    CHECK(cuMemFree(DY));
    CHECK(cuMemFree(DIdx));
  }
}

} // namespace

int main(int Argc, char **Argv) {
  std::string Mode = Argc > 1 ? Argv[1] : "ok";
  const char *Dump = Argc > 2 ? Argv[2] : nullptr;
  if (Mode == "nocuda") {
    std::printf("no CUDA\n");
    return 0;
  }
  if (Mode == "small") {
    Rows = 40, Cols = 16, TableRows = 20, Dim = 8, NScale = 100;
    Mode = "ok";
  }
  CHECK(cuInit(0));
  if (Mode == "none") {
    std::printf("no launches\n");
    return 0;
  }
  if (Mode == "extra") {
    rownorm(Dump, /*Extra=*/true);
    return 0;
  }
  if (Mode == "kill") {
    rownorm(Dump, false);
    std::raise(SIGKILL);
  }
  std::thread Second(gather);
  rownorm(Dump, false);
  Second.join();
  if (Mode == "fail") {
    std::fprintf(stderr, "failing on purpose after the launches\n");
    return 3;
  }
  std::printf("all launches made\n");
  return 0;
}
