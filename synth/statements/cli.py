"""`ledgerlm statements` and `ledgerlm validate`.

    ledgerlm statements --company AAPL --period FY2023 --statement income --as markdown
    ledgerlm statements --company NVDA --period FY2026Q4 --statement income --as json   # Q4 = FY - 9M
    ledgerlm validate --company AAPL

Without `--source` both read the embedded real SEC data (synth/data/sec).
"""
from __future__ import annotations

import argparse
import json
import sys

FORMATS = ("json", "html", "markdown", "text", "tuples", "latex")


def _add_source_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", nargs="+", metavar="PATH", help="facts files or folders (default: embedded SEC data)")
    parser.add_argument("--as-of", metavar="DATE", help="point-in-time view: only values filed on or before DATE")


def _store(args: argparse.Namespace):
    from ledgerlm.synth.statements.sources import load_facts
    from ledgerlm.synth.statements.store import FactStore

    return FactStore.from_sources(args.source, as_of=args.as_of)


def statements_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ledgerlm statements", description="Show one canonical statement.")
    parser.add_argument("--company", required=True, help="ticker, CIK or exact entity name")
    parser.add_argument("--period", required=True, help="FY2023, FY2023Q1..Q4, FY2023H1, FY2023Q3YTD, FY2023Q2TTM")
    parser.add_argument("--statement", required=True, choices=("income", "balance", "cashflow", "equity"))
    parser.add_argument("--scope", default="consolidated", choices=("consolidated", "parent"))
    parser.add_argument("--as", dest="fmt", default="text", choices=FORMATS, help="output representation")
    parser.add_argument("--language", default="en", choices=("en", "zh"))
    _add_source_args(parser)
    args = parser.parse_args(argv)

    from ledgerlm.synth.statements.render import render_statement

    store = _store(args)
    stmt = store.statement(args.company, args.period, args.statement, args.scope)
    if args.fmt == "json":
        out = {k: stmt[k] for k in ("company", "period", "statement", "scope", "unit")}
        out["items"] = [{"concept": i["concept"], "label": i["label"], "value": i["value"]} for i in stmt["items"]]
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        print(render_statement(stmt, args.fmt, language=args.language))
    return 0


def validate_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ledgerlm validate", description="Check canonical facts company by company.")
    parser.add_argument("--company", nargs="*", help="companies to check (default: all)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--strict", action="store_true", help="exit 1 when any check fails")
    _add_source_args(parser)
    args = parser.parse_args(argv)

    from ledgerlm.synth.statements.sources import load_facts
    from ledgerlm.synth.statements.validate import render_report, validate_facts

    facts = load_facts(args.source, as_of=args.as_of, latest_only=False)
    report = validate_facts(facts, companies=args.company)
    print(json.dumps(report, indent=2, default=str) if args.json else render_report(report))
    failed = any(not c["ok"] for c in report["companies"])
    return 1 if (failed and args.strict) else 0


if __name__ == "__main__":
    sys.exit(statements_main(sys.argv[1:]))
