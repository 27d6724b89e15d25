//===- PtxParams.cpp - Kernel parameters as the PTX declares them ---------===//
#include "astra/Engine/PtxParams.h"
#include "astra/Engine/Inputs.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace astra {

static unsigned ptxTypeBytes(StringRef T) {
  if (T.size() < 3 || T[0] != '.')
    return 0;
  StringRef Kind = T.substr(1, T.size() > 3 && T.substr(1, 2) == "bf" ? 2 : 1);
  if (Kind != "u" && Kind != "s" && Kind != "b" && Kind != "f" && Kind != "bf")
    return 0;
  unsigned Bits = 0;
  if (T.drop_front(1 + Kind.size()).getAsInteger(10, Bits))
    return 0;
  if (Bits != 8 && Bits != 16 && Bits != 32 && Bits != 64)
    return 0;
  return Bits / 8;
}

std::optional<std::vector<PtxParam>> ptxEntryParams(StringRef Ptx,
                                                    StringRef Entry) {
  size_t Pos = 0;
  while ((Pos = Ptx.find(".entry", Pos)) != StringRef::npos) {
    Pos += 6;
    StringRef Rest = Ptx.drop_front(Pos).ltrim();
    if (!Rest.consume_front(Entry))
      continue;
    Rest = Rest.ltrim();
    if (!Rest.consume_front("("))
      continue;
    size_t Close = Rest.find(')');
    if (Close == StringRef::npos)
      return std::nullopt;
    std::vector<PtxParam> Out;
    SmallVector<StringRef, 16> Pieces;
    Rest.take_front(Close).split(Pieces, ',', -1, /*KeepEmpty=*/false);
    for (StringRef P : Pieces) {
      P = P.trim();
      if (P.empty())
        continue;
      SmallVector<StringRef, 8> Tok;
      P.split(Tok, ' ', -1, false);
      SmallVector<StringRef, 8> Clean;
      for (StringRef T : Tok) {
        T = T.trim();
        if (!T.empty())
          Clean.push_back(T);
      }
      PtxParam Param;
      for (StringRef T : Clean)
        if (unsigned B = ptxTypeBytes(T)) {
          Param.Type = T.str();
          Param.Bytes = B;
          break;
        }
      StringRef Name = Clean.empty() ? "" : Clean.back();
      size_t LB = Name.find('[');
      if (LB != StringRef::npos) {
        unsigned N = 0;
        if (!Name.substr(LB + 1).take_until([](char C) { return C == ']'; })
                 .getAsInteger(10, N)) {
          Param.Bytes *= N;
          Param.IsArray = true;
        }
      }
      Out.push_back(std::move(Param));
    }
    return Out;
  }
  return std::nullopt;
}

Error checkSpecAgainstPtx(KernelSpec &S, const std::vector<PtxParam> &Params,
                          StringRef Entry) {
  if (Params.size() != S.Args.size())
    return createStringError(
        inconvertibleErrorCode(),
        "%sthe spec describes %zu arguments but kernel %s takes %zu parameters",
        specContext(S).c_str(), S.Args.size(), Entry.str().c_str(),
        Params.size());
  for (size_t I = 0; I < Params.size(); ++I) {
    ArgSpec &A = S.Args[I];
    const PtxParam &P = Params[I];
    auto Fail = [&](const Twine &Why) {
      return createStringError(inconvertibleErrorCode(),
                               specContext(S) + "args." + A.Name +
                                   ": parameter " + Twine(I) + " of " + Entry +
                                   " is " + Twine(P.Bytes) + " bytes (" +
                                   (P.Type.empty() ? "?" : P.Type) +
                                   (P.IsArray ? " array" : "") + "); " + Why);
    };
    if (A.IsBuffer) {
      if (P.Bytes != 8 || P.IsArray)
        return Fail("the spec says it is a buffer (a 64-bit pointer)");
      continue;
    }
    if (A.ScalarTypeGiven) {
      if (dtypeSize(A.ScalarType) != P.Bytes)
        return Fail(formatv("the spec says {0} ({1} bytes)",
                            dtypeName(A.ScalarType), dtypeSize(A.ScalarType))
                        .str());
      continue;
    }
    if (P.IsArray)
      return Fail("a struct passed by value; give the spec a \"dtype\" of the "
                  "same size or pass a pointer");
    StringRef T = P.Type;
    bool Float = T.starts_with(".f") || T.starts_with(".bf");
    switch (P.Bytes) {
    case 1:
      A.ScalarType = T.starts_with(".u") ? DType::U8 : DType::I8;
      break;
    case 2:
      A.ScalarType = T == ".bf16" ? DType::BF16
                     : Float      ? DType::F16
                     : T.starts_with(".u") ? DType::U16
                                           : DType::I16;
      break;
    case 4:
      A.ScalarType = Float ? DType::F32 : DType::I32;
      break;
    case 8:
      A.ScalarType = Float ? DType::F64 : DType::I64;
      break;
    default:
      return Fail("no spec dtype has that size");
    }
  }
  return Error::success();
}

bool usesDeviceLaunch(StringRef Ptx) {
  return Ptx.contains("cudaLaunchDevice") ||
         Ptx.contains("cudaGetParameterBuffer") ||
         Ptx.contains("cudaCGGetIntrinsicHandle");
}

} // namespace astra
