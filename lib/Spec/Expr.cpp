//===- Expr.cpp - Parse and evaluate spec expressions ---------------------===//
#include "astra/Spec/Expr.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

using namespace llvm;

namespace astra {

std::string Value::str() const {
  if (IsInt)
    return std::to_string(I);
  if (!std::isfinite(D))
    return std::isnan(D) ? "nan" : (D > 0 ? "inf" : "-inf");
  // The shortest spelling that reads back to the same double.
  char Buf[40];
  for (int Prec = 1; Prec <= 17; ++Prec) {
    std::snprintf(Buf, sizeof(Buf), "%.*g", Prec, D);
    if (std::strtod(Buf, nullptr) == D)
      break;
  }
  std::string S = Buf;
  // Keep reals recognizable as reals ("2.0", not "2").
  if (S.find_first_of(".e") == std::string::npos)
    S += ".0";
  return S;
}

struct SpecExpr::Node {
  enum Kind {
    Int, Real, Var, Neg, Add, Sub, Mul, Div, Mod, Pow, Call,
    Eq, Ne, Lt, Le, Gt, Ge, And, Or, Not, Cond
  } K;
  int64_t I = 0;
  double D = 0;
  std::string Name; ///< Variable or function.
  std::vector<std::shared_ptr<const Node>> Kids;
  /// Levels of the tree below and including this node (a leaf has 1).
  unsigned Depth = 1;
};

namespace {

using NodePtr = std::shared_ptr<const SpecExpr::Node>;
using Node = SpecExpr::Node;

struct FunctionInfo {
  StringRef Name;
  unsigned MinArgs, MaxArgs; ///< MaxArgs 0: any number.
};

const FunctionInfo Functions[] = {
    {"min", 1, 0},  {"max", 1, 0},   {"cdiv", 2, 2}, {"floor", 1, 1},
    {"ceil", 1, 1}, {"sqrt", 1, 1},  {"log2", 1, 1}, {"pow", 2, 2},
    {"abs", 1, 1},  {"align", 2, 2},
};

const FunctionInfo *findFunction(StringRef Name) {
  for (const FunctionInfo &F : Functions)
    if (F.Name == Name)
      return &F;
  return nullptr;
}

/// Recursive descent over the grammar in Expr.h.
class Parser {
public:
  explicit Parser(StringRef Text) : Text(Text) {}

  Expected<NodePtr> parseAll() {
    if (Text.size() > MaxExprLength)
      return createStringError(
          inconvertibleErrorCode(),
          "invalid expression '%s...': longer than %zu characters",
          Text.take_front(40).str().c_str(), MaxExprLength);
    skipSpace();
    if (Pos == Text.size())
      return fail("empty expression");
    auto N = parseConditional();
    if (!N)
      return N.takeError();
    skipSpace();
    if (Pos != Text.size()) {
      if (Text[Pos] == ')')
        return fail("unbalanced ')'");
      return fail("expected an operator or the end, found '" +
                  tokenAt() + "'");
    }
    return N;
  }

private:
  Error fail(const Twine &What) const {
    return createStringError(inconvertibleErrorCode(),
                             "invalid expression '" + Text + "': " + What +
                                 " at column " + Twine(Pos + 1));
  }

  void skipSpace() {
    while (Pos < Text.size() && isSpace(Text[Pos]))
      ++Pos;
  }

  /// The token at Pos, for messages.
  std::string tokenAt() const {
    if (Pos >= Text.size())
      return "end";
    size_t E = Pos + 1;
    if (isAlnum(Text[Pos]) || Text[Pos] == '_')
      while (E < Text.size() && (isAlnum(Text[E]) || Text[E] == '_' ||
                                 Text[E] == '.'))
        ++E;
    return Text.slice(Pos, E).str();
  }

  bool consume(StringRef Op) {
    skipSpace();
    if (!Text.substr(Pos).starts_with(Op))
      return false;
    // '*' must not eat the first half of '**'.
    if (Op == "*" && Text.substr(Pos).starts_with("**"))
      return false;
    Pos += Op.size();
    return true;
  }

  /// A node over \p Kids; an error when the tree gets deeper than
  /// MaxExprDepth (`1+1+1+...` deepens it without any parenthesis).
  Expected<NodePtr> make(Node::Kind K, std::vector<NodePtr> Kids) {
    auto N = std::make_shared<Node>();
    N->K = K;
    for (const NodePtr &Kid : Kids)
      N->Depth = std::max(N->Depth, Kid->Depth + 1);
    N->Kids = std::move(Kids);
    if (N->Depth > MaxExprDepth)
      return tooDeep();
    return NodePtr(N);
  }

  Error tooDeep() const {
    return fail("nested deeper than " + Twine(MaxExprDepth) + " levels");
  }

  /// Counts the parser's own recursion (parentheses, unary operators), which
  /// builds no node for a parenthesis and could otherwise exhaust the stack.
  struct Nest {
    Parser &P;
    explicit Nest(Parser &P) : P(P) { ++P.Nesting; }
    ~Nest() { --P.Nesting; }
    bool tooDeep() const { return P.Nesting > MaxExprDepth; }
  };

  /// `c ? a : b`, right-associative, as in C.
  Expected<NodePtr> parseConditional() {
    Nest G(*this);
    if (G.tooDeep())
      return tooDeep();
    auto C = parseOr();
    if (!C)
      return C;
    if (!consume("?"))
      return C;
    auto A = parseConditional();
    if (!A)
      return A;
    if (!consume(":"))
      return fail("expected ':' of a conditional");
    auto B = parseConditional();
    if (!B)
      return B;
    return make(Node::Cond, {*C, *A, *B});
  }

  Expected<NodePtr> parseOr() {
    auto L = parseAnd();
    if (!L)
      return L;
    while (consume("||")) {
      auto R = parseAnd();
      if (!R)
        return R;
      L = make(Node::Or, {*L, *R});
      if (!L)
        return L;
    }
    return L;
  }

  Expected<NodePtr> parseAnd() {
    auto L = parseEquality();
    if (!L)
      return L;
    while (consume("&&")) {
      auto R = parseEquality();
      if (!R)
        return R;
      L = make(Node::And, {*L, *R});
      if (!L)
        return L;
    }
    return L;
  }

  Expected<NodePtr> parseEquality() {
    auto L = parseRelational();
    if (!L)
      return L;
    for (;;) {
      Node::Kind K;
      if (consume("=="))
        K = Node::Eq;
      else if (consume("!="))
        K = Node::Ne;
      else
        return L;
      auto R = parseRelational();
      if (!R)
        return R;
      L = make(K, {*L, *R});
      if (!L)
        return L;
    }
  }

  Expected<NodePtr> parseRelational() {
    auto L = parseAdditive();
    if (!L)
      return L;
    for (;;) {
      Node::Kind K;
      if (consume("<="))
        K = Node::Le;
      else if (consume(">="))
        K = Node::Ge;
      else if (consume("<"))
        K = Node::Lt;
      else if (consume(">"))
        K = Node::Gt;
      else
        return L;
      auto R = parseAdditive();
      if (!R)
        return R;
      L = make(K, {*L, *R});
      if (!L)
        return L;
    }
  }

  Expected<NodePtr> parseAdditive() {
    auto L = parseMultiplicative();
    if (!L)
      return L;
    for (;;) {
      Node::Kind K;
      if (consume("+"))
        K = Node::Add;
      else if (consume("-"))
        K = Node::Sub;
      else
        return L;
      auto R = parseMultiplicative();
      if (!R)
        return R;
      L = make(K, {*L, *R});
      if (!L)
        return L;
    }
  }

  Expected<NodePtr> parseMultiplicative() {
    auto L = parseUnary();
    if (!L)
      return L;
    for (;;) {
      Node::Kind K;
      if (consume("*"))
        K = Node::Mul;
      else if (consume("/"))
        K = Node::Div;
      else if (consume("%"))
        K = Node::Mod;
      else
        return L;
      auto R = parseUnary();
      if (!R)
        return R;
      L = make(K, {*L, *R});
      if (!L)
        return L;
    }
  }

  Expected<NodePtr> parseUnary() {
    // '!' but not the first half of '!='.
    skipSpace();
    if (Text.substr(Pos).starts_with("!") &&
        !Text.substr(Pos).starts_with("!=")) {
      ++Pos;
      auto S = parseUnaryOperand();
      if (!S)
        return S;
      return make(Node::Not, {*S});
    }
    if (consume("-")) {
      auto S = parseUnaryOperand();
      if (!S)
        return S;
      return make(Node::Neg, {*S});
    }
    if (consume("+"))
      return parseUnaryOperand();
    return parsePower();
  }

  /// The operand of a unary operator or of `**`: one level deeper. Only
  /// this recursion and parseConditional's count, so that a parenthesis is
  /// one level, as docs/spec-format.md says (counting every parseUnary too
  /// made each parenthesis two, and 64 of them too deep).
  Expected<NodePtr> parseUnaryOperand() {
    Nest G(*this);
    if (G.tooDeep())
      return tooDeep();
    return parseUnary();
  }

  Expected<NodePtr> parsePower() {
    auto B = parsePrimary();
    if (!B)
      return B;
    if (!consume("**"))
      return B;
    auto E = parseUnaryOperand(); // Right-associative; 2 ** -1 is allowed.
    if (!E)
      return E;
    return make(Node::Pow, {*B, *E});
  }

  Expected<NodePtr> parsePrimary() {
    skipSpace();
    if (Pos == Text.size())
      return fail("expected a number, a variable or '(', found the end");
    char C = Text[Pos];
    if (C == '(') {
      ++Pos;
      auto N = parseConditional();
      if (!N)
        return N;
      if (!consume(")"))
        return fail("expected ')'");
      return N;
    }
    if (isDigit(C) || (C == '.' && Pos + 1 < Text.size() &&
                       isDigit(Text[Pos + 1])))
      return parseNumber();
    if (isAlpha(C) || C == '_')
      return parseName();
    return fail("expected a number, a variable or '(', found '" + tokenAt() +
                "'");
  }

  Expected<NodePtr> parseNumber() {
    size_t Start = Pos;
    bool IsReal = false;
    while (Pos < Text.size() && isDigit(Text[Pos]))
      ++Pos;
    if (Pos < Text.size() && Text[Pos] == '.') {
      IsReal = true;
      ++Pos;
      while (Pos < Text.size() && isDigit(Text[Pos]))
        ++Pos;
    }
    if (Pos < Text.size() && (Text[Pos] == 'e' || Text[Pos] == 'E')) {
      size_t E = Pos + 1;
      if (E < Text.size() && (Text[E] == '+' || Text[E] == '-'))
        ++E;
      if (E < Text.size() && isDigit(Text[E])) {
        IsReal = true;
        Pos = E;
        while (Pos < Text.size() && isDigit(Text[Pos]))
          ++Pos;
      } else {
        Pos = E;
        return fail("expected digits in the exponent");
      }
    }
    if (Pos < Text.size() && (isAlpha(Text[Pos]) || Text[Pos] == '_'))
      return fail("unexpected '" + Text.substr(Pos, 1) + "' after a number");
    std::string Lit = Text.slice(Start, Pos).str();
    auto N = std::make_shared<Node>();
    if (IsReal) {
      N->K = Node::Real;
      errno = 0;
      N->D = std::strtod(Lit.c_str(), nullptr);
      if (errno == ERANGE && !std::isfinite(N->D)) {
        Pos = Start;
        return fail("number '" + Lit + "' is out of range");
      }
    } else {
      N->K = Node::Int;
      if (StringRef(Lit).getAsInteger(10, N->I)) {
        Pos = Start;
        return fail("integer '" + Lit + "' does not fit in 64 bits");
      }
    }
    return NodePtr(N);
  }

  Expected<NodePtr> parseName() {
    size_t Start = Pos;
    while (Pos < Text.size() && (isAlnum(Text[Pos]) || Text[Pos] == '_'))
      ++Pos;
    std::string Name = Text.slice(Start, Pos).str();
    size_t AfterName = Pos;
    skipSpace();
    if (Pos == Text.size() || Text[Pos] != '(') {
      Pos = AfterName;
      auto N = std::make_shared<Node>();
      N->K = Node::Var;
      N->Name = Name;
      return NodePtr(N);
    }
    const FunctionInfo *F = findFunction(Name);
    if (!F) {
      Pos = Start;
      return fail("unknown function '" + Name + "' (functions: " +
                  specExprFunctionList() + ")");
    }
    ++Pos; // '('
    std::vector<NodePtr> Args;
    if (!consume(")")) {
      for (;;) {
        auto A = parseConditional();
        if (!A)
          return A.takeError();
        Args.push_back(*A);
        if (consume(")"))
          break;
        if (!consume(","))
          return fail("expected ',' or ')' in the arguments of '" + Name +
                      "'");
      }
    }
    if (Args.size() < F->MinArgs || (F->MaxArgs && Args.size() > F->MaxArgs)) {
      Pos = Start;
      std::string Want =
          F->MaxArgs == 0
              ? "at least " + std::to_string(F->MinArgs) + " argument"
              : std::to_string(F->MinArgs) + " argument";
      if ((F->MaxArgs == 0 ? F->MinArgs : F->MaxArgs) != 1)
        Want += "s";
      return fail("'" + Name + "' takes " + Want + ", got " +
                  Twine(Args.size()));
    }
    auto N = std::make_shared<Node>();
    N->K = Node::Call;
    N->Name = Name;
    for (const NodePtr &A : Args)
      N->Depth = std::max(N->Depth, A->Depth + 1);
    N->Kids = std::move(Args);
    if (N->Depth > MaxExprDepth)
      return tooDeep();
    return NodePtr(N);
  }

  StringRef Text;
  size_t Pos = 0;
  unsigned Nesting = 0;
};

/// Evaluates a tree; errors quote the whole expression.
class Evaluator {
public:
  Evaluator(const std::string &Text, const Env &E) : Text(Text), E(E) {}

  Expected<Value> eval(const Node &N) {
    switch (N.K) {
    case Node::Int:
      return Value::ofInt(N.I);
    case Node::Real:
      return Value::ofReal(N.D);
    case Node::Var: {
      auto It = E.find(N.Name);
      if (It == E.end()) {
        std::string Known;
        for (auto &KV : E)
          Known += (Known.empty() ? "" : ", ") + KV.first;
        return fail("unknown variable '" + N.Name + "' (variables: " +
                    (Known.empty() ? "none" : Known) + ")");
      }
      return It->second;
    }
    case Node::Neg: {
      auto V = eval(*N.Kids[0]);
      if (!V)
        return V;
      if (!V->IsInt)
        return Value::ofReal(-V->D);
      if (V->I == std::numeric_limits<int64_t>::min())
        return overflow("-(" + V->str() + ")");
      return Value::ofInt(-V->I);
    }
    case Node::Call:
      return call(N);
    case Node::Not: {
      auto V = eval(*N.Kids[0]);
      if (!V)
        return V;
      return Value::ofInt(V->real() == 0);
    }
    case Node::And:
    case Node::Or: {
      // Short-circuit, as in C: `n > 0 && m / n > 2` is defined at n = 0.
      auto L = eval(*N.Kids[0]);
      if (!L)
        return L;
      if ((L->real() != 0) == (N.K == Node::Or))
        return Value::ofInt(N.K == Node::Or);
      auto R = eval(*N.Kids[1]);
      if (!R)
        return R;
      return Value::ofInt(R->real() != 0);
    }
    case Node::Cond: {
      // Only the chosen branch is evaluated.
      auto C = eval(*N.Kids[0]);
      if (!C)
        return C;
      return eval(*N.Kids[C->real() != 0 ? 1 : 2]);
    }
    default:
      break;
    }
    auto L = eval(*N.Kids[0]);
    if (!L)
      return L;
    auto R = eval(*N.Kids[1]);
    if (!R)
      return R;
    return binary(N.K, *L, *R);
  }

private:
  Error fail(const Twine &What) const {
    return createStringError(inconvertibleErrorCode(),
                             "'" + Text + "': " + What);
  }
  Error overflow(const Twine &Op) const {
    return fail("integer overflow: " + Op + " does not fit in 64 bits");
  }
  Expected<Value> real(double D) const {
    if (!std::isfinite(D))
      return fail("the result is not a finite number");
    return Value::ofReal(D);
  }

  static const char *opSpelling(Node::Kind K) {
    switch (K) {
    case Node::Add: return "+";
    case Node::Sub: return "-";
    case Node::Mul: return "*";
    case Node::Div: return "/";
    case Node::Mod: return "%";
    default: return "**";
    }
  }

  Expected<Value> intPow(int64_t B, int64_t X) {
    int64_t Result = 1, Base = B;
    int64_t Exp = X;
    while (Exp > 0) {
      if (Exp & 1)
        if (__builtin_mul_overflow(Result, Base, &Result))
          return overflow(std::to_string(B) + " ** " + std::to_string(X));
      Exp >>= 1;
      if (Exp && __builtin_mul_overflow(Base, Base, &Base))
        return overflow(std::to_string(B) + " ** " + std::to_string(X));
    }
    return Value::ofInt(Result);
  }

  static bool compare(Node::Kind K, int Order) {
    switch (K) {
    case Node::Eq: return Order == 0;
    case Node::Ne: return Order != 0;
    case Node::Lt: return Order < 0;
    case Node::Le: return Order <= 0;
    case Node::Gt: return Order > 0;
    default: return Order >= 0;
    }
  }

  Expected<Value> binary(Node::Kind K, Value L, Value R) {
    if (K >= Node::Eq && K <= Node::Ge) {
      // Integers compare exactly; a real on either side compares as reals.
      int Order = L.IsInt && R.IsInt
                      ? (L.I < R.I ? -1 : L.I > R.I)
                      : (L.real() < R.real() ? -1 : L.real() > R.real());
      return Value::ofInt(compare(K, Order));
    }
    if (L.IsInt && R.IsInt) {
      int64_t A = L.I, B = R.I, Out = 0;
      bool Over = false;
      switch (K) {
      case Node::Add:
        Over = __builtin_add_overflow(A, B, &Out);
        break;
      case Node::Sub:
        Over = __builtin_sub_overflow(A, B, &Out);
        break;
      case Node::Mul:
        Over = __builtin_mul_overflow(A, B, &Out);
        break;
      case Node::Div:
      case Node::Mod:
        if (B == 0)
          return fail(K == Node::Div ? "division by zero"
                                     : "remainder by zero");
        if (A == std::numeric_limits<int64_t>::min() && B == -1) {
          if (K == Node::Mod)
            return Value::ofInt(0);
          Over = true;
          break;
        }
        Out = K == Node::Div ? A / B : A % B;
        break;
      case Node::Pow:
        if (B >= 0)
          return intPow(A, B);
        if (A == 0)
          return fail("0 raised to a negative power");
        return real(std::pow(double(A), double(B)));
      default:
        llvm_unreachable("not a binary operator");
      }
      if (Over)
        return overflow(L.str() + " " + opSpelling(K) + " " + R.str());
      return Value::ofInt(Out);
    }
    double A = L.real(), B = R.real();
    switch (K) {
    case Node::Add:
      return real(A + B);
    case Node::Sub:
      return real(A - B);
    case Node::Mul:
      return real(A * B);
    case Node::Div:
      if (B == 0)
        return fail("division by zero");
      return real(A / B);
    case Node::Mod:
      if (B == 0)
        return fail("remainder by zero");
      return real(std::fmod(A, B));
    case Node::Pow:
      if (A < 0 && B != std::floor(B))
        return fail("a negative number raised to a fractional power");
      if (A == 0 && B < 0)
        return fail("0 raised to a negative power");
      return real(std::pow(A, B));
    default:
      llvm_unreachable("not a binary operator");
    }
  }

  /// A real that must become an integer (floor, ceil).
  Expected<Value> toInt(double D, StringRef Fn) {
    if (!(D >= -9.2e18 && D <= 9.2e18))
      return fail(Fn + "(...) = " + Value::ofReal(D).str() +
                  " does not fit in a 64-bit integer");
    return Value::ofInt(int64_t(D));
  }

  Expected<Value> call(const Node &N) {
    std::vector<Value> A;
    for (const NodePtr &K : N.Kids) {
      auto V = eval(*K);
      if (!V)
        return V;
      A.push_back(*V);
    }
    StringRef F = N.Name;
    if (F == "min" || F == "max") {
      Value Best = A[0];
      bool AllInt = Best.IsInt;
      for (size_t I = 1; I < A.size(); ++I) {
        AllInt &= A[I].IsInt;
        bool Better = AllInt ? (F == "min" ? A[I].I < Best.I : A[I].I > Best.I)
                             : (F == "min" ? A[I].real() < Best.real()
                                           : A[I].real() > Best.real());
        if (Better)
          Best = A[I];
      }
      return AllInt ? Best : Value::ofReal(Best.real());
    }
    if (F == "cdiv" || F == "align") {
      if (!A[0].IsInt || !A[1].IsInt) {
        if (F == "align")
          return fail("align(a, b) needs integers");
        if (A[1].real() == 0)
          return fail("division by zero");
        return real(std::ceil(A[0].real() / A[1].real()));
      }
      int64_t X = A[0].I, Y = A[1].I;
      if (F == "align" && Y <= 0)
        return fail("align(a, b) needs a positive b, got " +
                    std::to_string(Y));
      if (Y == 0)
        return fail("division by zero");
      if (X == std::numeric_limits<int64_t>::min() && Y == -1)
        return overflow("cdiv(" + A[0].str() + ", -1)");
      int64_t Q = X / Y, Rem = X % Y;
      if (Rem != 0 && ((Rem > 0) == (Y > 0)))
        ++Q;
      if (F == "cdiv")
        return Value::ofInt(Q);
      int64_t Out;
      if (__builtin_mul_overflow(Q, Y, &Out))
        return overflow("align(" + A[0].str() + ", " + A[1].str() + ")");
      return Value::ofInt(Out);
    }
    if (F == "floor" || F == "ceil") {
      if (A[0].IsInt)
        return A[0];
      return toInt(F == "floor" ? std::floor(A[0].D) : std::ceil(A[0].D), F);
    }
    if (F == "sqrt") {
      if (A[0].real() < 0)
        return fail("sqrt of a negative number (" + A[0].str() + ")");
      return real(std::sqrt(A[0].real()));
    }
    if (F == "log2") {
      if (A[0].real() <= 0)
        return fail("log2 of a number that is not positive (" + A[0].str() +
                    ")");
      return real(std::log2(A[0].real()));
    }
    if (F == "pow")
      return binary(Node::Pow, A[0], A[1]);
    if (F == "abs") {
      if (!A[0].IsInt)
        return Value::ofReal(std::fabs(A[0].D));
      if (A[0].I == std::numeric_limits<int64_t>::min())
        return overflow("abs(" + A[0].str() + ")");
      return Value::ofInt(A[0].I < 0 ? -A[0].I : A[0].I);
    }
    llvm_unreachable("function checked by the parser");
  }

  const std::string &Text;
  const Env &E;
};

void collectVariables(const Node &N, std::vector<std::string> &Out) {
  if (N.K == Node::Var && !is_contained(Out, N.Name))
    Out.push_back(N.Name);
  for (const NodePtr &K : N.Kids)
    collectVariables(*K, Out);
}

} // namespace

bool isIntegralReal(double D) {
  // [-2^63, 2^63): the doubles an int64_t holds.
  return D == std::floor(D) && D >= -9223372036854775808.0 &&
         D < 9223372036854775808.0;
}

StringRef specExprFunctionList() {
  return "min, max, cdiv, floor, ceil, sqrt, log2, pow, abs, align";
}

Expected<SpecExpr> SpecExpr::parse(StringRef Text) {
  Parser P(Text);
  auto Root = P.parseAll();
  if (!Root)
    return Root.takeError();
  SpecExpr E;
  E.Text = Text.trim().str();
  E.Root = std::move(*Root);
  return E;
}

SpecExpr SpecExpr::constant(int64_t V) {
  auto N = std::make_shared<Node>();
  N->K = Node::Int;
  N->I = V;
  SpecExpr E;
  E.Text = std::to_string(V);
  E.Root = std::move(N);
  return E;
}

Expected<Value> SpecExpr::eval(const Env &E) const {
  if (!Root)
    return createStringError(inconvertibleErrorCode(),
                             "empty expression evaluated");
  Evaluator Ev(Text, E);
  return Ev.eval(*Root);
}

Expected<int64_t> SpecExpr::evalInt(const Env &E) const {
  auto V = eval(E);
  if (!V)
    return V.takeError();
  if (V->IsInt)
    return V->I;
  if (isIntegralReal(V->D))
    return int64_t(V->D);
  return createStringError(inconvertibleErrorCode(),
                           "'" + Text + "' is not an integer (it is " +
                               V->str() + ")");
}

std::vector<std::string> SpecExpr::variables() const {
  std::vector<std::string> Out;
  if (Root)
    collectVariables(*Root, Out);
  return Out;
}

} // namespace astra
