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
import operator
from dataclasses import dataclass, field
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal, InvalidOperation, getcontext
from typing import Callable

from ledgerlm.errors import InputError, LedgerError, NotDerivable
from ledgerlm.synth.indices.formula import BinOp, Call, Name, Neg, Node, Num
from ledgerlm.synth.indices.registry import Registry, accounting_standard, check_applicable, load_registry
from ledgerlm.synth.statements.periods import Period, ReportKey, parse_period, parse_report
from ledgerlm.synth.statements.factindex import currency_of
from ledgerlm.synth.statements.store import forget_frames, fresh_copy
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
    p = parse_period(period)
    index = registry[index_id]
    steps = _steps(registry)
    company, standard, recordings, readings = _context(store, registry, company, scope)
    passed = (index_id, standard, p.kind, p.quarter)  # the check depends on these only (the period through its kind)
    if passed not in steps.applicable:
        check_applicable(index, standard, p.label, company)  # IndexNotApplicable: one line
        steps.applicable.add(passed)
    ev = _Evaluator(store, company, scope, registry, index_id, recordings, readings)
    try:
        value = (steps.by_text.get(index.ast.text) or steps.step(index.ast))(ev, p, "end")  # (`_Evaluator.eval`, inlined)
    except NotDerivable as err:
        raise NotDerivable(f"{_where(index_id, company, p)}: {err}", company=company, concept=err.concept, period=p.label,
                           missing=err.missing) from None
    except IndexUndefined as err:
        raise IndexUndefined(f"{_where(index_id, company, p)}: {err}") from None
    except LedgerError as err:
        raise LedgerError(f"{_where(index_id, company, p)}: {err}") from None
    mixed_bases = getattr(store, "mixed_bases", None)
    reason = mixed_bases(company, scope, ev.facts.values()) if mixed_bases is not None and len(ev.facts) > 1 else None
    if reason is not None:  # figures of one concept from two bases (a restatement only one of them saw)
        raise NotDerivable(f"{_where(index_id, company, p)}: {reason}", company=company, concept="", period=p.label, missing=[])
    if len(ev.facts) > 1:  # a cell holds the reporting currency where a filing gives it (indexing.reporting_currency_first);
        # where one gives another only, an index over both would divide or add figures of two currencies
        currencies = {c for c in (currency_of(f.unit) for f in ev.facts.values()) if c is not None}
        if len(currencies) > 1:
            raise IndexUndefined(f"{_where(index_id, company, p)}: its figures are in {' and '.join(sorted(currencies))} "
                                 "(the reports give no exchange rate)")
    if index.positive_base:
        try:
            _refuse_non_positive_base(ev, index, p, "end")
        except IndexUndefined as err:
            raise IndexUndefined(f"{_where(index_id, company, p)}: {err}") from None
    ev.trace.append({"kind": "result", "index": index_id, "formula": index.formula, "period": p.label, "value": value})
    unit = ev.unit if index.result in ("currency", "per_share") else ""
    labels = {key[1] for key in ev.facts}  # keys are (concept, report label, source)
    absent = ev.absent
    if absent:  # (most computes count no line as absent)
        labels.update(report for _, report in absent)
        absent = sorted(set(absent))
    reports = {_report(label) for label in labels}
    return IndexValue(index_id, company, p.label, value, index.result, unit, ev.trace, list(ev.facts.values()), reports,
                      scope, absent)


def _refuse_non_positive_base(ev: "_Evaluator", index, p: Period, basis: str) -> None:
    """IndexUndefined where a ratio's base (`Index.positive_base`: net income, EBITDA, equity, invested capital) is <= 0;
    the denominator's step is memoised by the evaluation that just divided by it."""
    base = _steps(ev.registry).step(index.ast.right)(ev, p, basis)
    if base <= 0:
        raise IndexUndefined(f"{index.id} is not meaningful: its base {index.ast.right.text} is {_r(base)} (<= 0)")


def _where(index_id: str, company: str, p: Period) -> str:
    """What an error of compute() names (written only when one is raised)."""
    return f"index {index_id!r}, company {company}, period {p.label}"


def _context(store, registry: Registry, company: str, scope: str) -> tuple[str, str | None, dict | None, dict | None]:
    """(the store's company key, its accounting standard, `_kept`'s recordings and readings) for a company as compute()
    is asked for it; on a full store kept beside the recordings, per (registry, company as asked, scope), so the
    17k computes of --num 10000 look them up once each instead of resolving, reading the standard and `_kept`). Kept
    in the memo's "facts" dict, beside the readings (keyed (company, scope)), under ("context", registry id, company
    as asked, scope)."""
    index_memo = getattr(store, "index_memo", None)
    memo = index_memo() if index_memo is not None else None
    key = ("context", id(registry), company, scope)
    if memo is not None:
        by_company = memo.get("facts")
        hit = by_company.get(key) if by_company is not None else None
        if hit is not None and hit[0] is registry:
            return hit[1]
    resolved = store.resolve_company(company)
    context = (resolved, accounting_standard(store, resolved), *_kept(store, registry, resolved, scope))
    if memo is not None:
        memo["facts"][key] = (registry, context)  # (_kept made the "facts" dict)
    return context


def _kept(store, registry: Registry, company: str, scope: str) -> tuple[dict | None, dict | None]:
    """What compute() keeps on a full store for later evaluations (None, None on a view, or a store that keeps
    nothing): this registry's recorded sub-index evaluations (per registry object: another registry may define an
    index of the same name otherwise), and the company's fact readings at this scope (see `_Evaluator._fact`)."""
    index_memo = getattr(store, "index_memo", None)
    memo = index_memo() if index_memo is not None else None
    if memo is None:
        return None, None
    kept = memo.get(id(registry))
    if kept is None or kept[0] is not registry:  # (a registry made where a collected one was)
        kept = memo[id(registry)] = (registry, {})
    by_company = memo.get("facts")
    if by_company is None:
        by_company = memo["facts"] = {}
    readings = by_company.get((company, scope))
    if readings is None:
        readings = by_company[(company, scope)] = {}
    return kept[1], readings


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
    quantum = Decimal(1).scaleb(-decimals)
    # a value a float operation left a few ulps short of a rounding boundary is on it: (-0.70 - -0.64) / 0.64 is
    # -0.09375 exactly, -0.0937499999999999 in floats, -9.375 % -> -9.38 half away from zero, not -9.37
    steps = scaled / quantum
    below = steps.to_integral_value(rounding=ROUND_FLOOR)
    boundary = (below + Decimal("0.5")) * quantum
    gap = abs(scaled - boundary)
    if scaled != boundary and gap <= abs(scaled) * FLOAT_NOISE and gap <= quantum * BOUNDARY_SHARE:
        scaled = boundary  # (never a whole figure: 321,319,000,000 at 3 decimals is 0.0005 from a boundary, not on it)
    try:
        return scaled.quantize(quantum, rounding=ROUND_HALF_UP)
    except InvalidOperation:  # more digits than a Decimal holds (28): one error, not decimal.InvalidOperation
        raise InputError(f"{decimals} decimals of {scaled:.6g} need more than {getcontext().prec} significant digits; "
                         "use fewer decimals", field="decimals") from None


BOUNDARY_SHARE = Decimal("1e-6")  # ... and within this share of the quantum: float noise, not a value of the figures
FLOAT_NOISE = Decimal("1e-14")  # relative: ~45 ulps, above the error of a few float operations, below any figure's precision


class _Evaluator:
    """Walks a formula at a period through its compiled steps (`_steps`); records every fact and intermediate value
    in `trace`."""

    __slots__ = ("store", "company", "scope", "registry", "index_id", "recordings", "readings", "trace", "facts", "absent",
                 "memo", "unit")

    def __init__(self, store, company: str, scope: str, registry: Registry, index_id: str, recordings: dict | None = None,
                 readings: dict | None = None):
        self.store, self.company, self.scope, self.registry, self.index_id = store, company, scope, registry, index_id
        self.recordings, self.readings = recordings, readings  # kept on a full store (`_kept`), else None
        self.trace: list[dict] = []
        self.facts: dict[tuple, object] = {}
        self.absent: list[tuple[str, str]] = []  # (concept, report) lines the report shows no value for
        self.memo: dict[tuple, float] = {}
        self.unit = ""

    def eval(self, node: Node, p: Period, basis: str) -> float:
        """The node's value at (p, basis), once per evaluation: keyed by the node's text, so equal subformulas of
        different indices (`revenue` in a formula and in the index it reads) are one step of the trace."""
        steps = self.registry.__dict__.get("_compiled_steps") or _steps(self.registry)  # (`_steps`, its lookup inlined)
        return (steps.by_text.get(node.text) or steps.step(node))(self, p, basis)

    def _calc(self, text: str, p: Period, basis: str, value: float, arithmetic: str = "") -> float:
        step = {"kind": "calc", "expr": text, "period": p.label, "value": value}
        if basis != "end":
            step["basis"] = basis
        if arithmetic:
            step["arithmetic"] = arithmetic
        self.trace.append(step)
        return value

    def _sub_index(self, name: str, p: Period, basis: str) -> float:
        """Another index's value at (p, basis), with its trace step."""
        value = self._index(name, p, basis)
        step = {"kind": "index", "index": name, "formula": self.registry[name].formula, "period": p.label, "value": value}
        if basis != "end":
            step["basis"] = basis
        self.trace.append(step)
        return value

    def _index(self, name: str, p: Period, basis: str) -> float:
        """Another index's value at (p, basis), refused where it is a ratio over a base that is not positive
        (`Index.positive_base`: OCF / net income inside its own YoY across a loss year, as at the top level)."""
        value = self._index_value(name, p, basis)
        ix = self.registry[name]
        if ix.positive_base:
            _refuse_non_positive_base(self, ix, p, basis)
        return value

    def _index_value(self, name: str, p: Period, basis: str) -> float:
        """Another index's value at (p, basis). Indices read the same sub-indices over and over (interest-bearing debt
        in a dozen debt, capital and return indices, each at a period and a year earlier), so on the full store an
        evaluation of a sub-index is recorded once, from an empty memo, and replayed into every later evaluation whose
        memo holds none of the recording's keys: then a fresh evaluation would add exactly the recorded trace steps,
        facts, absent lines, unit and memo entries. Otherwise (a shared key: the evaluation reuses one of its steps),
        and for a sub-index that raises, it is evaluated here as before."""
        ast = self.registry[name].ast
        memo = self.recordings
        if memo is None:
            return self.eval(ast, p, basis)
        key = (self.company, self.scope, name, p.label, basis)
        rec = memo.get(key)
        if rec is None:
            rec = memo[key] = self._record(ast, p, basis)
        if rec is _FAILS:
            return self.eval(ast, p, basis)
        failed = type(rec) is _Failed
        error, rec = (rec.error, rec.state) if failed else (None, rec)
        if not self.memo.keys().isdisjoint(rec.memo.keys()):  # (two views: the smaller one is scanned)
            return self.eval(ast, p, basis)
        self.trace += rec.trace
        if self.facts:
            for k, ref in rec.facts.items():
                self.facts.setdefault(k, ref)
        else:  # the first facts of this evaluation: the recording's, in its order
            self.facts.update(rec.facts)
        self.absent += rec.absent
        self.unit = self.unit or rec.unit
        self.memo.update(rec.memo)
        if failed:
            raise fresh_copy(error)
        return rec.memo[(ast.text, p.label, basis)]

    def _record(self, ast: Node, p: Period, basis: str):
        """A fresh evaluation of `ast` (its trace, facts, absent lines, unit and memo), or _FAILS when it raises an error
        that names the asking index (an evaluation that raises NotDerivable or IndexUndefined, which name only the
        company, the concept, the report or the formula, is recorded as `_Failed`: what it left behind up to the error,
        and the error, replayed as a fresh evaluation in the asking one would leave and raise them: the nodes that raised
        were never remembered, and they raise wherever they are evaluated)."""
        child = _Evaluator(self.store, self.company, self.scope, self.registry, self.index_id, self.recordings, self.readings)
        try:
            child.eval(ast, p, basis)
        except LedgerError as err:
            if type(err) is not NotDerivable and type(err) is not IndexUndefined:
                return _FAILS
            child.registry = child.store = child.recordings = child.readings = None
            return _Failed(child, forget_frames(err))
        child.registry = child.store = child.recordings = child.readings = None  # what is replayed, not what it was read from
        return child

    def _fact(self, concept: str, p: Period, basis: str) -> float:
        """Read a concept's value at (p, basis): its facts, the currency (the first non-per-share unit) and a trace
        step; a copy of the error when it is not derivable."""
        reading = self._read(concept, p, basis)
        if type(reading) is not tuple:
            raise fresh_copy(reading)
        return self._take(reading)

    def _read(self, concept: str, p: Period, basis: str):
        """The reading of a concept at (p, basis) (see `_reading`), or the LedgerError it gives (returned: never raise
        it as is). On a full store each reading, or error, is made once per (concept, period, basis) and kept in
        `readings` only (the store's derivation, not remembered by the store too: `FactStore.derive_or_error`), already
        in the form an evaluation adds."""
        readings = self.readings
        if readings is None:
            got = self.store.shared_or_error(self.company, concept, p, self.scope, basis)  # (the store's own Derived)
            return got if isinstance(got, Exception) else _reading(got, concept, p.label, basis, list(got.steps))
        key = (concept, p.label, basis)
        reading = readings.get(key)
        if reading is None:
            got = self.store.derive_or_error(self.company, concept, p, self.scope, basis)  # (a Derived made for this call)
            reading = readings[key] = got if isinstance(got, Exception) else _reading(got, concept, p.label, basis, got.steps)
        return reading

    def _take(self, reading: tuple) -> float:
        """Add a reading's facts, unit and trace step to this evaluation; its value."""
        value, refs, unit, step = reading
        for k, ref in refs:
            self.facts.setdefault(k, ref)
        if unit and not self.unit:
            self.unit = unit
        self.trace.append(step)
        return value

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


_FAILS = object()  # a recorded sub-index evaluation that raised an error naming the asking index (see _Evaluator._index)


class _Failed:
    """A recorded sub-index evaluation that raised `error` (NotDerivable / IndexUndefined) after leaving `state` (the
    child _Evaluator): replayed like a recording, then a copy of the error is raised (see _Evaluator._record)."""

    __slots__ = ("state", "error")

    def __init__(self, state: "_Evaluator", error: LedgerError):
        self.state, self.error = state, error


Step = Callable[[_Evaluator, Period, str], float]  # a compiled formula node: its value at (period, basis)
_AGGREGATES = {"abs": lambda v: abs(v[0]), "sum_of": sum, "min_of": min, "max_of": max}
_ARITHMETIC = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}


def _steps(registry: Registry) -> "_Steps":
    """The compiled steps of `registry`'s formulas, kept on the registry object (a name is a sub-index or a concept
    depending on the registry, so steps are never shared between registries; a registry is not changed once used)."""
    steps = registry.__dict__.get("_compiled_steps")
    if steps is None:
        steps = registry.__dict__["_compiled_steps"] = _Steps(registry)
    return steps


class _Steps:
    """Formula nodes compiled into step functions, once per node text (equal texts are equal formulas: the memo of an
    evaluation already keys on the text). A step does at run time only what depends on the period, the basis and the
    evaluator; which operator, which kind of name and the texts of the trace are settled when it is compiled, instead
    of being looked up again at every node of every evaluation."""

    def __init__(self, registry: Registry):
        self.registry = registry
        self.by_text: dict[str, Step] = {}
        self.applicable: set[tuple] = set()  # (index id, standard, period kind, quarter) that passed check_applicable

    def step(self, node: Node) -> Step:
        """The node's step: its value at (p, basis), computed once per evaluation (`_Evaluator.memo`)."""
        hit = self.by_text.get(node.text)
        if hit is None:
            run = self._compile(node)
            hit = self.by_text[node.text] = run.run if isinstance(run, _Memoised) else _memoised(node.text, run)
        return hit

    def _compile(self, node: Node) -> Step:
        if isinstance(node, Name):
            return self._name(node.name)
        if isinstance(node, Call):
            return self._call(node)
        if isinstance(node, Num):
            value = node.value
            return lambda ev, p, basis: value
        if isinstance(node, Neg):
            operand, text = self.step(node.operand), node.text
            return lambda ev, p, basis: ev._calc(text, p, basis, -operand(ev, p, basis))
        if isinstance(node, BinOp):
            return self._binop(node)
        raise TypeError(f"not a formula node: {node!r}")

    def _is_concept(self, name: str) -> bool:
        """Is the name a concept read from the store (`_Evaluator._fact`), not an index or a special name?"""
        return name not in _SPECIAL_NAMES and name not in self.registry

    def _name(self, name: str) -> Step:
        if self._is_concept(name):  # a concept: the memo lookup inlined (see `step`)
            return _fact_step(name)
        if name == "days_in_period":
            return lambda ev, p, basis: float(30 * p.months)
        if name == "months_in_period":
            return lambda ev, p, basis: float(p.months)
        if name in ("interest_bearing_liabilities", "non_interest_bearing_liabilities"):
            return lambda ev, p, basis: ev._interest_bearing(name, p, basis)
        if name in self.registry:  # another index (YAML entries only; concepts are read directly)
            return lambda ev, p, basis: ev._sub_index(name, p, basis)
        return lambda ev, p, basis: ev._fact(name, p, basis)

    def _binop(self, node: BinOp) -> _Memoised:
        """A binary operation's step, memoised as `_memoised` does and with `_Evaluator._calc`'s trace step, in one
        frame (177k of the 403k memoised steps of the bulk stand-in's 45k computes are binary operations)."""
        left, right, op, text = self.step(node.left), self.step(node.right), node.op, node.text
        combine = _ARITHMETIC[op]

        def run(ev: _Evaluator, p: Period, basis: str) -> float:
            key = (text, p.label, basis)
            hit = ev.memo.get(key)
            if hit is not None:
                return hit
            a, b = left(ev, p, basis), right(ev, p, basis)
            if op == "/" and b == 0:
                raise IndexUndefined(f"division by zero in {text} ({_r(a)} / 0)")
            value, arithmetic = combine(a, b), f"{_r(a)} {op} {_r(b)}"
            if basis == "end":
                ev.trace.append({"kind": "calc", "expr": text, "period": p.label, "value": value, "arithmetic": arithmetic})
            else:
                ev.trace.append({"kind": "calc", "expr": text, "period": p.label, "value": value, "basis": basis, "arithmetic": arithmetic})
            ev.memo[key] = value
            return value
        return _Memoised(run)

    def _call(self, node: Call) -> Step:
        f, text, args = node.func, node.text, [self.step(a) for a in node.args]
        if f in _AGGREGATES:
            combine = _AGGREGATES[f]

            def aggregate(ev: _Evaluator, p: Period, basis: str) -> float:
                vals = [arg(ev, p, basis) for arg in args]
                return ev._calc(text, p, basis, combine(vals), f"{f}({', '.join(_r(v) for v in vals)})")
            return aggregate
        if f == "first_of":
            return _first_of(text, args, [a.text for a in node.args])
        (arg,) = args
        arg_text = node.args[0].text
        if f == "optional":
            if isinstance(node.args[0], Name) and self._is_concept(node.args[0].name):
                return _optional_fact(text, arg_text)
            return _optional(text, arg, arg_text)
        if f in ("begin", "end"):
            return lambda ev, p, basis: ev._calc(text, p, f, arg(ev, p, f))
        if f == "avg":
            def avg(ev: _Evaluator, p: Period, basis: str) -> float:
                b, e = arg(ev, p, "begin"), arg(ev, p, "end")
                return ev._calc(text, p, basis, (b + e) / 2, f"({_r(b)} + {_r(e)}) / 2")
            return avg
        if f == "annualize":
            def annualize(ev: _Evaluator, p: Period, basis: str) -> float:
                v = arg(ev, p, basis)
                return ev._calc(text, p, basis, v * 12 / p.months, f"{_r(v)} x 12 / {p.months}")
            return annualize

        def shift(ev: _Evaluator, p: Period, basis: str) -> float:
            shifted = _SHIFTED.get((f, p.label)) or _shifted(f, p, ev.index_id)
            where = f"the beginning of {shifted.label}" if basis == "begin" else shifted.label  # begin(ytd(x)): the
            return ev._calc(text, p, basis, arg(ev, shifted, basis), f"{arg_text} at {where}")  # year's opening balance
        return shift


_SPECIAL_NAMES = frozenset({"days_in_period", "months_in_period", "interest_bearing_liabilities", "non_interest_bearing_liabilities"})


class _Memoised:
    """A step that memoises itself (`_Steps.step` does not wrap it in `_memoised`)."""

    def __init__(self, run: Step):
        self.run = run


def _fact_step(name: str) -> _Memoised:
    """A concept's step, memoised as `_memoised` does, in one frame (a fifth of a cold compute's steps read a fact) with
    `_Evaluator._fact` and the lookup of a kept reading (`_Evaluator._read`'s: the memo and the readings share the key
    (concept, period label, basis))."""
    def fact(ev: _Evaluator, p: Period, basis: str) -> float:
        key = (name, p.label, basis)
        hit = ev.memo.get(key)
        if hit is not None:
            return hit
        readings = ev.readings
        reading = readings.get(key) if readings is not None else None
        if reading is None:
            reading = ev._read(name, p, basis)
        if type(reading) is not tuple:
            raise fresh_copy(reading)
        hit = ev.memo[key] = ev._take(reading)
        return hit
    return _Memoised(fact)


def _memoised(text: str, run: Step) -> Step:
    """`run` computed once per evaluation at each (period, basis): the memo key is the node's text."""
    def step(ev: _Evaluator, p: Period, basis: str) -> float:
        key = (text, p.label, basis)  # a label names one period (a str hashes in C, a Period in Python)
        hit = ev.memo.get(key)
        if hit is None:
            hit = ev.memo[key] = run(ev, p, basis)
        return hit
    return step


def _optional(text: str, arg: Step, arg_text: str) -> Step:
    def optional(ev: _Evaluator, p: Period, basis: str) -> float:
        try:
            return arg(ev, p, basis)
        except NotDerivable as err:
            if err.missing:
                raise  # a report is absent: still not derivable
            # the report is shown but has no such line (FactStore raises with missing=[]): it counts as 0
            if err.concept and err.period:
                ev.absent.append((err.concept, err.period))
            return ev._calc(text, p, basis, 0.0, f"{arg_text} is not shown in the {err.period} report: 0")
    return optional


def _optional_fact(text: str, name: str) -> Step:
    """`_optional` of a concept: the store's error is looked at, not raised and caught (the lines it reads are mostly
    not shown). The concept's own step is the memo lookup of (name, period, basis) and `_Evaluator._fact`, inlined."""
    def optional(ev: _Evaluator, p: Period, basis: str) -> float:
        key = (name, p.label, basis)
        hit = ev.memo.get(key)
        if hit is not None:
            return hit
        reading = ev._read(name, p, basis)
        if type(reading) is tuple:
            hit = ev.memo[key] = ev._take(reading)
            return hit
        if not isinstance(reading, NotDerivable) or reading.missing:
            raise fresh_copy(reading)  # a report is absent: still not derivable
        # the report is shown but has no such line (FactStore gives missing=[]): it counts as 0
        if reading.concept and reading.period:
            ev.absent.append((reading.concept, reading.period))
        return ev._calc(text, p, basis, 0.0, f"{name} is not shown in the {reading.period} report: 0")
    return optional


def _first_of(text: str, args: list[Step], arg_texts: list[str]) -> Step:
    """The first argument the shown reports derive (a line not shown falls through to the next)."""
    def first_of(ev: _Evaluator, p: Period, basis: str) -> float:
        for n, arg in enumerate(args):
            try:
                value = arg(ev, p, basis)
            except NotDerivable as err:
                if err.missing or n == len(args) - 1:
                    raise  # a report is absent, or no alternative is shown: not derivable
                continue
            skipped = ", ".join(arg_texts[:n])
            return ev._calc(text, p, basis, value, arg_texts[n] + (f" ({skipped} not shown)" if skipped else ""))
        raise AssertionError("first_of() has at least one argument")
    return first_of


def _reading(d, concept: str, label: str, basis: str, steps: list[str]) -> tuple[float, tuple, str, dict]:
    """What reading `concept` at (label, basis) as the Derived `d` adds to an evaluation: its value, its facts as
    (key, FactRef) pairs, the unit it may give the result ('' for per-share amounts and share counts) and its trace
    step, whose derivation text is `steps` (the caller's copy of `d.steps`, or the list itself when `d` is its own).
    A full store's readings are kept and shared by every compute of the company, so their traces share the step
    dict (as they share the FactRefs; an IndexValue is only ever read, see finindices/solutions.py `_per_value`)."""
    unit = d.unit if d.unit and "/" not in d.unit and d.unit.lower() != "shares" else ""
    inputs = d.inputs
    if len(inputs) == 1:  # one cell as its report shows it: most readings (no comprehension frames for one element)
        r = inputs[0]
        refs = (((r.concept, r.report, r.source), r),)
        shown = [{"concept": r.concept, "report": r.report, "value": r.value, "source": r.source}]
    else:
        refs = tuple([((r.concept, r.report, r.source), r) for r in inputs])
        shown = [{"concept": r.concept, "report": r.report, "value": r.value, "source": r.source} for r in inputs]
    step = {"kind": "fact", "concept": concept, "period": label, "basis": basis, "value": d.value, "unit": d.unit,
            "inputs": shown, "steps": steps}
    return d.value, refs, unit, step


_SHIFTED: dict[tuple[str, str], Period] = {}  # (operator, period label) -> the period it shifts to (see _shifted)


def _shifted(op: str, p: Period, index_id: str) -> Period:
    """`_shift`, one shared Period per (operator, period label): periods are frozen, and a shared one keeps its label
    (and the labels of the reports read at it) instead of building them again at every evaluation. Errors are not
    kept (they name the asking index)."""
    hit = _SHIFTED[(op, p.label)] = _shift(op, p, index_id)
    return hit


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


_R_TEXT: dict[float, str] = {}  # _r's texts: the arithmetic of the trace quotes the same facts and results over and over


def _r(x: float) -> str:
    """A float for a trace line (`_r_text`), remembered; zero is not (0.0 and -0.0 are one key, printed "0" and "-0")."""
    text = _R_TEXT.get(x)
    if text is None:
        text = _r_text(x)
        if x:
            if len(_R_TEXT) > 100_000:
                _R_TEXT.clear()
            _R_TEXT[x] = text
    return text


def _r_text(x: float) -> str:
    """A float for a trace line: integers without decimals, amounts >= 1,000 with 2 decimals, smaller
    values with up to 10 significant digits (never e-notation in a worked solution)."""
    if float(x).is_integer():
        return f"{x:,.0f}"
    return f"{x:,.2f}" if abs(x) >= 1e3 else f"{x:,.10g}"
