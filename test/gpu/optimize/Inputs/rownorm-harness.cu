// A small program with its own harness, as users have them: a thread-per-row
// RMS norm whose main launches it at every block size from 32 to 1024 (a
// runtime value, the grid computed from it) and checks every result against
// a CPU reference, exiting non-zero on the first mismatch or launch error.
// test/gpu/optimize/user-test.test optimizes it with `optimize -i --test`
// and runs this harness on whatever was written.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <vector>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t Err = (call);                                                  \
    if (Err != cudaSuccess) {                                                  \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                   cudaGetErrorString(Err));                                   \
      return 1;                                                                \
    }                                                                          \
  } while (0)

// One thread per row: out[r][j] = x[r][j] * w[j] / rms(x[r]).
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

int main() {
  const int Rows = 3000, Cols = 256; // Rows: no block size divides it.
  const float Eps = 1e-6f;
  std::vector<float> X(size_t(Rows) * Cols), W(Cols), Ref(X.size()),
      Out(X.size());
  unsigned State = 12345;
  auto Next = [&] {
    State = State * 1664525u + 1013904223u;
    return float(State >> 8) / float(1u << 24) * 2.0f - 1.0f;
  };
  for (float &V : X)
    V = Next();
  for (float &V : W)
    V = 1.0f + 0.5f * Next();
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
  for (int Block = 32; Block <= 1024; Block *= 2) {
    int Grid = (Rows + Block - 1) / Block;
    CHECK(cudaMemset(DOut, 0xff, Bytes)); // NaN: a row not written fails.
    rownorm<<<Grid, Block>>>(DOut, DX, DW, Rows, Cols, Eps);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(Out.data(), DOut, Bytes, cudaMemcpyDeviceToHost));
    for (size_t I = 0; I < Out.size(); ++I)
      if (!(std::fabs(Out[I] - Ref[I]) <= 1e-4f + 1e-3f * std::fabs(Ref[I]))) {
        std::fprintf(stderr,
                     "block %d: row %zu, column %zu: got %g, expected %g\n",
                     Block, I / Cols, I % Cols, Out[I], Ref[I]);
        return 1;
      }
    std::printf("block %4d, grid %3d: %d x %d results match the CPU "
                "reference\n",
                Block, Grid, Rows, Cols);
  }
  std::printf("all block sizes passed\n");
  return 0;
}
