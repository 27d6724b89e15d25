#!/usr/bin/env python3
"""Self-test of kernels/astra_spec.py's evaluate(): the spec expression
language of include/astra/Spec/Expr.h (lib/Spec/Expr.cpp is the authority,
test/unit/SpecExprTest.cpp its test), read from Python by the suite's scripts
(bench/run_baselines_ptx.py evaluates launch grids and blocks with it).

Covers every operator and function, C's precedence and associativity, C's
truncating '/' and '%' on integers, '**' above unary minus, short-circuit
&& || and ?: (the side not taken is not evaluated), 64-bit overflow and the
other errors (ValueErrors quoting the expression), and no regression: every
expression of every kernels/*/*.astra.json, on every shape set, has the value
(and the int/float type) that the previous, ast-based evaluate() gave, kept
below as old_evaluate.

usage: python3 kernels/test_astra_spec.py   (exit 0: all passed; no numpy)
"""
import ast
import glob
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from astra_spec import FUNCS, evaluate, load_spec, split_call  # noqa: E402

FAILURES = []


def expect(cond, what):
    if cond:
        print(f"  ok   {what}")
    else:
        print(f"  FAIL {what}")
        FAILURES.append(what)


def same(a, b):
    """Equal values of the same kind (int or float)."""
    return type(a) is type(b) and a == b


def check(expr, env, want):
    try:
        got = evaluate(expr, env)
    except Exception as e:  # noqa: BLE001
        expect(False, f"{expr!r} {env} = {want!r} (raised {type(e).__name__}: {e})")
        return
    expect(same(got, want), f"{expr!r} {env or ''} = {want!r}" +
           ("" if same(got, want) else f" (got {got!r})"))


def check_error(expr, env, words):
    try:
        got = evaluate(expr, env)
    except ValueError as e:
        msg = str(e)
        ok = str(expr).strip() in msg and all(w in msg for w in words)
        expect(ok, f"{expr!r} is an error naming {words}" + ("" if ok else f" (message: {msg})"))
        return
    except Exception as e:  # noqa: BLE001
        expect(False, f"{expr!r} is a ValueError (raised {type(e).__name__}: {e})")
        return
    expect(False, f"{expr!r} is an error (got {got!r})")


# --- the implementation before the C operators, for the regression check ---

OLD_FUNCS = {
    "min": min, "max": max, "abs": abs, "sqrt": math.sqrt, "log2": math.log2,
    "pow": pow, "floor": math.floor, "ceil": math.ceil,
    "cdiv": lambda a, b: -(-a // b), "align": lambda a, b: -(-a // b) * b,
}


def old_evaluate(expr, env):
    """Spec expression: '/' between integers is C (truncating) division."""
    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name):
            return env[n.id]
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.Call):
            return OLD_FUNCS[n.func.id](*[ev(a) for a in n.args])
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Div):
                if isinstance(a, int) and isinstance(b, int):
                    q = abs(a) // abs(b)
                    return q if (a >= 0) == (b >= 0) else -q
                return a / b
            op = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b,
                  ast.Mult: lambda: a * b, ast.Mod: lambda: a % b,
                  ast.Pow: lambda: a ** b}[type(n.op)]
            return op()
        raise ValueError(f"unsupported expression {expr!r}")
    return ev(ast.parse(str(expr), mode="eval"))


# --- cases -------------------------------------------------------------------

def arithmetic_cases():
    check("42", {}, 42)
    check("1e-6", {}, 1e-6)
    check(".5 + 5.", {}, 5.5)
    check("2E3", {}, 2000.0)
    check(1e-06, {}, 1e-06)            # numbers as spec JSON gives them
    check(7, {}, 7)
    check(-3, {}, -3)
    check(0.5, {}, 0.5)
    check("T * 2 * d", {"T": 3, "d": 5}, 30)
    check("a + b - c", {"a": 1, "b": 2, "c": 10}, -7)
    check("1 + 2 * 3", {}, 7)
    check("(1 + 2) * 3", {}, 9)
    check("10 - 4 - 3", {}, 3)           # left-associative
    check("7 / 2", {}, 3)
    check("-7 / 2", {}, -3)              # C truncates, Python's // gives -4
    check("7 / -2", {}, -3)
    check("-7 / -2", {}, 3)
    check("7 % 2", {}, 1)
    check("-7 % 2", {}, -1)              # C: the sign of the dividend
    check("7 % -2", {}, 1)
    check("-7 % -2", {}, -1)
    check("x % n", {"x": -9, "n": 4}, -1)
    check("-7.5 % 2", {}, -1.5)          # fmod
    check("7 / 2.0", {}, 3.5)
    check("1 / 4 * 4", {}, 0)
    check("2 ** 10", {}, 1024)
    check("2 ** 3 ** 2", {}, 512)        # right-associative
    check("-2 ** 2", {}, -4)             # '**' above unary minus
    check("(-2) ** 2", {}, 4)
    check("2 ** -1", {}, 0.5)
    check("2 * 3 ** 2", {}, 18)
    check("- - 3", {}, 3)
    check("+4", {}, 4)
    check("-x", {"x": 2.5}, -2.5)
    check("  T  ", {"T": 1}, 1)
    check("a_1 * _b", {"a_1": 2, "_b": 3}, 6)


def comparison_logic_cases():
    for expr, want in [("1 == 1", 1), ("1 == 2", 0), ("1 != 2", 1), ("2 != 2", 0),
                       ("1 < 2", 1), ("2 < 1", 0), ("2 <= 2", 1), ("3 <= 2", 0),
                       ("3 > 2", 1), ("2 > 2", 0), ("2 >= 2", 1), ("1 >= 2", 0),
                       ("0.5 < 1", 1), ("1 == 1.0", 1), ("0.1 + 0.2 == 0.3", 0),
                       ("!0", 1), ("!5", 0), ("!!7", 1), ("!0.0", 1), ("!(1 == 2)", 1),
                       ("1 && 1", 1), ("1 && 0", 0), ("2 && 3", 1), ("0 && 1", 0),
                       ("0 || 0", 0), ("0 || 5", 1), ("3 || 0", 1),
                       ("1 ? 2 : 3", 2), ("0 ? 2 : 3", 3), ("0.5 ? 2 : 3", 2)]:
        check(expr, {}, want)
    # Precedence and associativity, as in C.
    check("1 + 1 == 2", {}, 1)
    check("0 || 1 && 0", {}, 0)          # && binds tighter than ||
    check("1 || 0 && 0", {}, 1)
    check("0 ? 1 : 0 ? 2 : 3", {}, 3)    # ?: groups to the right
    check("1 ? 2 : 3 ? 4 : 5", {}, 2)
    check("1 ? 0 ? 7 : 8 : 9", {}, 8)
    check("(1 ? 0 : 1) ? 7 : 8", {}, 8)
    check("3 > 2 > 1", {}, 0)            # (3 > 2) > 1
    check("1 < 2 == 1", {}, 1)           # relational above equality
    check("2 == 2 == 1", {}, 1)
    check("1 + 2 * 3 < 8 && 4 % 3 == 1", {}, 1)
    check("!1 + 1", {}, 1)               # unary ! above +
    check("!2 ** 0", {}, 0)              # !(2 ** 0)
    check("-1 < 0 ? 1 : 2", {}, 1)
    check("1 ? 2 : 3 + 10", {}, 2)       # ?: is the lowest
    check("0 ? 1 : 2", {}, 2)
    check("a!=b", {"a": 1, "b": 1}, 0)   # '!=' is not '!'
    check("a<=b&&b>=a||0", {"a": 1, "b": 1}, 1)
    # Short-circuit: the side not needed is not evaluated.
    check("n != 0 && D / n > 2", {"n": 0, "D": 9}, 0)
    check("n != 0 && D / n > 2", {"n": 3, "D": 9}, 1)
    check("n == 0 || D / n > 2", {"n": 0, "D": 9}, 1)
    check("0 && 1 / 0", {}, 0)
    check("1 || 1 / 0", {}, 1)
    check("1 ? 2 : 1 / 0", {}, 2)
    check("0 ? 1 / 0 : 3", {}, 3)
    check("1 ? 2 : unknown_var", {}, 2)
    check("n > 0 ? D % n : -1", {"n": 0, "D": 9}, -1)
    # The launch text of a shape-dependent change.
    launch = "(T * H) % 8 == 0 ? (T * H) / 8 : (T * H)"
    check(launch, {"T": 16, "H": 32}, 64)
    check(launch, {"T": 3, "H": 3}, 9)
    check("(T * H) % 8 == 0 ? (T * H) / 8 : T * H", {"T": 3, "H": 5}, 15)
    check("cdiv(n, n % 256 == 0 ? 256 : 128)", {"n": 1024}, 4)
    check("cdiv(n, n % 256 == 0 ? 256 : 128)", {"n": 1000}, 8)


def function_cases():
    check("min(d, 1024)", {"d": 4096}, 1024)
    check("min(3, 1, 2)", {}, 1)
    check("max(3, 7, 2)", {}, 7)
    check("min(5)", {}, 5)
    check("min(1, 2.5)", {}, 1.0)       # a real argument makes it real (C++)
    check("max(1, 2.5)", {}, 2.5)
    check("cdiv(n, 256)", {"n": 1000}, 4)
    check("cdiv(1024, 256)", {}, 4)
    check("cdiv(-7, 2)", {}, -3)
    check("cdiv(7, -2)", {}, -3)
    check("cdiv(7.0, 2)", {}, 4.0)
    check("align(1000, 128)", {}, 1024)
    check("align(1024, 128)", {}, 1024)
    check("floor(7 / 2.0)", {}, 3)
    check("floor(-3.5)", {}, -4)
    check("floor(5)", {}, 5)
    check("ceil(7 / 2.0)", {}, 4)
    check("ceil(-3.5)", {}, -3)
    check("sqrt(16)", {}, 4.0)
    check("log2(1024)", {}, 10.0)
    check("pow(2, 5)", {}, 32)
    check("pow(2, -2)", {}, 0.25)
    check("pow(2.0, 3)", {}, 8.0)
    check("abs(-3)", {}, 3)
    check("abs(-2.5)", {}, 2.5)
    check("abs(x - y)", {"x": 2, "y": 9}, 7)
    check("min (1, 2)", {}, 1)          # space before '('
    check("min + 1", {"min": 4}, 5)     # a function's name as a variable
    # Conditional and logical arguments.
    check("min(G % 3 == 0 ? 5 : 6, 9)", {"G": 3}, 5)
    check("min(G % 3 == 0 ? 5 : 6, 9)", {"G": 4}, 6)
    check("max(a > b, a && b, 0)", {"a": 2, "b": 1}, 1)
    check("cdiv(T, T > 64 ? 64 : 32) * (H == 8 || H == 16)", {"T": 100, "H": 16}, 2)
    check("pow(2, n < 3 ? n : 3)", {"n": 5}, 8)
    expect(sorted(FUNCS) == sorted(["min", "max", "cdiv", "floor", "ceil", "sqrt", "log2",
                                    "pow", "abs", "align"]), f"FUNCS lists Expr.h's functions {sorted(FUNCS)}")
    expect(FUNCS["cdiv"](1000, 256) == 4 and FUNCS["min"](3, 2) == 2, "FUNCS callable from Python")


def integer_range_cases():
    big = 2 ** 62
    check("9223372036854775807", {}, 2 ** 63 - 1)
    check("-9223372036854775807 - 1", {}, -2 ** 63)
    check("a + (a - 1)", {"a": big}, 2 ** 63 - 1)
    check("3037000499 * 3037000499", {}, 3037000499 ** 2)
    check("2 ** 62", {}, big)
    check("(-2) ** 63", {}, -2 ** 63)
    check("(-1) ** 1000001", {}, -1)
    check("1 ** 100000000000", {}, 1)
    check("x / -1 % 5", {"x": -2 ** 63 + 1}, 2)
    check("(-9223372036854775807 - 1) % -1", {}, 0)
    check_error("a * 2", {"a": big}, ["overflow"])
    check_error("a + a", {"a": big}, ["overflow"])
    check_error("-a - a - 1", {"a": big}, ["overflow"])
    check_error("2 ** 63", {}, ["overflow"])
    check_error("3 ** 100", {}, ["overflow"])
    check_error("10 ** 1000000000", {}, ["overflow"])
    check_error("(-9223372036854775807 - 1) / -1", {}, ["overflow"])
    check_error("-(-9223372036854775807 - 1)", {}, ["overflow"])
    check_error("abs(-9223372036854775807 - 1)", {}, ["overflow"])
    check_error("align(9223372036854775807, 2)", {}, ["overflow"])
    check_error("9223372036854775808", {}, ["64 bits", "column 1"])
    check_error("1" + "0" * 5000, {}, ["64 bits"])


def error_cases():
    for expr, words in [
            ("", ["empty expression"]),
            ("   ", ["empty expression"]),
            ("1 +", ["found the end", "column 4"]),
            ("(1", ["expected ')'"]),
            ("1)", ["unbalanced ')'"]),
            ("1 2", ["expected an operator or the end, found '2'"]),
            ("1 = 2", ["found '='"]),
            ("a & b", ["found '&'"]),
            ("a | b", ["found '|'"]),
            ("1 ? 2", ["expected ':' of a conditional"]),
            ("1 ? 2 , 3", ["expected ':' of a conditional"]),
            ("? 1 : 2", ["found '?'"]),
            ("1 : 2", ["found ':'"]),
            ("!", ["found the end"]),
            ("1 ==", ["found the end"]),
            ("1 < < 2", ["found '<'"]),
            ("min(1 ? 2 : 3", ["expected ',' or ')'"]),
            ("2x", ["unexpected 'x' after a number"]),
            ("1e", ["expected digits in the exponent"]),
            ("1e999", ["out of range"]),
            ("foo(1)", ["unknown function 'foo'", "min, max"]),
            ("cdiv(1)", ["'cdiv' takes 2 arguments, got 1"]),
            ("sqrt(1, 2)", ["'sqrt' takes 1 argument, got 2"]),
            ("min()", ["'min' takes at least 1 argument, got 0"]),
            ("1 // 2", ["found '/'"]),
            ("a.b", ["found '.'"]),
            ("x", ["unknown variable 'x'", "variables: H, T"]),
            ("1 / 0", ["division by zero"]),
            ("1 % 0", ["remainder by zero"]),
            ("1.5 / 0", ["division by zero"]),
            ("T != 1 || H / (T - 1)", ["division by zero"]),
            ("1 ? 1 / 0 : 2", ["division by zero"]),
            ("0 ** -1", ["0 raised to a negative power"]),
            ("(-8.0) ** 0.5", ["negative number raised to a fractional power"]),
            ("sqrt(-1)", ["sqrt of a negative number"]),
            ("log2(0)", ["log2 of a number that is not positive"]),
            ("align(10, 0)", ["positive b"]),
            ("align(1.5, 2)", ["needs integers"]),
            ("cdiv(1, 0)", ["division by zero"]),
            ("1e300 * 1e300", ["not a finite number"]),
            ("10.0 ** 400", ["not a finite number"]),
            ("floor(1e300)", ["does not fit in a 64-bit integer"]),
            ("0 ? 1 : (2", ["expected ')'"]),        # parsed whole, even the side not taken
            ("1 || 2 +", ["found the end"])]:
        check_error(expr, {"T": 1, "H": 2}, words)


def spec_expressions(kspec):
    """(where, expression) for every expression field of a kernel entry."""
    out = []
    for name, a in kspec["args"].items():
        for field in ("count", "value"):
            if field in a:
                out.append((f"args.{name}.{field}", a[field]))
        if "init" in a:
            gen, args = split_call(a["init"])
            for i, x in enumerate(args):
                if gen == "csr_colind" and i == 0:
                    continue  # the name of an array, not an expression
                out.append((f"args.{name}.init[{i}]", x))
    for field, v in kspec.get("launch", {}).items():
        for i, x in enumerate(v if isinstance(v, list) else [v]):
            out.append((f"launch.{field}[{i}]", x))
    for field in ("bytes", "flops"):
        if field in kspec and kspec[field] != "auto":
            out.append((field, kspec[field]))
    for field, v in kspec.get("tolerance", {}).items():
        out.append((f"tolerance.{field}", v))
    return out


def regression_cases():
    specs = sorted(glob.glob(os.path.join(HERE, "*", "*.astra.json")))
    expect(len(specs) >= 20, f"{len(specs)} specs found under kernels/")
    total, bad = 0, []
    for path in specs:
        rel = os.path.relpath(path, HERE)
        for kernel, kspec in load_spec(path)["kernels"].items():
            for shape_name, shape in kspec["shapes"].items():
                for where, expr in spec_expressions(kspec):
                    total += 1
                    label = f"{rel} {kernel} [{shape_name}] {where} {expr!r}"
                    old = old_evaluate(expr, shape)
                    try:
                        new = evaluate(expr, shape)
                    except ValueError as e:
                        bad.append(f"{label}: was {old!r}, now an error: {e}")
                        continue
                    if not same(new, old):
                        bad.append(f"{label}: was {old!r}, now {new!r}")
    expect(total > 500, f"{total} spec expressions (every field, every shape set) evaluated")
    for b in bad:
        expect(False, b)
    expect(not bad, "every spec expression keeps its value and its int/float type")
    # The grammar the old evaluate() took, over a range of shapes.
    old_grammar = ["T * 2 * d", "cdiv(n, 256)", "min(d, 1024)", "max(d, 32)", "1e-6", "2 ** k",
                   "(a + b) % c", "a / c", "-a / c", "a / 2.0", "sqrt(a * a)", "floor(a / 3.0)",
                   "ceil(a / 3.0)", "log2(c)", "abs(a - b)", "align(a, 128)", "pow(c, 2)",
                   "min(Hq * rot / 2, 512)", "2 * B * OC * (L - K + 1) * IC * K", "-a", "0.5 * a"]
    diffs = []
    for a in (1, 7, 100, 4096):
        for b in (3, 64, 1000):
            env = {"T": a, "d": b, "n": a * b, "k": b % 20, "a": a, "b": b, "c": 8, "Hq": 32,
                   "rot": b, "B": 2, "OC": a, "L": b + 5, "K": 3, "IC": 4}
            for expr in old_grammar:
                old, new = old_evaluate(expr, env), evaluate(expr, env)
                if not same(old, new):
                    diffs.append(f"{expr!r} {env}: was {old!r}, now {new!r}")
    expect(not diffs, "the old grammar evaluates as before" + "".join("\n    " + d for d in diffs))


def main():
    for name, fn in [("arithmetic", arithmetic_cases),
                     ("comparisons, logic, conditionals", comparison_logic_cases),
                     ("functions", function_cases),
                     ("64-bit integers", integer_range_cases),
                     ("errors", error_cases),
                     ("no regression on the suite's specs", regression_cases)]:
        print(f"== {name}")
        fn()
    print(f"\n{'FAILED' if FAILURES else 'PASSED'}: {len(FAILURES)} failure(s)")
    for f in FAILURES:
        print("  - " + f.splitlines()[0])
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
