"""`ledgerlm validate` (also `python -m ledgerlm.synth.statements.validate_cli`): check facts company by company,
and with --audit the computed values against the figures the filers report (audit.py).

    ledgerlm validate --company AAPL
    ledgerlm validate --audit [--data D] [--strict]      # fidelity audit: computed vs filed figures

Without `--source` it reads the embedded real SEC data (synth/data/sec).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ledgerlm.synth.statements import audit as audit_mod
from ledgerlm.synth.statements.cli import _add_source_args, _no_facts
from ledgerlm.synth.statements.periods import parse_report
from ledgerlm.synth.statements.sources import load_facts
from ledgerlm.synth.statements.validate import render_report, validate_facts


FP_QUARTERS = {"Q1": 1, "Q2": 2, "Q3": 3, "FY": 4}


def latest_filed_reports(facts) -> dict[str, tuple[int, int]]:
    """company -> (fiscal year, quarters) of the latest report any of its filings is labelled with (fy/fp)."""
    out: dict[str, tuple[int, int]] = {}
    quarters = facts["fiscal_period"].astype(str).map(FP_QUARTERS)
    years = facts["fiscal_year"]
    for company, year, q in zip(facts["company"].astype(str), years, quarters):
        if q == q and year == year and year is not None:  # NaN-safe: both present
            key = (int(year), int(q))
            if key > out.get(company, (0, 0)):
                out[company] = key
    return out


def drop_future_quarters(report: dict, facts) -> None:
    """Standalone quarters after a company's latest filed report are not "underivable": they have not
    happened (or not been filed) yet. Remove them from the report's `quarters` lists, counting them."""
    latest = latest_filed_reports(facts)
    for entry in report["companies"]:
        last = latest.get(entry["company"])
        quarters = entry["checks"].get("quarters")
        if last is None or not quarters:
            continue

        def future(x: dict) -> bool:
            reports = [parse_report(label) for label in x.get("missing") or []]
            return bool(reports) and all((r.fiscal_year, r.quarters) > last for r in reports)

        kept = [x for x in quarters if not future(x)]
        entry["checks"]["quarters"] = kept
        entry["checks"]["future_quarters_skipped"] = len(quarters) - len(kept)


def validate_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ledgerlm validate", description="Check canonical facts company by company.")
    parser.add_argument("--company", nargs="*", help="companies to check (default: all)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--strict", action="store_true", help="exit 1 when any check fails")
    parser.add_argument("--audit", action="store_true", help="also audit computed values against the figures filers report (audit.py)")
    parser.add_argument("--data", metavar="DIR", help="with --audit: also list dataset items whose answer rounds to zero or |YoY| > 500%%")
    parser.add_argument("--audit-list", type=int, default=10, metavar="N", help="with --audit: list up to N findings (default 10)")
    parser.add_argument("--exceptions", metavar="CSV", help="with --audit: documented exceptions (default tests/data/audit_exceptions.csv)")
    _add_source_args(parser)
    args = parser.parse_args(argv)

    facts = load_facts(args.source, as_of=args.as_of, latest_only=False)
    if facts.empty:
        _no_facts(args.source)
    report = validate_facts(facts, companies=args.company)
    drop_future_quarters(report, facts)
    failed = any(not c["ok"] for c in report["companies"])
    if not args.audit:
        print(json.dumps(report, indent=2, default=str) if args.json else render_report(report))
        return 1 if (failed and args.strict) else 0
    exceptions = audit_mod.load_exceptions(Path(args.exceptions) if args.exceptions else audit_mod.DEFAULT_EXCEPTIONS)
    audited = audit_mod.Audit(facts).run(args.company or None)
    data_sanity = audit_mod.dataset_sanity(Path(args.data)) if args.data else None
    _explained, new = audit_mod.split_findings(audited, exceptions)
    if args.json:
        counts = {f"{k[0]}:{k[1]}": v for k, v in audited["counts"].items()}
        print(json.dumps({"validate": report, "audit": {**audited, "counts": counts, "unexplained": new, "dataset_sanity": data_sanity}},
                         indent=2, default=str))
    else:
        print(render_report(report))
        print()
        print(audit_mod.render(audited, exceptions, limit=args.audit_list, data_sanity=data_sanity))
    return 1 if ((failed or new) and args.strict) else 0


if __name__ == "__main__":
    sys.exit(validate_main(sys.argv[1:]))
