"""Reading the suite's workload specs from Python (the self-test and the
PyTorch baselines): JSON with // comments and trailing commas, the spec's
expressions ('/' between integers is C division), generator calls split into
name and arguments. The C++ reader in lib/Spec is the authority; this is the
subset the suite's own scripts need."""
import ast
import json
import math
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


FUNCS = {
    "min": min, "max": max, "abs": abs, "sqrt": math.sqrt, "log2": math.log2,
    "pow": pow, "floor": math.floor, "ceil": math.ceil,
    "cdiv": lambda a, b: -(-a // b), "align": lambda a, b: -(-a // b) * b,
}


def evaluate(expr, env):
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
            return FUNCS[n.func.id](*[ev(a) for a in n.args])
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
