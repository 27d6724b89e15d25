//===- DeviceOps.cpp - Fill and compare device buffers on the GPU ---------===//
#include "astra/Engine/DeviceOps.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace llvm;

namespace astra {

// sm_70 is the oldest target the PTX needs (64-bit global stores and loads
// only); the driver JIT-compiles it for the GPU at hand.
static const char DeviceOpsPtx[] = R"PTX(
.version 7.0
.target sm_70
.address_size 64

// dst[i] = low `size` bytes of `bits`, for i < count; grid-stride loop.
.visible .entry astra_fill(
    .param .u64 astra_fill_dst,
    .param .u64 astra_fill_count,
    .param .u64 astra_fill_bits,
    .param .u32 astra_fill_size)
{
    .reg .pred %p<6>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<10>;

    ld.param.u64 %rd1, [astra_fill_dst];
    ld.param.u64 %rd2, [astra_fill_count];
    ld.param.u64 %rd3, [astra_fill_bits];
    ld.param.u32 %r1, [astra_fill_size];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mov.u32 %r5, %nctaid.x;
    mul.wide.u32 %rd4, %r2, %r3;
    cvt.u64.u32 %rd5, %r4;
    add.u64 %rd4, %rd4, %rd5;
    mul.wide.u32 %rd6, %r5, %r3;
    cvt.u64.u32 %rd7, %r1;
    cvt.u32.u64 %r6, %rd3;
    setp.eq.u32 %p2, %r1, 8;
    setp.eq.u32 %p3, %r1, 4;
    setp.eq.u32 %p4, %r1, 2;
    setp.eq.u32 %p5, %r1, 1;
FILL_LOOP:
    setp.ge.u64 %p1, %rd4, %rd2;
    @%p1 bra FILL_DONE;
    mad.lo.u64 %rd8, %rd4, %rd7, %rd1;
    @%p2 st.global.u64 [%rd8], %rd3;
    @%p3 st.global.u32 [%rd8], %r6;
    @%p4 st.global.u16 [%rd8], %r6;
    @%p5 st.global.u8 [%rd8], %r6;
    add.u64 %rd4, %rd4, %rd6;
    bra FILL_LOOP;
FILL_DONE:
    ret;
}

// *flag = 1 if a[i] != b[i] for some i < units; units are 8-byte words when
// `wide` is nonzero (both pointers 8-byte aligned), else bytes.
.visible .entry astra_differs(
    .param .u64 astra_differs_a,
    .param .u64 astra_differs_b,
    .param .u64 astra_differs_units,
    .param .u32 astra_differs_wide,
    .param .u64 astra_differs_flag)
{
    .reg .pred %p<4>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<14>;

    ld.param.u64 %rd1, [astra_differs_a];
    ld.param.u64 %rd2, [astra_differs_b];
    ld.param.u64 %rd3, [astra_differs_units];
    ld.param.u32 %r1, [astra_differs_wide];
    ld.param.u64 %rd4, [astra_differs_flag];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    cvta.to.global.u64 %rd4, %rd4;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mov.u32 %r5, %nctaid.x;
    mul.wide.u32 %rd5, %r2, %r3;
    cvt.u64.u32 %rd6, %r4;
    add.u64 %rd5, %rd5, %rd6;
    mul.wide.u32 %rd7, %r5, %r3;
    mov.u32 %r6, 0;
    setp.ne.u32 %p2, %r1, 0;
DIFF_LOOP:
    setp.ge.u64 %p1, %rd5, %rd3;
    @%p1 bra DIFF_END;
    @!%p2 bra DIFF_BYTE;
    shl.b64 %rd8, %rd5, 3;
    add.u64 %rd9, %rd1, %rd8;
    add.u64 %rd10, %rd2, %rd8;
    ld.global.u64 %rd11, [%rd9];
    ld.global.u64 %rd12, [%rd10];
    setp.ne.u64 %p3, %rd11, %rd12;
    bra DIFF_NEXT;
DIFF_BYTE:
    add.u64 %rd9, %rd1, %rd5;
    add.u64 %rd10, %rd2, %rd5;
    ld.global.u8 %r7, [%rd9];
    ld.global.u8 %r8, [%rd10];
    setp.ne.u32 %p3, %r7, %r8;
DIFF_NEXT:
    selp.u32 %r9, 1, 0, %p3;
    or.b32 %r6, %r6, %r9;
    add.u64 %rd5, %rd5, %rd7;
    bra DIFF_LOOP;
DIFF_END:
    setp.eq.u32 %p1, %r6, 0;
    @%p1 bra DIFF_RET;
    mov.u32 %r9, 1;
    st.global.u32 [%rd4], %r9;
DIFF_RET:
    ret;
}
)PTX";

StringRef ptxDeviceOps() { return DeviceOpsPtx; }

#include "VerifierKernelsPtx.inc"

StringRef ptxVerifierKernels() { return VerifierKernelsPtx; }

Expected<std::unique_ptr<DeviceOps>> DeviceOps::load(GpuContext &C) {
  std::unique_ptr<DeviceOps> O(new DeviceOps());
  O->Ctx = &C;
  auto M = GpuModule::load(C, DeviceOpsPtx, "the verifier's device helpers");
  if (!M)
    return M.takeError();
  O->Module = std::move(*M);
  auto F = O->Module->function("astra_fill");
  if (!F)
    return F.takeError();
  O->Fill = *F;
  auto D = O->Module->function("astra_differs");
  if (!D)
    return D.takeError();
  O->Differs = *D;
  auto Flag = DeviceAlloc::allocate(C, 4, "the compare's answer");
  if (!Flag)
    return Flag.takeError();
  O->Flag = std::move(*Flag);

  auto G = GpuModule::load(C, VerifierKernelsPtx,
                           "the verifier's generator and comparison kernels");
  if (!G)
    return G.takeError();
  O->Generated = std::move(*G);
  std::pair<cu::Function *, const char *> Entries[] = {
      {&O->Generate, "astra_generate"}, {&O->Compare, "astra_compare"},
      {&O->Moments, "astra_moments"},   {&O->Counts, "astra_counts"},
      {&O->Constant, "astra_constant"}};
  for (auto &[Fn, Name] : Entries) {
    auto E = O->Generated->function(Name);
    if (!E)
      return E.takeError();
    *Fn = *E;
  }
  auto R = DeviceAlloc::allocate(
      C, MomentBlocks * sizeof(ccore::MomentsPart), "the reductions' results");
  if (!R)
    return R.takeError();
  O->Result = std::move(*R);
  return O;
}

unsigned DeviceOps::gridFor(uint64_t Items) const {
  // Enough blocks to fill every SM several times over; the loop strides.
  uint64_t Cap = uint64_t(std::max(Ctx->info().SmCount, 1)) * 16;
  return unsigned(std::clamp<uint64_t>((Items + 255) / 256, 1, Cap));
}

Error DeviceOps::fill(cu::DevicePtr Dst, uint64_t Count, unsigned ElemSize,
                      uint64_t Bits, StringRef What) {
  if (Count == 0)
    return Error::success();
  if ((ElemSize != 1 && ElemSize != 2 && ElemSize != 4 && ElemSize != 8) ||
      Dst % ElemSize)
    return createStringError(inconvertibleErrorCode(),
                             "internal error: fill of %s with %u-byte elements "
                             "at a misaligned address",
                             What.str().c_str(), ElemSize);
  unsigned Size = ElemSize;
  void *Params[] = {&Dst, &Count, &Bits, &Size};
  return launchKernel(*Ctx, Fill, Dim3{gridFor(Count), 1, 1}, Dim3{256, 1, 1},
                      0, Params, ("poisoning " + What).str());
}

Expected<bool> DeviceOps::differs(cu::DevicePtr A, cu::DevicePtr B,
                                  uint64_t Bytes, double TimeoutSeconds,
                                  StringRef What) {
  const cu::Api &Api = Ctx->api();
  if (Error E = Ctx->check(Api.MemsetD8Async(Flag.ptr(), 0, 4, Ctx->stream()),
                           "cuMemsetD8Async", "the compare's answer"))
    return E;
  cu::DevicePtr FlagPtr = Flag.ptr();
  // 8-byte words where both sides allow it, then the tail as bytes.
  bool Wide = A % 8 == 0 && B % 8 == 0;
  uint64_t Words = Wide ? Bytes / 8 : 0;
  struct Part {
    cu::DevicePtr A, B;
    uint64_t Units;
    unsigned Wide;
  } Parts[] = {{A, B, Words, 1},
               {A + Words * 8, B + Words * 8, Bytes - Words * 8, 0}};
  for (Part &P : Parts) {
    if (!P.Units)
      continue;
    void *Params[] = {&P.A, &P.B, &P.Units, &P.Wide, &FlagPtr};
    if (Error E = launchKernel(*Ctx, Differs, Dim3{gridFor(P.Units), 1, 1},
                               Dim3{256, 1, 1}, 0, Params,
                               ("comparing " + What).str()))
      return E;
  }
  if (Error E = Ctx->wait(TimeoutSeconds, ("comparing " + What).str()))
    return E;
  uint32_t Answer = 0;
  if (Error E = Flag.download(0, &Answer, 4))
    return E;
  return Answer != 0;
}

Error DeviceOps::generate(const crng::GenParams &P, cu::DevicePtr Dst,
                          StringRef What) {
  if (P.Count == 0)
    return Error::success();
  if (Dst % crng::sizeOf(P.Type))
    return createStringError(inconvertibleErrorCode(),
                             "internal error: generating %s at a misaligned "
                             "address",
                             What.str().c_str());
  crng::GenParams Copy = P;
  void *Params[] = {&Copy, &Dst};
  return launchKernel(*Ctx, Generate, Dim3{gridFor(P.Count), 1, 1},
                      Dim3{256, 1, 1}, 0, Params,
                      ("generating " + What).str());
}

Error DeviceOps::reduce(cu::Function F, void **Params, uint64_t Items,
                        const void *Init, void *Out, size_t Bytes,
                        unsigned Blocks, double TimeoutSeconds,
                        StringRef What) {
  // The stream may still be writing the buffers; the result area is idle
  // (every reduction waits for its answer).
  if (Init)
    if (Error E = Result.upload(0, Init, Bytes))
      return E;
  if (Error E = launchKernel(*Ctx, F,
                             Dim3{Blocks ? Blocks : gridFor(Items), 1, 1},
                             Dim3{256, 1, 1}, 0, Params, What.str()))
    return E;
  if (Error E = Ctx->wait(TimeoutSeconds, What))
    return E;
  return Result.download(0, Out, Bytes);
}

Expected<ccore::CmpResult> DeviceOps::compare(const ccore::CmpParams &P,
                                              cu::DevicePtr Expected,
                                              cu::DevicePtr Actual,
                                              double TimeoutSeconds,
                                              StringRef What) {
  ccore::CmpResult R;
  if (P.Count == 0)
    return R;
  ccore::CmpParams Copy = P;
  cu::DevicePtr Out = Result.ptr();
  void *Params[] = {&Copy, &Expected, &Actual, &Out};
  if (Error E = reduce(Compare, Params, P.Count, &R, &R, sizeof(R), 0,
                       TimeoutSeconds, ("comparing " + What).str()))
    return std::move(E);
  return R;
}

Expected<ccore::MomentsPart>
DeviceOps::moments(uint64_t Count, uint32_t Type, double Tiny,
                   cu::DevicePtr Expected, cu::DevicePtr Actual,
                   double TimeoutSeconds, StringRef What) {
  ccore::MomentsPart All;
  if (Count == 0)
    return All;
  std::vector<ccore::MomentsPart> Parts(MomentBlocks);
  cu::DevicePtr Out = Result.ptr();
  void *Params[] = {&Count, &Type, &Tiny, &Expected, &Actual, &Out};
  if (Error E = reduce(Moments, Params, Count, nullptr, Parts.data(),
                       Parts.size() * sizeof(ccore::MomentsPart), MomentBlocks,
                       TimeoutSeconds, ("measuring " + What).str()))
    return std::move(E);
  for (const ccore::MomentsPart &P : Parts)
    ccore::momentsMerge(All, P);
  return All;
}

Expected<ccore::CountsResult> DeviceOps::counts(const ccore::CountsParams &P,
                                                cu::DevicePtr Expected,
                                                cu::DevicePtr Actual,
                                                double TimeoutSeconds,
                                                StringRef What) {
  ccore::CountsResult R;
  if (P.Count == 0)
    return R;
  ccore::CountsParams Copy = P;
  cu::DevicePtr Out = Result.ptr();
  void *Params[] = {&Copy, &Expected, &Actual, &Out};
  if (Error E = reduce(Counts, Params, P.Count, &R, &R, sizeof(R), 0,
                       TimeoutSeconds, ("counting " + What).str()))
    return std::move(E);
  return R;
}

Expected<uint64_t> DeviceOps::differentFromFirst(uint64_t Count, uint32_t Type,
                                                 cu::DevicePtr B,
                                                 double TimeoutSeconds,
                                                 StringRef What) {
  uint64_t N = 0;
  if (Count == 0)
    return N;
  cu::DevicePtr Out = Result.ptr();
  void *Params[] = {&Count, &Type, &B, &Out};
  if (Error E = reduce(Constant, Params, Count, &N, &N, sizeof(N), 0,
                       TimeoutSeconds, ("scanning " + What).str()))
    return std::move(E);
  return N;
}

} // namespace astra
