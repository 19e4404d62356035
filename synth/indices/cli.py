"""`ledgerlm compute`: one index value with its computation trace.

    ledgerlm compute --company NVDA --index revenue_yoy --period FY2026Q4 --decimals 2 --json

`--json` prints DESIGN.md's machine-readable object {"company", "index", "period", "value", "unit",
"decimals", "answer", "trace"}: `value` unrounded, `answer` scaled to `unit` and rounded half away from
zero, or "Insufficient information" (the trace then names the missing reports).
"""
from __future__ import annotations

import argparse
import json

from ledgerlm.errors import NotDerivable
from ledgerlm.synth.indices.compute import INSUFFICIENT, UNIT_SCALES, compute, default_registry, default_unit, format_answer

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


def load_store(sources: list[str] | None, as_of: str | None):
    from ledgerlm.synth.statements.sources import load_facts
    from ledgerlm.synth.statements.store import FactStore

    return FactStore(load_facts(sources or None, as_of=as_of))


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    index = default_registry()[args.index]  # unknown index fails before loading any data
    unit = args.unit or default_unit(index.result)
    format_answer(0.0, index.result, unit, args.decimals)  # validate unit/decimals early
    store = load_store(args.source, args.as_of)
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
    for step in trace:
        print("  " + _describe(step))
    shown = answer if answer == INSUFFICIENT else f"{answer} ({unit})"
    print(f"value: {value!r}\nanswer: {shown}")
    return 0


def _describe(step: dict) -> str:
    kind = step["kind"]
    if kind == "fact":
        refs = "; ".join(f"{i['report']} {i['value']:,} [{i['source']}]" for i in step["inputs"])
        return f"fact {step['concept']} @ {step['period']} ({step['basis']}) = {step['value']:,} <- {refs}"
    if kind == "missing":
        return f"missing reports: {', '.join(step['missing']) or '-'} — {step['message']}"
    if kind == "aggregate":
        return f"{step['name']} @ {step['period']} = {step['arithmetic']} = {step['value']:,}"
    label = step.get("expr") or step.get("index") or step.get("formula")
    extra = f" = {step['arithmetic']}" if step.get("arithmetic") else ""
    return f"{kind} {label} @ {step['period']}{extra} = {step['value']!r}"
