"""`ledgerlm compute`: one index value with its computation trace.

    ledgerlm compute --company NVDA --index revenue_yoy --period FY2026Q4 --decimals 2 --json
    python -m ledgerlm.synth.indices.cli --company AAPL --index roe_avg --period FY2023

`--json` prints DESIGN.md's machine-readable object {"company", "index", "period", "value", "unit",
"decimals", "answer", "trace"}: `value` unrounded, `answer` scaled to `unit` and rounded half away from
zero, or "Insufficient information" (the trace then names the missing reports).
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys

import numpy as np

from ledgerlm.errors import NotDerivable
from ledgerlm.synth.indices.compute import INSUFFICIENT, UNIT_SCALES, compute, default_registry, default_unit, format_answer
from ledgerlm.synth.statements.store import FactStore

UNITS = [*UNIT_SCALES, "percent"]


def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ledgerlm compute", description="Compute one registry index with its trace.")
    p.add_argument("--company", required=True, help="ticker, CIK (with or without zeros) or exact entity name")
    p.add_argument("--index", required=True, help="registry index id or canonical concept key (e.g. roe_avg, revenue)")
    p.add_argument("--period", required=True, help="FY2023, FY2023Q1..Q4, FY2023H1, FY2023Q3YTD, FY2023Q2TTM")
    p.add_argument("--unit", choices=UNITS, default=None, help="answer unit (default: units; percent for percent results)")
    p.add_argument("--decimals", type=int, default=2, help="decimal places of the answer, rounded half away from zero")
    p.add_argument("--scope", choices=["consolidated", "parent"], default="consolidated", help="statement scope")
    p.add_argument("--source", nargs="*", default=None, help="fact files (companyfacts JSON, CSV, ...); default: embedded SEC data")
    p.add_argument("--as-of", default=None, help="use only facts filed on or before this date (YYYY-MM-DD)")
    p.add_argument("--json", action="store_true", help="print the machine-readable JSON object")
    return p


def load_store(sources: list[str] | None, as_of: str | None, company: str | None = None):
    """The store `compute` reads: every filed version of the facts (the vintage rules see restatements), only the
    asked company's when its code or name places it (`FactStore.from_sources`)."""
    return FactStore.from_sources(sources or None, as_of=as_of, company=company)


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    index = default_registry()[args.index]  # unknown index fails before loading any data
    unit = args.unit or default_unit(index.result)
    format_answer(0.0, index.result, unit, args.decimals)  # validate unit/decimals early
    store = load_store(args.source, args.as_of, args.company)
    company = store.resolve_company(args.company)
    try:
        result = compute(store, company, args.index, args.period, scope=args.scope)
        value, answer, trace = result.value, format_answer(result.value, result.result, unit, args.decimals), result.trace
        period = result.period
    except NotDerivable as err:
        value, answer, period = None, INSUFFICIENT, err.period or args.period
        trace = [{"kind": "missing", "missing": err.missing, "message": str(err)}]
    out = {"company": company, "index": args.index, "period": period, "value": value, "unit": unit,
           "decimals": args.decimals, "answer": answer if answer == INSUFFICIENT else float(answer), "trace": trace}
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    print(f"{index.name_en} ({index.name_zh}) — {company} {period}")
    print(f"formula: {index.formula}")
    exact: dict[str, float] = {}  # the trace's 10-significant-digit operand text -> the earlier step's exact value
    for step in trace:
        print("  " + _describe(step, exact))
        if isinstance(step.get("value"), (int, float)):
            exact.setdefault(f"{float(step['value']):,.10g}", float(step["value"]))
    shown = answer if answer == INSUFFICIENT else f"{answer:,} ({unit})"
    print(f"value: {'-' if value is None else _num(value)}\nanswer: {shown}")
    return 0


def _num(x: float) -> str:
    """A number of the text trace, never in e-notation: whole numbers with thousands separators
    (107,477,394,000), other values of 1,000 or more with two decimals (104,976,805,288.09), smaller
    ones (ratios) with up to 10 significant digits (0.7321451273)."""
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if x.is_integer():
        return f"{x:,.0f}"
    if abs(x) >= 1000:
        return f"{x:,.2f}"
    return np.format_float_positional(x, precision=10, unique=True, fractional=False, trim="-")


_E_NOTATION = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?e[+-]?\d+(?![\w.])", re.IGNORECASE)


def _arith(text: str, exact: dict[str, float]) -> str:
    """The step's arithmetic with e-notation operands (the JSON trace's `1.07477394e+11`, 10 significant digits)
    written out, as the exact value of the earlier step they abbreviate when there is one."""
    return _E_NOTATION.sub(lambda m: _num(exact.get(m.group(), float(m.group()))), text)


def _describe(step: dict, exact: dict[str, float] | None = None) -> str:
    exact = exact or {}
    kind = step["kind"]
    if kind == "fact":
        refs = "; ".join(f"{i['report']} {_num(i['value'])} [{i['source']}]" for i in step["inputs"])
        return f"fact {step['concept']} @ {step['period']} ({step['basis']}) = {_num(step['value'])} <- {refs}"
    if kind == "missing":
        return f"missing reports: {', '.join(step['missing']) or '-'} — {step['message']}"
    if kind == "aggregate":
        return f"{step['name']} @ {step['period']} = {_arith(step['arithmetic'], exact)} = {_num(step['value'])}"
    label = step.get("expr") or step.get("index") or step.get("formula")
    extra = f" = {_arith(step['arithmetic'], exact)}" if step.get("arithmetic") else ""
    return f"{kind} {label} @ {step['period']}{extra} = {_num(step['value'])}"


if __name__ == "__main__":
    sys.exit(main())
