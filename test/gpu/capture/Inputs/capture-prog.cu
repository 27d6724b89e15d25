// A program with its own checks, as users have them, for `clang-astra
// capture`: two kernels launched at several configurations, one of them from
// a second thread on a stream of its own.
//
//   rownorm     thread per row, from main on the default stream, at blocks
//               64, 128 and 256 (grid from the block; block 256 three times)
//   gather_add  y[i][:] += table[idx[i]][:], from a second thread on a
//               non-blocking stream, for n = 1000 (four times) and 4000
//               (once); idx holds indices the program made, so only the
//               captured contents are the program's real data
//
// Every result is checked against a CPU reference; the program exits 1 on
// the first mismatch or CUDA error and prints "all checks passed" otherwise.
// With an argument `fail` it exits 3 after its launches (a program that
// fails); with `none` it initializes CUDA and launches nothing; with
// `small` it makes the same launches at small sizes (rows 40, cols 16;
// n 10 and 40, dim 8, table rows 20), for a capture small enough to commit.
// test/gpu/capture/ captures it, drafts a spec from the capture, optimizes
// it and runs it again. test/lit/capture/ runs init-spec on a capture of
// the same launches made without a GPU.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <thread>
#include <vector>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t Err = (call);                                                  \
    if (Err != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                   cudaGetErrorString(Err));                                   \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

// out[r][j] = x[r][j] * w[j] / rms(x[r]).
__global__ void rownorm(float *out, const float *x, const float *w, int rows,
                        int cols, float eps) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < rows) {
    float ss = 0.0f;
    for (int j = 0; j < cols; ++j) {
      float v = x[row * cols + j];
      ss += v * v;
    }
    float inv = rsqrtf(ss / cols + eps);
    for (int j = 0; j < cols; ++j)
      out[row * cols + j] = x[row * cols + j] * inv * w[j];
  }
}

// y[i][j] += table[idx[i]][j], one thread per element.
__global__ void gather_add(float *y, const float *table, const int *idx,
                           int n, int dim) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n * dim) {
    int i = t / dim, j = t % dim;
    y[t] += table[idx[i] * dim + j];
  }
}

// The sizes; `small` divides them.
static int Rows = 3000, Cols = 256, TableRows = 500, Dim = 64, NScale = 1;

static unsigned State = 12345;
static float next() {
  State = State * 1664525u + 1013904223u;
  return float(State >> 8) / float(1u << 24) * 2.0f - 1.0f;
}

static int runRownorm() {
  // No block size divides Rows.
  const float Eps = 1e-6f;
  std::vector<float> X(size_t(Rows) * Cols), W(Cols), Ref(X.size()),
      Out(X.size());
  for (float &V : X)
    V = next();
  for (float &V : W)
    V = 1.0f + 0.5f * next();
  for (int R = 0; R < Rows; ++R) {
    double SS = 0;
    for (int J = 0; J < Cols; ++J)
      SS += double(X[R * Cols + J]) * X[R * Cols + J];
    double Inv = 1.0 / std::sqrt(SS / Cols + Eps);
    for (int J = 0; J < Cols; ++J)
      Ref[R * Cols + J] = float(X[R * Cols + J] * Inv * W[J]);
  }
  size_t Bytes = X.size() * sizeof(float);
  float *DOut, *DX, *DW;
  CHECK(cudaMalloc(&DOut, Bytes));
  CHECK(cudaMalloc(&DX, Bytes));
  CHECK(cudaMalloc(&DW, Cols * sizeof(float)));
  CHECK(cudaMemcpy(DX, X.data(), Bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(DW, W.data(), Cols * sizeof(float), cudaMemcpyHostToDevice));
  const int Blocks[] = {64, 128, 256, 256, 256};
  for (int Block : Blocks) {
    int Grid = (Rows + Block - 1) / Block;
    CHECK(cudaMemset(DOut, 0xff, Bytes)); // NaN: a row not written fails.
    rownorm<<<Grid, Block>>>(DOut, DX, DW, Rows, Cols, Eps);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(Out.data(), DOut, Bytes, cudaMemcpyDeviceToHost));
    for (size_t I = 0; I < Out.size(); ++I)
      if (!(std::fabs(Out[I] - Ref[I]) <= 1e-4f + 1e-3f * std::fabs(Ref[I]))) {
        std::fprintf(stderr, "rownorm, block %d: row %zu, column %zu: got %g, "
                             "expected %g\n",
                     Block, I / Cols, I % Cols, Out[I], Ref[I]);
        return 1;
      }
    std::printf("rownorm block %4d, grid %3d: results match\n", Block, Grid);
  }
  CHECK(cudaFree(DOut));
  CHECK(cudaFree(DX));
  CHECK(cudaFree(DW));
  return 0;
}

static int GatherStatus = 0;

static void runGather() {
  const int Block = 128;
  cudaStream_t S;
  CHECK(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking));
  std::vector<float> Table(size_t(TableRows) * Dim);
  unsigned Local = 777;
  auto Rand = [&] {
    Local = Local * 1664525u + 1013904223u;
    return Local >> 8;
  };
  for (float &V : Table)
    V = float(Rand() % 1000) / 250.0f - 2.0f;
  float *DTable;
  CHECK(cudaMalloc(&DTable, Table.size() * sizeof(float)));
  CHECK(cudaMemcpyAsync(DTable, Table.data(), Table.size() * sizeof(float),
                        cudaMemcpyHostToDevice, S));
  const int Ns[] = {1000 / NScale, 1000 / NScale, 4000 / NScale,
                    1000 / NScale, 1000 / NScale};
  for (int N : Ns) {
    std::vector<int> Idx(N);
    for (int &I : Idx)
      I = int(Rand() % TableRows);
    std::vector<float> Y(size_t(N) * Dim), Ref(Y.size());
    for (size_t I = 0; I < Y.size(); ++I)
      Y[I] = float(I % 7) - 3.0f;
    for (int I = 0; I < N; ++I)
      for (int J = 0; J < Dim; ++J)
        Ref[size_t(I) * Dim + J] =
            Y[size_t(I) * Dim + J] + Table[size_t(Idx[I]) * Dim + J];
    float *DY;
    int *DIdx;
    CHECK(cudaMalloc(&DY, Y.size() * sizeof(float)));
    CHECK(cudaMalloc(&DIdx, N * sizeof(int)));
    CHECK(cudaMemcpyAsync(DY, Y.data(), Y.size() * sizeof(float),
                          cudaMemcpyHostToDevice, S));
    CHECK(cudaMemcpyAsync(DIdx, Idx.data(), N * sizeof(int),
                          cudaMemcpyHostToDevice, S));
    int Grid = (N * Dim + Block - 1) / Block;
    gather_add<<<Grid, Block, 0, S>>>(DY, DTable, DIdx, N, Dim);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(Y.data(), DY, Y.size() * sizeof(float),
                          cudaMemcpyDeviceToHost, S));
    CHECK(cudaStreamSynchronize(S));
    for (size_t I = 0; I < Y.size(); ++I)
      if (Y[I] != Ref[I]) {
        std::fprintf(stderr, "gather_add, n %d: element %zu: got %g, expected "
                             "%g\n",
                     N, I, Y[I], Ref[I]);
        GatherStatus = 1;
        return;
      }
    std::printf("gather_add n %4d: results match\n", N);
    CHECK(cudaFree(DY));
    CHECK(cudaFree(DIdx));
  }
  CHECK(cudaFree(DTable));
  CHECK(cudaStreamDestroy(S));
}

int main(int Argc, char **Argv) {
  const char *Mode = Argc > 1 ? Argv[1] : "";
  if (std::strcmp(Mode, "none") == 0) {
    CHECK(cudaFree(nullptr)); // Initializes CUDA; launches nothing.
    std::printf("no launches\n");
    return 0;
  }
  if (std::strcmp(Mode, "small") == 0) {
    Rows = 40, Cols = 16, TableRows = 20, Dim = 8, NScale = 100;
  }
  std::thread Second(runGather);
  int Status = runRownorm();
  Second.join();
  if (Status || GatherStatus)
    return 1;
  if (std::strcmp(Mode, "fail") == 0) {
    std::fprintf(stderr, "failing on purpose after the launches\n");
    return 3;
  }
  std::printf("all checks passed\n");
  return 0;
}
