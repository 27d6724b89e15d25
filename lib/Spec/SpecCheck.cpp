//===- SpecCheck.cpp - Spec <-> kernel consistency ------------------------===//
#include "astra/Spec/SpecCheck.h"
#include "astra/Analysis/PointerAccess.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Type.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace clang;
using namespace llvm;

namespace astra {

/// The name `list` prints for an instantiation: "scale<float, 2>".
static std::string instantiationName(const FunctionDecl *FD) {
  PrintingPolicy PP(FD->getASTContext().getLangOpts());
  PP.SuppressTagKeyword = true;
  std::string S;
  raw_string_ostream OS(S);
  FD->getNameForDiagnostic(OS, PP, /*Qualified=*/false);
  return S;
}

/// Instantiations of a template kernel that have a body to check against.
static std::vector<const FunctionDecl *> instantiations(const KernelInfo &K) {
  std::vector<const FunctionDecl *> Out;
  if (!K.Decl)
    return Out;
  if (const FunctionTemplateDecl *FTD = K.Decl->getDescribedFunctionTemplate())
    for (const FunctionDecl *Spec : FTD->specializations())
      Out.push_back(Spec);
  return Out;
}

/// Whether \p Name names instantiation \p FD of template kernel \p K, as
/// "scale<float, 2>" or qualified, "ns::scale<float, 2>".
static bool namesInstantiation(const KernelInfo &K, const FunctionDecl *FD,
                               StringRef Name) {
  std::string Short = instantiationName(FD);
  StringRef Args = StringRef(Short).drop_until([](char C) { return C == '<'; });
  return sameKernelName(Short, Name) ||
         sameKernelName(K.QualifiedName + Args.str(), Name);
}

std::vector<std::string> specKernelNames(const std::vector<KernelInfo> &Ks) {
  std::vector<std::string> Names;
  for (const KernelInfo &K : Ks) {
    if (!K.isTemplate()) {
      Names.push_back(K.QualifiedName);
      continue;
    }
    std::vector<const FunctionDecl *> Insts = instantiations(K);
    if (Insts.empty()) {
      std::string Params;
      for (const TemplateParam &P : K.TemplateParams)
        Params += (Params.empty() ? "" : ", ") + P.Name;
      Names.push_back(K.QualifiedName + "<" + Params +
                      "> (a template with no instantiation)");
    }
    for (const FunctionDecl *FD : Insts)
      Names.push_back(instantiationName(FD));
  }
  return Names;
}

Expected<SpecTarget> findSpecTarget(const std::vector<KernelInfo> &Kernels,
                                    StringRef Name, StringRef File) {
  for (const KernelInfo &K : Kernels) {
    if (!K.isTemplate()) {
      if (sameKernelName(K.QualifiedName, Name))
        return SpecTarget{&K, K.Decl, K.QualifiedName};
      continue;
    }
    std::vector<const FunctionDecl *> Insts = instantiations(K);
    for (const FunctionDecl *FD : Insts)
      if (namesInstantiation(K, FD, Name))
        return SpecTarget{&K, FD, instantiationName(FD)};
    if (sameKernelName(K.QualifiedName, Name) ||
        sameKernelName(K.Name, Name)) {
      std::vector<std::string> Names;
      for (const FunctionDecl *FD : Insts)
        Names.push_back(instantiationName(FD));
      if (Names.empty())
        return createStringError(
            inconvertibleErrorCode(),
            "%s: kernel '%s' is a template with no instantiation in this "
            "file; a spec needs concrete types: instantiate it (template "
            "__global__ void %s<...>(...);) or launch it",
            File.str().c_str(), K.QualifiedName.c_str(),
            K.QualifiedName.c_str());
      return createStringError(
          inconvertibleErrorCode(),
          "%s: kernel '%s' is a template; name one instantiation: %s",
          File.str().c_str(), K.QualifiedName.c_str(),
          join(Names, ", ").c_str());
    }
  }
  std::vector<std::string> Names = specKernelNames(Kernels);
  return createStringError(
      inconvertibleErrorCode(), "%s: no kernel '%s' in this file (%s)",
      File.str().c_str(), Name.str().c_str(),
      Names.empty() ? "it has no __global__ kernels"
                    : ("kernels: " + join(Names, ", ")).c_str());
}

/// CUDA's vector types ("float4", "uchar2", "longlong2") as element type
/// and lanes.
static std::optional<SpecType> cudaVectorType(StringRef Name) {
  unsigned Lanes = 0;
  if (Name.empty() || !isDigit(Name.back()))
    return std::nullopt;
  Lanes = Name.back() - '0';
  if (Lanes < 1 || Lanes > 4)
    return std::nullopt;
  StringRef Elem = Name.drop_back();
  static const std::pair<StringRef, DType> Elems[] = {
      {"char", DType::I8},      {"uchar", DType::U8},
      {"short", DType::I16},    {"ushort", DType::U16},
      {"int", DType::I32},      {"uint", DType::U32},
      {"long", DType::I64},     {"ulong", DType::U64},
      {"longlong", DType::I64}, {"ulonglong", DType::U64},
      {"float", DType::F32},    {"double", DType::F64},
  };
  for (auto &[N, T] : Elems)
    if (Elem == N)
      return SpecType{T, Lanes, false};
  return std::nullopt;
}

std::optional<SpecType> specTypeOf(const ASTContext &Ctx, QualType T) {
  T = T.getCanonicalType().getUnqualifiedType();
  if (const auto *ET = T->getAs<EnumType>())
    if (const EnumDecl *ED = ET->getDecl()->getDefinition())
      T = ED->getIntegerType().getCanonicalType();
  if (const auto *BT = T->getAs<BuiltinType>()) {
    switch (BT->getKind()) {
    case BuiltinType::Void:
      return SpecType{DType::U8, 1, true};
    case BuiltinType::Float:
      return SpecType{DType::F32};
    case BuiltinType::Double:
      return SpecType{DType::F64};
    case BuiltinType::Half:
    case BuiltinType::Float16:
      return SpecType{DType::F16};
    case BuiltinType::BFloat16:
      return SpecType{DType::BF16};
    case BuiltinType::Bool:
      return SpecType{DType::U8};
    default:
      break;
    }
    if (BT->isInteger()) {
      bool Signed = BT->isSignedInteger();
      switch (Ctx.getTypeSize(T)) {
      case 8:
        return SpecType{Signed ? DType::I8 : DType::U8};
      case 16:
        return SpecType{Signed ? DType::I16 : DType::U16};
      case 32:
        return SpecType{Signed ? DType::I32 : DType::U32};
      case 64:
        return SpecType{Signed ? DType::I64 : DType::U64};
      default:
        return std::nullopt;
      }
    }
    return std::nullopt;
  }
  if (const RecordDecl *RD = T->getAsRecordDecl()) {
    StringRef N = RD->getName();
    static const std::pair<StringRef, SpecType> Cuda[] = {
        {"__half", {DType::F16}},
        {"__half2", {DType::F16, 2}},
        {"__nv_bfloat16", {DType::BF16}},
        {"__nv_bfloat162", {DType::BF16, 2}},
        {"__nv_fp8_e4m3", {DType::FP8E4M3}},
        {"__nv_fp8x2_e4m3", {DType::FP8E4M3, 2}},
        {"__nv_fp8x4_e4m3", {DType::FP8E4M3, 4}},
        {"__nv_fp8_e5m2", {DType::FP8E5M2}},
        {"__nv_fp8x2_e5m2", {DType::FP8E5M2, 2}},
        {"__nv_fp8x4_e5m2", {DType::FP8E5M2, 4}},
    };
    for (auto &[Name, ST] : Cuda)
      if (N == Name)
        return ST;
    // double4 is spelled double4_16a / double4_32a since CUDA 13.
    StringRef Base = N.split('_').first;
    return cudaVectorType(Base);
  }
  return std::nullopt;
}

namespace {
/// The C++ spelling of a spec type, for messages: "f32 (float)".
std::string typeForMessage(const ParmVarDecl *P, QualType T) {
  PrintingPolicy PP(P->getASTContext().getLangOpts());
  PP.SuppressTagKeyword = true;
  return "'" + T.getAsString(PP) + "'";
}
} // namespace

Error checkSpecAgainstKernel(KernelSpec &Spec, const KernelInfo &Kernel) {
  std::vector<std::string> Errors;
  auto error = [&](StringRef Field, const Twine &Msg) {
    Errors.push_back(Spec.where(Field) + Msg.str());
  };

  const FunctionDecl *FD = Kernel.Decl;
  if (Kernel.isTemplate()) {
    FD = nullptr;
    for (const FunctionDecl *I : instantiations(Kernel))
      if (namesInstantiation(Kernel, I, Spec.Kernel))
        FD = I;
    if (!FD)
      return createStringError(
          inconvertibleErrorCode(),
          Spec.where("") + "is not an instantiation of the template '" +
              Kernel.QualifiedName + "' in this file (instantiations: " +
              join(specKernelNames({Kernel}), ", ") + ")");
  }
  if (!FD)
    return createStringError(inconvertibleErrorCode(),
                             Spec.where("") + "the kernel has no definition");
  const ASTContext &Ctx = FD->getASTContext();
  std::optional<PointerWriteInfo> Writes;

  std::vector<std::string> ParamNames;
  for (const ParmVarDecl *P : FD->parameters())
    ParamNames.push_back(P->getNameAsString());

  for (const ParmVarDecl *P : FD->parameters()) {
    unsigned I = P->getFunctionScopeIndex();
    std::string Name = P->getNameAsString();
    ArgSpec *A = nullptr;
    for (ArgSpec &X : Spec.Args)
      if (X.Name == Name)
        A = &X;
    QualType T = P->getType();
    if (Name.empty()) {
      error("args", "parameter " + Twine(I) +
                        " has no name; name it so the spec can refer to it");
      continue;
    }
    if (!A) {
      error("args", "no entry for parameter '" + Name + "' (" +
                        typeForMessage(P, T) + ")");
      continue;
    }
    A->Index = I;
    std::string F = "args." + Name;
    if (T->isPointerType()) {
      QualType Pointee = T->getPointeeType();
      if (!A->IsBuffer) {
        error(F, "'" + Name + "' is a pointer (" + typeForMessage(P, T) +
                     "); describe the buffer with dtype, count and role");
        continue;
      }
      std::optional<SpecType> ST = specTypeOf(Ctx, Pointee);
      if (!ST) {
        error(F, "'" + Name + "' points to " + typeForMessage(P, Pointee) +
                     ", which no spec dtype describes (" + dtypeList() + ")");
        continue;
      }
      if (!ST->Any && ST->Type != A->Type)
        error(F + ".dtype", "is " + dtypeName(A->Type) + " but '" + Name +
                                "' is " + typeForMessage(P, T) + " (" +
                                dtypeName(ST->Type) +
                                (ST->Lanes > 1 ? " x" + Twine(ST->Lanes)
                                               : Twine()) +
                                ")");
      if (ST->Lanes > 1)
        for (const ShapeSet &S : Spec.Shapes) {
          auto C = A->Count.evalInt(S.Vars);
          if (C && *C % ST->Lanes != 0) {
            error(F + ".count",
                  "'" + A->Count.text() + "' is " + Twine(*C) +
                      " in shape set '" + S.Name + "', but '" + Name +
                      "' holds " + Twine(ST->Lanes) + " " +
                      dtypeName(A->Type) +
                      " per element: the count (in " + dtypeName(A->Type) +
                      ") must be a multiple of " + Twine(ST->Lanes));
            break;
          }
          if (!C)
            consumeError(C.takeError());
        }
      bool Const = Pointee.isConstQualified();
      const KernelParam *KP =
          I < Kernel.Params.size() ? &Kernel.Params[I] : nullptr;
      bool Written = KP ? KP->Written : !Const;
      if (A->R == Role::Input && Written) {
        if (!Writes)
          Writes = analyzePointerWrites(const_cast<ASTContext &>(Ctx),
                                        Kernel.Decl);
        std::string Why;
        if (Kernel.Decl && I < Kernel.Decl->getNumParams())
          Why = Writes->reason(Kernel.Decl->getParamDecl(I));
        error(F + ".role", "is input but the kernel may write through '" +
                               Name + "'" +
                               (Why.empty() ? "" : " (" + Why + ")") +
                               "; use output, or inout if it also reads the "
                               "values it finds there");
      } else if (A->R != Role::Input && Const) {
        error(F + ".role", "is " + roleName(A->R) + " but '" + Name +
                               "' is " + typeForMessage(P, T) +
                               ": the kernel cannot write through it; use "
                               "input");
      } else if ((A->R == Role::Output || A->R == Role::InOut) && !Written) {
        error(F + ".role", "is " + roleName(A->R) +
                               " but the kernel never writes through '" +
                               Name + "'; use input");
      }
      continue;
    }
    if (A->IsBuffer) {
      error(F, "'" + Name + "' is a scalar (" + typeForMessage(P, T) +
                   "); give its \"value\" instead of a buffer");
      continue;
    }
    std::optional<SpecType> ST = specTypeOf(Ctx, T);
    if (!ST || ST->Any || ST->Lanes != 1) {
      error(F, "'" + Name + "' has type " + typeForMessage(P, T) +
                   ", which a spec cannot pass (it passes pointers and "
                   "arithmetic scalars)");
      continue;
    }
    if (A->ScalarTypeGiven && A->ScalarType != ST->Type) {
      error(F + ".dtype", "is " + dtypeName(A->ScalarType) + " but '" + Name +
                              "' is " + typeForMessage(P, T) + " (" +
                              dtypeName(ST->Type) + ")");
      continue;
    }
    A->ScalarType = ST->Type;
    A->ScalarTypeGiven = true;
    if (isFloating(ST->Type))
      continue;
    for (const ShapeSet &S : Spec.Shapes) {
      auto V = A->ScalarValue.evalInt(S.Vars);
      if (!V) {
        error(F + ".value", "in shape set '" + S.Name + "': " +
                                toString(V.takeError()) + "; '" + Name +
                                "' is " + typeForMessage(P, T));
        break;
      }
      if (*V < dtypeMin(ST->Type) || *V > dtypeMax(ST->Type)) {
        error(F + ".value", "'" + A->ScalarValue.text() + "' is " + Twine(*V) +
                                " in shape set '" + S.Name +
                                "', out of range for '" + Name + "' (" +
                                typeForMessage(P, T) + ")");
        break;
      }
    }
  }

  for (const ArgSpec &A : Spec.Args)
    if (!is_contained(ParamNames, A.Name))
      error("args." + A.Name, "the kernel has no parameter '" + A.Name +
                                  "' (parameters: " +
                                  (ParamNames.empty() ? std::string("none")
                                                      : join(ParamNames, ", ")) +
                                  ")");

  if (!Errors.empty()) {
    Error All = Error::success();
    for (std::string &E : Errors)
      All = joinErrors(std::move(All),
                       createStringError(inconvertibleErrorCode(), E));
    return All;
  }
  std::stable_sort(Spec.Args.begin(), Spec.Args.end(),
                   [](const ArgSpec &X, const ArgSpec &Y) {
                     return X.Index < Y.Index;
                   });
  return Error::success();
}

} // namespace astra
