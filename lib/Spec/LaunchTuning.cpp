//===- LaunchTuning.cpp ---------------------------------------------------===//
#include "astra/Spec/LaunchTuning.h"
#include "SpecText.h"

#include "llvm/ADT/StringExtras.h"

#include <set>

using namespace llvm;

namespace astra {

/// Calls \p F(Begin, End) for each whole-number token of \p Text: a digit
/// run not preceded by a letter, digit, '_' or '.', nor followed by one of
/// those or 'e'/'E' (so "1e6", "x2" and "1.5" are not integers here).
template <typename Fn> static void forEachInteger(StringRef Text, Fn F) {
  auto Word = [](char C) { return isAlnum(C) || C == '_' || C == '.'; };
  for (size_t I = 0; I < Text.size();) {
    if (!isDigit(Text[I]) || (I > 0 && Word(Text[I - 1]))) {
      ++I;
      continue;
    }
    size_t E = I;
    while (E < Text.size() && isDigit(Text[E]))
      ++E;
    if (E == Text.size() || !Word(Text[E]))
      F(I, E);
    I = E;
  }
}

bool mentionsLiteral(StringRef Text, int64_t V) {
  bool Found = false;
  forEachInteger(Text, [&](size_t B, size_t E) {
    int64_t X;
    if (!Text.slice(B, E).getAsInteger(10, X) && X == V)
      Found = true;
  });
  return Found;
}

std::string replaceLiterals(StringRef Text,
                            const std::map<int64_t, int64_t> &Map) {
  std::string Out;
  size_t Last = 0;
  forEachInteger(Text, [&](size_t B, size_t E) {
    int64_t X;
    if (Text.slice(B, E).getAsInteger(10, X) || !Map.count(X))
      return;
    Out += Text.slice(Last, B);
    Out += std::to_string(Map.at(X));
    Last = E;
  });
  Out += Text.substr(Last);
  return Out;
}

std::string replaceLiteral(StringRef Text, int64_t From, int64_t To) {
  return replaceLiterals(Text, {{From, To}});
}

Expected<int64_t> tunableBlockLiteral(const KernelSpec &K) {
  auto Fail = [&](const Twine &Why) {
    return createStringError(inconvertibleErrorCode(), "%s",
                             (K.where("launch") + Why).str().c_str());
  };
  if (!K.LaunchIsTunable)
    return Fail("the spec does not mark the launch as the kernel's own "
                "(\"launch_tunable\": true)");
  for (unsigned I = 1; I < 3; ++I)
    if (!K.Launch.Block[I].empty() && K.Launch.Block[I].text() != "1")
      return Fail("block sizes of more than one dimension are not tuned");
  std::set<int64_t> Found;
  StringRef Text = K.Launch.Block[0].text();
  forEachInteger(Text, [&](size_t B, size_t E) {
    int64_t X;
    if (!Text.slice(B, E).getAsInteger(10, X) && X >= 32 && X <= 1024 &&
        X % 32 == 0)
      Found.insert(X);
  });
  if (Found.size() != 1)
    return Fail("launch.block \"" + Text +
                "\" does not hold exactly one block size literal (a multiple "
                "of 32 from 32 to 1024)");
  return *Found.begin();
}

Expected<LaunchSpec> retuneLaunch(const LaunchSpec &L, int64_t From,
                                  int64_t To) {
  LaunchSpec Out = L;
  auto Retune = [&](SpecExpr &E) -> Error {
    if (E.empty() || !mentionsLiteral(E.text(), From))
      return Error::success();
    auto N = SpecExpr::parse(replaceLiteral(E.text(), From, To));
    if (!N)
      return N.takeError();
    E = std::move(*N);
    return Error::success();
  };
  for (unsigned I = 0; I < 3; ++I) {
    // A grid that rounds up spells From - 1 too: "(n + 255) / 256".
    if (!Out.Grid[I].empty() && mentionsLiteral(Out.Grid[I].text(), From)) {
      auto N = SpecExpr::parse(
          replaceLiterals(Out.Grid[I].text(), gridLiterals(From, To)));
      if (!N)
        return N.takeError();
      Out.Grid[I] = std::move(*N);
    }
    if (Error E = Retune(Out.Block[I]))
      return E;
  }
  if (Error E = Retune(Out.Shmem))
    return E;
  return Out;
}

std::map<int64_t, int64_t> gridLiterals(int64_t From, int64_t To) {
  return {{From, To}, {From - 1, To - 1}};
}

int64_t defaultRetunedBlock(int64_t From) { return From == 256 ? 128 : 256; }

Expected<LaunchSpec> divideGrid(const LaunchSpec &L, int64_t F) {
  if (L.Grid[0].empty())
    return createStringError(inconvertibleErrorCode(),
                             "the launch has no grid to divide");
  LaunchSpec Out = L;
  auto N = SpecExpr::parse("cdiv(" + L.Grid[0].text() + ", " +
                           std::to_string(F) + ")");
  if (!N)
    return N.takeError();
  Out.Grid[0] = std::move(*N);
  return Out;
}

Expected<LaunchSpec> divideBlock(const LaunchSpec &L, unsigned Dim,
                                 int64_t F) {
  static const char *Axis[3] = {"x", "y", "z"};
  auto Fail = [&](const Twine &Why) {
    return createStringError(inconvertibleErrorCode(), "%s",
                             ("launch.block " + Twine(Axis[Dim]) + " " + Why)
                                 .str()
                                 .c_str());
  };
  if (Dim > 1 || F < 1)
    return Fail("cannot be divided by " + Twine(F));
  int64_t V = 1;
  if (!L.Block[Dim].empty()) {
    auto N = L.Block[Dim].evalInt(Env());
    if (!N)
      return Fail("is not a constant (" + L.Block[Dim].text() + ")");
    V = *N;
  }
  if (V % F != 0 || V / F < 1)
    return Fail(Twine(V) + " is not a multiple of " + Twine(F));
  LaunchSpec Out = L;
  Out.Block[Dim] = SpecExpr::constant(V / F);
  return Out;
}

std::string rowsPerBlockCondition(StringRef G, StringRef B, int64_t Divisor,
                                  int64_t Rows) {
  std::string R = std::to_string(Rows), D = std::to_string(Divisor);
  std::string C = G.str() + " % " + R + " == 0 && ";
  if (Divisor > 1)
    C += B.str() + " % " + D + " == 0 && " + B.str() + " / " + D + " * " + R;
  else
    C += B.str() + " * " + R;
  return C + " <= 1024";
}

Expected<LaunchSpec> rowsPerBlock(const LaunchSpec &L, int64_t Divisor,
                                  int64_t Rows) {
  auto Fail = [](const Twine &Why) {
    return createStringError(inconvertibleErrorCode(), "%s",
                             Why.str().c_str());
  };
  if (L.Grid[0].empty())
    return Fail("the launch has no grid");
  if (Divisor < 1 || Rows < 2 || Rows > 1024)
    return Fail("rows-per-block: " + Twine(Rows) + " rows, threads divided "
                "by " + Twine(Divisor) + ", is not a launch");
  for (unsigned Dim = 1; Dim < 3; ++Dim)
    if (!L.Block[Dim].empty()) {
      auto V = L.Block[Dim].evalInt(Env());
      if (!V || *V != 1) {
        if (!V)
          consumeError(V.takeError());
        return Fail("launch.block is not 1-D (" + L.Block[Dim].text() + ")");
      }
    }
  std::string G = "(" + L.Grid[0].text() + ")", R = std::to_string(Rows);
  std::string Bx = L.Block[0].empty() ? "1" : "(" + L.Block[0].text() + ")";
  std::string Cond = rowsPerBlockCondition(G, Bx, Divisor, Rows) + " ? ";
  LaunchSpec Out = L;
  auto GX = SpecExpr::parse(Cond + G + " / " + R + " : " + G);
  auto BX = SpecExpr::parse(
      Cond + (Divisor > 1 ? Bx + " / " + std::to_string(Divisor) : Bx) +
      " : " + Bx);
  auto BY = SpecExpr::parse(Cond + R + " : 1");
  if (!GX || !BX || !BY) {
    consumeError(GX.takeError());
    consumeError(BX.takeError());
    consumeError(BY.takeError());
    return Fail("the launch's grid or block does not parse in a condition");
  }
  Out.Grid[0] = std::move(*GX);
  Out.Block[0] = std::move(*BX);
  Out.Block[1] = std::move(*BY);
  return Out;
}

std::string delinearizeCondition(StringRef A, StringRef B, StringRef C,
                                 int64_t Bx, int64_t By) {
  std::string X = std::to_string(Bx), Y = std::to_string(By);
  return A.str() + " > 0 && " + B.str() + " > 0 && " + C.str() + " > 0 && " +
         C.str() + " <= 65535 && (" + B.str() + " + " + std::to_string(By - 1) +
         ") / " + Y + " <= 65535 && (" + A.str() + " + " +
         std::to_string(Bx - 1) + ") / " + X + " <= 2147483647";
}

std::string substituteNames(StringRef Text,
                            const std::map<std::string, std::string> &Subst) {
  std::string Out;
  size_t I = 0;
  while (I < Text.size()) {
    char Ch = Text[I];
    if (isAlpha(Ch) || Ch == '_') {
      size_t J = I;
      while (J < Text.size() && (isAlnum(Text[J]) || Text[J] == '_'))
        ++J;
      std::string Name = Text.slice(I, J).str();
      auto It = Subst.find(Name);
      Out += It == Subst.end() ? Name : It->second;
      I = J;
      continue;
    }
    if (isDigit(Ch)) { // A number's suffix is not a name.
      size_t J = I;
      while (J < Text.size() && (isAlnum(Text[J]) || Text[J] == '_'))
        ++J;
      Out += Text.slice(I, J).str();
      I = J;
      continue;
    }
    Out += Ch;
    ++I;
  }
  return Out;
}

Expected<LaunchSpec> delinearizeLaunch(const KernelSpec &K, const LaunchSpec &L,
                                       const Delinearized &D) {
  auto Fail = [&](const Twine &Why) {
    return createStringError(inconvertibleErrorCode(), "%s",
                             (K.where("launch") + Why).str().c_str());
  };
  if (L.Grid[0].empty())
    return Fail("the launch has no grid");
  for (unsigned Dim = 1; Dim < 3; ++Dim) {
    for (const SpecExpr *E : {&L.Grid[Dim], &L.Block[Dim]}) {
      if (E->empty())
        continue;
      auto V = E->evalInt(Env());
      if (!V || *V != 1) {
        if (!V)
          consumeError(V.takeError());
        return Fail("delinearize needs a 1-D launch (" + E->text() + ")");
      }
    }
  }
  auto X0 = L.Block[0].empty() ? Expected<int64_t>(1) : L.Block[0].evalInt(Env());
  if (!X0)
    return Fail("the launch's block x is not a constant: " +
                toString(X0.takeError()));
  std::map<std::string, std::string> Subst;
  for (const ArgSpec &A : K.Args)
    if (!A.ScalarValue.empty())
      Subst[A.Name] = "(" + A.ScalarValue.text() + ")";
  std::string A = "(" + substituteNames(D.A, Subst) + ")",
              B = "(" + substituteNames(D.B, Subst) + ")",
              C = "(" + substituteNames(D.C, Subst) + ")";
  std::string Cond = delinearizeCondition(A, B, C, D.Bx, D.By) + " ? ";
  std::string X = std::to_string(D.Bx), Y = std::to_string(D.By);
  LaunchSpec Out = L;
  auto GX = SpecExpr::parse(Cond + "cdiv(" + A + ", " + X + ") : cdiv((" +
                            L.Grid[0].text() + ") * " + std::to_string(*X0) +
                            ", " + std::to_string(D.Bx * D.By) + ")");
  auto GY = SpecExpr::parse(Cond + "cdiv(" + B + ", " + Y + ") : 1");
  auto GZ = SpecExpr::parse(Cond + C + " : 1");
  if (!GX || !GY || !GZ) {
    consumeError(GX.takeError());
    consumeError(GY.takeError());
    consumeError(GZ.takeError());
    return Fail("the delinearized grid does not parse (its extents are not "
                "spec expressions)");
  }
  Out.Grid[0] = std::move(*GX);
  Out.Grid[1] = std::move(*GY);
  Out.Grid[2] = std::move(*GZ);
  Out.Block[0] = SpecExpr::constant(D.Bx);
  Out.Block[1] = SpecExpr::constant(D.By);
  Out.Block[2] = SpecExpr::constant(1);
  return Out;
}

Expected<LaunchSpec> warpPerRowLaunch(const KernelSpec &K, const LaunchSpec &L,
                                      StringRef Rows) {
  auto Fail = [&](const Twine &Why) {
    return createStringError(inconvertibleErrorCode(), "%s",
                             (K.where("launch") + Why).str().c_str());
  };
  if (L.Grid[0].empty())
    return Fail("the launch has no grid");
  for (unsigned Dim = 1; Dim < 3; ++Dim)
    for (const SpecExpr *E : {&L.Grid[Dim], &L.Block[Dim]}) {
      if (E->empty())
        continue;
      auto V = E->evalInt(Env());
      if (!V || *V != 1) {
        if (!V)
          consumeError(V.takeError());
        return Fail("warp-per-row needs a 1-D launch (" + E->text() + ")");
      }
    }
  std::map<std::string, std::string> Subst;
  for (const ArgSpec &A : K.Args)
    if (!A.ScalarValue.empty())
      Subst[A.Name] = "(" + A.ScalarValue.text() + ")";
  std::string R = substituteNames(Rows, Subst);
  if (!Subst.count(Rows.str()))
    R = "(" + R + ")";
  std::string B = L.Block[0].empty() ? "32" : "(" + L.Block[0].text() + ")";
  // The block's text stays in the grid, so that block-size's retuning of
  // its literal (after or before) changes both.
  std::string Warp = "cdiv(" + R + ", " + B + " / 32)";
  auto BC = L.Block[0].empty() ? Expected<int64_t>(32)
                               : L.Block[0].evalInt(Env());
  bool Multiple = BC && *BC % 32 == 0;
  if (!BC)
    consumeError(BC.takeError());
  auto GX = SpecExpr::parse(Multiple ? Warp
                                     : B + " % 32 == 0 ? " + Warp + " : (" +
                                           L.Grid[0].text() + ")");
  if (!GX)
    return Fail("the warp-per-row grid does not parse (the row count '" +
                Rows + "' is not a spec expression): " +
                toString(GX.takeError()));
  LaunchSpec Out = L;
  Out.Grid[0] = std::move(*GX);
  return Out;
}

bool describesKernel(const KernelSpec &S, StringRef Kernel) {
  return S.Kernel == Kernel || StringRef(S.Kernel).starts_with(Kernel.str() + "<");
}

Expected<std::vector<std::string>> entriesDescribing(const SpecFile &Specs,
                                                     StringRef Kernel) {
  std::vector<std::string> Names;
  for (const KernelSpec &K : Specs.Kernels)
    if (describesKernel(K, Kernel))
      Names.push_back(K.Kernel);
  if (Names.empty())
    return createStringError(inconvertibleErrorCode(),
                             "%s has no entry for kernel '%s'",
                             Specs.Path.c_str(), Kernel.str().c_str());
  return Names;
}

void followLaunchChange(KernelSpec &S, const LaunchChange &C) {
  if (auto N = changedLaunch(S, C))
    S.Launch = std::move(*N);
  else
    consumeError(N.takeError());
}

Expected<LaunchSpec> changedLaunch(const KernelSpec &K, const LaunchChange &C) {
  LaunchSpec L = K.Launch;
  if (C.BlockThreads) {
    auto From = tunableBlockLiteral(K);
    if (!From)
      return From.takeError();
    auto R = retuneLaunch(L, *From, *C.BlockThreads);
    if (!R)
      return R.takeError();
    L = std::move(*R);
  }
  // Grid and block divisions change a launch the spec must mark as the
  // kernel's own (block-size checks that in tunableBlockLiteral).
  if ((C.GridDivisor || C.BlockXDivisor || C.BlockYDivisor || C.BlockRows ||
       C.Grid3 || C.WarpRows) &&
      !K.LaunchIsTunable)
    return createStringError(
        inconvertibleErrorCode(), "%s",
        (K.where("launch") + "the spec does not mark the launch as the "
                             "kernel's own (\"launch_tunable\": true)")
            .c_str());
  if (C.WarpRows) {
    auto D = warpPerRowLaunch(K, L, *C.WarpRows);
    if (!D)
      return D.takeError();
    L = std::move(*D);
  }
  if (C.Grid3) {
    auto D = delinearizeLaunch(K, L, *C.Grid3);
    if (!D)
      return D.takeError();
    L = std::move(*D);
  }
  if (C.GridDivisor) {
    auto D = divideGrid(L, *C.GridDivisor);
    if (!D)
      return D.takeError();
    L = std::move(*D);
  }
  const std::optional<int64_t> *Div[2] = {&C.BlockXDivisor, &C.BlockYDivisor};
  for (unsigned Dim = 0; Dim < 2; ++Dim) {
    if (!*Div[Dim])
      continue;
    auto D = divideBlock(L, Dim, **Div[Dim]);
    if (!D)
      return createStringError(inconvertibleErrorCode(), "%s",
                               (K.where("launch") + toString(D.takeError()))
                                   .c_str());
    L = std::move(*D);
  }
  if (C.BlockRows) {
    auto D = rowsPerBlock(L, C.RowDivisor.value_or(1), *C.BlockRows);
    if (!D)
      return createStringError(inconvertibleErrorCode(), "%s",
                               (K.where("launch") + toString(D.takeError()))
                                   .c_str());
    L = std::move(*D);
  }
  return L;
}

/// Offset of the value of \p Key in \p Obj (a launch object's text); npos
/// when the key is not found.
static size_t valueStart(StringRef Obj, StringRef Key) {
  size_t K = Obj.find(("\"" + Key + "\"").str());
  if (K == StringRef::npos)
    return K;
  size_t I = Obj.find(':', K);
  if (I == StringRef::npos)
    return I;
  return Obj.find_first_not_of(" \t\r\n", I + 1);
}

/// Offset just past the string or bare number that starts at \p B.
static size_t scalarEnd(StringRef Obj, size_t B) {
  size_t E = B;
  if (Obj[B] == '"') {
    for (E = B + 1; E < Obj.size() && Obj[E] != '"'; ++E)
      if (Obj[E] == '\\')
        ++E;
    return E + 1;
  }
  while (E < Obj.size() && Obj[E] != ',' && Obj[E] != ']' && Obj[E] != '}' &&
         !isSpace(Obj[E]))
    ++E;
  return E;
}

/// \p Obj (a launch object's text) with element \p Dim of its block array
/// replaced by the number \p V; nullopt when the array is not found.
static std::optional<std::string> setBlockText(StringRef Obj, unsigned Dim,
                                               int64_t V) {
  size_t I = valueStart(Obj, "block");
  if (I == StringRef::npos)
    return std::nullopt;
  bool Scalar = Obj[I] != '[';
  if (Scalar && Dim != 0)
    return std::nullopt; // "block": 256 has y = 1.
  // Element Dim: skip Dim top-level commas (elements are numbers or strings).
  size_t B = Scalar ? I : I + 1;
  for (unsigned N = 0; N < Dim; ++N) {
    size_t J = B;
    while (J < Obj.size() && Obj[J] != ',' && Obj[J] != ']') {
      if (Obj[J] == '"')
        for (++J; J < Obj.size() && Obj[J] != '"'; ++J)
          if (Obj[J] == '\\')
            ++J;
      ++J;
    }
    if (J >= Obj.size() || Obj[J] != ',')
      return std::nullopt; // Fewer elements: not written by this function.
    B = J + 1;
  }
  B = Obj.find_first_not_of(" \t\r\n", B);
  if (B == StringRef::npos)
    return std::nullopt;
  size_t E = scalarEnd(Obj, B);
  if (E > Obj.size() || E == B)
    return std::nullopt;
  return (Obj.take_front(B) + std::to_string(V) + Obj.substr(E)).str();
}

/// \p Obj (a launch object's text) with the whole value of \p Key ("grid",
/// "block") replaced by the dimensions \p Dims as JSON strings: one string
/// when y and z are absent, else an array; nullopt when the key is not
/// found.
static std::optional<std::string> setDimsText(StringRef Obj, StringRef Key,
                                              const SpecExpr (&Dims)[3]) {
  size_t I = valueStart(Obj, Key);
  if (I == StringRef::npos)
    return std::nullopt;
  size_t E = Obj[I] == '[' ? endOfObject(Obj, I) : scalarEnd(Obj, I);
  if (E == StringRef::npos || E > Obj.size())
    return std::nullopt;
  unsigned N = 3;
  while (N > 1 && Dims[N - 1].empty())
    --N;
  std::string V = N == 1 ? "" : "[";
  for (unsigned D = 0; D < N; ++D)
    V += (D ? ", \"" : "\"") + Dims[D].text() + "\"";
  if (N > 1)
    V += "]";
  return (Obj.take_front(I) + V + Obj.substr(E)).str();
}

/// \p Obj (a launch object's text) with the grid's x value wrapped in
/// "cdiv(..., F)": a string's contents, or a bare number made a string.
static std::optional<std::string> divideGridText(StringRef Obj, int64_t F) {
  size_t I = valueStart(Obj, "grid");
  if (I == StringRef::npos)
    return std::nullopt;
  if (Obj[I] == '[')
    I = Obj.find_first_not_of(" \t\r\n", I + 1);
  if (I >= Obj.size())
    return std::nullopt;
  std::string Suffix = ", " + std::to_string(F) + ")";
  if (Obj[I] == '"') {
    size_t J = I + 1;
    while (J < Obj.size() && Obj[J] != '"')
      J += Obj[J] == '\\' ? 2 : 1;
    if (J >= Obj.size())
      return std::nullopt;
    return (Obj.take_front(I + 1) + "cdiv(" + Obj.slice(I + 1, J) + Suffix +
            Obj.substr(J))
        .str();
  }
  size_t J = I;
  while (J < Obj.size() && (isAlnum(Obj[J]) || Obj[J] == '.'))
    ++J;
  if (J == I)
    return std::nullopt;
  return (Obj.take_front(I) + "\"cdiv(" + Obj.slice(I, J) + Suffix + "\"" +
          Obj.substr(J))
      .str();
}

/// Offset of the end of the JSON value (object, array, string or scalar)
/// that starts at \p B, skipping strings and comments; npos when unbalanced.
size_t endOfObject(StringRef T, size_t B) {
  int Depth = 0;
  for (size_t I = B; I < T.size(); ++I) {
    char C = T[I];
    if (C == '"') {
      for (++I; I < T.size() && T[I] != '"'; ++I)
        if (T[I] == '\\')
          ++I;
      continue;
    }
    if (C == '/' && I + 1 < T.size() && T[I + 1] == '/') {
      I = T.find('\n', I);
      if (I == StringRef::npos)
        return I;
      continue;
    }
    if (C == '/' && I + 1 < T.size() && T[I + 1] == '*') {
      I = T.find("*/", I + 2);
      if (I == StringRef::npos)
        return I;
      ++I;
      continue;
    }
    if (C == '{' || C == '[')
      ++Depth;
    else if ((C == '}' || C == ']') && --Depth == 0)
      return I + 1;
  }
  return StringRef::npos;
}

size_t offsetOf(StringRef T, unsigned Line, unsigned Col) {
  size_t Off = 0;
  for (unsigned L = 1; L < Line && Off != StringRef::npos; ++L) {
    Off = T.find('\n', Off);
    if (Off != StringRef::npos)
      ++Off;
  }
  return Off == StringRef::npos ? Off : Off + Col - 1;
}

Expected<std::string> retuneSpecText(StringRef Text, StringRef Path,
                                     ArrayRef<std::string> Kernels,
                                     const LaunchChange &C) {
  auto Old = parseSpec(Text, Path);
  if (!Old)
    return Old.takeError();
  auto Fail = [&](const Twine &Why) {
    return createStringError(inconvertibleErrorCode(), "%s",
                             (Path + ": cannot retune the launch: " + Why)
                                 .str()
                                 .c_str());
  };
  // Edits as (begin, end, new text), applied back to front.
  std::vector<std::tuple<size_t, size_t, std::string>> Edits;
  std::map<std::string, LaunchSpec> Expected;
  for (const std::string &Name : Kernels) {
    const KernelSpec *K = Old->find(Name);
    if (!K)
      return Fail("no entry for kernel '" + Name + "'");
    auto L = changedLaunch(*K, C);
    if (!L)
      return L.takeError();
    Expected[K->Kernel] = std::move(*L);
    auto It = K->FieldLocations.find("launch");
    if (It == K->FieldLocations.end())
      return Fail("kernel '" + Name + "': the launch field is not found");
    size_t KeyAt = offsetOf(Text, It->second.first, It->second.second);
    size_t B = KeyAt == StringRef::npos ? KeyAt : Text.find('{', KeyAt);
    size_t E = B == StringRef::npos ? B : endOfObject(Text, B);
    if (E == StringRef::npos)
      return Fail("kernel '" + Name + "': the launch object is not found");
    // The values inside the launch object change (strings and bare numbers);
    // keys stay. Which map applies depends on the key a value belongs to.
    std::string New, Key;
    StringRef Obj = Text.slice(B, E);
    int64_t From = 0, To = 0;
    if (C.BlockThreads) {
      From = cantFail(tunableBlockLiteral(*K)); // changedLaunch succeeded.
      To = *C.BlockThreads;
    }
    auto Retune = [&](StringRef V) {
      if (!C.BlockThreads)
        return V.str();
      return Key == "grid" && mentionsLiteral(V, From)
                 ? replaceLiterals(V, gridLiterals(From, To))
                 : replaceLiteral(V, From, To);
    };
    size_t Plain = 0; // Start of the text since the last string.
    for (size_t I = 0; I < Obj.size(); ++I) {
      if (Obj[I] != '"')
        continue;
      New += Retune(Obj.slice(Plain, I));
      size_t J = I + 1;
      while (J < Obj.size() && Obj[J] != '"')
        J += Obj[J] == '\\' ? 2 : 1;
      StringRef Str = Obj.slice(I + 1, J);
      bool IsKey = Obj.substr(J + 1).ltrim().starts_with(":");
      New += '"';
      New += IsKey ? Str.str() : Retune(Str);
      New += '"';
      if (IsKey)
        Key = Str.str();
      I = J;
      Plain = J + 1;
    }
    New += Retune(Obj.substr(std::min(Plain, Obj.size())));
    if (C.GridDivisor) {
      auto D = divideGridText(New, *C.GridDivisor);
      if (!D)
        return Fail("kernel '" + Name + "': the launch's grid is not found");
      New = std::move(*D);
    }
    for (unsigned Dim = 0; Dim < 2; ++Dim) {
      // A delinearized launch's grid and block are written whole below.
      if (!(Dim ? C.BlockYDivisor : C.BlockXDivisor) || C.Grid3)
        continue;
      auto V = Expected[K->Kernel].Block[Dim].evalInt(Env());
      if (!V)
        return Fail("kernel '" + Name + "': " + toString(V.takeError()));
      auto D = setBlockText(New, Dim, *V);
      if (!D)
        return Fail("kernel '" + Name + "': the launch's block " +
                    (Dim ? "y" : "x") + " is not found");
      New = std::move(*D);
    }
    if (C.BlockRows || C.Grid3 || C.WarpRows) {
      const LaunchSpec &W = Expected[K->Kernel];
      auto G = setDimsText(New, "grid", W.Grid);
      auto D = G ? setDimsText(*G, "block", W.Block) : std::nullopt;
      if (!D)
        return Fail("kernel '" + Name + "': the launch's grid or block is "
                    "not found");
      New = std::move(*D);
    }
    Edits.emplace_back(B, E, std::move(New));
  }
  std::sort(Edits.begin(), Edits.end(),
            [](const auto &A, const auto &B) { return std::get<0>(A) > std::get<0>(B); });
  std::string Out = Text.str();
  for (size_t I = 0; I < Edits.size(); ++I) {
    if (I && std::get<1>(Edits[I]) > std::get<0>(Edits[I - 1]))
      return Fail("two kernels share one launch object");
    Out.replace(std::get<0>(Edits[I]),
                std::get<1>(Edits[I]) - std::get<0>(Edits[I]),
                std::get<2>(Edits[I]));
  }
  auto New = parseSpec(Out, Path);
  if (!New)
    return Fail("the edited spec does not parse: " + toString(New.takeError()));
  for (const KernelSpec &K : Old->Kernels) {
    const KernelSpec *N = New->find(K.Kernel);
    auto It = Expected.find(K.Kernel);
    const LaunchSpec &Want = It == Expected.end() ? K.Launch : It->second;
    bool Same = N != nullptr;
    for (unsigned I = 0; Same && I < 3; ++I)
      Same = N->Launch.Grid[I].text() == Want.Grid[I].text() &&
             N->Launch.Block[I].text() == Want.Block[I].text();
    if (Same)
      Same = N->Launch.Shmem.text() == Want.Shmem.text();
    if (!Same)
      return Fail("kernel '" + K.Kernel +
                  "': the edited launch is not the one that was verified");
  }
  return Out;
}

} // namespace astra
