#include "astra/Spec/Expr.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace astra;
using namespace llvm;

namespace {

Env env(std::initializer_list<std::pair<const char *, int64_t>> Vars) {
  Env E;
  for (auto &[K, V] : Vars)
    E[K] = Value::ofInt(V);
  return E;
}

/// Parses and evaluates; fails the test on any error.
Value eval(StringRef Text, const Env &E = {}) {
  auto X = SpecExpr::parse(Text);
  if (!X) {
    ADD_FAILURE() << Text.str() << ": " << toString(X.takeError());
    return {};
  }
  auto V = X->eval(E);
  if (!V) {
    ADD_FAILURE() << Text.str() << ": " << toString(V.takeError());
    return {};
  }
  return *V;
}

int64_t evalI(StringRef Text, const Env &E = {}) {
  Value V = eval(Text, E);
  EXPECT_TRUE(V.IsInt) << Text.str() << " gave a real " << V.D;
  return V.I;
}

/// The parse error of \p Text.
std::string parseError(StringRef Text) {
  auto X = SpecExpr::parse(Text);
  if (X)
    return "<parsed>";
  return toString(X.takeError());
}

/// The evaluation error of \p Text (which must parse).
std::string evalError(StringRef Text, const Env &E = {}) {
  auto X = SpecExpr::parse(Text);
  if (!X)
    return "<parse error: " + toString(X.takeError()) + ">";
  auto V = X->eval(E);
  if (V)
    return "<value " + V->str() + ">";
  return toString(V.takeError());
}

TEST(SpecExpr, IntegerArithmeticAndPrecedence) {
  Env E = env({{"T", 16}, {"d", 11008}});
  EXPECT_EQ(evalI("T * 2 * d", E), 16 * 2 * 11008);
  EXPECT_EQ(evalI("1 + 2 * 3"), 7);
  EXPECT_EQ(evalI("(1 + 2) * 3"), 9);
  EXPECT_EQ(evalI("10 - 4 - 3"), 3);   // Left-associative.
  EXPECT_EQ(evalI("100 / 10 / 5"), 2); // Left-associative.
  EXPECT_EQ(evalI("-3 + 5"), 2);
  EXPECT_EQ(evalI("--3"), 3);
  EXPECT_EQ(evalI("+7"), 7);
}

TEST(SpecExpr, DivisionIsCIntegerDivision) {
  EXPECT_EQ(evalI("7 / 2"), 3);
  EXPECT_EQ(evalI("-7 / 2"), -3); // Truncates toward zero, as in CUDA C++.
  EXPECT_EQ(evalI("7 % 3"), 1);
  EXPECT_EQ(evalI("-7 % 3"), -1);
  EXPECT_EQ(evalI("(n + 255) / 256", env({{"n", 1000}})), 4);
}

TEST(SpecExpr, RealsWhereAnyOperandIsReal) {
  EXPECT_FALSE(eval("1e-6").IsInt);
  EXPECT_DOUBLE_EQ(eval("1e-6").D, 1e-6);
  EXPECT_DOUBLE_EQ(eval("7 / 2.0").D, 3.5);
  EXPECT_DOUBLE_EQ(eval("T * 0.5", env({{"T", 3}})).D, 1.5);
  EXPECT_DOUBLE_EQ(eval(".25 + 1").D, 1.25);
  EXPECT_DOUBLE_EQ(eval("7.5 % 2").D, 1.5);
  EXPECT_DOUBLE_EQ(eval("2.5E+2").D, 250.0);
}

TEST(SpecExpr, PowerBindsTighterThanUnaryMinusAndGroupsRight) {
  EXPECT_EQ(evalI("-2 ** 2"), -4);
  EXPECT_EQ(evalI("2 ** 3 ** 2"), 512);
  EXPECT_EQ(evalI("(-2) ** 3"), -8);
  EXPECT_EQ(evalI("2 * 3 ** 2"), 18);
  Value Half = eval("2 ** -1");
  EXPECT_FALSE(Half.IsInt);
  EXPECT_DOUBLE_EQ(Half.D, 0.5);
  EXPECT_EQ(evalI("pow(3, 4)"), 81);
  EXPECT_EQ(evalI("0 ** 0"), 1);
}

TEST(SpecExpr, Functions) {
  EXPECT_EQ(evalI("min(1024, d)", env({{"d", 11008}})), 1024);
  EXPECT_EQ(evalI("max(3, 9, 4)"), 9);
  EXPECT_EQ(evalI("min(5)"), 5);
  Value Mixed = eval("min(2, 1.5)");
  EXPECT_FALSE(Mixed.IsInt);
  EXPECT_DOUBLE_EQ(Mixed.D, 1.5);
  EXPECT_EQ(evalI("cdiv(1000, 256)"), 4);
  EXPECT_EQ(evalI("cdiv(1024, 256)"), 4);
  EXPECT_EQ(evalI("cdiv(-7, 2)"), -3); // Ceiling: -3.5 -> -3.
  EXPECT_EQ(evalI("cdiv(7, -2)"), -3);
  EXPECT_EQ(evalI("align(1000, 256)"), 1024);
  EXPECT_EQ(evalI("align(1024, 256)"), 1024);
  EXPECT_EQ(evalI("floor(2.7)"), 2);
  EXPECT_EQ(evalI("ceil(2.1)"), 3);
  EXPECT_EQ(evalI("floor(-2.5)"), -3);
  EXPECT_EQ(evalI("floor(7)"), 7);
  EXPECT_DOUBLE_EQ(eval("sqrt(2)").D, std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(eval("log2(1024)").D, 10.0);
  EXPECT_EQ(evalI("floor(log2(1000))"), 9);
  EXPECT_EQ(evalI("abs(-5)"), 5);
  EXPECT_DOUBLE_EQ(eval("abs(-2.5)").D, 2.5);
  EXPECT_EQ(evalI("min (1, 2)"), 1); // Space before '('.
}

TEST(SpecExpr, IntegerOverflowIsAnError) {
  EXPECT_EQ(evalError("9223372036854775807 + 1"),
            "'9223372036854775807 + 1': integer overflow: "
            "9223372036854775807 + 1 does not fit in 64 bits");
  EXPECT_EQ(evalError("a * b", env({{"a", int64_t(1) << 40},
                                    {"b", int64_t(1) << 30}})),
            "'a * b': integer overflow: 1099511627776 * 1073741824 does not "
            "fit in 64 bits");
  EXPECT_NE(evalError("2 ** 63").find("integer overflow"), std::string::npos);
  EXPECT_EQ(evalI("2 ** 62"), int64_t(1) << 62);
  EXPECT_NE(evalError("-9223372036854775807 - 2").find("integer overflow"),
            std::string::npos);
  EXPECT_NE(evalError("abs(-9223372036854775807 - 1)").find("overflow"),
            std::string::npos);
  EXPECT_NE(evalError("-(-9223372036854775807 - 1)").find("overflow"),
            std::string::npos);
  EXPECT_NE(evalError("(-9223372036854775807 - 1) / -1").find("overflow"),
            std::string::npos);
  EXPECT_NE(evalError("align(9223372036854775807, 2)").find("overflow"),
            std::string::npos);
  EXPECT_EQ(parseError("99999999999999999999"),
            "invalid expression '99999999999999999999': integer "
            "'99999999999999999999' does not fit in 64 bits at column 1");
}

TEST(SpecExpr, DomainErrors) {
  EXPECT_EQ(evalError("T / (d - d)", env({{"T", 1}, {"d", 2}})),
            "'T / (d - d)': division by zero");
  EXPECT_EQ(evalError("5 % 0"), "'5 % 0': remainder by zero");
  EXPECT_EQ(evalError("1.0 / 0"), "'1.0 / 0': division by zero");
  EXPECT_EQ(evalError("cdiv(5, 0)"), "'cdiv(5, 0)': division by zero");
  EXPECT_EQ(evalError("sqrt(-1)"), "'sqrt(-1)': sqrt of a negative number (-1)");
  EXPECT_EQ(evalError("log2(0)"),
            "'log2(0)': log2 of a number that is not positive (0)");
  EXPECT_EQ(evalError("align(10, 0)"),
            "'align(10, 0)': align(a, b) needs a positive b, got 0");
  EXPECT_EQ(evalError("align(1.5, 2)"), "'align(1.5, 2)': align(a, b) needs integers");
  EXPECT_EQ(evalError("0 ** -1"), "'0 ** -1': 0 raised to a negative power");
  EXPECT_EQ(evalError("(-8) ** 0.5"),
            "'(-8) ** 0.5': a negative number raised to a fractional power");
  EXPECT_EQ(evalError("1e308 * 10"), "'1e308 * 10': the result is not a finite number");
  EXPECT_EQ(evalError("floor(1e30)"),
            "'floor(1e30)': floor(...) = 1e+30 does not fit in a 64-bit integer");
}

TEST(SpecExpr, UnknownVariableNamesTheKnownOnes) {
  EXPECT_EQ(evalError("T * D", env({{"T", 1}, {"d", 2}})),
            "'T * D': unknown variable 'D' (variables: T, d)");
  EXPECT_EQ(evalError("n"), "'n': unknown variable 'n' (variables: none)");
}

TEST(SpecExpr, ParseErrorsSayWhere) {
  EXPECT_EQ(parseError("T * * d"),
            "invalid expression 'T * * d': expected a number, a variable or "
            "'(', found '*' at column 5");
  EXPECT_EQ(parseError("min(a, b"),
            "invalid expression 'min(a, b': expected ',' or ')' in the "
            "arguments of 'min' at column 9");
  EXPECT_EQ(parseError("(1 + 2"),
            "invalid expression '(1 + 2': expected ')' at column 7");
  EXPECT_EQ(parseError("1 + 2)"),
            "invalid expression '1 + 2)': unbalanced ')' at column 6");
  EXPECT_EQ(parseError("T d"),
            "invalid expression 'T d': expected an operator or the end, found "
            "'d' at column 3");
  EXPECT_EQ(parseError(""), "invalid expression '': empty expression at column 1");
  EXPECT_EQ(parseError("   "),
            "invalid expression '   ': empty expression at column 4");
  EXPECT_EQ(parseError("1e"),
            "invalid expression '1e': expected digits in the exponent at column 3");
  EXPECT_EQ(parseError("3d"),
            "invalid expression '3d': unexpected 'd' after a number at column 2");
  EXPECT_EQ(parseError("T +"),
            "invalid expression 'T +': expected a number, a variable or '(', "
            "found the end at column 4");
  EXPECT_EQ(parseError("T $ 2"),
            "invalid expression 'T $ 2': expected an operator or the end, "
            "found '$' at column 3");
  EXPECT_EQ(parseError("ceildiv(n, 4)"),
            "invalid expression 'ceildiv(n, 4)': unknown function 'ceildiv' "
            "(functions: min, max, cdiv, floor, ceil, sqrt, log2, pow, abs, "
            "align) at column 1");
  EXPECT_EQ(parseError("cdiv(n)"),
            "invalid expression 'cdiv(n)': 'cdiv' takes 2 arguments, got 1 at "
            "column 1");
  EXPECT_EQ(parseError("sqrt(1, 2)"),
            "invalid expression 'sqrt(1, 2)': 'sqrt' takes 1 argument, got 2 "
            "at column 1");
  EXPECT_EQ(parseError("max()"),
            "invalid expression 'max()': 'max' takes at least 1 argument, got "
            "0 at column 1");
}

TEST(SpecExpr, EvalIntRequiresAnInteger) {
  auto X = SpecExpr::parse("1.5 * T");
  ASSERT_TRUE(bool(X));
  auto V = X->evalInt(env({{"T", 3}}));
  ASSERT_FALSE(bool(V));
  EXPECT_EQ(toString(V.takeError()), "'1.5 * T' is not an integer (it is 4.5)");
  // A real with an exact integer value is accepted.
  auto M = SpecExpr::parse("1e6");
  ASSERT_TRUE(bool(M));
  auto MV = M->evalInt({});
  ASSERT_TRUE(bool(MV));
  EXPECT_EQ(*MV, 1000000);
  auto S = SpecExpr::parse("sqrt(16)");
  ASSERT_TRUE(bool(S));
  auto SV = S->evalInt({});
  ASSERT_TRUE(bool(SV));
  EXPECT_EQ(*SV, 4);
}

TEST(SpecExpr, VariablesInOrderOfAppearanceOnce) {
  auto X = SpecExpr::parse("T * d + min(d, H) - T");
  ASSERT_TRUE(bool(X));
  EXPECT_EQ(X->variables(), (std::vector<std::string>{"T", "d", "H"}));
  // A variable may share a function's name when it is not called.
  auto Y = SpecExpr::parse("min + 1");
  ASSERT_TRUE(bool(Y));
  EXPECT_EQ(Y->variables(), (std::vector<std::string>{"min"}));
  EXPECT_EQ(Y->text(), "min + 1");
}

TEST(SpecExpr, ConstantAndEmpty) {
  SpecExpr E;
  EXPECT_TRUE(E.empty());
  auto R = E.eval({});
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(toString(R.takeError()), "empty expression evaluated");
  SpecExpr C = SpecExpr::constant(42);
  EXPECT_FALSE(C.empty());
  EXPECT_EQ(C.text(), "42");
  auto V = C.evalInt({});
  ASSERT_TRUE(bool(V));
  EXPECT_EQ(*V, 42);
}

TEST(SpecExpr, ValueSpelling) {
  EXPECT_EQ(Value::ofInt(-12).str(), "-12");
  EXPECT_EQ(Value::ofReal(1e-6).str(), "1e-06");
  EXPECT_EQ(Value::ofReal(0.1).str(), "0.1");
  EXPECT_EQ(Value::ofReal(2.0).str(), "2.0");
  EXPECT_EQ(Value::ofReal(1.0 / 3).str(), "0.3333333333333333");
  // Spellings read back to the same value.
  auto X = SpecExpr::parse(Value::ofReal(1.0 / 3).str());
  ASSERT_TRUE(bool(X));
  auto V = X->eval({});
  ASSERT_TRUE(bool(V));
  EXPECT_EQ(V->D, 1.0 / 3);
}

TEST(SpecExpr, ComparisonsLogicAndConditional) {
  Env E{{"G", Value::ofInt(4096 * 32)}, {"D", Value::ofInt(128)},
        {"n", Value::ofInt(0)}, {"x", Value::ofReal(0.5)}};
  auto Int = [&](StringRef Text) -> int64_t {
    auto X = SpecExpr::parse(Text);
    EXPECT_TRUE(bool(X)) << Text.str();
    if (!X) {
      consumeError(X.takeError());
      return -999;
    }
    auto V = X->evalInt(E);
    EXPECT_TRUE(bool(V)) << Text.str();
    if (!V) {
      consumeError(V.takeError());
      return -999;
    }
    return *V;
  };
  // The launch a rows-per-block rewrite writes, at a shape that allows it
  // and at one that does not.
  EXPECT_EQ(Int("G % 8 == 0 ? G / 8 : G"), 4096 * 32 / 8);
  EXPECT_EQ(Int("(G + 1) % 8 == 0 ? (G + 1) / 8 : G + 1"), 4096 * 32 + 1);
  EXPECT_EQ(Int("1 < 2"), 1);
  EXPECT_EQ(Int("2 <= 2"), 1);
  EXPECT_EQ(Int("3 > 4"), 0);
  EXPECT_EQ(Int("3 >= 4"), 0);
  EXPECT_EQ(Int("3 != 4"), 1);
  EXPECT_EQ(Int("x < 1"), 1); // A real compares as a real.
  EXPECT_EQ(Int("!0 + !7"), 1);
  EXPECT_EQ(Int("D * 8 <= 1024 && G % 8 == 0"), 1);
  EXPECT_EQ(Int("D * 16 <= 1024 || 0"), 0);
  // C's precedence: comparisons below arithmetic, && below ==, ?: lowest
  // and right-associative.
  EXPECT_EQ(Int("1 + 1 == 2"), 1);
  EXPECT_EQ(Int("0 || 1 && 0"), 0);
  EXPECT_EQ(Int("0 ? 1 : 0 ? 2 : 3"), 3);
  EXPECT_EQ(Int("min(G % 3 == 0 ? 5 : 6, 9)"), 5 + (4096 * 32 % 3 != 0));
  // Short-circuit: the side not taken is not evaluated.
  EXPECT_EQ(Int("n != 0 && D / n > 2"), 0);
  EXPECT_EQ(Int("n == 0 || D / n > 2"), 1);
  EXPECT_EQ(Int("n == 0 ? 1 : D / n"), 1);
  // A broken conditional says what is missing.
  auto Bad = SpecExpr::parse("G % 8 == 0 ? G / 8");
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(toString(Bad.takeError()).find("expected ':'"), std::string::npos);
  auto Single = SpecExpr::parse("G = 8");
  ASSERT_FALSE(bool(Single));
  consumeError(Single.takeError());
}

TEST(SpecExpr, DepthAndLengthAreBoundedWithErrorsNotCrashes) {
  // Each shape once overflowed the stack: parentheses (the parser
  // recursing), a chain of + (a left-deep tree: evaluation and destruction
  // recursing), unary minus.
  // 2000 deep: under the length limit, so the depth limit stops it.
  std::string Parens = std::string(2000, '(') + "n" + std::string(2000, ')');
  EXPECT_NE(parseError(Parens).find("nested deeper than 128 levels"),
            std::string::npos);
  std::string Chain;
  for (int I = 0; I < 1500; ++I)
    Chain += "1+";
  Chain += "n";
  EXPECT_NE(parseError(Chain).find("nested deeper than 128 levels"),
            std::string::npos);
  EXPECT_NE(parseError(std::string(3000, '-') + "n").find("nested deeper"),
            std::string::npos);
  std::string Calls;
  for (int I = 0; I < 200; ++I)
    Calls += "abs(";
  Calls += "n" + std::string(200, ')');
  EXPECT_NE(parseError(Calls).find("nested deeper"), std::string::npos);
  std::string Powers;
  for (int I = 0; I < 1000; ++I)
    Powers += "1**";
  Powers += "1";
  EXPECT_NE(parseError(Powers).find("nested deeper"), std::string::npos);
  std::string Long = "n";
  for (int I = 0; I < 2000; ++I)
    Long += " + 0";
  EXPECT_NE(parseError(Long).find("longer than 4096 characters"),
            std::string::npos);
  // Right at the limits: accepted and evaluated. The whole expression is
  // the first level, each parenthesis one more.
  std::string Deep = std::string(127, '(') + "n" + std::string(127, ')');
  EXPECT_EQ(evalI(Deep, env({{"n", 3}})), 3);
  std::string TooDeep = "(" + Deep + ")";
  EXPECT_NE(parseError(TooDeep).find("nested deeper than 128 levels at "
                                     "column 129"),
            std::string::npos);
  std::string Sum = "0";
  for (int I = 0; I < 100; ++I)
    Sum += "+1";
  EXPECT_EQ(evalI(Sum), 100);
}

TEST(SpecExpr, IntegralRealsUpTo64BitsAreIntegers) {
  auto Int = [](StringRef Text) -> int64_t {
    auto X = SpecExpr::parse(Text);
    EXPECT_TRUE(bool(X));
    auto V = X->evalInt({});
    if (!V) {
      ADD_FAILURE() << toString(V.takeError());
      return 0;
    }
    return *V;
  };
  EXPECT_EQ(Int("1e15"), 1000000000000000);
  // Beyond 2^53 a real is still the whole number it holds: 1e16 is not
  // called "not an integer" while 1e15 passes.
  EXPECT_EQ(Int("1e16"), 10000000000000000);
  EXPECT_EQ(Int("-9.2e18"), -9200000000000000000);
  auto Big = SpecExpr::parse("1e19");
  ASSERT_TRUE(bool(Big));
  auto V = Big->evalInt({});
  ASSERT_FALSE(bool(V));
  EXPECT_EQ(toString(V.takeError()), "'1e19' is not an integer (it is 1e+19)");
  EXPECT_TRUE(isIntegralReal(-9223372036854775808.0));
  EXPECT_FALSE(isIntegralReal(9223372036854775808.0));
  EXPECT_FALSE(isIntegralReal(std::nan("")));
  EXPECT_FALSE(isIntegralReal(0.5));
  // A real too large for 64 bits is still a value (no undefined
  // conversion; libFuzzer found it through Value::ofReal).
  EXPECT_EQ(Value::ofReal(1e300).I, 0);
  EXPECT_EQ(Value::ofReal(std::nan("")).I, 0);
}

} // namespace
