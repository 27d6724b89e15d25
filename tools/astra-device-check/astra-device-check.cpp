//===- astra-device-check.cpp - Device kernels against their host mirrors -===//
//
// The verifier makes inputs and compares outputs on the GPU with kernels
// compiled from the same C++ as the host's generator and comparison
// (CounterRng.h, CompareCore.h). This tool, run on a GPU machine, holds the
// two to each other:
//
//   generate  every recipe kind on every dtype, several sizes: the device's
//             bytes equal generateOnHost's, bit for bit;
//   compare   planted mismatches, NaN, infinities, poison, -0: the device's
//             counts, first index and maxima equal the host mirror's, and the
//             Comparison made from them equals compareBuffers' (message too);
//   scale     outputs that pass, are zeroed, scaled, constant: the device's
//             scale verdict equals checkScale's;
//   constant  the weak-output scan against weakOutputWarning;
//
// then times one large buffer's generation and comparison on the host and
// on the device. Exits 1 on any disagreement.
//
//   astra-device-check [--large N]
//
//===----------------------------------------------------------------------===//

#include "astra/Engine/Compare.h"
#include "astra/Engine/DeviceCompare.h"
#include "astra/Engine/DeviceOps.h"
#include "astra/Engine/Inputs.h"
#include "astra/Engine/ScaleRules.h"
#include "astra/Runtime/Device.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>

using namespace astra;
using namespace llvm;

static cl::opt<uint64_t>
    Large("large", cl::init(uint64_t(4096) * 2 * 11008),
          cl::desc("elements of the timed buffer (default: silu_and_mul "
                   "prefill's input)"));

namespace {

struct Checker {
  GpuContext &Ctx;
  DeviceOps &Ops;
  unsigned Cases = 0, Bad = 0;

  void disagree(const Twine &What) {
    ++Bad;
    errs() << "astra-device-check: DISAGREE: " << What << "\n";
  }
  Expected<DeviceAlloc> upload(const HostBuffer &B) {
    auto A = DeviceAlloc::allocate(Ctx, std::max<size_t>(B.byteSize(), 8),
                                   "a checked buffer");
    if (!A)
      return A.takeError();
    if (Error E = A->upload(0, B.data(), B.byteSize()))
      return E;
    return A;
  }
  Expected<HostBuffer> download(const DeviceAlloc &A, DType T, uint64_t N) {
    HostBuffer B(T, N);
    if (Error E = Ctx.wait(60, "the check"))
      return E;
    if (Error E = A.download(0, B.data(), B.byteSize()))
      return E;
    return B;
  }

  Error generate(const crng::GenParams &P, const Twine &Name) {
    ++Cases;
    DType T = DType(P.Type);
    HostBuffer Want(T, P.Count);
    generateOnHost(P, Want);
    auto A = DeviceAlloc::allocate(Ctx, std::max<uint64_t>(Want.byteSize(), 8),
                                   "a generated buffer");
    if (!A)
      return A.takeError();
    if (Error E = Ops.generate(P, A->ptr(), Name.str()))
      return E;
    auto Got = download(*A, T, P.Count);
    if (!Got)
      return Got.takeError();
    if (*Got == Want)
      return Error::success();
    for (uint64_t I = 0; I < P.Count; ++I)
      if (Got->bits(I) != Want.bits(I)) {
        disagree(formatv("generate {0}: element {1}: device {2}, host {3}",
                         Name, I, formatElement(*Got, I),
                         formatElement(Want, I)));
        break;
      }
    return Error::success();
  }

  Error compare(const HostBuffer &E, const HostBuffer &A, Tolerance Tol,
                int Poison, bool Bitwise, const Twine &Name) {
    ++Cases;
    auto DE = upload(E);
    if (!DE)
      return DE.takeError();
    auto DA = upload(A);
    if (!DA)
      return DA.takeError();
    ccore::CmpParams P = cmpParams(E.type(), E.count(), Tol, Poison, Bitwise);
    auto R = Ops.compare(P, DE->ptr(), DA->ptr(), 60, Name.str());
    if (!R)
      return R.takeError();
    ccore::CmpResult M = compareMirror(P, E, A);
    if (R->Failures != M.Failures || R->Unwritten != M.Unwritten ||
        R->First != M.First || R->MaxAbs != M.MaxAbs || R->MaxRel != M.MaxRel)
      disagree(formatv("compare {0}: device {1} failures ({2} unwritten, "
                       "first {3}, max abs {4}, max rel {5}), mirror {6} ({7}, "
                       "{8}, {9}, {10})",
                       Name, R->Failures, R->Unwritten, R->First,
                       crng::fromBits(R->MaxAbs), crng::fromBits(R->MaxRel),
                       M.Failures, M.Unwritten, M.First,
                       crng::fromBits(M.MaxAbs), crng::fromBits(M.MaxRel)));
    HostBuffer E1(E.type(), 1), A1(E.type(), 1);
    if (R->Failures) {
      E1.setBits(0, E.bits(R->First));
      A1.setBits(0, A.bits(R->First));
    }
    Comparison Got = comparisonFrom("out", P, *R, E1, A1, Tol, Poison);
    Comparison Want = Bitwise ? compareBitwise("out", E, A)
                              : compareBuffers("out", E, A, Tol, Poison);
    if (Got.Failures != Want.Failures || describe(Got) != describe(Want) ||
        Got.MaxAbsErr != Want.MaxAbsErr || Got.MaxRelErr != Want.MaxRelErr)
      disagree(formatv("compare {0}: device says \"{1}\" (max abs {2}), host "
                       "\"{3}\" (max abs {4})",
                       Name, describe(Got), Got.MaxAbsErr, describe(Want),
                       Want.MaxAbsErr));
    return Error::success();
  }

  Error scale(const HostBuffer &E, const HostBuffer &A, double Rtol,
              const Twine &Name) {
    ++Cases;
    auto DE = upload(E);
    if (!DE)
      return DE.takeError();
    auto DA = upload(A);
    if (!DA)
      return DA.takeError();
    auto Got = checkScaleOnDevice(
        "out", E.type(), E.count(), Rtol, Ops, DE->ptr(), DA->ptr(), 60,
        [&](uint64_t I) {
          HostBuffer E1(E.type(), 1), A1(E.type(), 1);
          E1.setBits(0, E.bits(I));
          A1.setBits(0, A.bits(I));
          return std::make_pair(E1, A1);
        });
    if (!Got)
      return Got.takeError();
    ScaleVerdict Want = checkScale("out", E, A, Rtol);
    if (Got->Kind != Want.Kind || describe(*Got) != describe(Want))
      disagree(formatv("scale {0}: device {1} \"{2}\", host {3} \"{4}\"", Name,
                       Got->Kind, describe(*Got), Want.Kind, describe(Want)));
    return Error::success();
  }

  Error constant(const HostBuffer &B, const Twine &Name) {
    ++Cases;
    auto D = upload(B);
    if (!D)
      return D.takeError();
    auto N = Ops.differentFromFirst(B.count(), dtypeCode(B.type()), D->ptr(),
                                    60, Name.str());
    if (!N)
      return N.takeError();
    HostBuffer First(B.type(), 1);
    First.setBits(0, B.bits(0));
    std::string Got = weakOutputWarning("out", First, B.count(), *N == 0);
    std::string Want = weakOutputWarning("out", B);
    if (Got != Want)
      disagree(formatv("constant {0}: device \"{1}\", host \"{2}\"", Name, Got,
                       Want));
    return Error::success();
  }
};

crng::GenParams recipe(crng::GenKind K, DType T, uint64_t N, uint64_t Key) {
  crng::GenParams P;
  P.Kind = K;
  P.Type = dtypeCode(T);
  P.Count = N;
  P.Key = Key;
  return P;
}

HostBuffer made(const crng::GenParams &P) {
  HostBuffer B(DType(P.Type), P.Count);
  generateOnHost(P, B);
  return B;
}

double seconds(std::chrono::steady_clock::time_point T0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - T0)
      .count();
}

Error run(Checker &C) {
  const DType Floats[] = {DType::F32, DType::F64, DType::F16, DType::BF16,
                          DType::FP8E4M3, DType::FP8E5M2};
  const DType Ints[] = {DType::I8, DType::U8, DType::I16, DType::U16,
                        DType::I32, DType::U32, DType::I64, DType::U64};
  const uint64_t Sizes[] = {1, 1000, (uint64_t(1) << 20) + 3};
  unsigned Before = C.Cases;
  for (uint64_t N : Sizes) {
    for (DType T : Floats) {
      std::string Tn = (dtypeName(T) + " n=" + Twine(N)).str();
      crng::GenParams P = recipe(crng::GenNormal, T, N, 0x1234 + N);
      P.A = 0.25;
      P.B = T == DType::FP8E4M3 ? 100 : 1e4; // values=large reaches overflow
      if (Error E = C.generate(P, "normal " + Tn))
        return E;
      P.Negate = 1;
      if (Error E = C.generate(P, "normal negated " + Tn))
        return E;
      crng::GenParams U = recipe(crng::GenUniform, T, N, 99);
      U.A = -2;
      U.B = 5;
      if (Error E = C.generate(U, "uniform " + Tn))
        return E;
      crng::GenParams D = recipe(crng::GenDenormal, T, N, 7);
      D.A = dtypeMinNormal(T);
      if (Error E = C.generate(D, "denormal " + Tn))
        return E;
      if (Error E = C.generate(recipe(crng::GenZero, T, N, 0), "zeros " + Tn))
        return E;
      crng::GenParams R = recipe(crng::GenRandInt, T, N, 5);
      R.Lo = -1000;
      R.Hi = 1000;
      if (Error E = C.generate(R, "randint " + Tn))
        return E;
    }
    for (DType T : Ints) {
      std::string Tn = (dtypeName(T) + " n=" + Twine(N)).str();
      crng::GenParams R = recipe(crng::GenRandInt, T, N, 11);
      R.Lo = isSignedInt(T) ? -100 : 0;
      R.Hi = 3000;
      if (Error E = C.generate(R, "randint " + Tn))
        return E;
      R.Lo = INT64_MIN;
      R.Hi = INT64_MAX;
      if (Error E = C.generate(R, "randint full range " + Tn))
        return E;
      R.Lo = 0;
      R.Hi = 6; // a span that rejects often: 2^64 mod 7 != 0
      if (Error E = C.generate(R, "randint small span " + Tn))
        return E;
      crng::GenParams P = recipe(crng::GenNormal, T, N, 13);
      P.B = 1e6; // saturates the narrow types
      if (Error E = C.generate(P, "normal " + Tn))
        return E;
    }
  }
  outs() << formatv("generate: {0} cases\n", C.Cases - Before);

  Before = C.Cases;
  double Nan = std::nan(""), Inf = HUGE_VAL;
  for (DType T : {DType::F32, DType::BF16, DType::F16, DType::FP8E4M3,
                  DType::FP8E5M2}) {
    uint64_t N = (uint64_t(1) << 21) + 77;
    crng::GenParams P = recipe(crng::GenNormal, T, N, 21);
    P.B = 3;
    HostBuffer E = made(P), A = E;
    A.set(N - 1, E.get(N - 1) + 5);
    A.set(N / 2, Nan);
    A.set(N / 2 + 1, Inf);
    E.set(N / 3, Nan);
    E.set(N / 3 + 1, Nan);
    A.set(N / 3 + 1, Nan);
    E.set(N / 3 + 2, -Inf);
    A.set(N / 3 + 2, Inf);
    E.set(N / 3 + 3, Inf);
    A.set(N / 3 + 3, Inf);
    A.setBits(N / 4, poisonBits(T, 0));
    A.set(777, E.get(777) * (1 + 2e-3));
    if (T != DType::FP8E4M3) {
      A.set(778, -0.0);
      E.set(778, 0.0);
    }
    Tolerance Tol{1e-2, 1e-3};
    std::string Tn = dtypeName(T).str();
    if (Error Er = C.compare(E, A, Tol, 0, false, "planted " + Tn))
      return Er;
    if (Error Er = C.compare(E, A, Tol, 0, true, "planted bitwise " + Tn))
      return Er;
    if (Error Er = C.compare(E, E, Tol, 0, false, "identical " + Tn))
      return Er;
    HostBuffer Close = E;
    for (uint64_t I = 0; I < N; I += 3)
      Close.set(I, E.get(I) * (1 + 1e-3));
    if (Error Er = C.compare(E, Close, Tol, -1, false, "within tolerance " + Tn))
      return Er;
  }
  {
    crng::GenParams P = recipe(crng::GenRandInt, DType::I64, 100000, 3);
    P.Lo = INT64_MIN;
    P.Hi = INT64_MAX;
    HostBuffer E = made(P), A = E;
    A.setInt(99999, E.getInt(99999) ^ 1);
    A.setBits(5, poisonBits(DType::I64, 1));
    if (Error Er = C.compare(E, A, {}, 1, false, "planted i64"))
      return Er;
    crng::GenParams U = recipe(crng::GenRandInt, DType::U64, 100000, 3);
    U.Lo = INT64_MIN;
    U.Hi = INT64_MAX;
    HostBuffer UE = made(U), UA = UE;
    UA.setBits(12345, ~UE.bits(12345));
    if (Error Er = C.compare(UE, UA, {}, -1, false, "planted u64"))
      return Er;
  }
  outs() << formatv("compare: {0} cases\n", C.Cases - Before);

  Before = C.Cases;
  for (DType T : {DType::F32, DType::BF16, DType::F16}) {
    uint64_t N = (uint64_t(1) << 20) + 9;
    crng::GenParams P = recipe(crng::GenNormal, T, N, 31);
    P.B = 0.004; // below a bf16 atol: only the scale rules see the cases
    HostBuffer E = made(P);
    HostBuffer Noise = E, Zeroed = E, Scaled = E, Const(T, N);
    for (uint64_t I = 0; I < N; ++I) {
      Noise.set(I, E.get(I) * (1 + ((I % 7) - 3) * 1e-4));
      if (I % 97 == 0)
        Zeroed.set(I, 0.0);
      Scaled.set(I, E.get(I) * 1.05);
      Const.set(I, 0.001);
    }
    std::string Tn = dtypeName(T).str();
    for (auto &[B, What] : {std::pair<HostBuffer *, const char *>{&Noise, "noise"},
                            {&Zeroed, "zeroed"},
                            {&Scaled, "scaled"},
                            {&Const, "constant"}})
      if (Error Er = C.scale(E, *B, 1e-2, Twine(What) + " " + Tn))
        return Er;
    if (Error Er = C.scale(E, Zeroed, 0, "zeroed absolute " + Tn))
      return Er;
    if (Error Er = C.constant(E, "varied " + Tn))
      return Er;
    if (Error Er = C.constant(Const, "constant " + Tn))
      return Er;
    if (Error Er = C.constant(HostBuffer(T, N), "zeros " + Tn))
      return Er;
  }
  outs() << formatv("scale and constant: {0} cases\n", C.Cases - Before);

  // Timing: one large bf16 normal buffer made on the host (all cores) and
  // on the device, then half of it compared with a perturbed copy.
  crng::GenParams P = recipe(crng::GenNormal, DType::BF16, Large, 77);
  P.B = 1;
  auto T0 = std::chrono::steady_clock::now();
  HostBuffer H = made(P);
  double HostGen = seconds(T0);
  auto A = DeviceAlloc::allocate(C.Ctx, H.byteSize(), "the timed buffer");
  if (!A)
    return A.takeError();
  if (Error E = C.Ops.generate(P, A->ptr(), "the timed buffer")) // warm-up
    return E;
  if (Error E = C.Ctx.wait(60, "the warm-up"))
    return E;
  T0 = std::chrono::steady_clock::now();
  if (Error E = C.Ops.generate(P, A->ptr(), "the timed buffer"))
    return E;
  if (Error E = C.Ctx.wait(60, "the timed generation"))
    return E;
  double DevGen = seconds(T0);
  uint64_t Half = Large / 2;
  HostBuffer E(DType::BF16, Half), Act(DType::BF16, Half);
  std::memcpy(E.data(), H.data(), E.byteSize());
  std::memcpy(Act.data(), H.data() + E.byteSize(), Act.byteSize());
  Tolerance Tol{1.6e-2, 1e-2};
  T0 = std::chrono::steady_clock::now();
  Comparison HC = compareBuffers("out", E, Act, Tol, 0);
  ScaleVerdict HS = checkScale("out", E, Act, Tol.Rtol);
  double HostCmp = seconds(T0);
  cu::DevicePtr DE = A->ptr(), DA = A->ptr() + E.byteSize();
  ccore::CmpParams CP = cmpParams(DType::BF16, Half, Tol, 0, false);
  T0 = std::chrono::steady_clock::now();
  auto DR = C.Ops.compare(CP, DE, DA, 60, "the timed buffers");
  if (!DR)
    return DR.takeError();
  auto DS = checkScaleOnDevice("out", DType::BF16, Half, Tol.Rtol, C.Ops, DE,
                               DA, 60, [&](uint64_t I) {
                                 HostBuffer E1(DType::BF16, 1), A1(DType::BF16, 1);
                                 E1.setBits(0, E.bits(I));
                                 A1.setBits(0, Act.bits(I));
                                 return std::make_pair(E1, A1);
                               });
  if (!DS)
    return DS.takeError();
  double DevCmp = seconds(T0);
  if (DR->Failures != HC.Failures || DS->Kind != HS.Kind)
    C.disagree("the timed comparison");
  outs() << formatv("timing ({0} bf16 elements): generate host {1:f3} s, "
                    "device {2:f3} s; compare {3} elements host {4:f3} s, "
                    "device {5:f3} s\n",
                    Large.getValue(), HostGen, DevGen, Half, HostCmp, DevCmp);
  return Error::success();
}

} // namespace

int main(int Argc, char **Argv) {
  cl::ParseCommandLineOptions(Argc, Argv,
                              "checks the verifier's device kernels against "
                              "their host mirrors on a GPU\n");
  auto Fail = [](Error E) {
    errs() << "astra-device-check: error: " << toString(std::move(E)) << "\n";
    return 1;
  };
  auto Ctx = GpuContext::open(0);
  if (!Ctx)
    return Fail(Ctx.takeError());
  auto Ops = DeviceOps::load(**Ctx);
  if (!Ops)
    return Fail(Ops.takeError());
  outs() << "astra-device-check: " << (*Ctx)->info().Name << "\n";
  Checker C{**Ctx, **Ops};
  if (Error E = run(C))
    return Fail(std::move(E));
  outs() << formatv("{0} cases, {1} disagree\n", C.Cases, C.Bad);
  return C.Bad ? 1 : 0;
}
