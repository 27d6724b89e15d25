//===- KernelRunner.cpp - One kernel with its own device buffers ----------===//
#include "astra/Engine/KernelRunner.h"
#include "astra/Engine/Compare.h"
#include "astra/Engine/Inputs.h"
#include "astra/Engine/PtxParams.h"
#include "astra/Engine/RunPlan.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>

using namespace llvm;

namespace astra {

Expected<std::vector<uint8_t>> packScalar(const KernelSpec &S,
                                          const ArgSpec &A, const Env &Vars) {
  auto V = A.ScalarValue.eval(Vars);
  if (!V)
    return createStringError(inconvertibleErrorCode(),
                             specContext(S) + "args." + A.Name +
                                 ".value: " + toString(V.takeError()));
  std::vector<uint8_t> Bytes(dtypeSize(A.ScalarType), 0);
  if (isFloating(A.ScalarType)) {
    HostBuffer B(A.ScalarType, 1);
    B.set(0, V->real());
    std::memcpy(Bytes.data(), B.data(), Bytes.size());
    return Bytes;
  }
  if (!V->IsInt && V->D != std::floor(V->D))
    return createStringError(
        inconvertibleErrorCode(),
        "%sargs.%s.value: '%s' is %g, but the parameter is an integer (%s)",
        specContext(S).c_str(), A.Name.c_str(), A.ScalarValue.text().c_str(),
        V->D, dtypeName(A.ScalarType).str().c_str());
  int64_t I = V->IsInt ? V->I : int64_t(V->D);
  // Accept what fits the parameter's bits as either signedness: the PTX
  // does not say whether a .u32 parameter is an int or an unsigned.
  unsigned Bits = 8 * dtypeSize(A.ScalarType);
  if (Bits < 64 && (I < -(int64_t(1) << (Bits - 1)) || I >= (int64_t(1) << Bits)))
    return createStringError(
        inconvertibleErrorCode(),
        "%sargs.%s.value: '%s' = %lld does not fit the parameter's type %s",
        specContext(S).c_str(), A.Name.c_str(), A.ScalarValue.text().c_str(),
        (long long)I, dtypeName(A.ScalarType).str().c_str());
  uint64_t U = uint64_t(I);
  std::memcpy(Bytes.data(), &U, Bytes.size()); // little-endian truncation
  return Bytes;
}

Expected<std::unique_ptr<KernelRunner>>
KernelRunner::create(GpuContext &C, cu::Function F, const KernelSpec &S,
                     const LaunchSpec &Launch, const Env &Vars, bool Misalign,
                     StringRef Label) {
  std::unique_ptr<KernelRunner> R(new KernelRunner());
  R->Ctx = &C;
  R->Fn = F;
  R->Spec = &S;
  R->Label = Label.str();
  std::string Bad;
  auto L = Launch.resolve(Vars, &Bad);
  if (!L)
    return createStringError(inconvertibleErrorCode(),
                             specContext(S) + Label + " launch." + Bad + ": " +
                                 toString(L.takeError()));
  R->Launch = *L;
  for (const ArgSpec &A : S.Args) {
    if (!A.IsBuffer) {
      auto Bytes = packScalar(S, A, Vars);
      if (!Bytes)
        return Bytes.takeError();
      R->Storage.push_back(std::move(*Bytes));
      continue;
    }
    auto N = A.Count.evalInt(Vars);
    if (!N)
      return createStringError(inconvertibleErrorCode(),
                               specContext(S) + "args." + A.Name + ".count: " +
                                   toString(N.takeError()));
    Buffer B;
    B.Arg = &A;
    B.Count = uint64_t(std::max<int64_t>(*N, 0));
    B.Bytes = B.Count * dtypeSize(A.Type);
    B.Offset = GuardBytes + (Misalign && canMisalign(A) ? dtypeSize(A.Type) : 0);
    auto Alloc = DeviceAlloc::allocate(
        C, B.Offset + B.Bytes + GuardBytes,
        (Label + " buffer '" + A.Name + "'").str());
    if (!Alloc)
      return Alloc.takeError();
    B.Alloc = std::move(*Alloc);
    std::vector<uint8_t> Ptr(8);
    uint64_t Addr = B.Alloc.ptr() + B.Offset;
    std::memcpy(Ptr.data(), &Addr, 8);
    R->Storage.push_back(std::move(Ptr));
    R->Buffers.push_back(std::move(B));
  }
  for (std::vector<uint8_t> &S : R->Storage)
    R->Params.push_back(S.data());
  return R;
}

Error KernelRunner::writeGuards(const Buffer &B) const {
  std::vector<uint8_t> Pre = canaryRegion(B.Offset);
  if (Error E = B.Alloc.upload(0, Pre.data(), Pre.size()))
    return E;
  std::vector<uint8_t> Post = canaryRegion(GuardBytes);
  return B.Alloc.upload(B.Offset + B.Bytes, Post.data(), Post.size());
}

static Error sizeMismatch(StringRef Label, StringRef Name, size_t Have,
                          size_t Want) {
  return createStringError(inconvertibleErrorCode(),
                           "internal error: %s buffer '%s' holds %zu bytes, "
                           "the values %zu",
                           Label.str().c_str(), Name.str().c_str(), Want, Have);
}

Error KernelRunner::upload(const std::map<std::string, HostBuffer> &Values) {
  for (const Buffer &B : Buffers) {
    if (Error E = writeGuards(B))
      return E;
    if (B.Arg->R != Role::Input && B.Arg->R != Role::InOut)
      continue;
    auto It = Values.find(B.Arg->Name);
    if (It == Values.end())
      continue;
    if (It->second.byteSize() != B.Bytes)
      return sizeMismatch(Label, B.Arg->Name, It->second.byteSize(), B.Bytes);
    if (Error E = B.Alloc.upload(B.Offset, It->second.data(), B.Bytes))
      return E;
  }
  return Error::success();
}

Error KernelRunner::upload(const InputSet &Values) {
  if (Error E = upload(Values.Host))
    return E;
  for (const Buffer &B : Buffers) {
    if (B.Arg->R != Role::Input && B.Arg->R != Role::InOut)
      continue;
    auto It = Values.Device.find(B.Arg->Name);
    if (It == Values.Device.end())
      continue;
    const crng::GenParams &P = It->second;
    if (P.Count * crng::sizeOf(P.Type) != B.Bytes)
      return sizeMismatch(Label, B.Arg->Name, P.Count * crng::sizeOf(P.Type),
                          B.Bytes);
    if (!Ops)
      return createStringError(inconvertibleErrorCode(),
                               "internal error: %s buffer '%s' is to be made "
                               "on the device without the device helpers",
                               Label.c_str(), B.Arg->Name.c_str());
    if (Error E = Ops->generate(P, B.Alloc.ptr() + B.Offset,
                                Label + " input '" + B.Arg->Name + "'"))
      return E;
  }
  return Error::success();
}

Error KernelRunner::poison(unsigned Variant) {
  for (const Buffer &B : Buffers) {
    if (B.Arg->R != Role::Output && B.Arg->R != Role::Scratch)
      continue;
    if (Ops) {
      if (Error E = Ops->fill(B.Alloc.ptr() + B.Offset, B.Count,
                              dtypeSize(B.Arg->Type),
                              poisonBits(B.Arg->Type, Variant),
                              Label + " buffer '" + B.Arg->Name + "'"))
        return E;
      continue;
    }
    HostBuffer P = poisonBuffer(B.Arg->Type, B.Count, Variant);
    if (Error E = B.Alloc.upload(B.Offset, P.data(), B.Bytes))
      return E;
  }
  return Error::success();
}

Error KernelRunner::launch() {
  Dim3 G{unsigned(Launch.Grid[0]), unsigned(Launch.Grid[1]),
         unsigned(Launch.Grid[2])};
  Dim3 B{unsigned(Launch.Block[0]), unsigned(Launch.Block[1]),
         unsigned(Launch.Block[2])};
  return launchKernel(*Ctx, Fn, G, B, unsigned(Launch.Shmem), Params.data(),
                      Label + " kernel");
}

Error KernelRunner::run(double TimeoutSeconds) {
  if (Error E = launch())
    return E;
  return Ctx->wait(TimeoutSeconds, Label + " kernel");
}

/// Inputs and in-outs: what upload() sets.
static bool uploaded(Role R) { return R == Role::Input || R == Role::InOut; }
/// Everything the kernel may write.
static bool written(Role R) { return R != Role::Input; }
static bool anyRole(Role) { return true; }

Expected<HostBuffer> KernelRunner::fetch(const Buffer &B) const {
  HostBuffer H(B.Arg->Type, B.Count);
  if (Error E = B.Alloc.download(B.Offset, H.data(), B.Bytes))
    return E;
  return H;
}

static Error noSavedCopy(StringRef Label, StringRef Name) {
  return createStringError(inconvertibleErrorCode(),
                           "internal error: %s has no saved copy of '%s'",
                           Label.str().c_str(), Name.str().c_str());
}

Expected<std::map<std::string, HostBuffer>>
KernelRunner::downloadSaved() const {
  std::map<std::string, HostBuffer> Out;
  for (const Buffer &B : Buffers) {
    if (!written(B.Arg->R))
      continue;
    if (!B.Saved.ptr())
      return noSavedCopy(Label, B.Arg->Name);
    HostBuffer H(B.Arg->Type, B.Count);
    if (Error E = B.Saved.download(0, H.data(), B.Bytes))
      return E;
    Out[B.Arg->Name] = std::move(H);
  }
  return Out;
}

Expected<HostBuffer> KernelRunner::downloadElement(StringRef Name, uint64_t I,
                                                   bool Saved) const {
  const Buffer *B = find(Name);
  if (!B || I >= B->Count || (Saved && !B->Saved.ptr()))
    return createStringError(inconvertibleErrorCode(),
                             "internal error: %s has no element %llu of '%s'",
                             Label.c_str(), (unsigned long long)I,
                             Name.str().c_str());
  HostBuffer H(B->Arg->Type, 1);
  size_t Size = dtypeSize(B->Arg->Type);
  if (Error E = Saved ? B->Saved.download(I * Size, H.data(), Size)
                      : B->Alloc.download(B->Offset + I * Size, H.data(), Size))
    return E;
  return H;
}

cu::DevicePtr KernelRunner::savedAddress(StringRef Name) const {
  const Buffer *B = find(Name);
  return B ? B->Saved.ptr() : 0;
}

Expected<std::map<std::string, HostBuffer>>
KernelRunner::downloadIf(bool (*Selected)(Role)) const {
  std::map<std::string, HostBuffer> Out;
  for (const Buffer &B : Buffers) {
    if (!Selected(B.Arg->R))
      continue;
    auto H = fetch(B);
    if (!H)
      return H.takeError();
    Out[B.Arg->Name] = std::move(*H);
  }
  return Out;
}

Expected<std::map<std::string, HostBuffer>> KernelRunner::download() const {
  return downloadIf(anyRole);
}

Expected<std::map<std::string, HostBuffer>>
KernelRunner::downloadWritten() const {
  return downloadIf(written);
}

Expected<HostBuffer> KernelRunner::downloadBuffer(StringRef Name) const {
  const Buffer *B = find(Name);
  if (!B)
    return createStringError(inconvertibleErrorCode(),
                             "internal error: no buffer '%s'",
                             Name.str().c_str());
  return fetch(*B);
}

const KernelRunner::Buffer *KernelRunner::find(StringRef Name) const {
  for (const Buffer &B : Buffers)
    if (B.Arg->Name == Name)
      return &B;
  return nullptr;
}

Error KernelRunner::copy(cu::DevicePtr Dst, cu::DevicePtr Src, size_t Bytes,
                         const Twine &What) const {
  if (Bytes == 0)
    return Error::success();
  return Ctx->check(
      Ctx->api().MemcpyDtoDAsync(Dst, Src, Bytes, Ctx->stream()),
      "cuMemcpyDtoDAsync", What.str());
}

static Error needsOps(StringRef Label) {
  return createStringError(inconvertibleErrorCode(),
                           "internal error: %s runner has no device helpers",
                           Label.str().c_str());
}

Error KernelRunner::saveInto(DeviceAlloc Buffer::*Copy,
                             bool (*Selected)(Role), StringRef Kind) {
  for (Buffer &B : Buffers) {
    if (!Selected(B.Arg->R))
      continue;
    DeviceAlloc &To = B.*Copy;
    if (!To.ptr()) {
      auto A = DeviceAlloc::allocate(
          *Ctx, B.Bytes, (Label + " " + Kind + " copy of '" + B.Arg->Name + "'").str());
      if (!A)
        return A.takeError();
      To = std::move(*A);
    }
    if (Error E = copy(To.ptr(), B.Alloc.ptr() + B.Offset, B.Bytes,
                       Label + " saving '" + B.Arg->Name + "'"))
      return E;
  }
  return Error::success();
}

Error KernelRunner::savePristine() {
  return saveInto(&Buffer::Pristine, uploaded, "pristine");
}

Error KernelRunner::saveWritten() {
  return saveInto(&Buffer::Saved, written, "saved");
}

Error KernelRunner::restoreWritten() const {
  for (const Buffer &B : Buffers) {
    if (!written(B.Arg->R))
      continue;
    if (!B.Saved.ptr())
      return noSavedCopy(Label, B.Arg->Name);
    if (Error E = copy(B.Alloc.ptr() + B.Offset, B.Saved.ptr(), B.Bytes,
                       Label + " restoring '" + B.Arg->Name + "'"))
      return E;
  }
  return Error::success();
}

Error KernelRunner::loadPristine(const KernelRunner &Src, bool InOutsOnly) {
  for (const Buffer &B : Buffers) {
    if (Error E = writeGuards(B))
      return E;
    if (B.Arg->R != Role::InOut && (InOutsOnly || B.Arg->R != Role::Input))
      continue;
    const Buffer *S = Src.find(B.Arg->Name);
    if (!S || !S->Pristine.ptr() || S->Bytes != B.Bytes)
      return createStringError(inconvertibleErrorCode(),
                               "internal error: %s has no pristine copy of "
                               "'%s' the size of %s's",
                               Src.Label.c_str(), B.Arg->Name.c_str(),
                               Label.c_str());
    if (Error E = copy(B.Alloc.ptr() + B.Offset, S->Pristine.ptr(), B.Bytes,
                       Label + " loading '" + B.Arg->Name + "'"))
      return E;
  }
  return Error::success();
}

Expected<bool> KernelRunner::changedSinceSave(StringRef Name,
                                              double TimeoutSeconds) {
  const Buffer *B = find(Name);
  if (!Ops)
    return needsOps(Label);
  if (!B || !B->Saved.ptr())
    return noSavedCopy(Label, Name);
  return Ops->differs(B->Alloc.ptr() + B->Offset, B->Saved.ptr(), B->Bytes,
                      TimeoutSeconds, (Label + " '" + Name + "'").str());
}

Expected<bool> KernelRunner::differsFromCopy(StringRef Name,
                                             const KernelRunner &Src,
                                             DeviceAlloc Buffer::*Copy,
                                             StringRef Kind,
                                             double TimeoutSeconds) {
  const Buffer *B = find(Name);
  const Buffer *S = Src.find(Name);
  if (!Ops)
    return needsOps(Label);
  if (!B || !S || !(S->*Copy).ptr() || S->Bytes != B->Bytes)
    return createStringError(inconvertibleErrorCode(),
                             "internal error: %s has no %s copy of '%s'",
                             Src.Label.c_str(), Kind.str().c_str(),
                             Name.str().c_str());
  return Ops->differs(B->Alloc.ptr() + B->Offset, (S->*Copy).ptr(), B->Bytes,
                      TimeoutSeconds, (Label + " '" + Name + "'").str());
}

Expected<bool> KernelRunner::differsFromPristine(StringRef Name,
                                                 const KernelRunner &Src,
                                                 double TimeoutSeconds) {
  return differsFromCopy(Name, Src, &Buffer::Pristine, "pristine",
                         TimeoutSeconds);
}

Expected<bool> KernelRunner::differsFromSaved(StringRef Name,
                                              const KernelRunner &Src,
                                              double TimeoutSeconds) {
  return differsFromCopy(Name, Src, &Buffer::Saved, "saved", TimeoutSeconds);
}

Expected<std::string> KernelRunner::checkGuards() const {
  for (const Buffer &B : Buffers) {
    std::vector<uint8_t> Pre(B.Offset), Post(GuardBytes);
    if (Error E = B.Alloc.download(0, Pre.data(), Pre.size()))
      return E;
    if (Error E = B.Alloc.download(B.Offset + B.Bytes, Post.data(), Post.size()))
      return E;
    unsigned Size = dtypeSize(B.Arg->Type);
    if (auto At = firstChangedCanary(Post))
      return formatv("{0} wrote past the end of '{1}': the guard byte {2} "
                     "bytes after its last element changed (as if element "
                     "{3} of {4} were written)",
                     Label, B.Arg->Name, *At, B.Count + *At / Size, B.Count)
          .str();
    // The pre-guard: report the byte closest to the buffer.
    for (size_t I = Pre.size(); I-- > 0;)
      if (Pre[I] != canaryByte(I))
        return formatv("{0} wrote before the start of '{1}': the guard byte "
                       "{2} bytes before element 0 changed",
                       Label, B.Arg->Name, B.Offset - I)
            .str();
  }
  return std::string();
}

cu::DevicePtr KernelRunner::address(StringRef Name) const {
  const Buffer *B = find(Name);
  return B ? B->Alloc.ptr() + B->Offset : 0;
}

uint64_t KernelRunner::count(StringRef Name) const {
  const Buffer *B = find(Name);
  return B ? B->Count : 0;
}

} // namespace astra
