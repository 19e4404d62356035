"""EPSBench calculator: drivers -> leaves -> the schema's formula DAG -> EPS, without `eval`.

    ledgerlm epsbench calc --schema evaluate/epsbench/release/ticker_schemas_v4/GOOGL_2026Q1.json \
        --drivers '{"revenues_yoy": 0.19, "tax_rate": 0.167832}' --json

Formulas are parsed once with `ast.parse` and checked by a whitelist visitor: numbers, variable
names, + - * /, unary minus/plus and parentheses; nothing else (no calls, no attributes, no `**`).
The DAG is ordered with `graphlib`; cycles, unknown variables and division by zero raise
`InputError` naming the schema file and the variable.

Driver semantics (EPSBench paper §3.2, release `calculator.py`):
  yoy            each constituent = baseline x (1 + g); omitted = 0 growth
  rate_override  the variable = the given value, or the driver's `default` when omitted
  absolute       the variable = the given value, or its baseline when omitted
  bps            after the yoy/rate/absolute leaves are propagated through the formulas, the
                 constituents' combined share of the `anchor` = baseline share + delta/10,000,
                 times the anchor's new value, split pro rata over the constituents' baselines
  static_rules   carry_forward (baseline), oracle (given `value`), historical_peg (baseline ratio
                 to `anchor`, applied to the anchor's value after the drivers), ttm_average
                 (given `ttm_value`)
Unspecified leaves stay at baseline; a name that is both a leaf and a formula is computed by its
formula (the release verifier does the same).
"""
from __future__ import annotations

import ast
import graphlib
import json
import math
import operator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ledgerlm.errors import InputError

DRIVER_KINDS = ("yoy", "rate_override", "absolute", "bps")
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}


@dataclass
class Schema:
    """One firm-quarter accounting schema (`ticker_schemas_v4/<TICKER>_<FQ>.json`)."""

    ticker: str
    target_fq: str
    baseline_fq: str
    baseline: dict[str, float]
    formulas: dict[str, str]
    drivers: dict[str, dict[str, Any]]
    static_rules: dict[str, Any] = field(default_factory=dict)
    validation: dict[str, float] = field(default_factory=dict)
    revenue_field: str | None = None
    path: str = "<schema>"

    @property
    def id(self) -> str:
        return f"{self.ticker}_{self.target_fq}"

    def public(self) -> dict[str, Any]:
        """What a model may see: everything except `_validation` (the reported EPS)."""
        out = {"ticker": self.ticker, "target_fq": self.target_fq, "baseline_fq": self.baseline_fq,
               "variables_baseline": self.baseline, "formulas": self.formulas, "prediction_schema": self.drivers}
        if self.static_rules:
            out["static_rules"] = self.static_rules
        return out


def _object(value: Any, path: str, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"expected a JSON object, got {type(value).__name__}", path=path, field=where)
    return value


def _check_driver(name: str, meta: Any, path: str) -> None:
    """A prediction_schema entry has the keys its kind needs, of the right types (else one InputError)."""
    where = f"prediction_schema.{name}"
    meta = _object(meta, path, where)
    if meta.get("type") not in DRIVER_KINDS:
        raise InputError(f"driver type {meta.get('type')!r} is not one of {DRIVER_KINDS}", path=path, field=where)
    parts = meta.get("constituents")
    if parts is not None and (not isinstance(parts, list) or not parts or not all(isinstance(p, str) for p in parts)):
        raise InputError("constituents must be a non-empty list of variable names", path=path, field=f"{where}.constituents")
    if not isinstance(meta.get("variable"), str) and (meta["type"] in ("rate_override", "absolute") or parts is None):
        raise InputError("driver has no variable name", path=path, field=f"{where}.variable")
    if meta["type"] == "bps" and not isinstance(meta.get("anchor"), str):
        raise InputError("bps driver has no anchor name", path=path, field=f"{where}.anchor")
    if meta.get("default") is not None:
        _number(meta["default"], path, f"{where}.default")


def schema_from_dict(data: Any, path: str = "<schema>") -> Schema:
    data = _object(data, path, "schema")
    for key in ("ticker", "target_fq", "variables_baseline", "formulas", "prediction_schema"):
        if key not in data:
            raise InputError("schema lacks a required key", path=path, field=key)
    baseline = {}
    for name, value in _object(data["variables_baseline"], path, "variables_baseline").items():
        baseline[name] = _number(value, path, f"variables_baseline.{name}")
    formulas = {}
    for name, text in _object(data["formulas"], path, "formulas").items():
        if not isinstance(text, (str, int, float)) or isinstance(text, bool):
            raise InputError(f"formula must be a string, got {type(text).__name__}", path=path, field=f"formulas.{name}")
        formulas[str(name)] = str(text)
    if "eps" not in formulas:
        raise InputError("formulas have no 'eps' node", path=path, field="formulas")
    drivers = dict(_object(data["prediction_schema"], path, "prediction_schema"))
    for name, meta in drivers.items():
        _check_driver(name, meta, path)
    rules = data.get("static_rules") or {}
    for var, rule in _object(rules, path, "static_rules").items():
        if not isinstance(rule, (str, dict)):
            raise InputError(f"static rule must be a strategy name or an object, got {type(rule).__name__}", path=path, field=f"static_rules.{var}")
    if not isinstance(data.get("_validation") or {}, dict):
        raise InputError("expected a JSON object", path=path, field="_validation")
    if data.get("revenue_field") is not None and not isinstance(data["revenue_field"], str):
        raise InputError("expected a variable name", path=path, field="revenue_field")
    return Schema(
        ticker=str(data["ticker"]), target_fq=str(data["target_fq"]), baseline_fq=str(data.get("baseline_fq", "")),
        baseline=baseline, formulas=formulas, drivers=drivers, static_rules=dict(data.get("static_rules") or {}),
        validation=dict(data.get("_validation") or {}), revenue_field=data.get("revenue_field"), path=path,
    )


def load_schema(path: str | Path) -> Schema:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("schema file not found", path=str(path)) from None
    except (IsADirectoryError, PermissionError) as err:
        raise InputError(f"cannot read ({err.strerror})", path=str(path)) from None
    except UnicodeDecodeError as err:
        raise InputError(f"not UTF-8 text ({err.reason} at byte {err.start})", path=str(path)) from None
    except json.JSONDecodeError as err:
        raise InputError(f"not valid JSON ({err})", path=str(path)) from None
    except RecursionError:
        raise InputError("JSON nested too deeply", path=str(path)) from None
    return schema_from_dict(data, str(path))


# --------------------------------------------------------------------------- formulas
class _Whitelist(ast.NodeVisitor):
    """Rejects any node outside: Expression, BinOp(+ - * /), UnaryOp(- +), numeric Constant, Name."""

    def __init__(self, where: str, path: str):
        self.where, self.path, self.names = where, path, set()

    def generic_visit(self, node):
        raise InputError(f"formula uses a disallowed element {type(node).__name__}", path=self.path, field=self.where)

    def visit_Expression(self, node):
        self.visit(node.body)

    def visit_BinOp(self, node):
        if type(node.op) not in _BINOPS:
            raise InputError(f"operator {type(node.op).__name__} is not allowed (only + - * /)", path=self.path, field=self.where)
        self.visit(node.left)
        self.visit(node.right)

    def visit_UnaryOp(self, node):
        if type(node.op) not in _UNARY:
            raise InputError(f"unary {type(node.op).__name__} is not allowed", path=self.path, field=self.where)
        self.visit(node.operand)

    def visit_Constant(self, node):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise InputError(f"constant {node.value!r} is not a number", path=self.path, field=self.where)

    def visit_Name(self, node):
        self.names.add(node.id)


@dataclass
class CompiledFormulas:
    """Parsed, checked and ordered formulas of one schema."""

    trees: dict[str, ast.Expression]
    order: list[str]
    path: str

    def evaluate(self, leaves: Mapping[str, float]) -> dict[str, float]:
        """Every node's value; a node that overflows to ±inf (or NaN) is an InputError naming it."""
        values = dict(leaves)
        for name in self.order:
            try:
                value = self._eval(self.trees[name].body, values, name)
            except RecursionError:
                raise InputError("formula nested too deeply", path=self.path, field=name) from None
            if not math.isfinite(value):
                raise InputError(f"value {value} is not finite (overflow in the formula)", path=self.path, field=name)
            values[name] = value
        return values

    def _eval(self, node: ast.AST, values: Mapping[str, float], where: str) -> float:
        if isinstance(node, ast.Constant):
            return float(node.value)
        if isinstance(node, ast.Name):
            return values[node.id]
        if isinstance(node, ast.UnaryOp):
            return _UNARY[type(node.op)](self._eval(node.operand, values, where))
        left, right = self._eval(node.left, values, where), self._eval(node.right, values, where)
        if isinstance(node.op, ast.Div) and right == 0:
            raise InputError(f"division by zero in {ast.unparse(node)!r}", path=self.path, field=where)
        return _BINOPS[type(node.op)](left, right)


def compile_formulas(formulas: Mapping[str, str], leaves: set[str] | Mapping[str, float], path: str = "<schema>") -> CompiledFormulas:
    trees, deps = {}, {}
    known = set(leaves) | set(formulas)
    for name, text in formulas.items():
        if len(text) > 100_000:
            raise InputError(f"formula of {len(text)} characters is too long", path=path, field=name)
        try:
            tree = ast.parse(text, mode="eval")
            visitor = _Whitelist(name, path)
            visitor.visit(tree)
        except SyntaxError as err:
            raise InputError(f"formula {text[:200]!r} is not valid arithmetic ({err.msg})", path=path, field=name) from None
        except (RecursionError, MemoryError):
            raise InputError("formula nested too deeply", path=path, field=name) from None
        unknown = sorted(visitor.names - known)
        if unknown:
            raise InputError(f"formula {text!r} uses unknown variable(s) {unknown}", path=path, field=name)
        trees[name] = tree
        deps[name] = {n for n in visitor.names if n in formulas}
    try:
        order = list(graphlib.TopologicalSorter(deps).static_order())
    except graphlib.CycleError as err:
        raise InputError(f"formulas form a cycle: {' -> '.join(err.args[1])}", path=path, field="formulas") from None
    return CompiledFormulas(trees, order, path)


# --------------------------------------------------------------------------- drivers
def neutral_drivers(schema: Schema) -> dict[str, float]:
    """Drivers that reproduce the year-ago quarter: yoy 0, bps 0, absolute/rate at baseline."""
    out = {}
    for name, meta in schema.drivers.items():
        if meta["type"] in ("yoy", "bps"):
            out[name] = 0.0
        elif meta["variable"] in schema.baseline:
            out[name] = schema.baseline[meta["variable"]]
    return out


def default_drivers(schema: Schema) -> dict[str, float]:
    """What the calculator uses for omitted drivers (rate_override -> `default`, others baseline)."""
    return {name: value for name, value in ((n, _omitted_value(schema, m)) for n, m in schema.drivers.items()) if value is not None}


def _omitted_value(schema: Schema, meta: Mapping[str, Any]) -> float | None:
    if meta["type"] in ("yoy", "bps"):
        return 0.0
    if meta["type"] == "rate_override" and meta.get("default") is not None:
        return float(meta["default"])
    return schema.baseline.get(meta["variable"])


def calculate(schema: Schema, drivers: Mapping[str, Any] | None = None, *, strict: bool = True) -> dict[str, float]:
    """All node values (leaves and formulas) for the given driver values; `eps` among them.

    strict: unknown driver names raise InputError (the agent's calculator tool and the CLI);
    with strict=False they are ignored, as the release's record maker does."""
    drivers = dict(drivers or {})
    unknown = sorted(set(drivers) - set(schema.drivers))
    if unknown and strict:
        raise InputError(f"unknown driver(s) {unknown}; expected some of {sorted(schema.drivers)}", path=schema.path, field="drivers")
    given = {k: _number(v, schema.path, k) for k, v in drivers.items() if k in schema.drivers and v is not None}
    compiled = compile_formulas(schema.formulas, schema.baseline, schema.path)
    base_nodes = compiled.evaluate(schema.baseline)
    leaves = dict(schema.baseline)

    def leaf_baseline(name: str, driver: str) -> float:
        if name not in schema.baseline:
            raise InputError(f"driver names {name!r}, which is not a baseline leaf", path=schema.path, field=f"prediction_schema.{driver}")
        return schema.baseline[name]

    for name, meta in schema.drivers.items():
        kind = meta["type"]
        if kind == "yoy":
            growth = given.get(name, 0.0)
            for leaf in meta.get("constituents") or [meta["variable"]]:
                leaves[leaf] = leaf_baseline(leaf, name) * (1.0 + growth)
        elif kind == "rate_override":
            value = given.get(name, meta.get("default"))
            leaves[meta["variable"]] = leaf_baseline(meta["variable"], name) if value is None else float(value)
        elif kind == "absolute":
            leaves[meta["variable"]] = given[name] if name in given else leaf_baseline(meta["variable"], name)

    propagated = compiled.evaluate(leaves)
    for name, meta in schema.drivers.items():
        if meta["type"] != "bps":
            continue
        anchor = meta["anchor"]
        if anchor not in base_nodes:
            raise InputError(f"bps anchor {anchor!r} is not a leaf or formula", path=schema.path, field=f"prediction_schema.{name}")
        parts = meta.get("constituents") or [meta["variable"]]
        base_parts = {p: leaf_baseline(p, name) for p in parts}
        base_sum = sum(base_parts.values())
        base_share = base_sum / base_nodes[anchor] if base_nodes[anchor] != 0 else 0.0
        new_sum = propagated[anchor] * (base_share + given.get(name, 0.0) / 10_000.0)
        for part, base in base_parts.items():
            leaves[part] = new_sum * base / base_sum if base_sum != 0 else 0.0

    if schema.static_rules:
        after_drivers = compiled.evaluate(leaves)
        for var, rule in schema.static_rules.items():
            leaves[var] = _static_rule(schema, var, rule, base_nodes, after_drivers)
    return compiled.evaluate(leaves)


def _static_rule(schema: Schema, var: str, rule: Any, base_nodes: Mapping[str, float], current: Mapping[str, float]) -> float:
    strategy, rule = (rule, {}) if isinstance(rule, str) else (rule.get("strategy", "carry_forward"), rule)
    base = schema.baseline.get(var, 0.0)
    if strategy == "carry_forward":
        return base
    if strategy == "oracle":
        return _number(rule.get("value", base), schema.path, f"static_rules.{var}.value")
    if strategy == "historical_peg":
        anchor = rule.get("anchor")
        if not anchor:
            return base
        if anchor not in base_nodes:
            raise InputError(f"historical_peg anchor {anchor!r} is unknown", path=schema.path, field=f"static_rules.{var}")
        return current[anchor] * (base / base_nodes[anchor]) if base_nodes[anchor] != 0 else 0.0
    if strategy == "ttm_average":
        return _number(rule.get("ttm_value", base), schema.path, f"static_rules.{var}.ttm_value")
    raise InputError(f"unknown static rule strategy {strategy!r}", path=schema.path, field=f"static_rules.{var}")


def _number(value: Any, path: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(f"{value!r} is not a number", path=path, field=where)
    try:
        number = float(value)
    except ValueError:
        raise InputError(f"{value!r} is not a number", path=path, field=where) from None
    if not math.isfinite(number):
        raise InputError(f"{value!r} is not a finite number", path=path, field=where)
    return number


def operating_node(formulas: Mapping[str, str]) -> str | None:
    """The operating-income subtotal, named as the release's record maker finds it."""
    keys = ("operating_income", "operating_earnings", "income_from_operations", "operating_profit", "earnings_from_operations")
    return next((k for k in formulas if any(x in k for x in keys)), None)


def pretax_node(formulas: Mapping[str, str]) -> str | None:
    return next((k for k in formulas if k.startswith("pretax") or "before_tax" in k or "before_income_tax" in k), None)
