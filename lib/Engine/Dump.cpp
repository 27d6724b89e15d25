//===- Dump.cpp - One baseline run written to disk ------------------------===//
#include "astra/Engine/Dump.h"
#include "astra/Engine/Inputs.h"
#include "astra/Engine/KernelRunner.h"
#include "astra/Engine/PtxParams.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Json.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace astra {

static Error writeBinary(StringRef Dir, StringRef Name, const HostBuffer &B) {
  SmallString<256> P(Dir);
  sys::path::append(P, Name);
  return writeFileAtomically(
      P, StringRef(reinterpret_cast<const char *>(B.data()), B.byteSize()));
}

Error dumpBaselineRun(const VerifyJob &J, StringRef Dir) {
  if (J.Shapes.empty() || J.Seeds.empty())
    return createStringError(inconvertibleErrorCode(),
                             "internal error: a dump needs a shape set and a "
                             "seed");
  KernelSpec Spec = J.Spec;
  const ShapeSet *Shape = Spec.shape(J.Shapes.front());
  if (!Shape) {
    std::string Known;
    for (const ShapeSet &S : Spec.Shapes)
      Known += (Known.empty() ? "" : ", ") + S.Name;
    return createStringError(inconvertibleErrorCode(),
                             specContext(Spec) + "no shape set '" +
                                 J.Shapes.front() + "' (shape sets: " + Known +
                                 ")");
  }
  uint64_t Seed = J.Seeds.front();
  auto Params = ptxEntryParams(J.Baseline.Ptx, J.Baseline.Entry);
  if (!Params)
    return createStringError(inconvertibleErrorCode(),
                             "no kernel '" + J.Baseline.Entry +
                                 "' in the PTX of " + J.Baseline.Source);
  if (Error E = checkSpecAgainstPtx(Spec, *Params, J.Baseline.Entry))
    return E;
  auto Inputs = generateInputs(Spec, Shape->Vars, Seed);
  if (!Inputs)
    return Inputs.takeError();

  auto Ctx = GpuContext::open(J.Options.Device);
  if (!Ctx)
    return Ctx.takeError();
  auto Mod = GpuModule::load(**Ctx, J.Baseline.code(), J.Baseline.Source);
  if (!Mod)
    return Mod.takeError();
  auto Fn = (*Mod)->function(J.Baseline.Entry);
  if (!Fn)
    return Fn.takeError();
  auto K = KernelRunner::create(**Ctx, *Fn, Spec, Spec.Launch, Shape->Vars,
                                false, "kernel");
  if (!K)
    return K.takeError();
  if (Error E = (*K)->upload(*Inputs))
    return E;
  if (Error E = (*K)->poison(0))
    return E;
  if (Error E = (*K)->run(J.Options.KernelTimeout))
    return E;
  auto After = (*K)->download();
  if (!After)
    return After.takeError();
  auto Guards = (*K)->checkGuards();
  if (!Guards)
    return Guards.takeError();
  if (!Guards->empty())
    return createStringError(inconvertibleErrorCode(),
                             *Guards + " (shape set '" + Shape->Name +
                                 "'): the spec's count for that buffer is too "
                                 "small");

  if (std::error_code EC = sys::fs::create_directories(Dir))
    return createStringError(EC, "cannot create %s: %s", Dir.str().c_str(),
                             EC.message().c_str());
  JsonWriter W;
  W.objectBegin();
  W.field("version", 1);
  W.field("kernel", Spec.Kernel);
  W.field("entry", J.Baseline.Entry);
  W.field("source", J.Baseline.Source);
  W.field("shape_name", Shape->Name);
  W.key("shape");
  W.objectBegin();
  for (auto &[Var, V] : Shape->Vars) {
    W.key(Var);
    if (V.IsInt)
      W.value((long long)V.I);
    else
      W.value(V.D);
  }
  W.objectEnd();
  W.field("seed", (unsigned long long)Seed);
  W.field("device", (*Ctx)->info().Name);
  W.key("args");
  W.arrayBegin();
  for (const ArgSpec &A : Spec.Args) {
    W.objectBegin();
    W.field("name", A.Name);
    if (!A.IsBuffer) {
      W.field("dtype", dtypeName(A.ScalarType));
      auto V = A.ScalarValue.eval(Shape->Vars);
      if (!V)
        return V.takeError();
      W.key("value");
      if (V->IsInt && !isFloating(A.ScalarType))
        W.value((long long)V->I);
      else
        W.value(V->real());
      W.objectEnd();
      continue;
    }
    W.field("dtype", dtypeName(A.Type));
    W.field("count", (unsigned long long)(*K)->count(A.Name));
    W.field("role", roleName(A.R));
    bool In = A.R == Role::Input || A.R == Role::InOut;
    bool Out = A.R == Role::Output || A.R == Role::InOut;
    W.key("in");
    if (In) {
      std::string F = A.Name + ".in.bin";
      if (Error E = writeBinary(Dir, F, Inputs->at(A.Name)))
        return E;
      W.value(F);
    } else {
      W.null();
    }
    W.key("out");
    if (Out) {
      std::string F = A.Name + ".out.bin";
      if (Error E = writeBinary(Dir, F, After->at(A.Name)))
        return E;
      W.value(F);
    } else {
      W.null();
    }
    W.objectEnd();
  }
  W.arrayEnd();
  W.objectEnd();
  SmallString<256> M(Dir);
  sys::path::append(M, "manifest.json");
  return writeFileAtomically(M, W.str());
}

} // namespace astra
