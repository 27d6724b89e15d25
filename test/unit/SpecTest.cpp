#include "astra/Rewrite/Pass.h"
#include "astra/Spec/Spec.h"
#include "astra/Support/FileIO.h"
#include "astra/Support/Json.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <algorithm>

using namespace astra;
using namespace llvm;

namespace {

const char *const SiluSpec = R"J(// The example of docs/spec-format.md.
{
  "version": 1,
  "kernels": {
    "silu_and_mul": {
      "shapes": {
        "decode":  {"T": 16,   "d": 11008},
        "prefill": {"T": 4096, "d": 11008}
      },
      "args": {
        "out":   {"dtype": "bf16", "count": "T * d", "role": "output"},
        "input": {"dtype": "bf16", "count": "T * 2 * d", "role": "input", "init": "normal(0, 1)"},
        "d":     {"value": "d"},
        "eps":   {"value": "1e-6"},
      },
      "launch": {"grid": "T", "block": "min(1024, d)", "shmem": "0"},
      "tolerance": {"rtol": 1e-2, "atol": 1e-2},
      "bytes": "auto",
      "flops": "5 * T * d",
      "adversarial": {"vary": ["d"], "misalign": true, "values": true},
      "launch_tunable": false
    }
  }
}
)J";

/// Every message of a spec that must not load, joined by newlines.
std::string errorsOf(StringRef Text) {
  auto S = parseSpec(Text, "k.cu.astra.json");
  if (S)
    return "<loaded>";
  return toString(S.takeError());
}

/// A spec file with one kernel 'k' whose entry is \p Entry.
std::string withEntry(StringRef Entry) {
  return (R"({"version": 1, "kernels": {"k": )" + Entry + "}}").str();
}

/// A valid entry with a buffer 'out', an input 'in' and a scalar 'n';
/// \p Extra is spliced into args, \p Tail after launch.
std::string entry(StringRef Extra = "", StringRef Tail = "",
                  StringRef Shapes = R"({"s": {"n": 1024}})") {
  return (R"({"shapes": )" + Shapes +
          R"(, "args": {"out": {"dtype": "f32", "count": "n", "role": "output"}, )"
          R"("in": {"dtype": "f32", "count": "n"}, "n": {"value": "n"})" +
          Extra + R"J(}, "launch": {"grid": "cdiv(n, 256)", "block": 256})J" +
          Tail + "}")
      .str();
}

/// "k.cu.astra.json:L:C" of the \p Nth occurrence of \p Needle in \p Text.
std::string at(StringRef Text, StringRef Needle, unsigned Nth = 0) {
  size_t Pos = 0;
  for (unsigned I = 0;; ++I) {
    Pos = Text.find(Needle, Pos);
    if (Pos == StringRef::npos || I == Nth)
      break;
    ++Pos;
  }
  auto [Line, Col] = lineColumn(Text, Pos);
  return "k.cu.astra.json:" + std::to_string(Line) + ":" + std::to_string(Col);
}

#define EXPECT_HAS(Haystack, Needle)                                          \
  EXPECT_NE(std::string(Haystack).find(Needle), std::string::npos)            \
      << "missing: " << (Needle) << "\nin: " << (Haystack)

TEST(Spec, TheDocumentedExampleLoads) {
  auto F = parseSpec(SiluSpec, "k.cu.astra.json");
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  ASSERT_EQ(F->Kernels.size(), 1u);
  const KernelSpec &K = F->Kernels[0];
  EXPECT_EQ(K.Kernel, "silu_and_mul");
  EXPECT_EQ(K.SpecPath, "k.cu.astra.json");
  ASSERT_EQ(K.Shapes.size(), 2u);
  EXPECT_EQ(K.Shapes[0].Name, "decode");
  EXPECT_EQ(K.Shapes[1].Vars.at("T").I, 4096);
  ASSERT_EQ(K.Args.size(), 4u);
  const ArgSpec *Out = K.arg("out");
  ASSERT_TRUE(Out);
  EXPECT_TRUE(Out->IsBuffer);
  EXPECT_EQ(Out->Type, DType::BF16);
  EXPECT_EQ(Out->R, Role::Output);
  EXPECT_EQ(Out->Count.text(), "T * d");
  EXPECT_EQ(Out->Index, 0u);
  const ArgSpec *In = K.arg("input");
  ASSERT_TRUE(In);
  EXPECT_EQ(In->Init.Kind, "normal");
  EXPECT_EQ(In->Init.Text, "normal(0, 1)");
  EXPECT_EQ(In->Index, 1u);
  const ArgSpec *Eps = K.arg("eps");
  ASSERT_TRUE(Eps);
  EXPECT_FALSE(Eps->IsBuffer);
  EXPECT_FALSE(Eps->ScalarTypeGiven);
  EXPECT_EQ(Eps->ScalarValue.text(), "1e-6");
  EXPECT_DOUBLE_EQ(K.Rtol, 1e-2);
  EXPECT_FALSE(K.Bytes.has_value()); // "auto"
  ASSERT_TRUE(K.Flops.has_value());
  EXPECT_EQ(K.Adversarial.Vary, std::vector<std::string>{"d"});
  EXPECT_FALSE(K.LaunchIsTunable);
  EXPECT_EQ(F->find("silu_and_mul"), &K);
  EXPECT_EQ(F->find("other"), nullptr);

  // Derived numbers for the prefill set.
  const Env &E = K.Shapes[1].Vars;
  auto L = K.Launch.resolve(E);
  ASSERT_TRUE(bool(L)) << toString(L.takeError());
  EXPECT_EQ(L->Grid[0], 4096);
  EXPECT_EQ(L->Block[0], 1024);
  EXPECT_EQ(L->Block[1], 1);
  EXPECT_EQ(L->Shmem, 0);
  auto Bytes = K.bytesMoved(E);
  ASSERT_TRUE(bool(Bytes));
  EXPECT_EQ(*Bytes, 4096LL * 11008 * 2 + 4096LL * 2 * 11008 * 2);
}

TEST(Spec, Defaults) {
  auto F = parseSpec(withEntry(entry(
                         R"(, "idx": {"dtype": "i32", "count": "n"}, )"
                         R"("flags": {"dtype": "u8", "count": "n"}, )"
                         R"("io": {"dtype": "f16", "count": "n", "role": "inout"})")),
                     "k.cu.astra.json");
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  const KernelSpec &K = F->Kernels[0];
  // Role input, init per dtype.
  EXPECT_EQ(K.arg("in")->R, Role::Input);
  EXPECT_EQ(K.arg("in")->Init.Text, "normal(0, 1)");
  EXPECT_EQ(K.arg("idx")->Init.Text, "randint(-100, 100)");
  EXPECT_EQ(K.arg("flags")->Init.Text, "randint(0, 100)");
  EXPECT_EQ(K.arg("io")->Init.Text, "normal(0, 1)");
  EXPECT_TRUE(K.arg("out")->Init.Text.empty()); // Outputs are poisoned.
  // Alignment: the dtype's size.
  EXPECT_EQ(K.arg("io")->alignment(), 2u);
  EXPECT_EQ(K.arg("out")->alignment(), 4u);
  // Tolerance per dtype, then per kernel, then per buffer.
  EXPECT_DOUBLE_EQ(K.rtolFor(*K.arg("out")), defaultRtol(DType::F32));
  EXPECT_DOUBLE_EQ(K.atolFor(*K.arg("io")), defaultAtol(DType::F16));
  EXPECT_EQ(defaultRtol(DType::I32), 0);
  EXPECT_EQ(defaultAtol(DType::U8), 0);
  EXPECT_GT(defaultRtol(DType::BF16), defaultRtol(DType::F16));
  EXPECT_GT(defaultRtol(DType::F16), defaultRtol(DType::F32));
  EXPECT_GT(defaultRtol(DType::F32), defaultRtol(DType::F64));
  // Shmem 0, launch not tunable, adversarial on.
  EXPECT_EQ(K.Launch.Shmem.text(), "0");
  EXPECT_FALSE(K.LaunchIsTunable);
  EXPECT_TRUE(K.Adversarial.Misalign);
  EXPECT_TRUE(K.Adversarial.Values);
  EXPECT_FALSE(K.Check.has_value());
  // Bytes auto: in read once, out written once, io twice (f16).
  auto B = K.autoBytes(K.Shapes[0].Vars);
  ASSERT_TRUE(bool(B));
  EXPECT_EQ(*B, 1024 * 4 + 1024 * 4 + 1024 * 4 + 1024 * 1 + 2 * 1024 * 2);

  // Without shapes: one set "default" with no variables.
  auto G = parseSpec(
      withEntry(R"({"args": {"x": {"dtype": "f32", "count": 32}}, )"
                R"("launch": {"grid": 1, "block": [32]}})"),
      "k.cu.astra.json");
  ASSERT_TRUE(bool(G)) << toString(G.takeError());
  ASSERT_EQ(G->Kernels[0].Shapes.size(), 1u);
  EXPECT_EQ(G->Kernels[0].Shapes[0].Name, "default");
}

TEST(Spec, OverridesOfTolerance) {
  auto F = parseSpec(
      withEntry(entry(R"(, "o2": {"dtype": "f32", "count": "n", "role": "output", "rtol": 0.5, "atol": 0.25})",
                      R"(, "tolerance": {"rtol": 0.01})")),
      "k.cu.astra.json");
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  const KernelSpec &K = F->Kernels[0];
  EXPECT_DOUBLE_EQ(K.rtolFor(*K.arg("out")), 0.01);
  EXPECT_DOUBLE_EQ(K.atolFor(*K.arg("out")), defaultAtol(DType::F32));
  EXPECT_DOUBLE_EQ(K.rtolFor(*K.arg("o2")), 0.5);
  EXPECT_DOUBLE_EQ(K.atolFor(*K.arg("o2")), 0.25);
}

TEST(Spec, ErrorsNameFileLineKernelAndField) {
  std::string Text = SiluSpec;
  size_t P = Text.find("\"T * d\"");
  Text.replace(P, 7, "\"T * D\"");
  EXPECT_EQ(errorsOf(Text),
            at(Text, "\"count\"") +
                ": kernel 'silu_and_mul': args.out.count: unknown variable "
                "'D' (shape variables: T, d)");
}

TEST(Spec, EveryErrorIsReported) {
  std::string Text = withEntry(entry(
      R"(, "a": {"dtype": "float", "count": "n"}, "b": {"dtype": "f32", "count": "m"})"));
  std::string E = errorsOf(Text);
  EXPECT_HAS(E, "kernel 'k': args.a.dtype: unknown dtype the string \"float\"; "
                "did you mean 'f32'? (dtypes: f32, f64, f16, bf16, fp8_e4m3, "
                "fp8_e5m2, i8, u8, i16, u16, i32, u32, i64, u64)");
  EXPECT_HAS(E, "kernel 'k': args.b.count: unknown variable 'm' (shape "
                "variables: n)");
  EXPECT_EQ(std::count(E.begin(), E.end(), '\n'), 1) << E;
}

TEST(Spec, JsonSyntaxErrorsHaveLineAndColumn) {
  EXPECT_EQ(errorsOf("{\n  \"version\": 1,\n  \"kernels\": {\n    \"k\": {,}\n"),
            "k.cu.astra.json:4:11: invalid JSON: Missing a name for object "
            "member.");
}

TEST(Spec, UnknownKeysAreErrors) {
  std::string Text = withEntry(entry("", R"(, "tolerence": {"rtol": 1})"));
  EXPECT_EQ(errorsOf(Text),
            at(Text, "\"tolerence\"") +
                ": kernel 'k': tolerence: unknown field 'tolerence'; did you "
                "mean 'tolerance'? (fields here: shapes, args, launch, "
                "tolerance, bytes, flops, adversarial, check, launch_tunable, "
                "launch_space, weights, capture)");
  EXPECT_HAS(errorsOf(withEntry(entry(
                 R"(, "x": {"dtype": "f32", "cout": "n", "count": "n"})"))),
             "kernel 'k': args.x.cout: unknown field 'cout'; did you mean "
             "'count'? (fields here: dtype, count, role, init, rtol, atol, "
             "align)");
  EXPECT_HAS(errorsOf(R"({"version": 1, "kernel": {}})"),
             "k.cu.astra.json:1:16: kernel: unknown field 'kernel'; did you "
             "mean 'kernels'? (fields here: version, kernels)");
  EXPECT_HAS(errorsOf(withEntry(entry("", R"(, "launch_tunable": true, "launch_tunable": false)"))),
             "kernel 'k': launch_tunable: duplicate field");
  EXPECT_HAS(errorsOf(withEntry(entry("", R"(, "check": {"validity": "neighbor_sample", "parms": {}})"))),
             "check.parms: unknown field 'parms'; did you mean 'params'?");
}

TEST(Spec, TopLevelErrors) {
  EXPECT_EQ(errorsOf(R"({"version": 2, "kernels": {}})"),
            "k.cu.astra.json:1:2: version: unsupported version 2; this "
            "clang-astra reads version 1\n"
            "k.cu.astra.json:1:16: kernels: no kernels: add an entry per "
            "kernel, named as `clang-astra list` prints it");
  EXPECT_EQ(errorsOf(R"({"version": 1})"),
            "k.cu.astra.json:1:1: missing field 'kernels' (an object: kernel "
            "name -> spec)");
  EXPECT_EQ(errorsOf("[1]"),
            "k.cu.astra.json:1:1: expected an object, got an array");
  std::string Dup = R"({"kernels": {"scale<float, 2>": )" + entry() +
                    R"(, "scale<float,2>": )" + entry() + "}}";
  EXPECT_EQ(errorsOf(Dup), at(Dup, "\"scale<float,2>\"") +
                               ": kernels.scale<float,2>: kernel "
                               "'scale<float,2>' has a second entry (first: "
                               "'scale<float, 2>')");
}

TEST(Spec, ShapeErrors) {
  EXPECT_HAS(errorsOf(withEntry(entry("", "", R"({"a": {"n": 1}, "b": {"N": 2}})"))),
             "kernel 'k': shapes.b: its variables differ from shape set 'a' "
             "(every set needs the same variables): missing 'n'; extra 'N'");
  EXPECT_HAS(errorsOf(withEntry(entry("", "", R"({"a": {"n": 1.5}})"))),
             "kernel 'k': shapes.a.n: a shape variable must be an integer, "
             "got 1.5");
  EXPECT_HAS(errorsOf(withEntry(entry("", "", R"({"a": {"n": "1024"}})"))),
             "kernel 'k': shapes.a.n: a shape variable must be an integer, "
             "got the string \"1024\"");
  EXPECT_HAS(errorsOf(withEntry(entry("", "", R"({"a": {"2n": 4, "n": 4}})"))),
             "kernel 'k': shapes.a.2n: '2n' is not a valid variable name");
  EXPECT_HAS(errorsOf(withEntry(entry("", "", "{}"))),
             "kernel 'k': shapes: no shape sets; add at least one");
  EXPECT_HAS(errorsOf(withEntry(entry("", "", R"({"a": {"n": 1}, "a": {"n": 2}})"))),
             "kernel 'k': shapes.a: duplicate shape set");
  // A shape set with an error is not also reported in every field.
  std::string E = errorsOf(withEntry(entry("", "", R"({"a": {"n": "TODO"}})")));
  EXPECT_EQ(std::count(E.begin(), E.end(), '\n'), 0) << E;
  EXPECT_HAS(E, "kernel 'k': shapes.a.n: still a TODO from init-spec "
                "('TODO'): fill it in");
}

TEST(Spec, EveryExpressionUnderEveryShapeSet) {
  // Fine in set 'a', zero elements in set 'b'.
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x": {"dtype": "f32", "count": "n - 16"})", "",
                                      R"({"a": {"n": 1024}, "b": {"n": 16}})"))),
             "kernel 'k': args.x.count: 'n - 16' is 0 in shape set 'b'; a "
             "count must be positive");
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x": {"dtype": "f32", "count": "n / 2.5"})"))),
             "kernel 'k': args.x.count: in shape set 's': 'n / 2.5' is not an "
             "integer (it is 409.6)");
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x": {"dtype": "f32", "count": "n * * 2"})"))),
             "kernel 'k': args.x.count: invalid expression 'n * * 2': expected "
             "a number, a variable or '(', found '*' at column 5");
}

TEST(Spec, CountOverflowAndTheBytesItImplies) {
  std::string E = errorsOf(withEntry(entry(R"(, "x": {"dtype": "f64", "count": "n ** 4"})", "",
                                           R"({"s": {"n": 1048576}})")));
  EXPECT_HAS(E, "kernel 'k': args.x.count: in shape set 's': 'n ** 4': "
                "integer overflow");
  E = errorsOf(withEntry(entry(R"(, "x": {"dtype": "f64", "count": "n ** 3"})", "",
                               R"({"s": {"n": 1048576}})")));
  EXPECT_HAS(E, "'n ** 3' is 1152921504606846976 in shape set 's'; 'n ** 3': "
                "1152921504606846976 elements of f64 do not fit in 64-bit byte "
                "counts");
}

TEST(Spec, BuffersOfAShapeSetMustFitAGpu) {
  // 1e15 f32 elements is 3.6 PiB; 1e16 (beyond 2^53) is the same mistake
  // and gets the same error, not "not an integer".
  for (StringRef Count : {"1e15", "1e16", "2 ** 50"}) {
    std::string E = errorsOf(withEntry(entry(
        (R"(, "x": {"dtype": "f32", "count": ")" + Count + R"("})").str())));
    EXPECT_HAS(E, "kernel 'k': args: the buffers of shape set 's' take ");
    EXPECT_HAS(E, "(the largest, 'x', ");
    EXPECT_HAS(E, "more than any GPU holds (at most 1.0 TiB per shape set)");
  }
  // The sum counts, not only the largest: 3 buffers of 512 GiB.
  std::string E = errorsOf(withEntry(entry(
      R"(, "x": {"dtype": "u8", "count": "n * n * n"}, )"
      R"("y": {"dtype": "u8", "count": "n * n * n"}, )"
      R"("z": {"dtype": "u8", "count": "n * n * n"})",
      "", R"({"s": {"n": 8192}})")));
  EXPECT_HAS(E, "take 1.5 TiB (the largest, 'x', 512.0 GiB");
  // 1 TiB exactly is allowed (the other buffers are 4 B each).
  EXPECT_EQ(errorsOf(withEntry(entry(
                R"(, "x": {"dtype": "u8", "count": "2 ** 40 - 8"})", "",
                R"({"s": {"n": 1}})"))),
            "<loaded>");
}

TEST(Spec, LimitsOnSetsVariablesKernelsAndNesting) {
  std::string Sets = "{";
  for (int I = 0; I < 1025; ++I)
    Sets += (I ? ", " : "") + ("\"s" + std::to_string(I) + "\": {\"n\": 4}");
  Sets += "}";
  EXPECT_HAS(errorsOf(withEntry(entry("", "", Sets))),
             "kernel 'k': shapes: holds 1025 shape sets; an entry may hold at "
             "most 1024");
  std::string Vars = R"({"s": {"n": 4)";
  for (int I = 0; I < 256; ++I)
    Vars += ", \"v" + std::to_string(I) + "\": 1";
  Vars += "}}";
  EXPECT_HAS(errorsOf(withEntry(entry("", "", Vars))),
             "shapes.s: holds 257 variables; a shape set may hold at most 256");
  std::string Kernels = R"({"version": 1, "kernels": {)";
  for (int I = 0; I < 4097; ++I)
    Kernels += (I ? ", " : "") + ("\"k" + std::to_string(I) + "\": {}");
  Kernels += "}}";
  EXPECT_HAS(errorsOf(Kernels),
             "kernels: holds 4097 entries; a spec may hold at most 4096");
  std::string Deep = std::string(100000, '[') + std::string(100000, ']');
  // Column 95: the 63rd '[' after the 32 characters that open two
  // objects, the 65th level.
  EXPECT_EQ(errorsOf(withEntry(Deep)),
            "k.cu.astra.json:1:95: invalid JSON: arrays and objects nested "
            "deeper than 64 levels");
}

TEST(Spec, ManyShapeSetsReadInLinearTime) {
  // Each set once cost a pass over the whole text (line numbers of every
  // field): 1000 sets of a 1000-line file took seconds. Bounded here by
  // the sets being read at all within the test's time.
  std::string Sets = "{";
  for (int I = 0; I < 1024; ++I)
    Sets += (I ? ",\n" : "") + ("\"s" + std::to_string(I) + "\": {\"n\": " +
                                std::to_string(I + 1) + "}");
  Sets += "}";
  auto S = parseSpec(withEntry(entry("", "", Sets)), "k.cu.astra.json");
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_EQ(S->Kernels.front().Shapes.size(), 1024u);
}

TEST(Spec, ArgumentErrors) {
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x": {"count": "n"})"))),
             "kernel 'k': args.x: missing field 'dtype'");
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x": {"dtype": "f32"})"))),
             "kernel 'k': args.x: missing field 'count'");
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x": {})"))),
             "kernel 'k': args.x: give \"dtype\" and \"count\" for a buffer "
             "(pointer) or \"value\" for a scalar");
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x": {"value": "n", "count": "n"})"))),
             "kernel 'k': args.x.count: unknown field 'count'");
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x": {"dtype": "f32", "count": "n", "role": "out"})"))),
             "kernel 'k': args.x.role: unknown role the string \"out\" "
             "(roles: input, output, inout, scratch)");
  EXPECT_HAS(errorsOf(withEntry(entry(R"J(, "x": {"dtype": "f32", "count": "n", "role": "output", "init": "normal(0, 1)"})J"))),
             "kernel 'k': args.x.init: an output buffer is poisoned before "
             "each run, so it takes no init; use role inout if the kernel "
             "reads its initial values");
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x": {"dtype": "f32", "count": "n", "rtol": 0.1})"))),
             "kernel 'k': args.x.rtol: only compared buffers (output, inout) "
             "have a tolerance; this one is input");
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x": {"dtype": "f32", "count": "n", "role": "output", "atol": -1})"))),
             "kernel 'k': args.x.atol: expected a number >= 0, got -1");
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x": {"dtype": "f32", "count": "n", "align": 12})"))),
             "kernel 'k': args.x.align: expected a power of two between 1 and "
             "4096 (bytes), got 12");
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x": {"value": "n", "dtype": "i8"})"))),
             "kernel 'k': args.x.value: 'n' is 1024 in shape set 's'; out of "
             "range for i8");
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x": {"value": "0.5", "dtype": "i32"})"))),
             "kernel 'k': args.x.value: in shape set 's': '0.5' is not an "
             "integer (it is 0.5)");
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x": {"value": true})"))),
             "kernel 'k': args.x.value: expected an expression (a string or a "
             "number), got true");
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x y": {"value": 1})"))),
             "kernel 'k': args.x y: 'x y' is not a parameter name");
  EXPECT_HAS(errorsOf(withEntry(entry(R"(, "x": {"dtype": "f32", "count": "TODO"})"))),
             "kernel 'k': args.x.count: still a TODO from init-spec ('TODO'): "
             "fill it in");
}

TEST(Spec, GeneratorErrors) {
  auto Gen = [](StringRef DType, StringRef Init, StringRef Count = "n") {
    return errorsOf(withEntry(entry((R"(, "x": {"dtype": ")" + DType +
                                     R"(", "count": ")" + Count +
                                     R"(", "init": ")" + Init + R"("})")
                                        .str())));
  };
  EXPECT_HAS(Gen("f32", "gauss(0, 1)"),
             "kernel 'k': args.x.init: invalid generator 'gauss(0, 1)': "
             "unknown generator 'gauss' (generators: normal(mean, std), "
             "uniform(lo, hi), randint(lo, hi), arange, permutation(n), "
             "sorted(lo, hi), constant(v), csr_rowptr(rows, avg_degree, "
             "max_degree), indices_into(n), csr_colind(rowptr_arg, n), "
                "captured(<generator>))");
  EXPECT_HAS(Gen("f32", "normal(0)"),
             "args.x.init: invalid generator 'normal(0)': 'normal' takes 2 "
             "arguments (mean, std), got 1");
  EXPECT_HAS(Gen("f32", "arange(3)"),
             "args.x.init: invalid generator 'arange(3)': 'arange' takes no "
             "arguments");
  EXPECT_HAS(Gen("f32", "uniform(0, m)"),
             "args.x.init: unknown variable 'm' (shape variables: n)");
  EXPECT_HAS(Gen("f32", "uniform(1, 0)"),
             "args.x.init: 'uniform(1, 0)' in shape set 's': lo (1) is greater "
             "than hi (0)");
  EXPECT_HAS(Gen("f32", "normal(0, -1)"),
             "args.x.init: 'normal(0, -1)' in shape set 's': std is -1; it "
             "cannot be negative");
  EXPECT_HAS(Gen("u8", "randint(-1, 10)"),
             "args.x.init: 'randint(-1, 10)' in shape set 's': a value -1 does "
             "not fit in u8 (0 to 255)");
  EXPECT_HAS(Gen("i32", "randint(0, 1.5)"),
             "args.x.init: 'randint(0, 1.5)' in shape set 's': hi must be an "
             "integer, got 1.5");
  EXPECT_HAS(Gen("i32", "uniform(0, 1)"),
             "uniform draws reals; use randint(lo, hi) for i32");
  EXPECT_HAS(Gen("f32", "indices_into(n)"),
             "args.x.init: indices_into draws indices; it needs an integer "
             "dtype, not f32");
  EXPECT_HAS(Gen("i32", "permutation(100)"),
             "'permutation(100)' in shape set 's': the buffer holds 1024 "
             "elements but a permutation of 100 values has only 100 distinct "
             "ones");
  EXPECT_HAS(Gen("i8", "indices_into(n)"),
             "'indices_into(n)' in shape set 's': a value 1023 does not fit in "
             "i8 (-128 to 127)");
  EXPECT_HAS(Gen("i8", "arange"),
             "'arange' in shape set 's': a value 1023 does not fit in i8");
  EXPECT_HAS(Gen("i32", "csr_rowptr(n, 4, 2)", "n + 1"),
             "'csr_rowptr(n, 4, 2)' in shape set 's': max_degree (2) is "
             "smaller than avg_degree (4)");
  EXPECT_HAS(Gen("i32", "csr_rowptr(n, 4, 8)"),
             "'csr_rowptr(n, 4, 8)' in shape set 's': the buffer holds 1024 "
             "elements but a row pointer of 1024 rows has rows + 1 = 1025");
  EXPECT_HAS(Gen("i32", "csr_colind(rp, n)"),
             "args.x.init: csr_colind refers to 'rp', which is not an "
             "argument of this kernel");
  EXPECT_HAS(Gen("i32", "csr_colind(in, n)"),
             "csr_colind refers to 'in', which is not an input buffer drawn "
             "by csr_rowptr(rows, avg_degree, max_degree)");
  EXPECT_HAS(Gen("i32", "csr_colind(n, n)"),
             "csr_colind refers to 'n', which is a scalar");
  EXPECT_HAS(Gen("i32", "csr_colind(2 * n, n)"),
             "the first argument of csr_colind names the csr_rowptr argument; "
             "'2 * n' is not an argument name");
  EXPECT_HAS(Gen("f32", "TODO: pick"),
             "args.x.init: still a TODO from init-spec ('TODO: pick')");
}

TEST(Spec, CsrGeneratorsAgree) {
  const char *Csr = R"J(, "rowptr": {"dtype": "i64", "count": "rows + 1", "init": "csr_rowptr(rows, 10, 40)"},
      "col": {"dtype": "i32", "count": "rows * 10", "init": "csr_colind(rowptr, nodes)"})J";
  auto F = parseSpec(withEntry(entry(Csr, "", R"({"s": {"n": 64, "rows": 1000, "nodes": 5000}})")),
                     "k.cu.astra.json");
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  const ArgSpec *Col = F->Kernels[0].arg("col");
  EXPECT_EQ(Col->Init.Kind, "csr_colind");
  EXPECT_EQ(Col->Init.RefArg, "rowptr");
  ASSERT_EQ(Col->Init.Args.size(), 1u);
  EXPECT_EQ(Col->Init.Args[0].text(), "nodes");
  EXPECT_TRUE(Col->Init.isStructural());

  // The column count must match the row pointer's last entry.
  std::string Bad = Csr;
  Bad.replace(Bad.find("rows * 10"), 9, "rows * 9");
  EXPECT_HAS(errorsOf(withEntry(entry(Bad, "", R"({"s": {"n": 64, "rows": 1000, "nodes": 5000}})"))),
             "'csr_colind(rowptr, nodes)' in shape set 's': the buffer holds "
             "9000 elements but 'rowptr' has rows * avg_degree = 10000 "
             "entries");
  // Distinct columns per row need n >= max_degree.
  EXPECT_HAS(errorsOf(withEntry(entry(Csr, "", R"({"s": {"n": 64, "rows": 1000, "nodes": 20}})"))),
             "n (20) is smaller than max_degree (40) of 'rowptr': a row "
             "cannot have that many distinct columns");
}

TEST(Spec, LaunchErrors) {
  auto Launch = [](StringRef L, StringRef Shapes = R"({"s": {"n": 1024}})") {
    std::string E = entry("", "", Shapes);
    size_t P = E.find(R"("launch": )");
    E = E.substr(0, P) + R"("launch": )" + L.str() + "}";
    return errorsOf(withEntry(E));
  };
  EXPECT_HAS(Launch(R"({"grid": 1, "block": "2 * n"})"),
             "kernel 'k': launch.block: in shape set 's': block.x = 2 * n = "
             "2048; CUDA allows at most 1024");
  EXPECT_HAS(Launch(R"({"grid": 1, "block": [32, 32, 2]})"),
             "kernel 'k': launch.block: in shape set 's': block (32, 32, 2) "
             "has 2048 threads; CUDA allows at most 1024");
  EXPECT_HAS(Launch(R"({"grid": ["n", "n - 1024"], "block": 32})"),
             "kernel 'k': launch.grid: in shape set 's': grid.y = n - 1024 = "
             "0; must be at least 1");
  EXPECT_HAS(Launch(R"({"grid": [1, 70000], "block": 32})"),
             "grid.y = 70000 = 70000; CUDA allows at most 65535");
  EXPECT_HAS(Launch(R"({"grid": [1, 1, 1, 1], "block": 32})"),
             "kernel 'k': launch.grid: expected 1 to 3 dimensions [x, y, z], "
             "got 4");
  EXPECT_HAS(Launch(R"({"grid": 1})"),
             "kernel 'k': launch: missing field 'block'");
  EXPECT_HAS(Launch(R"({"grid": 1, "block": 32, "shmem": "n * 1024"})"),
             "kernel 'k': launch.shmem: in shape set 's': shmem = n * 1024 = "
             "1048576 bytes; must be between 0 and 232448 (227 KiB)");
  EXPECT_HAS(Launch(R"({"grid": 1, "block": [32, "N"]})"),
             "kernel 'k': launch.block[1]: unknown variable 'N' (shape "
             "variables: n)");
  EXPECT_HAS(errorsOf(withEntry(R"({"args": {}})")),
             "kernel 'k': missing field 'launch'");
}

TEST(Spec, LaunchSpace) {
  auto F = parseSpec(withEntry(entry("", R"(, "launch_space": {"block": [256, 100, 256]})")),
                     "k.cu.astra.json");
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  EXPECT_EQ(F->Kernels[0].LaunchSpaceBlocks, (std::vector<int64_t>{256, 100}));
  EXPECT_HAS(errorsOf(withEntry(entry("", R"(, "launch_space": {"block": [0]})"))),
             "kernel 'k': launch_space.block[0]: expected a block size from 1 "
             "to 1024");
  EXPECT_HAS(errorsOf(withEntry(entry("", R"(, "launch_space": {"block": [2048]})"))),
             "launch_space.block[0]: expected a block size from 1 to 1024");
  EXPECT_HAS(errorsOf(withEntry(entry("", R"(, "launch_space": {"block": []})"))),
             "kernel 'k': launch_space.block: expected a non-empty array of "
             "block sizes");
  EXPECT_HAS(errorsOf(withEntry(entry("", R"(, "launch_space": {})"))),
             "kernel 'k': launch_space: missing field 'block'");
  EXPECT_HAS(errorsOf(withEntry(entry("", R"(, "launch_space": {"grid": 1, "block": [32]})"))),
             "launch_space.grid: unknown field 'grid'");
}

TEST(Spec, AdversarialAndCheckErrors) {
  EXPECT_HAS(errorsOf(withEntry(entry("", R"(, "adversarial": {"vary": ["N"], "misalign": 1})"))),
             "kernel 'k': adversarial.vary[0]: unknown shape variable 'N' "
             "(shape variables: n)");
  EXPECT_HAS(errorsOf(withEntry(entry("", R"(, "adversarial": {"misalign": 1})"))),
             "kernel 'k': adversarial.misalign: expected true or false, got a "
             "number");
  EXPECT_HAS(errorsOf(withEntry(entry("", R"(, "check": {"validity": "topk"})"))),
             "kernel 'k': check.validity: unknown validity check 'topk' "
             "(checks: neighbor_sample)");
  // Integer buffers for the graph, the seeds and the sample.
  const char *Graph =
      R"(, "rp": {"dtype": "i64", "count": "n"}, "ci": {"dtype": "i64", "count": "n"},)"
      R"( "nd": {"dtype": "i32", "count": "n"}, "smp": {"dtype": "i32", "count": "n", "role": "output"})";
  auto Check = [&](StringRef Params) {
    return withEntry(entry(Graph, (R"(, "check": {"validity": "neighbor_sample", "params": {)" +
                                   Params + "}}")
                                      .str()));
  };
  EXPECT_HAS(errorsOf(Check(R"("rowptr": "rp", "col": "ci", "nodes": "nd", "out": "n", "fanout": "4")")),
             "kernel 'k': check.params.out: 'n' is not a buffer argument of "
             "this kernel");
  EXPECT_HAS(errorsOf(Check(R"("rowptr": "rp", "col": "ci", "nodes": "nd", "out": "out", "fanout": "4")")),
             "kernel 'k': check.params.out: 'out' is f32; neighbor_sample "
             "needs an integer buffer here");
  EXPECT_HAS(errorsOf(Check(R"("rowptr": "rp", "col": "ci", "nodes": "nd", "out": "smp")")),
             "kernel 'k': check.params: missing parameter 'fanout' (neighbors "
             "to sample per seed)");
  EXPECT_HAS(errorsOf(Check(R"("rowptr": "rp", "col": "ci", "nodes": "nd", "out": "smp", "fanout": "nd")")),
             "check.params.fanout: 'nd' is a buffer; expected a scalar "
             "argument or an expression");
  EXPECT_HAS(errorsOf(Check(R"("rowptr": "rp", "col": "ci", "nodes": "nd", "out": "smp", "fanout": "F")")),
             "check.params.fanout: unknown variable 'F' (shape variables: n)");
  auto F = parseSpec(Check(R"J("rowptr": "rp", "col": "ci", "nodes": "nd", "out": "smp", "fanout": "min(n, 15)")J"),
                     "k.cu.astra.json");
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  ASSERT_TRUE(F->Kernels[0].Check.has_value());
  EXPECT_EQ(F->Kernels[0].Check->Name, "neighbor_sample");
  EXPECT_EQ(F->Kernels[0].Check->param("fanout"), "min(n, 15)");
  EXPECT_EQ(F->Kernels[0].Check->param("nodes"), "nd");
  EXPECT_EQ(F->Kernels[0].Check->param("bogus"), "");
  // A scalar argument may stand for an expression parameter.
  EXPECT_EQ(errorsOf(Check(R"("rowptr": "rp", "col": "ci", "nodes": "nd", "out": "smp", "fanout": "n")")),
            "<loaded>");
}

TEST(Spec, BytesAndFlops) {
  auto F = parseSpec(withEntry(entry("", R"(, "bytes": "8 * n", "flops": "2.5 * n")")),
                     "k.cu.astra.json");
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  auto B = F->Kernels[0].bytesMoved(F->Kernels[0].Shapes[0].Vars);
  ASSERT_TRUE(bool(B));
  EXPECT_EQ(*B, 8192);
  EXPECT_HAS(errorsOf(withEntry(entry("", R"(, "bytes": "n - 2048")"))),
             "kernel 'k': bytes: 'n - 2048' is -1024 in shape set 's'; bytes "
             "moved cannot be negative");
  EXPECT_HAS(errorsOf(withEntry(entry("", R"(, "flops": "-n")"))),
             "kernel 'k': flops: '-n' is -1024 in shape set 's'; flops cannot "
             "be negative");
}

/// The JSON of one kernel entry, as the job ships it.
std::string writeEntry(const KernelSpec &K) {
  JsonWriter W;
  writeKernelSpecJson(W, K);
  return W.str();
}

TEST(Spec, RoundTripThroughJson) {
  const char *Csr = R"J(, "rowptr": {"dtype": "i64", "count": "rows + 1", "init": "csr_rowptr(rows, 10, 40)"},
      "col": {"dtype": "i32", "count": "rows * 10", "init": "csr_colind(rowptr, nodes)", "align": 16},
      "io": {"dtype": "bf16", "count": "n", "role": "inout", "rtol": 0.125, "atol": 1e-3},
      "tmp": {"dtype": "u8", "count": "n", "role": "scratch"},
      "smp": {"dtype": "i32", "count": "n", "role": "output"},
      "eps": {"value": "1e-6", "dtype": "f32"})J";
  std::string Tail =
      R"(, "tolerance": {"atol": 0.001}, "bytes": "4 * n", "flops": "n * rows",)"
      R"( "adversarial": {"vary": ["n", "rows"], "misalign": false, "values": false},)"
      R"( "check": {"validity": "neighbor_sample", "params": {"rowptr": "rowptr", "col": "col", "nodes": "col", "out": "smp", "fanout": "n"}},)"
      R"( "launch_tunable": true, "launch_space": {"block": [128, 64]})";
  std::string Text = withEntry(entry(Csr, Tail,
                                     R"({"small": {"n": 64, "rows": 100, "nodes": 500}, )"
                                     R"("large": {"n": 4096, "rows": 100000, "nodes": 500000}})"));
  size_t P = Text.find(R"("block": 256)");
  Text.replace(P, 12, R"("block": [32, 8], "shmem": "n * 4")");
  auto F = parseSpec(Text, "k.cu.astra.json");
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  const KernelSpec &K = F->Kernels[0];

  std::string Json = writeEntry(K);
  auto Back = parseKernelSpecJson(Json, "k", "job.json");
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError()) << "\n" << Json;
  // Writing the parsed copy gives the same text: nothing was lost.
  EXPECT_EQ(writeEntry(*Back), Json);
  EXPECT_EQ(Back->Kernel, "k");
  EXPECT_EQ(Back->SpecPath, "job.json");
  ASSERT_EQ(Back->Shapes.size(), 2u);
  EXPECT_EQ(Back->Shapes[1].Name, "large");
  EXPECT_EQ(Back->Shapes[1].Vars.at("rows").I, 100000);
  ASSERT_EQ(Back->Args.size(), K.Args.size());
  for (size_t I = 0; I < K.Args.size(); ++I) {
    const ArgSpec &A = K.Args[I], &B = Back->Args[I];
    SCOPED_TRACE(A.Name);
    EXPECT_EQ(A.Name, B.Name);
    EXPECT_EQ(A.Index, B.Index);
    EXPECT_EQ(A.IsBuffer, B.IsBuffer);
    EXPECT_EQ(A.Type, B.Type);
    EXPECT_EQ(A.Count.text(), B.Count.text());
    EXPECT_EQ(A.R, B.R);
    EXPECT_EQ(A.Init.Text, B.Init.Text);
    EXPECT_EQ(A.Init.RefArg, B.Init.RefArg);
    EXPECT_EQ(A.Rtol, B.Rtol);
    EXPECT_EQ(A.Atol, B.Atol);
    EXPECT_EQ(A.Align, B.Align);
    EXPECT_EQ(A.ScalarValue.text(), B.ScalarValue.text());
    EXPECT_EQ(A.ScalarType, B.ScalarType);
    EXPECT_EQ(A.ScalarTypeGiven, B.ScalarTypeGiven);
  }
  for (unsigned D = 0; D < 3; ++D) {
    EXPECT_EQ(K.Launch.Grid[D].text(), Back->Launch.Grid[D].text());
    EXPECT_EQ(K.Launch.Block[D].text(), Back->Launch.Block[D].text());
  }
  EXPECT_EQ(Back->Launch.Block[1].text(), "8");
  EXPECT_EQ(Back->Launch.Shmem.text(), "n * 4");
  EXPECT_EQ(Back->Rtol, K.Rtol);
  EXPECT_EQ(Back->Atol, 0.001);
  EXPECT_EQ(Back->Bytes->text(), "4 * n");
  EXPECT_EQ(Back->Flops->text(), "n * rows");
  EXPECT_EQ(Back->Adversarial.Vary, K.Adversarial.Vary);
  EXPECT_FALSE(Back->Adversarial.Misalign);
  EXPECT_FALSE(Back->Adversarial.Values);
  ASSERT_TRUE(Back->Check.has_value());
  EXPECT_EQ(Back->Check->Params, K.Check->Params);
  EXPECT_TRUE(Back->LaunchIsTunable);
  EXPECT_EQ(Back->LaunchSpaceBlocks, (std::vector<int64_t>{128, 64}));

  // Defaults are written out, so the receiving side needs none of ours.
  EXPECT_NE(Json.find(R"J("init": "normal(0, 1)")J"), std::string::npos) << Json;
  EXPECT_NE(Json.find(R"("bytes": "4 * n")"), std::string::npos);

  // The round trip validates as strictly as a file.
  auto Bad = parseKernelSpecJson(R"({"launch": {"grid": 1, "block": 1}, "bogus": 1})", "k");
  ASSERT_FALSE(bool(Bad));
  EXPECT_EQ(toString(Bad.takeError()),
            "<spec>:1:37: kernel 'k': bogus: unknown field 'bogus' (fields "
            "here: shapes, args, launch, tolerance, bytes, flops, "
            "adversarial, check, launch_tunable, launch_space, weights, "
            "capture)");
}

TEST(Spec, FieldLocationsForLaterChecks) {
  auto F = parseSpec(SiluSpec, "k.cu.astra.json");
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  const KernelSpec &K = F->Kernels[0];
  EXPECT_EQ(K.where("args.out.dtype"),
            at(SiluSpec, "\"dtype\"") +
                ": kernel 'silu_and_mul': args.out.dtype: ");
  // A field that is not written falls back to its parent.
  EXPECT_EQ(K.where("args.d.dtype"),
            at(SiluSpec, "\"d\":     {") + ": kernel 'silu_and_mul': args.d.dtype: ");
  EXPECT_EQ(K.where(""), at(SiluSpec, "\"silu_and_mul\"") +
                             ": kernel 'silu_and_mul': ");
}

TEST(Spec, KernelNamesCompareWithoutWhitespace) {
  EXPECT_TRUE(sameKernelName("scale<float, 2>", "scale<float,2>"));
  EXPECT_TRUE(sameKernelName("ns::k", " ns::k "));
  EXPECT_FALSE(sameKernelName("scale<float, 2>", "scale<float, 3>"));
  EXPECT_FALSE(sameKernelName("k", "k2"));
}

TEST(Spec, PassOptionsFindTheKernelsSpec) {
  std::string Text = R"({"kernels": {"a": )" + entry() + R"(, "scale<float, 2>": )" +
                     entry() + "}}";
  auto F = parseSpec(Text, "k.cu.astra.json");
  ASSERT_TRUE(bool(F)) << toString(F.takeError());
  PassOptions PO;
  EXPECT_EQ(PO.specFor("a"), nullptr);
  PO.Specs = &*F;
  EXPECT_EQ(PO.specFor("a"), &F->Kernels[0]);
  EXPECT_EQ(PO.specFor("scale"), &F->Kernels[1]); // Template: its instantiation.
  EXPECT_EQ(PO.specFor("sca"), nullptr);
  EXPECT_EQ(PO.specFor("b"), nullptr);
  PO.Spec = &F->Kernels[1];
  EXPECT_EQ(PO.specFor("a"), &F->Kernels[1]); // An explicit Spec wins.
}

TEST(Spec, LoadSpecForPointsToInitSpec) {
  SmallString<128> Dir;
  ASSERT_FALSE(sys::fs::createUniqueDirectory("astra-spec", Dir));
  SmallString<128> Cu(Dir);
  sys::path::append(Cu, "k.cu");
  auto S = loadSpecFor(Cu, "");
  ASSERT_FALSE(bool(S));
  EXPECT_EQ(toString(S.takeError()),
            "no spec at " + std::string(Cu) + ".astra.json; run `clang-astra "
            "init-spec " + std::string(Cu) + " --kernel <name>` to draft one");
  ASSERT_FALSE(bool(writeFileAtomically(specPathFor(Cu), SiluSpec)));
  auto Loaded = loadSpecFor(Cu, "");
  ASSERT_TRUE(bool(Loaded)) << toString(Loaded.takeError());
  EXPECT_EQ(Loaded->Path, std::string(Cu) + ".astra.json");
  EXPECT_EQ(Loaded->Kernels[0].SpecPath, Loaded->Path);
  // An explicit spec is used even when one exists beside the file.
  auto Missing = loadSpecFor(Cu, (Dir + "/other.json").str());
  ASSERT_FALSE(bool(Missing));
  EXPECT_NE(toString(Missing.takeError()).find("other.json"), std::string::npos);
  sys::fs::remove_directories(Dir);
}

TEST(Spec, DTypeHelpers) {
  for (StringRef N : {"f32", "f64", "f16", "bf16", "fp8_e4m3", "fp8_e5m2", "i8",
                      "u8", "i16", "u16", "i32", "u32", "i64", "u64"}) {
    auto T = parseDType(N);
    ASSERT_TRUE(T.has_value()) << N.str();
    EXPECT_EQ(dtypeName(*T), N);
  }
  EXPECT_FALSE(parseDType("float").has_value());
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::FP8E4M3), 1u);
  EXPECT_EQ(dtypeSize(DType::U64), 8u);
  EXPECT_TRUE(isFloating(DType::FP8E5M2));
  EXPECT_FALSE(isFloating(DType::I8));
  EXPECT_FALSE(isSigned(DType::U16));
  EXPECT_EQ(dtypeMax(DType::U8), 255);
  EXPECT_EQ(dtypeMin(DType::I16), -32768);
  EXPECT_EQ(roleName(Role::InOut), "inout");
  EXPECT_EQ(parseRole("scratch"), Role::Scratch);
  EXPECT_FALSE(parseRole("in").has_value());
}

} // namespace
