"""Reading the suite's workload specs from Python (the self-test and the
PyTorch baselines): JSON with // comments and trailing commas, the spec's
expressions (the whole grammar of include/astra/Spec/Expr.h with C's
semantics: '/' and '%' between integers truncate, comparisons, ! && || and
?:), generator calls split into name and arguments. The C++ reader in
lib/Spec is the authority; this is the subset the suite's own scripts need."""
import functools
import json
import math
import numbers
import re


def load_spec(path):
    text = open(path).read()
    out, i, in_str = [], 0, False
    while i < len(text):  # drop // comments outside strings
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("//", i):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return json.loads(re.sub(r",(\s*[}\]])", r"\1", "".join(out)))


# Spec expressions: the grammar of include/astra/Spec/Expr.h, evaluated the
# way lib/Spec/Expr.cpp does (the authority). Integers are exact 64-bit values
# (a result outside 64 bits is an error, never a wrapped or unbounded value);
# '/' and '%' on two integers are C's truncating division and remainder; any
# real operand makes an operation real; comparisons and ! && || give 1 or 0;
# && || short-circuit and `c ? a : b` evaluates only the chosen side.

_INT_MIN, _INT_MAX = -(1 << 63), (1 << 63) - 1
_SPACE = " \t\n\v\f\r"
_DIGITS = "0123456789"
_ALPHA = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
_ALNUM = _ALPHA + _DIGITS


class _Fail(ValueError):
    """An evaluation error; evaluate() quotes the expression in front of it."""


def _num(v):
    """Spelling of a value in messages: integers exactly, reals as reals."""
    return str(v) if isinstance(v, int) else repr(float(v))


def _int(v, what):
    if not _INT_MIN <= v <= _INT_MAX:
        raise _Fail(f"integer overflow: {what} does not fit in 64 bits")
    return v


def _real(d):
    if not math.isfinite(d):
        raise _Fail("the result is not a finite number")
    return float(d)


def _is_whole(d):
    return math.isinf(d) or (not math.isnan(d) and d == math.floor(d))


def _ipow(b, x):
    """b ** x for an integer b and an integer x >= 0, exact in 64 bits."""
    if b in (0, 1) or x == 0:
        return 1 if x == 0 else b
    if b == -1:
        return 1 if x % 2 == 0 else -1
    if x >= 64:  # |b| >= 2: at least 2 ** 64
        raise _Fail(f"integer overflow: {b} ** {x} does not fit in 64 bits")
    return _int(b ** x, f"{b} ** {x}")


_COMPARE = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b,
            "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
            ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _binary(op, a, b):
    if op in _COMPARE:
        # Integers compare exactly; a real on either side compares as reals.
        if not (isinstance(a, int) and isinstance(b, int)):
            a, b = float(a), float(b)
        return int(_COMPARE[op](a, b))
    if isinstance(a, int) and isinstance(b, int):
        what = f"{a} {op} {b}"
        if op == "+":
            return _int(a + b, what)
        if op == "-":
            return _int(a - b, what)
        if op == "*":
            return _int(a * b, what)
        if op in ("/", "%"):
            if b == 0:
                raise _Fail("division by zero" if op == "/" else "remainder by zero")
            q = abs(a) // abs(b)  # C truncates toward zero
            if (a < 0) != (b < 0):
                q = -q
            return _int(q, what) if op == "/" else a - q * b
        # '**'
        if b >= 0:
            return _ipow(a, b)
        if a == 0:
            raise _Fail("0 raised to a negative power")
        return _real(math.pow(float(a), float(b)))
    x, y = float(a), float(b)
    if op == "+":
        return _real(x + y)
    if op == "-":
        return _real(x - y)
    if op == "*":
        return _real(x * y)
    if op == "/":
        if y == 0:
            raise _Fail("division by zero")
        return _real(x / y)
    if op == "%":
        if y == 0:
            raise _Fail("remainder by zero")
        return _real(math.fmod(x, y))  # C's fmod: the sign of x
    # '**'
    if x < 0 and not _is_whole(y):
        raise _Fail("a negative number raised to a fractional power")
    if x == 0 and y < 0:
        raise _Fail("0 raised to a negative power")
    try:
        return _real(math.pow(x, y))
    except OverflowError:
        raise _Fail("the result is not a finite number") from None


def _min_max(pick_min):
    def f(*a):
        best, all_int = a[0], isinstance(a[0], int)
        for v in a[1:]:
            all_int = all_int and isinstance(v, int)
            x, y = (v, best) if all_int else (float(v), float(best))
            if (x < y) if pick_min else (x > y):
                best = v
        return best if all_int else float(best)
    return f


def _cdiv_align(is_align):
    def f(x, y):
        if not (isinstance(x, int) and isinstance(y, int)):
            if is_align:
                raise _Fail("align(a, b) needs integers")
            if float(y) == 0:
                raise _Fail("division by zero")
            d = float(x) / float(y)
            return _real(math.ceil(d) if math.isfinite(d) else d)
        if is_align and y <= 0:
            raise _Fail(f"align(a, b) needs a positive b, got {y}")
        if y == 0:
            raise _Fail("division by zero")
        q = _int(-(-x // y), f"cdiv({x}, {y})")  # the ceiling of x / y
        return _int(q * y, f"align({x}, {y})") if is_align else q
    return f


def _round(fn, name):
    def f(x):
        if isinstance(x, int):
            return x
        x = float(x)
        if not -9.2e18 <= x <= 9.2e18:
            raise _Fail(f"{name}(...) = {_num(x)} does not fit in a 64-bit integer")
        return int(fn(x))
    return f


def _sqrt(x):
    if x < 0:
        raise _Fail(f"sqrt of a negative number ({_num(x)})")
    return _real(math.sqrt(float(x)))


def _log2(x):
    if x <= 0:
        raise _Fail(f"log2 of a number that is not positive ({_num(x)})")
    return _real(math.log2(float(x)))


def _abs(x):
    if not isinstance(x, int):
        return abs(float(x))
    return _int(abs(x), f"abs({x})")


# The functions expressions may call (lib/Spec/Expr.cpp's list), with C++'s
# semantics: integers in, integers out where the C++ keeps them integral.
FUNCS = {
    "min": _min_max(True), "max": _min_max(False), "cdiv": _cdiv_align(False),
    "floor": _round(math.floor, "floor"), "ceil": _round(math.ceil, "ceil"),
    "sqrt": _sqrt, "log2": _log2, "pow": lambda a, b: _binary("**", a, b),
    "abs": _abs, "align": _cdiv_align(True),
}
# name -> (fewest arguments, most arguments or 0 for any number).
_ARITY = {"min": (1, 0), "max": (1, 0), "cdiv": (2, 2), "floor": (1, 1),
          "ceil": (1, 1), "sqrt": (1, 1), "log2": (1, 1), "pow": (2, 2),
          "abs": (1, 1), "align": (2, 2)}


class _Parser:
    """Recursive descent over Expr.h's grammar, as lib/Spec/Expr.cpp's Parser.
    Trees are tuples: ("num", v), ("var", name), ("neg", x), ("not", x),
    ("and", l, r), ("or", l, r), ("cond", c, a, b), ("call", name, args),
    (op, l, r) for + - * / % ** and the comparisons."""

    def __init__(self, text):
        self.text, self.pos = text, 0

    def fail(self, what):
        return ValueError(f"invalid expression '{self.text}': {what} at column {self.pos + 1}")

    def skip_space(self):
        while self.pos < len(self.text) and self.text[self.pos] in _SPACE:
            self.pos += 1

    def token_at(self):
        t, p = self.text, self.pos
        if p >= len(t):
            return "end"
        e = p + 1
        if t[p] in _ALNUM:
            while e < len(t) and (t[e] in _ALNUM or t[e] == "."):
                e += 1
        return t[p:e]

    def consume(self, op):
        self.skip_space()
        if not self.text.startswith(op, self.pos):
            return False
        if op == "*" and self.text.startswith("**", self.pos):
            return False  # '*' must not eat the first half of '**'
        self.pos += len(op)
        return True

    def parse_all(self):
        self.skip_space()
        if self.pos == len(self.text):
            raise self.fail("empty expression")
        n = self.conditional()
        self.skip_space()
        if self.pos != len(self.text):
            if self.text[self.pos] == ")":
                raise self.fail("unbalanced ')'")
            raise self.fail(f"expected an operator or the end, found '{self.token_at()}'")
        return n

    def conditional(self):  # right-associative, as in C
        c = self.logic_or()
        if not self.consume("?"):
            return c
        a = self.conditional()
        if not self.consume(":"):
            raise self.fail("expected ':' of a conditional")
        return ("cond", c, a, self.conditional())

    def logic_or(self):
        n = self.logic_and()
        while self.consume("||"):
            n = ("or", n, self.logic_and())
        return n

    def logic_and(self):
        n = self.binary_level(("==", "!="), self.relational)
        while self.consume("&&"):
            n = ("and", n, self.binary_level(("==", "!="), self.relational))
        return n

    def relational(self):
        return self.binary_level(("<=", ">=", "<", ">"), self.additive)

    def additive(self):
        return self.binary_level(("+", "-"), self.multiplicative)

    def multiplicative(self):
        return self.binary_level(("*", "/", "%"), self.unary)

    def binary_level(self, ops, operand):
        """Left-associative operators ops (longest first) over operand()."""
        n = operand()
        while True:
            op = next((o for o in ops if self.consume(o)), None)
            if op is None:
                return n
            n = (op, n, operand())

    def unary(self):
        self.skip_space()
        if self.text.startswith("!", self.pos) and not self.text.startswith("!=", self.pos):
            self.pos += 1
            return ("not", self.unary())
        if self.consume("-"):
            return ("neg", self.unary())
        if self.consume("+"):
            return self.unary()
        return self.power()

    def power(self):
        b = self.primary()
        if not self.consume("**"):
            return b
        return ("**", b, self.unary())  # right-associative; 2 ** -1 is allowed

    def primary(self):
        self.skip_space()
        t, p = self.text, self.pos
        if p == len(t):
            raise self.fail("expected a number, a variable or '(', found the end")
        c = t[p]
        if c == "(":
            self.pos += 1
            n = self.conditional()
            if not self.consume(")"):
                raise self.fail("expected ')'")
            return n
        if c in _DIGITS or (c == "." and p + 1 < len(t) and t[p + 1] in _DIGITS):
            return self.number()
        if c in _ALPHA:
            return self.name()
        raise self.fail(f"expected a number, a variable or '(', found '{self.token_at()}'")

    def number(self):
        t, start = self.text, self.pos
        is_real = False

        def digits():
            while self.pos < len(t) and t[self.pos] in _DIGITS:
                self.pos += 1
        digits()
        if self.pos < len(t) and t[self.pos] == ".":
            is_real = True
            self.pos += 1
            digits()
        if self.pos < len(t) and t[self.pos] in "eE":
            e = self.pos + 1
            if e < len(t) and t[e] in "+-":
                e += 1
            self.pos = e
            if not (e < len(t) and t[e] in _DIGITS):
                raise self.fail("expected digits in the exponent")
            is_real = True
            digits()
        if self.pos < len(t) and t[self.pos] in _ALPHA:
            raise self.fail(f"unexpected '{t[self.pos]}' after a number")
        lit = t[start:self.pos]
        if is_real:
            v = float(lit)
            if not math.isfinite(v):
                self.pos = start
                raise self.fail(f"number '{lit}' is out of range")
            return ("num", v)
        if len(lit.lstrip("0")) > 19 or int(lit) > _INT_MAX:
            self.pos = start
            raise self.fail(f"integer '{lit}' does not fit in 64 bits")
        return ("num", int(lit))

    def name(self):
        t, start = self.text, self.pos
        while self.pos < len(t) and t[self.pos] in _ALNUM:
            self.pos += 1
        name = t[start:self.pos]
        after = self.pos
        self.skip_space()
        if self.pos == len(t) or t[self.pos] != "(":
            self.pos = after
            return ("var", name)
        if name not in _ARITY:
            self.pos = start
            raise self.fail(f"unknown function '{name}' (functions: {', '.join(_ARITY)})")
        self.pos += 1  # '('
        args = []
        if not self.consume(")"):
            while True:
                args.append(self.conditional())
                if self.consume(")"):
                    break
                if not self.consume(","):
                    raise self.fail(f"expected ',' or ')' in the arguments of '{name}'")
        lo, hi = _ARITY[name]
        if len(args) < lo or (hi and len(args) > hi):
            self.pos = start
            want = (f"at least {lo} argument" if hi == 0 else f"{lo} argument") + \
                ("s" if (lo if hi == 0 else hi) != 1 else "")
            raise self.fail(f"'{name}' takes {want}, got {len(args)}")
        return ("call", name, tuple(args))


@functools.lru_cache(maxsize=4096)
def _parse(text):
    try:
        return _Parser(text).parse_all()
    except RecursionError:
        raise ValueError(f"invalid expression '{text}': nested too deeply") from None


def _eval(n, env):
    k = n[0]
    if k == "num":
        return n[1]
    if k == "var":
        try:
            v = env[n[1]]
        except KeyError:
            known = ", ".join(sorted(env)) or "none"
            raise _Fail(f"unknown variable '{n[1]}' (variables: {known})") from None
        # Shape values: JSON numbers, or numpy's (an integer stays exact).
        if isinstance(v, numbers.Integral):
            return int(v)
        return float(v)
    if k == "neg":
        v = _eval(n[1], env)
        return _int(-v, f"-({v})") if isinstance(v, int) else -v
    if k == "not":
        return int(_eval(n[1], env) == 0)
    if k in ("and", "or"):
        # Short-circuit, as in C: `n > 0 && m / n > 2` is defined at n = 0.
        if (_eval(n[1], env) != 0) == (k == "or"):
            return int(k == "or")
        return int(_eval(n[2], env) != 0)
    if k == "cond":  # only the chosen side is evaluated
        return _eval(n[2] if _eval(n[1], env) != 0 else n[3], env)
    if k == "call":
        return FUNCS[n[1]](*[_eval(a, env) for a in n[2]])
    return _binary(k, _eval(n[1], env), _eval(n[2], env))


def evaluate(expr, env):
    """Value of the spec expression expr (a string, or a number as spec JSON
    gives it) under env (variable -> number): an int, or a float where the
    expression is real. Errors (syntax, unknown variables or functions,
    division by zero, 64-bit overflow, domain errors) are ValueErrors that
    quote the expression."""
    text = str(expr)
    tree = _parse(text)
    try:
        return _eval(tree, env)
    except _Fail as e:
        raise ValueError(f"'{text.strip(_SPACE)}': {e}") from None
    except RecursionError:
        raise ValueError(f"'{text.strip(_SPACE)}': nested too deeply") from None


def split_call(text):
    m = re.fullmatch(r"\s*(\w+)\s*(?:\((.*)\))?\s*", text)
    name, rest = m.group(1), m.group(2) or ""
    args, depth, cur = [], 0, ""
    for c in rest:
        depth += c == "("
        depth -= c == ")"
        if c == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        args.append(cur.strip())
    return name, args
