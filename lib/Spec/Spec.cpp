//===- Spec.cpp - Spec model: dtypes, generators, launches, lookup --------===//
#include "astra/Spec/Spec.h"
#include "astra/Rewrite/Pass.h"
#include "astra/Support/FileIO.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdio>
#include <iterator>
#include <limits>

using namespace llvm;

namespace astra {

namespace {
struct DTypeInfo {
  DType T;
  StringRef Name;
  unsigned Size;
  bool Floating, Signed;
  int64_t Min, Max;
};
constexpr int64_t I64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t I64Min = std::numeric_limits<int64_t>::min();
const DTypeInfo DTypes[] = {
    {DType::F32, "f32", 4, true, true, I64Min, I64Max},
    {DType::F64, "f64", 8, true, true, I64Min, I64Max},
    {DType::F16, "f16", 2, true, true, -65504, 65504},
    {DType::BF16, "bf16", 2, true, true, I64Min, I64Max},
    {DType::FP8E4M3, "fp8_e4m3", 1, true, true, -448, 448},
    {DType::FP8E5M2, "fp8_e5m2", 1, true, true, -57344, 57344},
    {DType::I8, "i8", 1, false, true, -128, 127},
    {DType::U8, "u8", 1, false, false, 0, 255},
    {DType::I16, "i16", 2, false, true, -32768, 32767},
    {DType::U16, "u16", 2, false, false, 0, 65535},
    {DType::I32, "i32", 4, false, true, INT32_MIN, INT32_MAX},
    {DType::U32, "u32", 4, false, false, 0, UINT32_MAX},
    {DType::I64, "i64", 8, false, true, I64Min, I64Max},
    {DType::U64, "u64", 8, false, false, 0, I64Max},
};
const DTypeInfo &info(DType T) {
  for (const DTypeInfo &I : DTypes)
    if (I.T == T)
      return I;
  llvm_unreachable("unknown dtype");
}
} // namespace

unsigned dtypeSize(DType T) { return info(T).Size; }
StringRef dtypeName(DType T) { return info(T).Name; }
bool isFloating(DType T) { return info(T).Floating; }
bool isSigned(DType T) { return info(T).Signed; }
int64_t dtypeMin(DType T) { return info(T).Min; }
int64_t dtypeMax(DType T) { return info(T).Max; }

std::optional<DType> parseDType(StringRef S) {
  for (const DTypeInfo &I : DTypes)
    if (I.Name == S)
      return I.T;
  return std::nullopt;
}

StringRef dtypeList() {
  return "f32, f64, f16, bf16, fp8_e4m3, fp8_e5m2, i8, u8, i16, u16, i32, "
         "u32, i64, u64";
}

StringRef roleName(Role R) {
  switch (R) {
  case Role::Input:
    return "input";
  case Role::Output:
    return "output";
  case Role::InOut:
    return "inout";
  case Role::Scratch:
    return "scratch";
  }
  llvm_unreachable("unknown role");
}

std::optional<Role> parseRole(StringRef S) {
  for (Role R : {Role::Input, Role::Output, Role::InOut, Role::Scratch})
    if (roleName(R) == S)
      return R;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Generators
//===----------------------------------------------------------------------===//

namespace {
struct GeneratorInfo {
  StringRef Name;
  StringRef Params; ///< For messages: "mean, std".
  unsigned NumArgs;
  bool Structural;
};
const GeneratorInfo Generators[] = {
    {"normal", "mean, std", 2, false},
    {"uniform", "lo, hi", 2, false},
    {"randint", "lo, hi", 2, false},
    {"arange", "", 0, true},
    {"permutation", "n", 1, true},
    {"sorted", "lo, hi", 2, false},
    {"constant", "v", 1, false},
    {"csr_rowptr", "rows, avg_degree, max_degree", 3, true},
    {"indices_into", "n", 1, true},
    {"csr_colind", "rowptr_arg, n", 2, true},
};
const GeneratorInfo *findGenerator(StringRef Name) {
  for (const GeneratorInfo &G : Generators)
    if (G.Name == Name)
      return &G;
  return nullptr;
}
std::string generatorList() {
  std::string S;
  for (const GeneratorInfo &G : Generators) {
    S += S.empty() ? "" : ", ";
    S += G.Name;
    if (G.NumArgs)
      S += ("(" + G.Params + ")").str();
  }
  return S;
}
Error genError(StringRef Text, const Twine &What) {
  return createStringError(inconvertibleErrorCode(),
                           "invalid generator '" + Text + "': " + What);
}
} // namespace

bool Generator::isStructural() const {
  const GeneratorInfo *G = findGenerator(Kind);
  return G && G->Structural;
}

Expected<Generator> parseGenerator(StringRef Text) {
  StringRef T = Text.trim();
  // captured(G): the capture's bytes where the spec's "capture" has them,
  // G everywhere else; the wrapped generator is the one the engine and
  // every check see.
  StringRef Inner = T;
  if (Inner.consume_front("captured")) {
    Inner = Inner.ltrim();
    if (!Inner.consume_front("(") || !Inner.consume_back(")"))
      return genError(T, "expected 'captured(<generator>)', e.g. "
                         "captured(normal(0, 1)): the capture's bytes where "
                         "it has them, the generator everywhere else");
    if (Inner.trim().starts_with("captured"))
      return genError(T, "captured(...) cannot wrap another captured(...)");
    auto G = parseGenerator(Inner);
    if (!G)
      return genError(T, toString(G.takeError()));
    G->Captured = true;
    G->Text = T.str();
    return G;
  }
  size_t NameEnd = 0;
  while (NameEnd < T.size() && (isAlnum(T[NameEnd]) || T[NameEnd] == '_'))
    ++NameEnd;
  StringRef Name = T.take_front(NameEnd);
  StringRef Rest = T.drop_front(NameEnd).trim();
  if (Name.empty())
    return genError(T, "expected a generator name (generators: " +
                           generatorList() + ", captured(<generator>))");
  const GeneratorInfo *Info = findGenerator(Name);
  if (!Info)
    return genError(T, "unknown generator '" + Name +
                           "' (generators: " + generatorList() +
                           ", captured(<generator>))");
  // Arguments: split at the commas outside parentheses.
  std::vector<std::string> Args;
  if (!Rest.empty()) {
    if (!Rest.consume_front("(") || !Rest.consume_back(")"))
      return genError(T, "expected '" + Name + "(" + Info->Params + ")'");
    int Depth = 0;
    std::string Cur;
    for (char C : Rest) {
      if (C == '(')
        ++Depth;
      if (C == ')' && --Depth < 0)
        return genError(T, "unbalanced ')'");
      if (C == ',' && Depth == 0) {
        Args.push_back(StringRef(Cur).trim().str());
        Cur.clear();
        continue;
      }
      Cur += C;
    }
    if (Depth != 0)
      return genError(T, "unbalanced '('");
    if (!StringRef(Cur).trim().empty() || !Args.empty())
      Args.push_back(StringRef(Cur).trim().str());
  }
  if (Args.size() != Info->NumArgs) {
    if (Info->NumArgs == 0)
      return genError(T, "'" + Name + "' takes no arguments");
    return genError(T, "'" + Name + "' takes " + Twine(Info->NumArgs) +
                           " argument" + (Info->NumArgs == 1 ? "" : "s") +
                           " (" + Info->Params + "), got " +
                           Twine(Args.size()));
  }
  Generator G;
  G.Kind = Name.str();
  G.Text = T.str();
  for (size_t I = 0; I < Args.size(); ++I) {
    if (Name == "csr_colind" && I == 0) {
      StringRef Ref = Args[0];
      bool Ident = !Ref.empty() && (isAlpha(Ref[0]) || Ref[0] == '_') &&
                   all_of(Ref, [](char C) { return isAlnum(C) || C == '_'; });
      if (!Ident)
        return genError(T, "the first argument of csr_colind names the "
                           "csr_rowptr argument; '" +
                               Ref + "' is not an argument name");
      G.RefArg = Ref.str();
      continue;
    }
    if (Args[I].empty())
      return genError(T, "argument " + Twine(I + 1) + " is empty");
    auto E = SpecExpr::parse(Args[I]);
    if (!E)
      return genError(T, toString(E.takeError()));
    G.Args.push_back(std::move(*E));
  }
  return G;
}

Generator defaultGenerator(DType T) {
  StringRef Text = isFloating(T)    ? "normal(0, 1)"
                   : isSigned(T)    ? "randint(-100, 100)"
                                    : "randint(0, 100)";
  auto G = parseGenerator(Text);
  assert(G && "default generators parse");
  return std::move(*G);
}

//===----------------------------------------------------------------------===//
// Sizes and launches
//===----------------------------------------------------------------------===//

Expected<int64_t> ArgSpec::bytes(const Env &E) const {
  auto N = Count.evalInt(E);
  if (!N)
    return N.takeError();
  int64_t B;
  if (__builtin_mul_overflow(*N, int64_t(dtypeSize(Type)), &B))
    return createStringError(inconvertibleErrorCode(),
                             "'%s': %lld elements of %s do not fit in 64-bit "
                             "byte counts",
                             Count.text().c_str(), (long long)*N,
                             dtypeName(Type).str().c_str());
  return B;
}

Expected<ResolvedLaunch> LaunchSpec::resolve(const Env &E,
                                             std::string *BadField) const {
  ResolvedLaunch L;
  auto Bad = [&](StringRef Field, Error Err) -> Error {
    if (BadField)
      *BadField = Field.str();
    return Err;
  };
  static const char *const Dim[] = {"x", "y", "z"};
  auto evalDim = [&](const SpecExpr &X, int64_t &Out, StringRef What,
                     unsigned I, int64_t Max) -> Error {
    if (X.empty())
      return Error::success(); // Missing dimension: 1.
    auto V = X.evalInt(E);
    if (!V)
      return V.takeError();
    std::string Name = (What + "." + Dim[I]).str();
    if (*V < 1)
      return createStringError(inconvertibleErrorCode(),
                               "%s = %s = %lld; must be at least 1",
                               Name.c_str(), X.text().c_str(), (long long)*V);
    if (*V > Max)
      return createStringError(inconvertibleErrorCode(),
                               "%s = %s = %lld; CUDA allows at most %lld",
                               Name.c_str(), X.text().c_str(), (long long)*V,
                               (long long)Max);
    Out = *V;
    return Error::success();
  };
  const int64_t GridMax[] = {INT32_MAX, 65535, 65535};
  const int64_t BlockMax[] = {1024, 1024, 64};
  for (unsigned I = 0; I < 3; ++I) {
    if (Error Err = evalDim(Grid[I], L.Grid[I], "grid", I, GridMax[I]))
      return Bad("grid", std::move(Err));
    if (Error Err = evalDim(Block[I], L.Block[I], "block", I, BlockMax[I]))
      return Bad("block", std::move(Err));
  }
  if (L.threadsPerBlock() > 1024)
    return Bad("block", createStringError(
        inconvertibleErrorCode(),
        "block (%lld, %lld, %lld) has %lld threads; CUDA allows at most 1024",
        (long long)L.Block[0], (long long)L.Block[1], (long long)L.Block[2],
        (long long)L.threadsPerBlock()));
  if (!Shmem.empty()) {
    auto S = Shmem.evalInt(E);
    if (!S)
      return Bad("shmem", S.takeError());
    // 227 KiB: the most dynamic shared memory one block may use on any
    // current GPU (sm_80 and later; opt-in above 48 KiB).
    if (*S < 0 || *S > 227 * 1024)
      return Bad("shmem", createStringError(
                              inconvertibleErrorCode(),
                              "shmem = %s = %lld bytes; must be between 0 "
                              "and 232448 (227 KiB)",
                              Shmem.text().c_str(), (long long)*S));
    L.Shmem = *S;
  }
  return L;
}

StringRef ValidityCheck::param(StringRef Param) const {
  for (auto &[K, V] : Params)
    if (K == Param)
      return V;
  return "";
}

const std::vector<ValidityCheckInfo> &knownValidityChecks() {
  using K = ValidityCheckInfo::ParamKind;
  static const std::vector<ValidityCheckInfo> Checks = {
      // Implemented by lib/Engine/Validity.cpp, which documents it fully.
      {"neighbor_sample",
       "uniform neighbor sampling without replacement over a CSR graph: row "
       "i of out (fanout slots) holds k = min(fanout, degree of nodes[i]) "
       "distinct neighbors of nodes[i] in any order, then -1; the positions "
       "sampled must look uniform",
       {{"rowptr", K::IntegerBuffer, "CSR row pointer of the graph (integers)"},
        {"col", K::IntegerBuffer, "CSR column indices of the graph (integers)"},
        {"nodes", K::IntegerBuffer, "seed nodes to sample around (integers)"},
        {"out", K::IntegerBuffer,
         "sampled neighbors, fanout slots per seed, row-major (integers)"},
        {"fanout", K::Expression, "neighbors to sample per seed"}}},
  };
  return Checks;
}

//===----------------------------------------------------------------------===//
// KernelSpec and SpecFile
//===----------------------------------------------------------------------===//

const ArgSpec *KernelSpec::arg(StringRef Name) const {
  for (const ArgSpec &A : Args)
    if (A.Name == Name)
      return &A;
  return nullptr;
}

const ShapeSet *KernelSpec::shape(StringRef Name) const {
  for (const ShapeSet &S : Shapes)
    if (S.Name == Name)
      return &S;
  return nullptr;
}

double KernelSpec::weight(StringRef Set) const {
  auto It = Weights.find(Set.str());
  return It == Weights.end() ? 0 : It->second;
}

std::string CaptureRef::blob(StringRef Set, StringRef Arg) const {
  auto S = Sets.find(Set.str());
  if (S == Sets.end())
    return "";
  auto A = S->second.find(Arg.str());
  if (A == S->second.end())
    return "";
  SmallString<256> P(Dir);
  sys::path::append(P, A->second);
  return std::string(P);
}

std::map<std::string, std::string>
KernelSpec::capturedBlobs(StringRef Set) const {
  std::map<std::string, std::string> Out;
  if (!Capture)
    return Out;
  for (const ArgSpec &A : Args)
    if (A.IsBuffer && A.Init.Captured &&
        (A.R == Role::Input || A.R == Role::InOut)) {
      std::string B = Capture->blob(Set, A.Name);
      if (!B.empty())
        Out[A.Name] = B;
    }
  return Out;
}

std::string KernelSpec::where(StringRef Field) const {
  std::string Prefix = SpecPath;
  StringRef F = Field;
  for (;;) {
    auto It = FieldLocations.find(F.str());
    if (It != FieldLocations.end()) {
      Prefix += ":" + std::to_string(It->second.first) + ":" +
                std::to_string(It->second.second);
      break;
    }
    if (F.empty())
      break;
    size_t Cut = F.find_last_of(".[");
    F = Cut == StringRef::npos ? StringRef() : F.take_front(Cut);
  }
  Prefix += ": kernel '" + Kernel + "': ";
  if (!Field.empty())
    Prefix += Field.str() + ": ";
  return Prefix;
}

double KernelSpec::rtolFor(const ArgSpec &A) const {
  if (A.Rtol)
    return *A.Rtol;
  return Rtol >= 0 ? Rtol : defaultRtol(A.Type);
}

double KernelSpec::atolFor(const ArgSpec &A) const {
  if (A.Atol)
    return *A.Atol;
  return Atol >= 0 ? Atol : defaultAtol(A.Type);
}

Expected<int64_t> KernelSpec::autoBytes(const Env &E) const {
  int64_t Total = 0;
  for (const ArgSpec &A : Args) {
    if (!A.IsBuffer || A.R == Role::Scratch)
      continue;
    auto B = A.bytes(E);
    if (!B)
      return B.takeError();
    int64_t Times = A.R == Role::InOut ? 2 : 1;
    int64_t Add;
    if (__builtin_mul_overflow(*B, Times, &Add) ||
        __builtin_add_overflow(Total, Add, &Total))
      return createStringError(inconvertibleErrorCode(),
                               "bytes moved do not fit in 64 bits");
  }
  return Total;
}

Expected<int64_t> KernelSpec::bytesMoved(const Env &E) const {
  if (Bytes)
    return Bytes->evalInt(E);
  return autoBytes(E);
}

bool sameKernelName(StringRef A, StringRef B) {
  auto Next = [](StringRef &S) {
    S = S.ltrim();
    char C = S.empty() ? 0 : S.front();
    S = S.drop_front(S.empty() ? 0 : 1);
    return C;
  };
  for (;;) {
    char X = Next(A), Y = Next(B);
    if (X != Y)
      return false;
    if (!X)
      return true;
  }
}

const KernelSpec *SpecFile::find(StringRef Kernel) const {
  for (const KernelSpec &K : Kernels)
    if (sameKernelName(K.Kernel, Kernel))
      return &K;
  return nullptr;
}

KernelSpec *SpecFile::find(StringRef Kernel) {
  return const_cast<KernelSpec *>(
      static_cast<const SpecFile *>(this)->find(Kernel));
}

double defaultRtol(DType T) {
  switch (T) {
  case DType::F64:
    return 1e-8;
  case DType::F32:
    return 1e-4;
  case DType::F16:
    return 1e-2; // 10 ulp at 1.0 (eps 2^-10).
  case DType::BF16:
    return 1.6e-2; // 2 ulp at 1.0 (eps 2^-7).
  case DType::FP8E4M3:
    return 0.125; // 1 ulp at 1.0 (3 mantissa bits).
  case DType::FP8E5M2:
    return 0.25; // 1 ulp at 1.0 (2 mantissa bits).
  default:
    return 0; // Integers compare exactly.
  }
}

double defaultAtol(DType T) {
  switch (T) {
  case DType::F64:
    return 1e-10;
  case DType::F32:
    return 1e-5;
  case DType::F16:
    return 1e-3;
  case DType::BF16:
    return 1e-2;
  case DType::FP8E4M3:
  case DType::FP8E5M2:
    return 1.6e-2;
  default:
    return 0;
  }
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

std::string byteSizeText(uint64_t B) {
  static const char *const Units[] = {"B",   "KiB", "MiB", "GiB",
                                      "TiB", "PiB", "EiB"};
  double V = double(B);
  unsigned U = 0;
  while (V >= 1024 && U + 1 < std::size(Units)) {
    V /= 1024;
    ++U;
  }
  if (U == 0)
    return std::to_string(B) + " B";
  char Buf[32];
  std::snprintf(Buf, sizeof Buf, "%.1f %s", V, Units[U]);
  return Buf;
}

Expected<uint64_t> bufferBytes(const KernelSpec &K, const ShapeSet &S) {
  uint64_t Total = 0;
  for (const ArgSpec &A : K.Args) {
    if (!A.IsBuffer)
      continue;
    auto B = A.bytes(S.Vars);
    if (!B)
      return B.takeError();
    Total = uint64_t(*B) > UINT64_MAX - Total ? UINT64_MAX
                                               : Total + uint64_t(*B);
  }
  return Total;
}

std::string specPathFor(StringRef CuFile) {
  return (CuFile + ".astra.json").str();
}

Expected<SpecFile> loadSpecFile(StringRef Path) {
  auto Text = readFile(Path, MaxSpecBytes);
  if (!Text)
    return Text.takeError();
  return parseSpec(*Text, Path);
}

Expected<SpecFile> loadSpecFor(StringRef CuFile, StringRef Explicit) {
  if (!Explicit.empty())
    return loadSpecFile(Explicit);
  std::string Path = specPathFor(CuFile);
  if (!sys::fs::exists(Path))
    return createStringError(
        inconvertibleErrorCode(),
        "no spec at " + Path + "; run `clang-astra init-spec " + CuFile +
            " --kernel <name>` to draft one");
  return loadSpecFile(Path);
}

//===----------------------------------------------------------------------===//
// PassOptions::specFor lives here, with the rest of the spec lookup, so that
// astraRewrite does not depend on the spec library; every pass links it.
//===----------------------------------------------------------------------===//

const KernelSpec *PassOptions::specFor(StringRef Kernel) const {
  if (Spec)
    return Spec;
  if (!Specs)
    return nullptr;
  if (const KernelSpec *K = Specs->find(Kernel))
    return K;
  // A template kernel: the entry of its first instantiation.
  for (const KernelSpec &K : Specs->Kernels) {
    StringRef N = K.Kernel;
    if (N.consume_front(Kernel) && N.ltrim().starts_with("<"))
      return &K;
  }
  return nullptr;
}

} // namespace astra
