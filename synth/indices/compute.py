"""Compute one registry index for a company and period, with a full computation trace.

    ledgerlm compute --company NVDA --index revenue_yoy --period FY2026Q4 --decimals 2 --json

API (used by synth/finindices):
- `compute(store, company, index_id, period, scope="consolidated", *, registry=None) -> IndexValue`
  IndexValue(index_id, company, period, value (unrounded float), result (kind), unit (currency of the
  facts, '' for pure ratios), trace (list of JSON-able dicts: every fact with concept, period, basis,
  value, report labels and source accessions; every intermediate value), facts (list of FactRef),
  reports (set of ReportKey the computation read), scope).
  Raises `NotDerivable(missing=[report labels])` when a needed report is absent (message names the
  index and the report), `IndexUndefined` when the arithmetic is undefined (division by zero),
  `IndexNotApplicable` (an InputError) when the index is not defined for the filer's accounting standard
  or the period's kind (registry `applies_to` / `periods`),
  `InputError` for an unknown index / bad period.
- `format_answer(value, result_kind, unit=None, decimals=2) -> Decimal`: scales to the unit (units,
  thousands, ten_thousands, millions, hundred_millions, billions for amounts; percent multiplies a
  ratio by 100) and rounds HALF AWAY FROM ZERO in decimal arithmetic (`ROUND_HALF_UP` on the shortest
  repr of the float). `default_unit(result_kind)` gives the unit used when none is asked.
- `INSUFFICIENT = "Insufficient information"`: the answer when the index is not derivable.

Period semantics of the formula operators are in formula.py; flows and balances come from
`FactStore.value` (standalone = YTD difference, TTM = YTD + last FY - prior YTD, balances at period end,
`begin` = previous period end: prior fiscal year end for FY/YTD, prior quarter end for a quarter, the
same quarter a year earlier for TTM).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from ledgerlm.errors import InputError, LedgerError, NotDerivable
from ledgerlm.synth.indices.formula import BinOp, Call, Name, Neg, Node, Num
from ledgerlm.synth.indices.registry import Registry, accounting_standard, check_applicable, load_registry
from ledgerlm.synth.statements.periods import Period, ReportKey, parse_period, parse_report
from ledgerlm.synth.statements.taxonomy import concept_info

INSUFFICIENT = "Insufficient information"
UNIT_SCALES = {
    "units": Decimal(1), "thousands": Decimal(10) ** 3, "ten_thousands": Decimal(10) ** 4, "millions": Decimal(10) ** 6,
    "hundred_millions": Decimal(10) ** 8, "billions": Decimal(10) ** 9,
}
# Interest-bearing concepts that are totals of other interest-bearing concepts: never summed with them.
IB_AGGREGATES = frozenset({"long_term_debt_total"})


class IndexUndefined(LedgerError):
    """The index's arithmetic is undefined for this company and period (e.g. a zero denominator)."""


@dataclass
class IndexValue:
    index_id: str
    company: str
    period: str
    value: float
    result: str
    unit: str
    trace: list[dict]
    facts: list = field(default_factory=list)  # FactRef, in first-use order, deduplicated
    reports: set[ReportKey] = field(default_factory=set)  # read from, or found a counted-as-zero line absent in
    scope: str = "consolidated"
    absent: list[tuple[str, str]] = field(default_factory=list)  # (concept, report label) lines counted as 0


_REGISTRY: Registry | None = None


def default_registry() -> Registry:
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = load_registry()
    return _REGISTRY


def compute(store, company: str, index_id: str, period: Period | str, scope: str = "consolidated", *,
            registry: Registry | None = None) -> IndexValue:
    """Value of `index_id` for `company` over `period`, from the reports `store` can see."""
    registry = registry if registry is not None else default_registry()
    company = store.resolve_company(company)
    p = parse_period(period)
    index = registry[index_id]
    check_applicable(index, accounting_standard(store, company), p.label, company)  # IndexNotApplicable: one line
    ev = _Evaluator(store, company, scope, registry, index_id)
    where = f"index {index_id!r}, company {company}, period {p.label}"
    try:
        value = ev.eval(index.ast, p, "end")
    except NotDerivable as err:
        raise NotDerivable(f"{where}: {err}", company=company, concept=err.concept, period=p.label, missing=err.missing) from None
    except IndexUndefined as err:
        raise IndexUndefined(f"{where}: {err}") from None
    except LedgerError as err:
        raise LedgerError(f"{where}: {err}") from None
    ev.trace.append({"kind": "result", "index": index_id, "formula": index.formula, "period": p.label, "value": value})
    unit = ev.unit if index.result in ("currency", "per_share") else ""
    reports = {_report(label) for label in {f.report for f in ev.facts.values()} | {r for _, r in ev.absent}}
    return IndexValue(index_id, company, p.label, value, index.result, unit, ev.trace, list(ev.facts.values()), reports,
                      scope, sorted(set(ev.absent)))


@functools.lru_cache(maxsize=4096)
def _report(label: str) -> ReportKey:
    """parse_report for the few report labels facts carry (ReportKey is frozen, so sharing is safe)."""
    return parse_report(label)


def default_unit(result_kind: str) -> str:
    return "percent" if result_kind == "percent" else "units"


def format_answer(value: float, result_kind: str, unit: str | None = None, decimals: int = 2) -> Decimal:
    """Scale `value` to `unit` and round to `decimals` places, half away from zero."""
    unit = unit or default_unit(result_kind)
    if not isinstance(decimals, int) or decimals < 0:
        raise InputError(f"decimals must be a non-negative integer, got {decimals!r}", field="decimals")
    exact = Decimal(repr(float(value)))
    if result_kind == "percent" and unit == "percent":
        scaled = exact * 100
    elif result_kind == "currency" and unit in UNIT_SCALES:
        scaled = exact / UNIT_SCALES[unit]
    elif unit == "units":
        scaled = exact
    else:
        allowed = ["percent", "units"] if result_kind == "percent" else list(UNIT_SCALES) if result_kind == "currency" else ["units"]
        raise InputError(f"unit {unit!r} does not apply to a {result_kind} result (use one of {allowed})", field="unit")
    return scaled.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


class _Evaluator:
    """Walks a formula AST at a period; records every fact and intermediate value in `trace`."""

    def __init__(self, store, company: str, scope: str, registry: Registry, index_id: str):
        self.store, self.company, self.scope, self.registry, self.index_id = store, company, scope, registry, index_id
        self.trace: list[dict] = []
        self.facts: dict[tuple, object] = {}
        self.absent: list[tuple[str, str]] = []  # (concept, report) lines the report shows no value for
        self.memo: dict[tuple, float] = {}
        self.unit = ""

    def eval(self, node: Node, p: Period, basis: str) -> float:
        """The node's value at (p, basis), once per evaluation: keyed by the node's text, so equal subformulas of
        different indices (`revenue` in a formula and in the index it reads) are one step of the trace."""
        key = (node.text, p.label, basis)  # a label names one period (a str hashes in C, a Period in Python)
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = self._eval(node, p, basis)
        return hit

    def _eval(self, node: Node, p: Period, basis: str) -> float:
        if isinstance(node, Name):  # the node kinds in the order of how often they are met
            return self._name(node.name, p, basis)
        if isinstance(node, Call):
            return self._call(node, p, basis)
        if isinstance(node, Num):
            return node.value
        if isinstance(node, Neg):
            return self._calc(node, p, basis, -self.eval(node.operand, p, basis))
        if isinstance(node, BinOp):
            left, right = self.eval(node.left, p, basis), self.eval(node.right, p, basis)
            if node.op == "/" and right == 0:
                raise IndexUndefined(f"division by zero in {node} ({_r(left)} / 0)")
            op = node.op
            value = left + right if op == "+" else left - right if op == "-" else left * right if op == "*" else left / right
            return self._calc(node, p, basis, value, f"{_r(left)} {node.op} {_r(right)}")
        raise TypeError(f"not a formula node: {node!r}")

    def _calc(self, node: Node, p: Period, basis: str, value: float, arithmetic: str = "") -> float:
        step = {"kind": "calc", "expr": node.text, "period": p.label, "value": value}
        if basis != "end":
            step["basis"] = basis
        if arithmetic:
            step["arithmetic"] = arithmetic
        self.trace.append(step)
        return value

    def _call(self, node: Call, p: Period, basis: str) -> float:
        f, args = node.func, node.args
        if f in ("abs", "sum_of", "min_of", "max_of"):
            vals = [self.eval(a, p, basis) for a in args]
            value = {"abs": lambda v: abs(v[0]), "sum_of": sum, "min_of": min, "max_of": max}[f](vals)
            return self._calc(node, p, basis, value, f"{f}({', '.join(_r(v) for v in vals)})")
        if f == "first_of":
            return self._first_of(node, p, basis)
        (arg,) = args
        if f == "optional":
            return self._optional(node, p, basis)
        if f == "begin":
            return self._calc(node, p, "begin", self.eval(arg, p, "begin"))
        if f == "end":
            return self._calc(node, p, "end", self.eval(arg, p, "end"))
        if f == "avg":
            b, e = self.eval(arg, p, "begin"), self.eval(arg, p, "end")
            return self._calc(node, p, basis, (b + e) / 2, f"({_r(b)} + {_r(e)}) / 2")
        if f == "annualize":
            v = self.eval(arg, p, basis)
            return self._calc(node, p, basis, v * 12 / p.months, f"{_r(v)} x 12 / {p.months}")
        shifted = _shift(f, p, self.index_id)
        value = self.eval(arg, shifted, basis)
        return self._calc(node, p, basis, value, f"{arg} at {shifted.label}")

    def _optional(self, node: Call, p: Period, basis: str) -> float:
        try:
            return self.eval(node.args[0], p, basis)
        except NotDerivable as err:
            if err.missing:
                raise  # a report is absent: still not derivable
            # the report is shown but has no such line (FactStore raises with missing=[]): it counts as 0
            if err.concept and err.period:
                self.absent.append((err.concept, err.period))
            return self._calc(node, p, basis, 0.0, f"{node.args[0]} is not shown in the {err.period} report: 0")

    def _first_of(self, node: Call, p: Period, basis: str) -> float:
        """The first argument the shown reports derive (a line not shown falls through to the next)."""
        for n, arg in enumerate(node.args):
            try:
                value = self.eval(arg, p, basis)
            except NotDerivable as err:
                if err.missing or n == len(node.args) - 1:
                    raise  # a report is absent, or no alternative is shown: not derivable
                continue
            skipped = ", ".join(str(a) for a in node.args[:n])
            return self._calc(node, p, basis, value, f"{arg}" + (f" ({skipped} not shown)" if skipped else ""))
        raise AssertionError("first_of() has at least one argument")

    def _name(self, name: str, p: Period, basis: str) -> float:
        if name == "days_in_period":
            return float(30 * p.months)
        if name == "months_in_period":
            return float(p.months)
        if name in ("interest_bearing_liabilities", "non_interest_bearing_liabilities"):
            return self._interest_bearing(name, p, basis)
        if name in self.registry:  # another index (YAML entries only; concepts are read directly)
            value = self._index(name, p, basis)
            step = {"kind": "index", "index": name, "formula": self.registry[name].formula, "period": p.label, "value": value}
            if basis != "end":
                step["basis"] = basis
            self.trace.append(step)
            return value
        return self._fact(name, p, basis)

    def _index(self, name: str, p: Period, basis: str) -> float:
        """Another index's value at (p, basis). Indices read the same sub-indices over and over (interest-bearing debt
        in a dozen debt, capital and return indices, each at a period and a year earlier), so on the full store an
        evaluation of a sub-index is recorded once, from an empty memo, and replayed into every later evaluation whose
        memo holds none of the recording's keys: then a fresh evaluation would add exactly the recorded trace steps,
        facts, absent lines, unit and memo entries. Otherwise (a shared key: the evaluation reuses one of its steps),
        and for a sub-index that raises, it is evaluated here as before."""
        ast = self.registry[name].ast
        memo = self._recordings()
        if memo is None:
            return self.eval(ast, p, basis)
        key = (self.company, self.scope, name, p.label, basis)
        rec = memo.get(key)
        if rec is None:
            rec = memo[key] = self._record(ast, p, basis)
        if rec is _FAILS or any(k in self.memo for k in rec.memo):
            return self.eval(ast, p, basis)
        self.trace += rec.trace
        for k, ref in rec.facts.items():
            self.facts.setdefault(k, ref)
        self.absent += rec.absent
        self.unit = self.unit or rec.unit
        self.memo.update(rec.memo)
        return rec.memo[(ast.text, p.label, basis)]

    def _recordings(self) -> dict | None:
        """This registry's recordings on this store (None: a view, or a store that keeps none). Per registry object:
        another registry may define an index of the same name otherwise."""
        memo = getattr(self.store, "index_memo", lambda: None)()
        if memo is None:
            return None
        kept = memo.get(id(self.registry))
        if kept is None or kept[0] is not self.registry:  # (a registry made where a collected one was)
            kept = memo[id(self.registry)] = (self.registry, {})
        return kept[1]

    def _record(self, ast: Node, p: Period, basis: str):
        """A fresh evaluation of `ast` (its trace, facts, absent lines, unit and memo), or _FAILS when it raises (errors
        name the asking index, and what an error leaves behind is not replayed)."""
        child = _Evaluator(self.store, self.company, self.scope, self.registry, self.index_id)
        try:
            child.eval(ast, p, basis)
        except LedgerError:
            return _FAILS
        child.registry = child.store = None  # what is replayed, not what it was read from
        return child

    def _fact(self, concept: str, p: Period, basis: str) -> float:
        d = self.store.shared_value(self.company, concept, p, self.scope, basis)  # read only: never copied
        for ref in d.inputs:
            self.facts.setdefault((ref.concept, ref.report, ref.source), ref)
        if not self.unit and d.unit and "/" not in d.unit and d.unit.lower() != "shares":
            self.unit = d.unit
        self.trace.append(_fact_step(d, concept, p.label, basis))
        return d.value

    def _interest_bearing(self, name: str, p: Period, basis: str) -> float:
        """Sum the liabilities the taxonomy marks interest-bearing, as shown in the balance-sheet report."""
        total = self._fact("total_liabilities", p, basis)  # raises NotDerivable when the report is absent
        items = []
        for concept in self.store.concepts(self.company, self.scope):
            try:
                info = concept_info(concept)
            except KeyError:
                continue
            if info.statement != "balance" or info.interest_bearing is not True or concept in IB_AGGREGATES:
                continue
            try:
                d = self.store.shared_value(self.company, concept, p, self.scope, basis)
            except NotDerivable:
                continue  # the report shows no such line: it is zero there
            for ref in d.inputs:
                self.facts.setdefault((ref.concept, ref.report, ref.source), ref)
            items.append({"concept": concept, "value": d.value,
                          "inputs": [{"concept": r.concept, "report": r.report, "value": r.value, "source": r.source} for r in d.inputs]})
        ib = sum(i["value"] for i in items)
        value = ib if name == "interest_bearing_liabilities" else total - ib
        self.trace.append({"kind": "aggregate", "name": name, "period": p.label, "basis": basis, "value": value,
                           "total_liabilities": total, "interest_bearing_items": items,
                           "arithmetic": " + ".join(_r(i["value"]) for i in items) or "0"
                           if name == "interest_bearing_liabilities" else f"{_r(total)} - ({' + '.join(_r(i['value']) for i in items) or '0'})"})
        return value


_FAILS = object()  # a recorded sub-index evaluation that raised (see _Evaluator._index)


def _fact_step(d, concept: str, label: str, basis: str) -> dict:
    """The trace step of reading `concept` at (label, basis) as `d`, built once per Derived and kept on it: the full
    store hands every compute of the company the same remembered Derived, so its traces share the step (as they share
    its FactRefs; an IndexValue is only ever read, see finindices/solutions.py `_per_value`)."""
    key = (concept, label, basis)
    kept = d.__dict__.get("_trace_step")
    if kept is not None and kept[0] == key:
        return kept[1]
    step = {"kind": "fact", "concept": concept, "period": label, "basis": basis, "value": d.value, "unit": d.unit,
            "inputs": [{"concept": r.concept, "report": r.report, "value": r.value, "source": r.source} for r in d.inputs],
            "steps": list(d.steps)}
    d.__dict__["_trace_step"] = (key, step)
    return step


def _shift(op: str, p: Period, index_id: str) -> Period:
    """The period a period operator evaluates its argument at."""
    y, q = p.fiscal_year, p.quarter
    if op == "prior_year":
        return p.prior_year()
    if op == "prior_quarter":
        try:
            return p.prior_quarter()
        except ValueError as err:
            raise InputError(f"index {index_id!r}: prior_quarter() needs a quarterly, YTD or TTM period: {err}", field="period") from None
    if op == "ytd":
        return Period(y, "YTD", q).normalized()
    if op in ("standalone", "quarter"):
        return Period(y, "Q", q)
    if op == "ttm":
        return Period(y, "FY", 4) if q == 4 else Period(y, "TTM", q)
    raise InputError(f"index {index_id!r}: unknown period operator {op!r}", field="formula")


def _r(x: float) -> str:
    """A float for a trace line: integers without decimals, amounts >= 1,000 with 2 decimals, smaller
    values with up to 10 significant digits (never e-notation in a worked solution)."""
    if float(x).is_integer():
        return f"{x:,.0f}"
    return f"{x:,.2f}" if abs(x) >= 1e3 else f"{x:,.10g}"
