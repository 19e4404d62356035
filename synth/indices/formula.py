"""Index formulas: a tiny language over canonical concepts, parsed to a whitelisted AST (never `eval`).

    python -c "from ledgerlm.synth.indices.formula import parse; print(parse('gross_margin', '(revenue - cost_of_revenue) / revenue'))"

Grammar (Python expression syntax, checked node by node by `ast.parse(mode="eval")` + a visitor):
  numbers, names, `+ - * /`, unary `-`, parentheses, and calls of the operators below.
A name is a canonical concept key (`revenue`), another index id (`working_capital`), or a builtin
(`days_in_period`, `months_in_period`, `interest_bearing_liabilities`, `non_interest_bearing_liabilities`).

Period operators (each evaluates its argument at another period or balance date; see compute.py):
  prior_year(x)    the same period one fiscal year earlier (FY2024Q2 -> FY2023Q2)
  prior_quarter(x) the period one quarter earlier (FY2024Q1 -> FY2023Q4)
  ytd(x)           year-to-date period ending at the same quarter (FY2024Q2 -> FY2024H1)
  standalone(x)    3-month quarter ending at the same date (FY2024 -> FY2024Q4); alias quarter(x)
  ttm(x)           trailing twelve months ending at the same date (FY2024Q2 -> FY2024Q2TTM)
  begin(x) / end(x) balances at the start / end of the period; avg(x) = (begin(x) + end(x)) / 2
  annualize(x)     x * 12 / months of the period (Q: x4, H1: x2, Q3YTD: x4/3, FY/TTM: x1)
Functions: abs(x), sum_of(a, b, ...), min_of(a, b, ...), max_of(a, b, ...), and optional(x): x, or 0
when the needed reports are present but do not show the line (filers omit zero lines); a missing
report still makes the index not derivable. first_of(a, b, ...): the first argument whose lines the
reports show (a filer presents either a total or its components, e.g. one "Short-term debt" line or
commercial paper + current portion of long-term debt: never both are added); a missing report still
makes the index not derivable.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ledgerlm.errors import InputError

PERIOD_OPERATORS = {
    "prior_year": "same period one fiscal year earlier",
    "prior_quarter": "the period one quarter earlier",
    "ytd": "year-to-date period ending at the same quarter",
    "standalone": "3-month quarter ending at the same date",
    "quarter": "3-month quarter ending at the same date (alias of standalone)",
    "ttm": "trailing twelve months ending at the same date",
    "begin": "balance at the beginning of the period",
    "end": "balance at the end of the period",
    "avg": "average of the beginning and ending balance",
    "annualize": "flow scaled by 12 / months of the period",
}
FUNCTIONS = {"abs": 1, "optional": 1, "first_of": None, "sum_of": None, "min_of": None, "max_of": None}  # name -> arity (None: 1 or more)
BUILTIN_NAMES = {
    "days_in_period": "90 per quarter of the period (90, 180, 270, 360) — the turnover-days convention",
    "months_in_period": "3, 6, 9 or 12",
    "interest_bearing_liabilities": "sum of the balance-sheet liabilities the taxonomy marks interest-bearing",
    "non_interest_bearing_liabilities": "total liabilities minus the interest-bearing ones",
}
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


class FormulaError(InputError):
    """A formula that is not in the language: names the index and the bad token."""


class _Text:
    """`str(node)` is the formula text of the node, also kept as the attribute `node.text` (not a field: equality and
    hashing are untouched). compute.py keys its memo with it at every evaluation step, so it is built once, when the
    node is made (nodes are frozen; children are made first, so each level joins its children's kept texts)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", self._text())

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Num(_Text):
    value: float

    def _text(self) -> str:
        return repr(self.value).removesuffix(".0") if self.value == int(self.value) else repr(self.value)


@dataclass(frozen=True)
class Name(_Text):
    name: str

    def _text(self) -> str:
        return self.name


@dataclass(frozen=True)
class Neg(_Text):
    operand: "Node"

    def _text(self) -> str:
        return f"-{_wrap(self.operand)}"


@dataclass(frozen=True)
class BinOp(_Text):
    op: str
    left: "Node"
    right: "Node"

    def _text(self) -> str:
        return f"{_wrap(self.left)} {self.op} {_wrap(self.right, right_of=self.op)}"


@dataclass(frozen=True)
class Call(_Text):
    func: str
    args: tuple["Node", ...]

    def _text(self) -> str:
        return f"{self.func}({', '.join(str(a) for a in self.args)})"


Node = Num | Name | Neg | BinOp | Call


def _wrap(node: Node, right_of: str | None = None) -> str:
    """Parenthesise a child when needed for an unambiguous round trip."""
    if isinstance(node, BinOp) and (node.op in "+-" or right_of in ("-", "/") or right_of == "*" and node.op == "/"):
        return f"({node})"
    return str(node)


@dataclass(frozen=True)
class Needs:
    """What a formula reads, found statically: names by kind and the period operators used."""

    concepts: frozenset[str]
    indices: frozenset[str]
    builtins: frozenset[str]
    operators: frozenset[str]
    paths: frozenset[tuple[tuple[str, ...], str]] = field(default_factory=frozenset)  # (operator chain, name)


def parse(index_id: str, text: str) -> Node:
    """Parse `text` into a whitelisted AST; FormulaError names `index_id` and the offending token."""
    if not isinstance(text, str) or not text.strip():
        raise FormulaError(f"index {index_id!r}: empty formula", field="formula")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as err:
        raise FormulaError(f"index {index_id!r}: formula {text!r} is not valid syntax ({err.msg} at column {err.offset})", field="formula") from None
    return _Visitor(index_id, text.strip()).visit(tree.body)


class _Visitor:
    def __init__(self, index_id: str, text: str):
        self.index_id, self.text = index_id, text

    def fail(self, node: ast.AST, why: str) -> FormulaError:
        token = ast.get_source_segment(self.text, node) or type(node).__name__
        return FormulaError(f"index {self.index_id!r}: {why}: {token!r} in formula {self.text!r}", field="formula")

    def visit(self, node: ast.AST) -> Node:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                raise self.fail(node, "only numbers are allowed as constants")
            return Num(float(node.value))
        if isinstance(node, ast.Name):
            return Name(node.id)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                inner = self.visit(node.operand)
                return Num(-inner.value) if isinstance(inner, Num) else Neg(inner)
            if isinstance(node.op, ast.UAdd):
                return self.visit(node.operand)
            raise self.fail(node, "unsupported unary operator")
        if isinstance(node, ast.BinOp):
            op = _BINOPS.get(type(node.op))
            if op is None:
                raise self.fail(node, "unsupported operator (only + - * / are allowed)")
            return BinOp(op, self.visit(node.left), self.visit(node.right))
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name):
                raise self.fail(node.func, "only named operators can be called")
            name = node.func.id
            if node.keywords:
                raise self.fail(node, "keyword arguments are not allowed")
            if name in PERIOD_OPERATORS:
                if len(node.args) != 1:
                    raise self.fail(node, f"{name}() takes exactly one argument")
            elif name in FUNCTIONS:
                arity = FUNCTIONS[name]
                if (arity is not None and len(node.args) != arity) or not node.args:
                    raise self.fail(node, f"{name}() takes {arity or 'one or more'} argument(s)")
            else:
                raise self.fail(node.func, f"unknown operator {name!r} (allowed: {', '.join(sorted(PERIOD_OPERATORS | FUNCTIONS.keys()))})")
            return Call(name, tuple(self.visit(a) for a in node.args))
        raise self.fail(node, f"{type(node).__name__} is not allowed")


def needs(node: Node, is_concept=lambda name: True) -> Needs:
    """Names and period operators a formula reads; `is_concept` tells concepts from index references."""
    concepts, indices, builtins, operators, paths = set(), set(), set(), set(), set()

    def walk(n: Node, chain: tuple[str, ...]) -> None:
        if isinstance(n, Name):
            if n.name in BUILTIN_NAMES:
                builtins.add(n.name)
            elif is_concept(n.name):
                concepts.add(n.name)
            else:
                indices.add(n.name)
            paths.add((chain, n.name))
        elif isinstance(n, Neg):
            walk(n.operand, chain)
        elif isinstance(n, BinOp):
            walk(n.left, chain)
            walk(n.right, chain)
        elif isinstance(n, Call):
            if n.func in PERIOD_OPERATORS:
                operators.add(n.func)
                chain = chain + (n.func,)
            for a in n.args:
                walk(a, chain)

    walk(node, ())
    return Needs(frozenset(concepts), frozenset(indices), frozenset(builtins), frozenset(operators), frozenset(paths))
