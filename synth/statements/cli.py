"""`ledgerlm statements` (also `python -m ledgerlm.synth.statements.cli`); `ledgerlm validate` is validate_cli.py.

    ledgerlm statements --company AAPL --period FY2023 --statement income --as markdown
    ledgerlm statements --company NVDA --period FY2026Q4 --statement income --as json   # Q4 = FY - 9M

Without `--source` it reads the embedded real SEC data (synth/data/sec).
"""
from __future__ import annotations

import argparse
import json
import sys

from ledgerlm.errors import InputError, NotDerivable
from ledgerlm.synth.statements.render import render_statement
from ledgerlm.synth.statements.store import FactStore

FORMATS = ("json", "html", "markdown", "text", "tuples", "latex")


def _add_source_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", nargs="+", metavar="PATH", help="facts files or folders (default: embedded SEC data)")
    parser.add_argument("--as-of", metavar="DATE", help="point-in-time view: only values filed on or before DATE")


def _store(args: argparse.Namespace):
    store = FactStore.from_sources(args.source, as_of=args.as_of, company=args.company)
    if not store.companies():
        _no_facts(args.source)
    return store


def _no_facts(sources) -> None:
    """An InputError for --source paths that hold no facts (an empty or wrong folder), naming them."""
    if sources:
        raise InputError("no facts found: expected SEC companyfacts JSON, FSDS quarters, XBRL instances, canonical "
                         "CSV/Parquet or statement tables", path=", ".join(map(str, sources)))


def latest_periods(store, company: str, scope: str = "consolidated") -> str:
    """'latest annual report FY2025, latest report FY2026Q3YTD' — what a period error should suggest."""
    reports = store.reports(company, scope)
    annual = [r for r in reports if r.is_annual]
    parts = []
    if annual:
        parts.append(f"latest annual report {max(annual, key=lambda r: r.fiscal_year).label}")
    if reports:
        parts.append(f"latest report {reports[-1].label}")
    return ", ".join(parts) or f"no {scope} reports"


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

    store = _store(args)
    try:
        stmt = store.statement(args.company, args.period, args.statement, args.scope)
    except NotDerivable as err:  # name what the data does have
        company = store.resolve_company(args.company)
        raise NotDerivable(f"{err}; the data for {company} has: {latest_periods(store, company, args.scope)}",
                           company=company, period=args.period, missing=err.missing) from None
    if args.fmt == "json":
        out = {k: stmt[k] for k in ("company", "period", "start", "end", "statement", "scope", "unit") if k in stmt}
        out["items"] = [{"concept": i["concept"], "label": i["label"], "value": i["value"]} for i in stmt["items"]]
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        print(render_statement(stmt, args.fmt, language=args.language))
    return 0


if __name__ == "__main__":
    sys.exit(statements_main(sys.argv[1:]))
