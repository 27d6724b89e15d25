//===- SpecJson.cpp - Spec files: read, validate, write -------------------===//
//
// Reading is strict on purpose: a spec is written by hand, and a typo that
// passed silently (an unknown key, a variable that one shape set lacks) would
// make the verifier test something other than what the user meant. Every
// problem is reported with the file, line and column, the kernel and the
// field path, and all problems of a file are reported at once.
//
//===----------------------------------------------------------------------===//
#include "astra/Spec/Spec.h"
#include "astra/Support/Json.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <rapidjson/reader.h>

#include <cmath>
#include <functional>
#include <map>

using namespace llvm;

namespace astra {

namespace {

/// A field inside the document: object keys and "[i]" for array elements.
using FieldPath = std::vector<std::string>;

std::string pathKey(const FieldPath &P) { return join(P, "\x1f"); }

/// "args.out.count", "launch.grid[1]".
std::string displayField(const FieldPath &P) {
  std::string S;
  for (const std::string &C : P) {
    if (!S.empty() && !StringRef(C).starts_with("["))
      S += ".";
    S += C;
  }
  return S;
}

FieldPath operator+(FieldPath P, StringRef C) {
  P.push_back(C.str());
  return P;
}

constexpr unsigned ParseFlags = rapidjson::kParseCommentsFlag |
                                rapidjson::kParseTrailingCommasFlag |
                                rapidjson::kParseNanAndInfFlag;

/// RapidJSON's DOM keeps no source positions, so a SAX pass over the same
/// text records where each field starts (its key, or the element itself in
/// an array); errors then name the line a user has to edit.
class LocationMap {
public:
  void build(StringRef Text) {
    std::string Copy = Text.str();
    rapidjson::StringStream S(Copy.c_str());
    Handler H(Copy, S, At);
    rapidjson::Reader R;
    R.Parse<ParseFlags>(S, H); // Syntax errors are reported by the DOM parse.
  }
  /// Offset of \p P, or of the nearest enclosing field that has one.
  size_t find(FieldPath P) const {
    for (;;) {
      auto It = At.find(pathKey(P));
      if (It != At.end())
        return It->second;
      if (P.empty())
        return 0;
      P.pop_back();
    }
  }

  /// Line and column of every field under \p Base, by field path relative
  /// to it ("args.out.dtype"). Only the keys that start with Base's are
  /// visited, so doing this for every kernel of a file stays linear.
  std::map<std::string, std::pair<unsigned, unsigned>>
  under(const FieldPath &Base, const LineTable &Lines) const {
    std::string Prefix = pathKey(Base);
    std::map<std::string, std::pair<unsigned, unsigned>> Out;
    for (auto It = At.lower_bound(Prefix);
         It != At.end() && StringRef(It->first).starts_with(Prefix); ++It) {
      auto &[Key, Offset] = *It;
      StringRef K = Key;
      if (!K.consume_front(Prefix))
        continue;
      if (!Prefix.empty() && !K.empty() && !K.consume_front("\x1f"))
        continue;
      SmallVector<StringRef, 8> Parts;
      if (!K.empty())
        K.split(Parts, '\x1f');
      FieldPath Rel(Parts.begin(), Parts.end());
      Out[displayField(Rel)] = Lines.lineColumn(Offset);
    }
    return Out;
  }

private:
  struct Handler
      : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Handler> {
    struct Frame {
      bool IsArray;
      unsigned Next = 0;
    };
    Handler(const std::string &Text, rapidjson::StringStream &S,
            std::map<std::string, size_t> &At)
        : Text(Text), S(S), At(At) {}

    /// Start of the scalar token the reader just passed to the handler.
    /// RapidJSON parses strings and numbers on a local copy of the stream,
    /// so for those Tell() is still at the token's first character; for
    /// true, false and null it is just past the token.
    size_t tokenStart() const {
      size_t P = S.Tell();
      if (P < Text.size() && (Text[P] == '"' || Text[P] == '-' ||
                              isDigit(Text[P])))
        return P;
      size_t I = P;
      while (I > 0 && !StringRef(" \t\r\n,:[{").contains(Text[I - 1]))
        --I;
      return I;
    }

    void beginValue(size_t Start) {
      if (Frames.empty()) {
        At[pathKey(Path)] = Start;
        return;
      }
      if (Frames.back().IsArray) {
        Path.push_back("[" + std::to_string(Frames.back().Next++) + "]");
        At[pathKey(Path)] = Start;
      }
    }
    void endValue() {
      if (!Frames.empty())
        Path.pop_back();
    }

    bool Default() {
      beginValue(tokenStart());
      endValue();
      return true;
    }
    bool Key(const char *Str, rapidjson::SizeType Len, bool) {
      size_t Start = S.Tell();
      Path.push_back(std::string(Str, Len));
      At.emplace(pathKey(Path), Start);
      return true;
    }
    bool StartObject() { return start(false); }
    bool StartArray() { return start(true); }
    bool EndObject(rapidjson::SizeType) { return end(); }
    bool EndArray(rapidjson::SizeType) { return end(); }
    bool start(bool IsArray) {
      beginValue(S.Tell() - 1);
      Frames.push_back({IsArray});
      return true;
    }
    bool end() {
      Frames.pop_back();
      endValue();
      return true;
    }

    const std::string &Text;
    rapidjson::StringStream &S;
    std::map<std::string, size_t> &At;
    FieldPath Path;
    std::vector<Frame> Frames;
  };

  std::map<std::string, size_t> At;
};

using JValue = rapidjson::Value;


/// A JSON number as written in messages: integers without a fraction.
std::string numberText(const JValue &V) {
  if (V.IsInt64())
    return std::to_string(V.GetInt64());
  return Value::ofReal(V.GetDouble()).str();
}

std::string jsonKind(const JValue &V) {
  if (V.IsObject())
    return "an object";
  if (V.IsArray())
    return "an array";
  if (V.IsString())
    return "the string \"" + std::string(V.GetString()) + "\"";
  if (V.IsBool())
    return V.GetBool() ? "true" : "false";
  if (V.IsNull())
    return "null";
  return "a number";
}

bool isIdentifier(StringRef S) {
  return !S.empty() && (isAlpha(S[0]) || S[0] == '_') &&
         all_of(S, [](char C) { return isAlnum(C) || C == '_'; });
}

/// Spellings people reach for, mapped to the spec's dtypes.
StringRef dtypeSuggestion(StringRef S) {
  static const std::pair<StringRef, StringRef> Map[] = {
      {"float", "f32"},       {"float32", "f32"},   {"fp32", "f32"},
      {"double", "f64"},      {"float64", "f64"},   {"fp64", "f64"},
      {"half", "f16"},        {"__half", "f16"},    {"float16", "f16"},
      {"fp16", "f16"},        {"bfloat16", "bf16"}, {"__nv_bfloat16", "bf16"},
      {"int", "i32"},         {"int32", "i32"},     {"int32_t", "i32"},
      {"unsigned", "u32"},    {"uint32", "u32"},    {"uint32_t", "u32"},
      {"int64", "i64"},       {"int64_t", "i64"},   {"long", "i64"},
      {"uint64", "u64"},      {"uint64_t", "u64"},  {"int8", "i8"},
      {"int8_t", "i8"},       {"char", "i8"},       {"uint8", "u8"},
      {"uint8_t", "u8"},      {"int16", "i16"},     {"int16_t", "i16"},
      {"uint16", "u16"},      {"uint16_t", "u16"},  {"e4m3", "fp8_e4m3"},
      {"e5m2", "fp8_e5m2"},
  };
  for (auto &[From, To] : Map)
    if (S.equals_insensitive(From))
      return To;
  return "";
}

/// Reads and validates spec JSON; collects every error.
class SpecReader {
public:
  SpecReader(StringRef Text, StringRef Path)
      : Text(Text), Path(Path.str()), Lines(Text) {
    Locs.build(Text);
  }

  std::optional<SpecFile> readFile(const JValue &Root);
  std::optional<KernelSpec> readKernel(const JValue &V, StringRef Name,
                                       const FieldPath &Base);

  Error takeErrors() {
    Error All = Error::success();
    for (std::string &E : Errors)
      All = joinErrors(std::move(All),
                       createStringError(inconvertibleErrorCode(), E));
    Errors.clear();
    return All;
  }
  bool hasErrors() const { return !Errors.empty(); }

private:
  // --- Reporting -----------------------------------------------------------
  void error(const FieldPath &Rel, const Twine &Msg) {
    FieldPath Full = Base;
    Full.insert(Full.end(), Rel.begin(), Rel.end());
    auto [Line, Col] = Lines.lineColumn(Locs.find(Full));
    std::string S = Path + ":" + std::to_string(Line) + ":" +
                    std::to_string(Col) + ": ";
    if (!Kernel.empty())
      S += "kernel '" + Kernel + "': ";
    if (!Rel.empty())
      S += displayField(Rel) + ": ";
    S += Msg.str();
    Errors.push_back(std::move(S));
  }

  /// Reports keys of \p Obj not in \p Allowed, and duplicate keys.
  void checkKeys(const JValue &Obj, const FieldPath &P,
                 ArrayRef<StringRef> Allowed) {
    StringSet<> Seen, AllowedSet;
    for (StringRef A : Allowed)
      AllowedSet.insert(A);
    for (auto M = Obj.MemberBegin(); M != Obj.MemberEnd(); ++M) {
      StringRef K(M->name.GetString(), M->name.GetStringLength());
      if (!Seen.insert(K).second) {
        error(P + K, "duplicate field");
        continue;
      }
      if (AllowedSet.count(K))
        continue;
      std::string Msg = "unknown field '" + K.str() + "'";
      StringRef Best;
      unsigned BestDist = 3;
      for (StringRef A : Allowed) {
        unsigned D = K.edit_distance(A);
        if (D < BestDist) {
          BestDist = D;
          Best = A;
        }
      }
      if (!Best.empty())
        Msg += "; did you mean '" + Best.str() + "'?";
      Msg += " (fields here: " + join(Allowed, ", ") + ")";
      error(P + K, Msg);
    }
  }

  const JValue *member(const JValue &Obj, StringRef K) {
    auto It = Obj.FindMember(rapidjson::StringRef(K.data(), K.size()));
    return It == Obj.MemberEnd() ? nullptr : &It->value;
  }

  bool expectObject(const JValue &V, const FieldPath &P) {
    if (V.IsObject())
      return true;
    error(P, "expected an object, got " + jsonKind(V));
    return false;
  }

  /// A string left by init-spec for the user to fill in.
  bool isTodo(const JValue &V, const FieldPath &P) {
    if (!V.IsString() || !StringRef(V.GetString()).contains("TODO"))
      return false;
    error(P, "still a TODO from init-spec ('" + std::string(V.GetString()) +
                 "'): fill it in");
    return true;
  }

  std::optional<double> readNonNegative(const JValue &V, const FieldPath &P) {
    if (!V.IsNumber() || !std::isfinite(V.GetDouble()) || V.GetDouble() < 0) {
      error(P, "expected a number >= 0, got " +
                   (V.IsNumber() ? numberText(V) : jsonKind(V)));
      return std::nullopt;
    }
    return V.GetDouble();
  }

  std::optional<bool> readBool(const JValue &V, const FieldPath &P) {
    if (V.IsBool())
      return V.GetBool();
    error(P, "expected true or false, got " + jsonKind(V));
    return std::nullopt;
  }

  // --- Expressions ---------------------------------------------------------
  std::string shapeVarList() const {
    if (ShapeVars.empty())
      return "none; add them under \"shapes\"";
    return join(ShapeVars, ", ");
  }

  /// Reports variables of \p E that are not shape variables.
  bool checkVars(const SpecExpr &E, const FieldPath &P) {
    bool OK = true;
    for (const std::string &V : E.variables())
      if (!is_contained(ShapeVars, V)) {
        error(P, "unknown variable '" + V + "' (shape variables: " +
                     shapeVarList() + ")");
        OK = false;
      }
    return OK;
  }

  /// An expression field: a string or a number, over the shape variables.
  std::optional<SpecExpr> readExpr(const JValue &V, const FieldPath &P) {
    std::string Text;
    if (V.IsString()) {
      if (isTodo(V, P))
        return std::nullopt;
      Text = V.GetString();
    } else if (V.IsInt64()) {
      Text = std::to_string(V.GetInt64());
    } else if (V.IsNumber() && !V.IsUint64()) {
      Text = Value::ofReal(V.GetDouble()).str();
    } else {
      error(P, "expected an expression (a string or a number), got " +
                   (V.IsNumber() ? "a number beyond 64 bits" : jsonKind(V)));
      return std::nullopt;
    }
    auto E = SpecExpr::parse(Text);
    if (!E) {
      error(P, toString(E.takeError()));
      return std::nullopt;
    }
    if (!checkVars(*E, P))
      return std::nullopt;
    return std::move(*E);
  }

  /// Evaluates \p E under every shape set and reports the first failure:
  /// an evaluation error, or what \p Check says is wrong with the value
  /// (it returns the reason, or an empty string).
  void everyShape(const SpecExpr &E, const FieldPath &P, bool NeedInt,
                  function_ref<std::string(const Value &, const Env &)> Check) {
    if (E.empty())
      return;
    for (const ShapeSet &S : *Shapes) {
      auto Eval = [&]() -> Expected<Value> {
        if (!NeedInt)
          return E.eval(S.Vars);
        auto I = E.evalInt(S.Vars);
        if (!I)
          return I.takeError();
        return Value::ofInt(*I);
      };
      Expected<Value> V = Eval();
      if (!V) {
        error(P, "in shape set '" + S.Name + "': " + toString(V.takeError()));
        return;
      }
      std::string Why = Check(*V, S.Vars);
      if (!Why.empty()) {
        error(P, "'" + E.text() + "' is " + V->str() + " in shape set '" +
                     S.Name + "'; " + Why);
        return;
      }
    }
  }

  // --- Kernel fields -------------------------------------------------------
  bool readShapes(const JValue *V, KernelSpec &K);
  std::optional<ArgSpec> readArg(const JValue &V, StringRef Name,
                                 const FieldPath &P);
  void readGenerator(const JValue &V, ArgSpec &A, const FieldPath &P);
  void readLaunch(const JValue &V, KernelSpec &K);
  bool readDims(const JValue &V, SpecExpr (&Out)[3], const FieldPath &P);
  void readAdversarial(const JValue &V, KernelSpec &K);
  void readCheck(const JValue &V, KernelSpec &K);
  void readLaunchSpace(const JValue &V, KernelSpec &K);
  void readWeights(const JValue &V, KernelSpec &K);
  void readCapture(const JValue &V, KernelSpec &K);
  void validateBuffer(const ArgSpec &A, const KernelSpec &K);
  void checkTotals(const KernelSpec &K);
  void validateGenerator(const ArgSpec &A, const KernelSpec &K);

  StringRef Text;
  std::string Path;
  LineTable Lines;
  LocationMap Locs;
  std::vector<std::string> Errors;

  // The kernel being read.
  std::string Kernel;
  FieldPath Base;
  std::vector<std::string> ShapeVars;
  /// The shape sets to evaluate under: none when the sets themselves have
  /// errors, so that one bad set does not repeat as an error in every field.
  const std::vector<ShapeSet> *Shapes = nullptr;
  const std::vector<ShapeSet> NoShapes;
  /// Every argument name the entry has, parsed or not.
  StringSet<> ArgNames;
};

std::optional<SpecFile> SpecReader::readFile(const JValue &Root) {
  if (!expectObject(Root, {}))
    return std::nullopt;
  checkKeys(Root, {}, {"version", "kernels"});
  if (const JValue *V = member(Root, "version")) {
    if (!V->IsInt64() || V->GetInt64() != 1)
      error({"version"}, "unsupported version " +
                             (V->IsNumber() ? numberText(*V) : jsonKind(*V)) +
                             "; this clang-astra reads version 1");
  }
  SpecFile F;
  F.Path = Path;
  const JValue *Ks = member(Root, "kernels");
  if (!Ks) {
    error({}, "missing field 'kernels' (an object: kernel name -> spec)");
    return std::nullopt;
  }
  if (!expectObject(*Ks, {"kernels"}))
    return std::nullopt;
  if (Ks->MemberCount() == 0)
    error({"kernels"}, "no kernels: add an entry per kernel, named as "
                       "`clang-astra list` prints it");
  if (Ks->MemberCount() > MaxSpecKernels) {
    error({"kernels"}, "holds " + std::to_string(Ks->MemberCount()) +
                           " entries; a spec may hold at most " +
                           std::to_string(MaxSpecKernels));
    return std::nullopt;
  }
  for (auto M = Ks->MemberBegin(); M != Ks->MemberEnd(); ++M) {
    std::string Name(M->name.GetString(), M->name.GetStringLength());
    FieldPath P = {"kernels", Name};
    if (StringRef(Name).trim().empty()) {
      error(P, "empty kernel name");
      continue;
    }
    if (const KernelSpec *Dup = F.find(Name)) {
      error(P, "kernel '" + Name + "' has a second entry (first: '" +
                   Dup->Kernel + "')");
      continue;
    }
    if (auto K = readKernel(M->value, Name, P))
      F.Kernels.push_back(std::move(*K));
  }
  if (hasErrors())
    return std::nullopt;
  return F;
}

std::optional<KernelSpec> SpecReader::readKernel(const JValue &V,
                                                 StringRef Name,
                                                 const FieldPath &BasePath) {
  Kernel = Name.str();
  Base = BasePath;
  ShapeVars.clear();
  size_t ErrorsBefore = Errors.size();
  scope_exit Done([&] {
    Kernel.clear();
    Base.clear();
    Shapes = nullptr;
  });

  KernelSpec K;
  K.Kernel = Name.str();
  K.SpecPath = Path;
  if (!expectObject(V, {}))
    return std::nullopt;
  checkKeys(V, {},
            {"shapes", "args", "launch", "tolerance", "bytes", "flops",
             "adversarial", "check", "launch_tunable", "launch_space",
             "weights", "capture"});

  bool ShapesOK = readShapes(member(V, "shapes"), K);
  Shapes = ShapesOK ? &K.Shapes : &NoShapes;
  ArgNames.clear();

  if (const JValue *Args = member(V, "args")) {
    if (expectObject(*Args, {"args"})) {
      unsigned Index = 0;
      for (auto M = Args->MemberBegin(); M != Args->MemberEnd(); ++M) {
        std::string N(M->name.GetString(), M->name.GetStringLength());
        if (!ArgNames.insert(N).second)
          continue; // Reported by checkKeys below as a duplicate.
        if (auto A = readArg(M->value, N, {"args", N})) {
          A->Index = Index;
          K.Args.push_back(std::move(*A));
        }
        ++Index;
      }
      std::vector<StringRef> Names;
      for (auto M = Args->MemberBegin(); M != Args->MemberEnd(); ++M)
        Names.push_back(M->name.GetString());
      checkKeys(*Args, {"args"}, Names);
    }
  }

  if (const JValue *L = member(V, "launch"))
    readLaunch(*L, K);
  else
    error({}, "missing field 'launch' (grid and block, e.g. \"launch\": "
              "{\"grid\": \"cdiv(n, 256)\", \"block\": 256})");

  if (const JValue *T = member(V, "tolerance")) {
    if (expectObject(*T, {"tolerance"})) {
      checkKeys(*T, {"tolerance"}, {"rtol", "atol"});
      if (const JValue *R = member(*T, "rtol"))
        if (auto D = readNonNegative(*R, {"tolerance", "rtol"}))
          K.Rtol = *D;
      if (const JValue *A = member(*T, "atol"))
        if (auto D = readNonNegative(*A, {"tolerance", "atol"}))
          K.Atol = *D;
    }
  }

  if (const JValue *B = member(V, "bytes")) {
    if (!(B->IsString() && StringRef(B->GetString()) == "auto"))
      if (auto E = readExpr(*B, {"bytes"})) {
        everyShape(*E, {"bytes"}, /*NeedInt=*/true,
                   [](const Value &X, const Env &) -> std::string {
                     return X.I < 0 ? "bytes moved cannot be negative" : "";
                   });
        K.Bytes = std::move(*E);
      }
  }
  if (const JValue *Fl = member(V, "flops"))
    if (auto E = readExpr(*Fl, {"flops"})) {
      everyShape(*E, {"flops"}, /*NeedInt=*/false,
                 [](const Value &X, const Env &) -> std::string {
                   return X.real() < 0 ? "flops cannot be negative" : "";
                 });
      K.Flops = std::move(*E);
    }

  if (const JValue *A = member(V, "adversarial"))
    readAdversarial(*A, K);
  if (const JValue *C = member(V, "check"))
    readCheck(*C, K);
  if (const JValue *T = member(V, "launch_tunable"))
    if (auto B = readBool(*T, {"launch_tunable"}))
      K.LaunchIsTunable = *B;
  if (const JValue *LS = member(V, "launch_space"))
    readLaunchSpace(*LS, K);
  if (const JValue *W = member(V, "weights"))
    readWeights(*W, K);
  if (const JValue *C = member(V, "capture"))
    readCapture(*C, K);
  for (const ArgSpec &A : K.Args)
    if (A.IsBuffer && A.Init.Captured && !K.Capture)
      error({"args", A.Name, "init"},
            "captured(...) replays the bytes of a capture, but the entry has "
            "no \"capture\" (`clang-astra init-spec FILE --from-capture DIR` "
            "writes both)");

  // Checks that need every argument: values per shape set, references.
  for (const ArgSpec &A : K.Args)
    if (A.IsBuffer)
      validateBuffer(A, K);
  if (Errors.size() == ErrorsBefore)
    checkTotals(K);

  if (Errors.size() != ErrorsBefore)
    return std::nullopt;
  K.FieldLocations = Locs.under(Base, Lines);
  return K;
}

bool SpecReader::readShapes(const JValue *V, KernelSpec &K) {
  if (!V) {
    // A kernel whose sizes are all fixed needs no variables.
    K.Shapes.push_back({"default", {}});
    return true;
  }
  if (!expectObject(*V, {"shapes"}))
    return false;
  if (V->MemberCount() == 0) {
    error({"shapes"}, "no shape sets; add at least one, e.g. \"default\": "
                      "{\"n\": 1048576}");
    return false;
  }
  if (V->MemberCount() > MaxShapeSets) {
    error({"shapes"}, "holds " + std::to_string(V->MemberCount()) +
                          " shape sets; an entry may hold at most " +
                          std::to_string(MaxShapeSets) +
                          " (each is verified and timed on its own)");
    return false;
  }
  size_t ErrorsBefore = Errors.size();
  // Names as written in each set, values or not (a TODO value still names
  // a variable that fields may use).
  std::vector<std::vector<std::string>> Names;
  StringSet<> SeenSets;
  for (auto M = V->MemberBegin(); M != V->MemberEnd(); ++M) {
    std::string SetName(M->name.GetString(), M->name.GetStringLength());
    FieldPath P = {"shapes", SetName};
    if (!SeenSets.insert(SetName).second) {
      error(P, "duplicate shape set");
      continue;
    }
    if (!expectObject(M->value, P))
      continue;
    if (M->value.MemberCount() > MaxShapeVariables) {
      error(P, "holds " + std::to_string(M->value.MemberCount()) +
                   " variables; a shape set may hold at most " +
                   std::to_string(MaxShapeVariables));
      continue;
    }
    ShapeSet S;
    S.Name = SetName;
    Names.emplace_back();
    StringSet<> SeenVars;
    for (auto VM = M->value.MemberBegin(); VM != M->value.MemberEnd(); ++VM) {
      std::string Var(VM->name.GetString(), VM->name.GetStringLength());
      FieldPath VP = P + Var;
      if (!isIdentifier(Var)) {
        error(VP, "'" + Var + "' is not a valid variable name (letters, "
                              "digits and '_', not starting with a digit)");
        continue;
      }
      if (!SeenVars.insert(Var).second) {
        error(VP, "duplicate field");
        continue;
      }
      Names.back().push_back(Var);
      const JValue &X = VM->value;
      if (isTodo(X, VP))
        continue;
      if (X.IsInt64()) {
        S.Vars[Var] = Value::ofInt(X.GetInt64());
      } else if (X.IsDouble() && isIntegralReal(X.GetDouble())) {
        S.Vars[Var] = Value::ofInt(int64_t(X.GetDouble()));
      } else {
        error(VP, "a shape variable must be an integer, got " +
                      (X.IsNumber() ? numberText(X) : jsonKind(X)));
      }
    }
    K.Shapes.push_back(std::move(S));
  }
  if (Names.empty())
    return false;
  // Every set must define the same variables: a variable that one set
  // lacks is almost always a typo.
  ShapeVars = Names.front();
  StringSet<> FirstSet;
  for (const std::string &N : Names.front())
    FirstSet.insert(N);
  for (size_t I = 1; I < Names.size(); ++I) {
    StringSet<> These;
    for (const std::string &N : Names[I])
      These.insert(N);
    std::vector<std::string> Missing, Extra;
    for (const std::string &N : Names.front())
      if (!These.count(N))
        Missing.push_back("'" + N + "'");
    for (const std::string &N : Names[I])
      if (!FirstSet.count(N))
        Extra.push_back("'" + N + "'");
    if (Missing.empty() && Extra.empty())
      continue;
    std::string Msg = "its variables differ from shape set '" +
                      K.Shapes.front().Name +
                      "' (every set needs the same variables):";
    if (!Missing.empty())
      Msg += " missing " + join(Missing, ", ");
    if (!Extra.empty())
      Msg += std::string(Missing.empty() ? "" : ";") + " extra " +
             join(Extra, ", ");
    error({"shapes", K.Shapes[I].Name}, Msg);
  }
  return Errors.size() == ErrorsBefore;
}

std::optional<ArgSpec> SpecReader::readArg(const JValue &V, StringRef Name,
                                           const FieldPath &P) {
  if (!isIdentifier(Name)) {
    error(P, "'" + Name + "' is not a parameter name");
    return std::nullopt;
  }
  if (!expectObject(V, P))
    return std::nullopt;
  ArgSpec A;
  A.Name = Name.str();
  size_t ErrorsBefore = Errors.size();

  if (const JValue *Val = member(V, "value")) {
    checkKeys(V, P, {"value", "dtype"});
    if (auto E = readExpr(*Val, P + "value"))
      A.ScalarValue = std::move(*E);
    if (const JValue *DT = member(V, "dtype")) {
      if (!DT->IsString() || !parseDType(DT->GetString())) {
        error(P + "dtype", "unknown dtype " + jsonKind(*DT) +
                               " (dtypes: " + dtypeList() + ")");
      } else {
        A.ScalarType = *parseDType(DT->GetString());
        A.ScalarTypeGiven = true;
      }
    }
    if (A.ScalarTypeGiven && !isFloating(A.ScalarType)) {
      DType T = A.ScalarType;
      everyShape(A.ScalarValue, P + "value", /*NeedInt=*/true,
                 [&](const Value &X, const Env &) -> std::string {
                   if (X.I < dtypeMin(T) || X.I > dtypeMax(T))
                     return ("out of range for " + dtypeName(T)).str();
                   return "";
                 });
    } else {
      everyShape(A.ScalarValue, P + "value", /*NeedInt=*/false,
                 [](const Value &, const Env &) { return std::string(); });
    }
    if (Errors.size() != ErrorsBefore)
      return std::nullopt;
    return A;
  }

  static const StringRef BufferKeys[] = {"dtype", "count", "role", "init",
                                         "rtol",  "atol",  "align"};
  bool AnyBufferKey = any_of(BufferKeys, [&](StringRef K) {
    return member(V, K) != nullptr;
  });
  if (!AnyBufferKey) {
    error(P, "give \"dtype\" and \"count\" for a buffer (pointer) or "
             "\"value\" for a scalar");
    return std::nullopt;
  }
  A.IsBuffer = true;
  checkKeys(V, P, BufferKeys);

  const JValue *DT = member(V, "dtype");
  if (!DT) {
    error(P, "missing field 'dtype' (one of " + dtypeList() + ")");
  } else if (!DT->IsString() || !parseDType(DT->GetString())) {
    std::string Msg = "unknown dtype " + jsonKind(*DT);
    if (DT->IsString())
      if (StringRef S = dtypeSuggestion(DT->GetString()); !S.empty())
        Msg += "; did you mean '" + S.str() + "'?";
    error(P + "dtype", Msg + " (dtypes: " + dtypeList() + ")");
  } else {
    A.Type = *parseDType(DT->GetString());
  }

  if (const JValue *C = member(V, "count")) {
    if (auto E = readExpr(*C, P + "count"))
      A.Count = std::move(*E);
  } else {
    error(P, "missing field 'count' (the number of elements, an expression "
             "over the shape variables)");
  }

  if (const JValue *R = member(V, "role")) {
    if (!R->IsString() || !parseRole(R->GetString()))
      error(P + "role", "unknown role " + jsonKind(*R) +
                            " (roles: input, output, inout, scratch)");
    else
      A.R = *parseRole(R->GetString());
  }
  bool Compared = A.R == Role::Output || A.R == Role::InOut;
  bool Initialized = A.R == Role::Input || A.R == Role::InOut;

  if (const JValue *I = member(V, "init")) {
    if (!Initialized)
      error(P + "init",
            "an " + roleName(A.R) +
                " buffer is poisoned before each run, so it takes no init; "
                "use role inout if the kernel reads its initial values");
    else
      readGenerator(*I, A, P + "init");
  } else if (Initialized && DT) {
    A.Init = defaultGenerator(A.Type);
  }

  for (StringRef Tol : {"rtol", "atol"})
    if (const JValue *T = member(V, Tol)) {
      if (!Compared) {
        error(P + Tol, "only compared buffers (output, inout) have a "
                       "tolerance; this one is " +
                           roleName(A.R));
        continue;
      }
      if (auto D = readNonNegative(*T, P + Tol))
        (Tol == "rtol" ? A.Rtol : A.Atol) = *D;
    }

  if (const JValue *Al = member(V, "align")) {
    if (!Al->IsUint64() || Al->GetUint64() == 0 ||
        !isPowerOf2_64(Al->GetUint64()) || Al->GetUint64() > 4096)
      error(P + "align", "expected a power of two between 1 and 4096 "
                         "(bytes), got " +
                             (Al->IsNumber() ? numberText(*Al) : jsonKind(*Al)));
    else
      A.Align = unsigned(Al->GetUint64());
  }
  if (Errors.size() != ErrorsBefore)
    return std::nullopt;
  return A;
}

void SpecReader::readGenerator(const JValue &V, ArgSpec &A,
                               const FieldPath &P) {
  if (!V.IsString()) {
    error(P, "expected a generator such as \"normal(0, 1)\", got " +
                 jsonKind(V));
    return;
  }
  if (isTodo(V, P))
    return;
  auto G = parseGenerator(V.GetString());
  if (!G) {
    error(P, toString(G.takeError()));
    return;
  }
  for (const SpecExpr &E : G->Args)
    if (!checkVars(E, P))
      return;
  if (G->isStructural() && G->Kind != "arange" && isFloating(A.Type)) {
    error(P, G->Kind + " draws indices; it needs an integer dtype, not " +
                 dtypeName(A.Type).str());
    return;
  }
  A.Init = std::move(*G);
}

void SpecReader::validateBuffer(const ArgSpec &A, const KernelSpec &K) {
  FieldPath P = {"args", A.Name};
  everyShape(A.Count, P + "count", /*NeedInt=*/true,
             [&](const Value &X, const Env &E) -> std::string {
               if (X.I < 1)
                 return "a count must be positive";
               auto B = A.bytes(E);
               if (!B)
                 return toString(B.takeError());
               return "";
             });
  if ((A.R == Role::Input || A.R == Role::InOut) && !A.Init.Text.empty())
    validateGenerator(A, K);
}

/// The buffers of each shape set together must fit MaxShapeSetBufferBytes:
/// a spec that asks for petabytes would only fail later, on the GPU machine,
/// after every compile (or allocate what the host cannot give).
void SpecReader::checkTotals(const KernelSpec &K) {
  for (const ShapeSet &S : *Shapes) {
    auto Total = bufferBytes(K, S);
    if (!Total) {
      consumeError(Total.takeError()); // Reported for the count.
      return;
    }
    if (*Total <= MaxShapeSetBufferBytes)
      continue;
    // Every count evaluated in bufferBytes; the largest is named.
    const ArgSpec *Largest = nullptr;
    int64_t LargestBytes = 0;
    for (const ArgSpec &A : K.Args)
      if (A.IsBuffer) {
        int64_t B = cantFail(A.bytes(S.Vars));
        if (B > LargestBytes) {
          LargestBytes = B;
          Largest = &A;
        }
      }
    error({"args"}, "the buffers of shape set '" + S.Name + "' take " +
                        byteSizeText(*Total) + " (the largest, '" +
                        Largest->Name + "', " + byteSizeText(LargestBytes) +
                        " for '" + Largest->Count.text() +
                        "' elements); more than any GPU holds (at most " +
                        byteSizeText(MaxShapeSetBufferBytes) +
                        " per shape set)");
    return;
  }
}

/// Checks what a generator's arguments evaluate to against the buffer it
/// fills, per shape set: ranges that are empty, values the dtype cannot
/// hold, index generators that cannot produce what they promise.
void SpecReader::validateGenerator(const ArgSpec &A, const KernelSpec &K) {
  FieldPath P = {"args", A.Name, "init"};
  const Generator &G = A.Init;
  bool IntType = !isFloating(A.Type);
  int64_t Lo = dtypeMin(A.Type), Hi = dtypeMax(A.Type);
  std::string TypeName = dtypeName(A.Type).str();
  auto Fits = [&](int64_t V) -> std::string {
    if (IntType && (V < Lo || V > Hi))
      return "a value " + std::to_string(V) + " does not fit in " + TypeName +
             " (" + std::to_string(Lo) + " to " + std::to_string(Hi) + ")";
    return "";
  };
  auto Eval = [&](const SpecExpr &E, const Env &Env) -> Expected<Value> {
    return E.eval(Env);
  };

  for (const ShapeSet &S : *Shapes) {
    std::vector<Value> Args;
    bool Failed = false;
    for (const SpecExpr &E : G.Args) {
      auto V = Eval(E, S.Vars);
      if (!V) {
        error(P, "in shape set '" + S.Name + "': " + toString(V.takeError()));
        return;
      }
      Args.push_back(*V);
    }
    auto Count = A.Count.evalInt(S.Vars);
    if (!Count) {
      consumeError(Count.takeError()); // Reported for "count".
      return;
    }
    std::string Why;
    auto Int = [&](unsigned I, StringRef What) -> std::optional<int64_t> {
      if (Args[I].IsInt)
        return Args[I].I;
      Why = (What + " must be an integer, got " + Args[I].str()).str();
      return std::nullopt;
    };
    StringRef Kind = G.Kind;
    if (Kind == "normal") {
      if (Args[1].real() < 0)
        Why = "std is " + Args[1].str() + "; it cannot be negative";
    } else if (Kind == "uniform" || Kind == "sorted" || Kind == "randint") {
      if (Args[0].real() > Args[1].real())
        Why = "lo (" + Args[0].str() + ") is greater than hi (" +
              Args[1].str() + ")";
      else if (Kind == "randint" || (IntType && Kind == "sorted")) {
        auto L = Int(0, "lo"), H = L ? Int(1, "hi") : std::nullopt;
        if (L && H)
          Why = !Fits(*L).empty() ? Fits(*L) : Fits(*H);
      } else if (IntType) {
        Why = "uniform draws reals; use randint(lo, hi) for " + TypeName;
      }
    } else if (Kind == "constant") {
      if (IntType) {
        if (auto V = Int(0, "the constant"))
          Why = Fits(*V);
      }
    } else if (Kind == "arange") {
      Why = Fits(*Count - 1);
    } else if (Kind == "permutation" || Kind == "indices_into") {
      if (auto N = Int(0, "n")) {
        if (*N < 1)
          Why = "n is " + std::to_string(*N) + "; it must be positive";
        else if (Kind == "permutation" && *Count > *N)
          Why = "the buffer holds " + std::to_string(*Count) +
                " elements but a permutation of " + std::to_string(*N) +
                " values has only " + std::to_string(*N) + " distinct ones";
        else
          Why = Fits(*N - 1);
      }
    } else if (Kind == "csr_rowptr") {
      auto Rows = Int(0, "rows");
      auto Avg = Rows ? Int(1, "avg_degree") : std::nullopt;
      auto Max = Avg ? Int(2, "max_degree") : std::nullopt;
      int64_t Nnz;
      if (!Max)
        ;
      else if (*Rows < 0 || *Avg < 0)
        Why = "rows and avg_degree cannot be negative";
      else if (*Max < *Avg)
        Why = "max_degree (" + std::to_string(*Max) +
              ") is smaller than avg_degree (" + std::to_string(*Avg) + ")";
      else if (*Count != *Rows + 1)
        Why = "the buffer holds " + std::to_string(*Count) +
              " elements but a row pointer of " + std::to_string(*Rows) +
              " rows has rows + 1 = " + std::to_string(*Rows + 1);
      else if (__builtin_mul_overflow(*Rows, *Avg, &Nnz))
        Why = "rows * avg_degree does not fit in 64 bits";
      else
        Why = Fits(Nnz);
    } else if (Kind == "csr_colind") {
      const ArgSpec *Ref = K.arg(G.RefArg);
      if (!Ref && ArgNames.count(G.RefArg))
        return; // The referenced argument has errors of its own.
      if (!Ref || !Ref->IsBuffer || Ref->Init.Kind != "csr_rowptr" ||
          Ref->R == Role::Output || Ref->R == Role::Scratch) {
        error(P, "csr_colind refers to '" + G.RefArg + "', which " +
                     (!Ref             ? "is not an argument of this kernel"
                      : !Ref->IsBuffer ? "is a scalar"
                                       : "is not an input buffer drawn by "
                                         "csr_rowptr(rows, avg_degree, "
                                         "max_degree)"));
        return;
      }
      auto Rows = Ref->Init.Args[0].evalInt(S.Vars);
      auto Avg = Ref->Init.Args[1].evalInt(S.Vars);
      auto Max = Ref->Init.Args[2].evalInt(S.Vars);
      if (!Rows || !Avg || !Max) {
        consumeError(Rows.takeError());
        consumeError(Avg.takeError());
        consumeError(Max.takeError());
        return; // Reported for the row pointer.
      }
      if (auto N = Int(0, "n")) {
        if (*Count != *Rows * *Avg)
          Why = "the buffer holds " + std::to_string(*Count) +
                " elements but '" + G.RefArg + "' has rows * avg_degree = " +
                std::to_string(*Rows * *Avg) + " entries";
        else if (*N < *Max)
          Why = "n (" + std::to_string(*N) + ") is smaller than max_degree (" +
                std::to_string(*Max) + ") of '" + G.RefArg +
                "': a row cannot have that many distinct columns";
        else
          Why = Fits(*N - 1);
      }
    }
    if (!Why.empty()) {
      error(P, "'" + G.Text + "' in shape set '" + S.Name + "': " + Why);
      Failed = true;
    }
    if (Failed)
      return;
  }
}

bool SpecReader::readDims(const JValue &V, SpecExpr (&Out)[3],
                          const FieldPath &P) {
  if (!V.IsArray()) {
    auto E = readExpr(V, P);
    if (!E)
      return false;
    Out[0] = std::move(*E);
    Out[1] = Out[2] = SpecExpr::constant(1);
    return true;
  }
  if (V.Size() < 1 || V.Size() > 3) {
    error(P, "expected 1 to 3 dimensions [x, y, z], got " +
                 std::to_string(V.Size()));
    return false;
  }
  bool OK = true;
  for (unsigned I = 0; I < 3; ++I) {
    if (I >= V.Size()) {
      Out[I] = SpecExpr::constant(1);
      continue;
    }
    auto E = readExpr(V[I], P + ("[" + std::to_string(I) + "]"));
    if (!E)
      OK = false;
    else
      Out[I] = std::move(*E);
  }
  return OK;
}

void SpecReader::readLaunch(const JValue &V, KernelSpec &K) {
  FieldPath P = {"launch"};
  if (!expectObject(V, P))
    return;
  checkKeys(V, P, {"grid", "block", "shmem"});
  bool OK = true;
  for (StringRef Field : {"grid", "block"}) {
    const JValue *D = member(V, Field);
    if (!D) {
      error(P, "missing field '" + Field + "'");
      OK = false;
      continue;
    }
    OK &= readDims(*D, Field == "grid" ? K.Launch.Grid : K.Launch.Block,
                   P + Field);
  }
  if (const JValue *S = member(V, "shmem")) {
    if (auto E = readExpr(*S, P + "shmem"))
      K.Launch.Shmem = std::move(*E);
    else
      OK = false;
  } else {
    K.Launch.Shmem = SpecExpr::constant(0);
  }
  if (!OK)
    return;
  for (const ShapeSet &S : *Shapes) {
    std::string Field;
    auto L = K.Launch.resolve(S.Vars, &Field);
    if (!L) {
      error(P + Field,
            "in shape set '" + S.Name + "': " + toString(L.takeError()));
      return;
    }
  }
}

void SpecReader::readAdversarial(const JValue &V, KernelSpec &K) {
  FieldPath P = {"adversarial"};
  if (!expectObject(V, P))
    return;
  checkKeys(V, P, {"vary", "misalign", "values"});
  if (const JValue *Vary = member(V, "vary")) {
    if (!Vary->IsArray()) {
      error(P + "vary", "expected an array of shape variable names, got " +
                            jsonKind(*Vary));
    } else {
      for (unsigned I = 0; I < Vary->Size(); ++I) {
        const JValue &X = (*Vary)[I];
        FieldPath XP = P + "vary" + ("[" + std::to_string(I) + "]");
        if (!X.IsString())
          error(XP, "expected a shape variable name, got " + jsonKind(X));
        else if (!is_contained(ShapeVars, X.GetString()))
          error(XP, "unknown shape variable '" + std::string(X.GetString()) +
                        "' (shape variables: " + shapeVarList() + ")");
        else
          K.Adversarial.Vary.push_back(X.GetString());
      }
    }
  }
  if (const JValue *M = member(V, "misalign"))
    if (auto B = readBool(*M, P + "misalign"))
      K.Adversarial.Misalign = *B;
  if (const JValue *Vals = member(V, "values"))
    if (auto B = readBool(*Vals, P + "values"))
      K.Adversarial.Values = *B;
}

void SpecReader::readLaunchSpace(const JValue &V, KernelSpec &K) {
  FieldPath P = {"launch_space"};
  if (!expectObject(V, P))
    return;
  checkKeys(V, P, {"block"});
  const JValue *B = member(V, "block");
  if (!B) {
    error(P, "missing field 'block' (the block sizes the program launches "
             "with, e.g. \"block\": [128, 256])");
    return;
  }
  if (!B->IsArray() || B->Size() == 0) {
    error(P + "block", "expected a non-empty array of block sizes, got " +
                           jsonKind(*B));
    return;
  }
  for (unsigned I = 0; I < B->Size(); ++I) {
    const JValue &X = (*B)[I];
    FieldPath XP = P + "block" + ("[" + std::to_string(I) + "]");
    if (!X.IsInt64() || X.GetInt64() < 1 || X.GetInt64() > 1024)
      error(XP, "expected a block size from 1 to 1024, got " +
                    (X.IsNumber() ? std::to_string(X.GetDouble())
                                  : jsonKind(X)));
    else if (!is_contained(K.LaunchSpaceBlocks, X.GetInt64()))
      K.LaunchSpaceBlocks.push_back(X.GetInt64());
  }
}

void SpecReader::readWeights(const JValue &V, KernelSpec &K) {
  FieldPath P = {"weights"};
  if (!expectObject(V, P))
    return;
  for (auto M = V.MemberBegin(); M != V.MemberEnd(); ++M) {
    std::string Set(M->name.GetString(), M->name.GetStringLength());
    if (!K.shape(Set)) {
      std::vector<std::string> Names;
      for (const ShapeSet &S : K.Shapes)
        Names.push_back(S.Name);
      error(P + Set, "no shape set '" + Set + "' (shape sets: " +
                         join(Names, ", ") + ")");
      continue;
    }
    if (auto D = readNonNegative(M->value, P + Set))
      K.Weights[Set] = *D;
  }
  std::vector<StringRef> Names;
  for (const ShapeSet &S : K.Shapes)
    Names.push_back(S.Name);
  checkKeys(V, P, Names);
  // A set added by hand to a captured spec must say how much it counts.
  for (const ShapeSet &S : K.Shapes)
    if (!K.Weights.count(S.Name) && !member(V, S.Name))
      error(P, "no weight for shape set '" + S.Name +
                   "' (weights name every shape set or none)");
  double Sum = 0;
  for (auto &[Set, W] : K.Weights)
    Sum += W;
  if (!K.Weights.empty() && Sum <= 0)
    error(P, "every weight is 0; a weighted speedup needs some weight");
}

void SpecReader::readCapture(const JValue &V, KernelSpec &K) {
  FieldPath P = {"capture"};
  if (!expectObject(V, P))
    return;
  checkKeys(V, P, {"dir", "sets"});
  const JValue *D = member(V, "dir");
  if (!D || !D->IsString()) {
    error(D ? P + "dir" : P, D ? "expected the capture folder, got " +
                                     jsonKind(*D)
                               : std::string("missing field 'dir' (the "
                                             "capture folder)"));
    return;
  }
  CaptureRef C;
  C.Written = D->GetString();
  // Relative to the spec file, made absolute: a job carries the spec to a
  // process with another working directory.
  SmallString<256> Dir;
  if (sys::path::is_absolute(C.Written)) {
    Dir = C.Written;
  } else {
    Dir = sys::path::parent_path(Path);
    sys::path::append(Dir, C.Written);
    sys::fs::make_absolute(Dir);
  }
  sys::path::remove_dots(Dir, /*remove_dot_dot=*/true);
  C.Dir = std::string(Dir);
  if (!sys::fs::is_directory(C.Dir)) {
    error(P + "dir", "no capture folder '" + C.Written + "' (" + C.Dir +
                         "); it is named relative to the spec file");
    return;
  }
  const JValue *Sets = member(V, "sets");
  if (!Sets) {
    error(P, "missing field 'sets' (shape set -> argument -> blob)");
    return;
  }
  if (!expectObject(*Sets, P + "sets"))
    return;
  for (auto M = Sets->MemberBegin(); M != Sets->MemberEnd(); ++M) {
    std::string SetName(M->name.GetString(), M->name.GetStringLength());
    FieldPath SP = P + "sets" + SetName;
    const ShapeSet *Set = K.shape(SetName);
    if (!Set) {
      error(SP, "no shape set '" + SetName + "'");
      continue;
    }
    if (!expectObject(M->value, SP))
      continue;
    std::map<std::string, std::string> &Blobs = C.Sets[SetName];
    for (auto A = M->value.MemberBegin(); A != M->value.MemberEnd(); ++A) {
      std::string ArgName(A->name.GetString(), A->name.GetStringLength());
      FieldPath AP = SP + ArgName;
      const ArgSpec *Arg = K.arg(ArgName);
      if (!Arg || !Arg->IsBuffer) {
        error(AP, "no buffer argument '" + ArgName + "'");
        continue;
      }
      if (!A->value.IsString()) {
        error(AP, "expected a blob path, got " + jsonKind(A->value));
        continue;
      }
      std::string Blob = A->value.GetString();
      if (sys::path::is_absolute(Blob) || StringRef(Blob).contains("..")) {
        error(AP, "'" + Blob + "' is not a path inside the capture folder");
        continue;
      }
      if (Arg->R != Role::Input && Arg->R != Role::InOut) {
        error(AP, "'" + ArgName + "' is " + roleName(Arg->R).str() +
                      "; only input and inout buffers start from captured "
                      "contents");
        continue;
      }
      if (!Arg->Init.Captured) {
        error(AP, "the init of '" + ArgName + "' is " + Arg->Init.Text +
                      "; write captured(" + Arg->Init.Text +
                      ") to replay these bytes");
        continue;
      }
      SmallString<256> Full(C.Dir);
      sys::path::append(Full, Blob);
      uint64_t Size = 0;
      if (sys::fs::file_size(Full, Size)) {
        error(AP, "no blob '" + std::string(Full) + "'");
        continue;
      }
      auto Bytes = Arg->bytes(Set->Vars);
      if (!Bytes) {
        consumeError(Bytes.takeError()); // Reported for its count.
        continue;
      }
      // The blob holds the allocation from the pointer on; the buffer
      // replays its first bytes.
      if (Size < uint64_t(*Bytes)) {
        error(AP, "the blob has " + std::to_string(Size) +
                      " bytes, but '" + ArgName + "' takes " +
                      std::to_string(*Bytes) + " in shape set '" + SetName +
                      "' (count " + Arg->Count.text() + ")");
        continue;
      }
      Blobs[ArgName] = Blob;
    }
  }
  K.Capture = std::move(C);
}

void SpecReader::readCheck(const JValue &V, KernelSpec &K) {
  FieldPath P = {"check"};
  if (!expectObject(V, P))
    return;
  checkKeys(V, P, {"validity", "params"});
  const JValue *Name = member(V, "validity");
  std::vector<StringRef> Known;
  for (const ValidityCheckInfo &C : knownValidityChecks())
    Known.push_back(C.Name);
  if (!Name || !Name->IsString()) {
    error(Name ? P + "validity" : P,
          (Name ? "expected the name of a validity check, got " +
                      jsonKind(*Name)
                : std::string("missing field 'validity'")) +
              " (checks: " + join(Known, ", ") + ")");
    return;
  }
  const ValidityCheckInfo *Info = nullptr;
  for (const ValidityCheckInfo &C : knownValidityChecks())
    if (C.Name == Name->GetString())
      Info = &C;
  if (!Info) {
    error(P + "validity", "unknown validity check '" +
                              std::string(Name->GetString()) +
                              "' (checks: " + join(Known, ", ") + ")");
    return;
  }
  ValidityCheck C;
  C.Name = Info->Name.str();
  std::vector<StringRef> ParamNames;
  for (const auto &Prm : Info->Params)
    ParamNames.push_back(Prm.Name);
  const JValue *Params = member(V, "params");
  if (!Params) {
    error(P, "missing field 'params' (" + C.Name + " takes " +
                 join(ParamNames, ", ") + ")");
    return;
  }
  if (!expectObject(*Params, P + "params"))
    return;
  checkKeys(*Params, P + "params", ParamNames);
  bool OK = true;
  for (const auto &Prm : Info->Params) {
    FieldPath PP = P + "params" + Prm.Name;
    const JValue *X = member(*Params, Prm.Name);
    if (!X) {
      error(P + "params", "missing parameter '" + Prm.Name + "' (" +
                              Prm.Doc + ")");
      OK = false;
      continue;
    }
    if (!X->IsString()) {
      error(PP, "expected an argument name or an expression, got " +
                    jsonKind(*X));
      OK = false;
      continue;
    }
    std::string S = X->GetString();
    const ArgSpec *A = K.arg(S);
    if (Prm.Kind != ValidityCheckInfo::ParamKind::Expression) {
      if (!A || !A->IsBuffer) {
        error(PP, "'" + S + "' is not a buffer argument of this kernel");
        OK = false;
      } else if (Prm.Kind == ValidityCheckInfo::ParamKind::IntegerBuffer &&
                 isFloating(A->Type)) {
        error(PP, "'" + S + "' is " + dtypeName(A->Type).str() + "; " +
                      C.Name + " needs an integer buffer here");
        OK = false;
      }
    } else if (!A) {
      OK &= readExpr(*X, PP).has_value();
    } else if (A->IsBuffer) {
      error(PP, "'" + S + "' is a buffer; expected a scalar argument or an "
                          "expression");
      OK = false;
    }
    C.Params.push_back({Prm.Name.str(), S});
  }
  if (OK)
    K.Check = std::move(C);
}

/// Parses \p Text with comments into \p Doc; runs \p Read on the root.
template <typename T>
Expected<T> readSpecText(StringRef Text, StringRef Path,
                         function_ref<std::optional<T>(SpecReader &,
                                                       const JValue &)>
                             Read) {
  rapidjson::Document Doc;
  if (Error E = parseJsonWithComments(Text, Path, Doc))
    return E;
  SpecReader R(Text, Path);
  std::optional<T> Out = Read(R, Doc);
  if (R.hasErrors() || !Out)
    return R.takeErrors();
  return std::move(*Out);
}

// --- Writing ----------------------------------------------------------------

void writeDims(JsonWriter &W, const SpecExpr (&D)[3]) {
  auto Text = [](const SpecExpr &E) {
    return E.empty() ? std::string("1") : E.text();
  };
  if (Text(D[1]) == "1" && Text(D[2]) == "1") {
    W.value(Text(D[0]));
    return;
  }
  W.arrayBegin();
  for (const SpecExpr &E : D)
    W.value(Text(E));
  W.arrayEnd();
}

} // namespace

Expected<SpecFile> parseSpec(StringRef Text, StringRef Path) {
  return readSpecText<SpecFile>(
      Text, Path, [](SpecReader &R, const JValue &Root) {
        return R.readFile(Root);
      });
}

Expected<KernelSpec> parseKernelSpecJson(StringRef Json, StringRef Kernel,
                                         StringRef Path) {
  return readSpecText<KernelSpec>(
      Json, Path, [&](SpecReader &R, const JValue &Root) {
        return R.readKernel(Root, Kernel, {});
      });
}

void writeKernelSpecJson(JsonWriter &W, const KernelSpec &K) {
  W.objectBegin();
  W.key("shapes");
  W.objectBegin();
  for (const ShapeSet &S : K.Shapes) {
    W.key(S.Name);
    W.objectBegin();
    for (auto &[Var, V] : S.Vars)
      W.field(Var, (long long)V.I);
    W.objectEnd();
  }
  W.objectEnd();

  W.key("args");
  W.objectBegin();
  for (const ArgSpec &A : K.Args) {
    W.key(A.Name);
    W.objectBegin();
    if (!A.IsBuffer) {
      W.field("value", A.ScalarValue.text());
      if (A.ScalarTypeGiven)
        W.field("dtype", dtypeName(A.ScalarType));
      W.objectEnd();
      continue;
    }
    W.field("dtype", dtypeName(A.Type));
    W.field("count", A.Count.text());
    W.field("role", roleName(A.R));
    if (A.R == Role::Input || A.R == Role::InOut)
      W.field("init", A.Init.Text);
    if (A.Rtol)
      W.field("rtol", *A.Rtol);
    if (A.Atol)
      W.field("atol", *A.Atol);
    if (A.Align)
      W.field("align", A.Align);
    W.objectEnd();
  }
  W.objectEnd();

  W.key("launch");
  W.objectBegin();
  W.key("grid");
  writeDims(W, K.Launch.Grid);
  W.key("block");
  writeDims(W, K.Launch.Block);
  W.field("shmem", K.Launch.Shmem.empty() ? std::string("0")
                                          : K.Launch.Shmem.text());
  W.objectEnd();

  if (K.Rtol >= 0 || K.Atol >= 0) {
    W.key("tolerance");
    W.objectBegin();
    if (K.Rtol >= 0)
      W.field("rtol", K.Rtol);
    if (K.Atol >= 0)
      W.field("atol", K.Atol);
    W.objectEnd();
  }
  W.field("bytes", K.Bytes ? K.Bytes->text() : std::string("auto"));
  if (K.Flops)
    W.field("flops", K.Flops->text());
  W.key("adversarial");
  W.objectBegin();
  W.key("vary");
  W.arrayBegin();
  for (const std::string &V : K.Adversarial.Vary)
    W.value(V);
  W.arrayEnd();
  W.field("misalign", K.Adversarial.Misalign);
  W.field("values", K.Adversarial.Values);
  W.objectEnd();
  if (K.Check) {
    W.key("check");
    W.objectBegin();
    W.field("validity", K.Check->Name);
    W.key("params");
    W.objectBegin();
    for (auto &[Name, Binding] : K.Check->Params)
      W.field(Name, Binding);
    W.objectEnd();
    W.objectEnd();
  }
  W.field("launch_tunable", K.LaunchIsTunable);
  if (!K.Weights.empty()) {
    W.key("weights");
    W.objectBegin();
    for (auto &[Set, Weight] : K.Weights)
      W.field(Set, Weight);
    W.objectEnd();
  }
  if (K.Capture) {
    W.key("capture");
    W.objectBegin();
    W.field("dir", K.Capture->Dir);
    W.key("sets");
    W.objectBegin();
    for (auto &[Set, Blobs] : K.Capture->Sets) {
      W.key(Set);
      W.objectBegin();
      for (auto &[Arg, Blob] : Blobs)
        W.field(Arg, Blob);
      W.objectEnd();
    }
    W.objectEnd();
    W.objectEnd();
  }
  if (!K.LaunchSpaceBlocks.empty()) {
    W.key("launch_space");
    W.objectBegin();
    W.key("block");
    W.arrayBegin();
    for (int64_t B : K.LaunchSpaceBlocks)
      W.value(B);
    W.arrayEnd();
    W.objectEnd();
  }
  W.objectEnd();
}

} // namespace astra
