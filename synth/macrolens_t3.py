"""MacroLens T3 training data from real filings: prior-period statements in -> next report's 11 fields out.

    ledgerlm synth --task macrolens-t3 --out runs/macrolens_t3

Rows are SFT chat rows (DESIGN contract 5: `messages` with system / user / assistant) built from the
canonical facts (default: the embedded SEC companyfacts; every filing's copy kept). Point-in-time: a row's target is one report
(FY2024Q1, FY2024H1, FY2024Q3YTD, FY2024 ...) with its values *as first filed*; its inputs are the
previous reports' values as they were filed, every one filed strictly before the target's filing date
(checked per fact; a row that would break this is dropped with a named reason). Splits are by company
(30 % held out as `test`, seed 42), so no company appears on both sides.
"""
from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ledgerlm.errors import InputError
from ledgerlm.synth.statements.facts import select_latest
from ledgerlm.synth.statements.sources import load_facts
from ledgerlm.synth.statements.store import FactStore

# The paper's 11 statement fields (App. D, Problem 3) -> canonical concept keys (DESIGN contract 1).
FIELD_CONCEPTS = {
    "revenue": "revenue", "net_income": "net_income", "total_assets": "total_assets",
    "total_liabilities": "total_liabilities", "stockholders_equity": "total_equity", "operating_income": "operating_income",
    "cash": "cash", "ppe_net": "ppe_net", "long_term_debt": "long_term_debt", "rd_expense": "rd_expense",
    "operating_cash_flow": "operating_cash_flow",
}
FIELDS = tuple(FIELD_CONCEPTS)
FLOW_FIELDS = {"revenue", "net_income", "operating_income", "rd_expense", "operating_cash_flow"}
HOLDOUT_FRACTION, SEED = 0.3, 42
MAX_FILING_LAG_DAYS = 200  # a report filed later than this after its period end is a comparative, not the original report
COMPANYFACTS_DIR = Path(__file__).resolve().parent / "data" / "sec" / "companyfacts"

SYSTEM_PROMPT = "You are a financial analyst. Answer with a single JSON object and nothing else."
STATEMENT_PROMPT = """Company: {company}{sector}
Prior-period financial statements, as filed ({unit}; income and cash-flow items are year-to-date for the period shown, balance-sheet items at period end):
{prior}

Predict the company's next reported statement: {target}.
Return one JSON object with exactly these keys, values in {unit} (null if the item is not reported):
{keys}"""


def render_prior(blocks: list[dict]) -> str:
    """`blocks`: [{"period": description, "values": {field: value}}] oldest first."""
    lines = []
    for b in blocks:
        lines.append(f"- {b['period']}:")
        lines += [f"    {f}: {b['values'][f]:,.0f}" for f in FIELDS if b["values"].get(f) is not None]
    return "\n".join(lines)


def statement_prompt(company: str, prior: list[dict], target: str, unit: str = "USD", sector: str = "") -> str:
    return STATEMENT_PROMPT.format(company=company, sector=f", sector {sector}" if sector else "", unit=unit,
                                   prior=render_prior(prior), target=target, keys=", ".join(FIELDS))


# ---- facts -> reports as first filed ------------------------------------------------------------------
@dataclass
class FiledReport:
    company: str
    report: str  # period label, e.g. FY2024Q3YTD
    quarters: int
    period_start: str  # fiscal-year start (flows are year-to-date from here)
    period_end: str
    filed: str  # filing date of the report (earliest filing showing its current-period values)
    unit: str = "USD"
    values: dict[str, float] = field(default_factory=dict)
    provenance: dict[str, dict] = field(default_factory=dict)  # field -> {concept, value, source, filed, tag}

    def describe(self) -> str:
        months = {1: "3 months", 2: "6 months", 3: "9 months", 4: "12 months"}[self.quarters]
        return f"{self.report} ({months} ended {self.period_end})"


def load_all_filings(paths: list[str] | None = None) -> pd.DataFrame:
    """Canonical facts with every filing's copy of a value kept (not only the latest restatement), so
    that a report's values can be read as first filed. Default: the embedded companyfacts files."""
    return load_facts(paths or [str(p) for p in sorted(COMPANYFACTS_DIR.glob("*.json.gz"))], latest_only=False)


def reporting_currency(facts: pd.DataFrame, company: str) -> str:
    """The company's most frequent monetary unit (TSM files TWD with some USD convenience translations)."""
    units = facts.loc[(facts["company"] == company) & ~facts["unit"].isin(["shares", "pure"]) & ~facts["unit"].str.contains("/"), "unit"]
    return str(units.mode().iloc[0]) if len(units) else "USD"


def filed_reports(facts: pd.DataFrame, company: str, scope: str = "consolidated", fields: dict[str, str] | None = None,
                  flows: set[str] | None = None) -> list[FiledReport]:
    """Every report of `company`, oldest first, with `fields` (default: the 11) as first filed, read from that
    filing's own facts; `flows` are the year-to-date fields (the rest are period-end balances)."""
    fields = fields or FIELD_CONCEPTS
    flows = FLOW_FIELDS if flows is None else flows
    unit = reporting_currency(facts, company)
    cf = facts[(facts["company"] == company) & (facts["scope"] == scope) & facts["unit"].isin([unit, "shares"])
               & facts["concept"].isin(set(fields.values()))]
    store = FactStore(facts[facts["company"] == company])
    fy_start = {fy.label: fy.start.isoformat() for fy in store.fiscal_years(company)}
    out = []
    for rk in store.reports(company, scope):
        filed, end = store.report_filed(company, rk, scope), store.period_end(company, rk.period)
        if not filed or end is None or rk.fiscal_year not in fy_start:
            continue
        if (pd.Timestamp(filed) - pd.Timestamp(end)).days > MAX_FILING_LAG_DAYS:
            continue  # first seen as a comparative in a later filing: no original report to learn from
        rep = FiledReport(company, rk.label, rk.quarters, fy_start[rk.fiscal_year], end.isoformat(), filed, unit)
        sub = select_latest(cf[(cf["filed"] == filed) & (cf["end"] == rep.period_end)])
        for f, concept in fields.items():
            rows = sub[(sub["concept"] == concept) & (sub["start"] == (rep.period_start if f in flows else ""))]
            if not rows.empty:
                r = rows.iloc[0]
                rep.values[f] = float(r["value"])
                rep.provenance[f] = {"concept": concept, "value": float(r["value"]), "source": str(r["source"]),
                                     "filed": str(r["filed"]), "tag": str(r["tag"])}
        out.append(rep)
    return sorted(out, key=lambda r: (r.period_end, r.filed))


# ---- rows ---------------------------------------------------------------------------------------------
def build_rows(facts: pd.DataFrame, *, n_prior: int = 2, annual_only: bool = False, holdout: float = HOLDOUT_FRACTION,
               seed: int = SEED) -> tuple[list[dict], dict[str, int]]:
    companies = sorted(facts["company"].unique())
    test = set(random.Random(seed).sample(companies, max(1, round(holdout * len(companies))))) if companies else set()
    rows, drops = [], {}

    def drop(reason: str) -> None:
        drops[reason] = drops.get(reason, 0) + 1

    for company in companies:
        name = str(facts.loc[facts["company"] == company, "company_name"].iloc[0])
        reports = [r for r in filed_reports(facts, company) if r.quarters == 4 or not annual_only]
        for k, target in enumerate(reports):
            prior = [r for r in reports[:k] if r.filed < target.filed and r.period_end < target.period_end and r.values
                     and r.unit == target.unit][-n_prior:]
            if not prior:
                drop("no_prior_report_filed_before_target")
                continue
            if len(target.values) < 3:
                drop("target_has_fewer_than_3_fields")
                continue
            inputs = [{"period": p.report, "field": f, **p.provenance[f]} for p in prior for f in p.values]
            if any(i["filed"] >= target.filed for i in inputs):  # point-in-time guard
                drop("input_filed_on_or_after_target")
                continue
            answer = {f: target.values.get(f) for f in FIELDS}
            user = statement_prompt(f"{name} ({company})", [{"period": p.describe(), "values": p.values} for p in prior],
                                    target.describe(), target.unit)
            rows.append({
                "id": f"macrolens-t3/{company}/{target.report}", "split": "test" if company in test else "train",
                "company": company, "target_period": target.report, "target_period_end": target.period_end,
                "target_filed": target.filed, "input_periods": [p.report for p in prior], "unit": target.unit,
                "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user},
                             {"role": "assistant", "content": json.dumps(answer)}],
                "answer": answer, "provenance": {"target": target.provenance, "inputs": inputs},
            })
    return rows, drops


def write_dataset(rows: list[dict], drops: dict[str, int], out: Path, config: dict) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for split in ("train", "test"):
        part = [r for r in rows if r["split"] == split]
        counts[split] = len(part)
        with open(out / f"{split}.jsonl", "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in part)
    manifest = {"task": "macrolens-t3", "config": config, "counts": counts, "drops": drops,
                "companies": {s: sorted({r["company"] for r in rows if r["split"] == s}) for s in ("train", "test")}}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2))
    (out / "README.md").write_text(
        "# MacroLens T3 SFT rows (real SEC filings)\n\nPrior-period statements (as filed) in, the next report's 11 fields "
        "(as first filed) out, as JSON. Every input fact was filed before the target's filing date. Company-level split "
        f"(seed {config['seed']}). Counts: {counts}. Drops: {drops}.\nBuilt with `ledgerlm synth --task macrolens-t3`.\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ledgerlm synth --task macrolens-t3", description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="output folder (train.jsonl, test.jsonl, manifest.json, README.md)")
    p.add_argument("--source", nargs="*", default=None, help="facts files (companyfacts JSON, FSDS, canonical CSV/Parquet); default: embedded")
    p.add_argument("--prior", type=int, default=2, help="prior reports shown per row")
    p.add_argument("--annual-only", action="store_true", help="only annual reports (FY -> FY)")
    p.add_argument("--holdout", type=float, default=HOLDOUT_FRACTION, help="fraction of companies held out as test")
    p.add_argument("--seed", type=int, default=SEED)
    args = p.parse_args(argv)
    facts = load_all_filings(args.source)
    if facts.empty:
        raise InputError("no facts loaded", path=",".join(args.source or []) or str(COMPANYFACTS_DIR))
    rows, drops = build_rows(facts, n_prior=args.prior, annual_only=args.annual_only, holdout=args.holdout, seed=args.seed)
    manifest = write_dataset(rows, drops, Path(args.out), {k: v for k, v in vars(args).items() if k != "out"})
    print(f"macrolens-t3: {manifest['counts']} rows -> {args.out}; drops {drops}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
