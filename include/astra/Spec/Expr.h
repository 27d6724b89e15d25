//===- Expr.h - Arithmetic over shape variables ----------------*- C++ -*-===//
//
// Spec fields (element counts, launch dimensions, scalar arguments, bytes,
// flops) are small expressions over a shape set's variables, e.g.
// "T * 2 * d", "cdiv(n, 256)", "min(d, 1024)", "1e-6".
//
// Grammar: numbers (integer or floating), variables ([A-Za-z_][A-Za-z0-9_]*),
// + - * / % ** (power), unary - and +, parentheses, and the functions
// min(a, b, ...), max(a, b, ...), cdiv(a, b) (ceiling division),
// floor(x), ceil(x), sqrt(x), log2(x), pow(a, b), abs(x),
// align(a, b) (a rounded up to a multiple of b), and C's comparisons
// (== != < <= > >=, giving 1 or 0), logic (! && ||, short-circuit) and
// conditional `c ? a : b` (only the chosen side is evaluated), with C's
// precedence. Launch changes that hold only for some shapes are written
// with them: "(T * H) % 8 == 0 ? (T * H) / 8 : T * H".
// '/' and '%' on two integers are C integer division and remainder
// (truncating), as in the CUDA code the spec describes; any floating operand
// makes the operation real. '**' binds tighter than unary minus and groups to
// the right, as in Python: -2 ** 2 is -4, 2 ** 3 ** 2 is 512.
//
// Integer arithmetic is exact: a result that does not fit in 64 bits is an
// error, never a wrapped value, because a wrapped element count would size a
// buffer wrongly without anyone noticing.
//
//===----------------------------------------------------------------------===//
#ifndef ASTRA_SPEC_EXPR_H
#define ASTRA_SPEC_EXPR_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace astra {

/// A value an expression evaluates to: integers stay exact.
struct Value {
  bool IsInt = true;
  int64_t I = 0;
  double D = 0;
  static Value ofInt(int64_t V) { return {true, V, double(V)}; }
  /// I is the real truncated where an int64_t holds it, else 0 (converting
  /// a NaN or a double beyond 2^63 would be undefined behavior).
  static Value ofReal(double V) {
    return {false, V > -9.2e18 && V < 9.2e18 ? int64_t(V) : 0, V};
  }
  double real() const { return IsInt ? double(I) : D; }
  /// "42", "1e-06", "0.5": integers exactly, reals in the shortest form
  /// that reads back to the same double.
  std::string str() const;
};

using Env = std::map<std::string, Value, std::less<>>;

/// Whether \p D is a whole number a 64-bit integer holds. Where a count or a
/// shape variable is written as a real (1e6, 1e16), this, not the 2^53 up to
/// which every integer is a double, decides whether it is an integer: the
/// double holds exactly the integer it is, and a size that large is then
/// judged by the limits on sizes, not called "not an integer".
bool isIntegralReal(double D);

/// Limits of one expression (docs/spec-format.md, "Limits"): a longer or
/// deeper one is an error, so that parsing, evaluating and freeing it stay
/// fast and within the stack whatever a spec holds.
constexpr size_t MaxExprLength = 4096;
constexpr unsigned MaxExprDepth = 128;

class SpecExpr {
public:
  SpecExpr() = default;
  /// Parses \p Text; the error quotes the text and says at which column
  /// parsing stopped and what was expected there.
  static llvm::Expected<SpecExpr> parse(llvm::StringRef Text);
  /// A constant expression.
  static SpecExpr constant(int64_t V);

  /// Evaluates under \p E; unknown variables, division by zero, domain
  /// errors (sqrt of a negative number, ...) and integer overflow are
  /// errors that quote the expression.
  llvm::Expected<Value> eval(const Env &E) const;
  /// eval() that also requires an integer result (counts, dimensions). A
  /// real result with an exact integer value (1e6, sqrt(16)) is accepted.
  llvm::Expected<int64_t> evalInt(const Env &E) const;

  /// Variables the expression mentions, each once, in order of appearance.
  std::vector<std::string> variables() const;
  const std::string &text() const { return Text; }
  bool empty() const { return !Root; }

  struct Node;

private:
  std::string Text;
  std::shared_ptr<const Node> Root;
};

/// The functions expressions may call, for messages ("min, max, ...").
llvm::StringRef specExprFunctionList();

} // namespace astra

#endif
