"""Independent recomputation of a synthesized dataset from the raw SEC companyfacts JSON.

    ledgerlm synth --out D
    python tests/independent/recompute.py D                     # every item; counts + mismatches by class
    python tests/independent/recompute.py D --sample 100 --out /tmp/mismatches.txt

Own parser (rawfacts.py), own period logic and hand-written index definitions (engine.py); it imports
nothing from ledgerlm. Each item is recomputed from its company, indices, target_periods, unit and
decimals. An item passes when every cell equals the item's answer after rounding half away from zero
(a difference at the rounding boundary of the last digit counts as equal and is tallied).
Items it cannot recompute are "not covered" with the reason, never a pass. A deficiency item ("Insufficient
information") passes when a report the answer needs (quarters from year-to-date reports) is not among the shown
ones; an answered item also needs every such report shown. On a mismatch the
alternative conventions (value as originally filed, leases in debt, actual days, as-filed split
basis) are tried and the one that reproduces the answer names the mismatch class.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
from collections import Counter, defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engine import INDEX, NOT_COVERED, Engine, evaluate  # noqa: E402
from rawfacts import DATA, KIND, Company, Missing  # noqa: E402

SCALE = {"units": 1, "thousands": 1e3, "ten_thousands": 1e4, "millions": 1e6, "hundred_millions": 1e8, "billions": 1e9}
# conventions DESIGN.md allows (an answer equal under one of them passes, tallied by name)
ACCEPTED = [
    ("per-share values on the as-filed split basis (one basis per computation)", {"pick": "as_filed"}),
    ("per-share values on the basis of the latest filing that reports them (one basis per computation)", {"pick": "latest_raw"}),
    ("standalone quarter = YTD - prior YTD (the contract's rule; differs from the 3-month figure by filer rounding)", {"quarter": "derived"}),
    ("Q4 EPS = Q4 net income / Q4 weighted shares (FY and 9M averages weighted by days; the store's stated rule)", {"eps_q4": "ni_over_shares"}),
    ("a later figure that only repeats an earlier one at a coarser rounding gives way to the earlier (README conventions)", {"pick": "finer"}),
    ("coarser repeats give way to the earlier figure, and Q4 EPS = Q4 net income / Q4 weighted shares", {"pick": "finer", "eps_q4": "ni_over_shares"}),
    ("coarser repeats give way to the earlier figure, and standalone quarter = YTD - prior YTD", {"pick": "finer", "quarter": "derived"}),
    ("per-share figures rescaled for a split as the prompt shows them (6 decimals)", {"pick": "finer", "shown": 6}),
    ("rescaled per-share figures to 6 decimals, and Q4 EPS = Q4 net income / Q4 weighted shares", {"pick": "finer", "shown": 6, "eps_q4": "ni_over_shares"}),
    ("quarter EPS = quarter net income / day-weighted quarter shares, unrounded (the rule synth prompts state)", {"eps_q4": "ni_over_shares", "eps_q": "ni_over_shares"}),
    ("coarser repeats give way to the earlier figure, and quarter EPS = net income / day-weighted shares, unrounded", {"pick": "finer", "eps_q4": "ni_over_shares", "eps_q": "ni_over_shares"}),
    ("rescaled per-share figures to 6 decimals, and quarter EPS = net income / day-weighted shares, unrounded", {"pick": "finer", "shown": 6, "eps_q4": "ni_over_shares", "eps_q": "ni_over_shares"}),
]
# conventions that would need stating (an answer equal only under one of them is a mismatch of that class)
ALTERNATES = [
    ("value as originally filed (not the latest restatement)", {"pick": "original"}),
    ("finance leases counted as debt", {"leases": "finance"}),
    ("all lease liabilities counted as debt", {"leases": "all"}),
    ("days = actual calendar days", {"days": "actual"}),
]
INSUFFICIENT = "Insufficient information"


def companyfacts_tickers() -> set[str]:
    return {p.name.split("_", 1)[1].split(".")[0] for p in DATA.glob("CIK*_*.json.gz")}


def fsds_tickers() -> set[str]:
    """Tickers of the filers in the embedded FSDS subset (by CIK, via the ticker snapshot)."""
    ciks = set()
    for line in (DATA.parent / "fsds" / "_filings_index.csv").read_text(encoding="utf-8").splitlines()[1:]:
        ciks.add(line.split(",")[1])
    tickers = json.loads((DATA.parent / "company_tickers.json").read_text(encoding="utf-8"))
    return {v["ticker"] for v in tickers.values() if str(v["cik_str"]) in ciks}


def round_half_away(x: float, decimals: int) -> Decimal:
    return Decimal(repr(x)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


# Indices that only make sense under China Accounting Standards (my list: they need CAS line items such as
# financial expenses / taxes and surcharges / surplus reserve, or add interest to a CAS operating profit).
# Capital reserve per share is not in it: additional paid-in capital is the US-GAAP line for 资本公积; the
# surplus-reserve indices apply to filers that present a statutory reserve (TSMC's legal capital reserve).
SURPLUS_RESERVE = {"retained_earnings_total", "retained_earnings_total_per_share", "surplus_reserve_per_share"}
CAS_ONLY = {"ebitda_cas", "ebitda_cas_ttm", "three_expenses", "three_expenses_ratio", "three_expenses_ratio_ttm",
            "operating_expenses_ttm", "operating_expenses_ttm_ratio", "period_expenses", "period_expense_ratio",
            "period_expenses_ttm", "financial_expense_ratio", "taxes_and_surcharges_ratio", "core_profit", "core_profit_margin",
            "core_profit_to_pretax", "core_profit_ttm", "core_profit_yoy", "retained_earnings_total",
            "retained_earnings_total_per_share", "surplus_reserve_per_share"}


def result_kinds() -> dict[str, str]:
    """index id -> result kind (percent, currency, ...): how the QUESTION presents the number.

    Read from the registry YAML with yaml only (the presentation, not the formula; formulas are in engine.py)."""
    import yaml

    kinds = {}
    for f in sorted(REGISTRY.glob("*.yaml")):
        for entry in yaml.safe_load(f.read_text(encoding="utf-8"))["indices"]:
            kinds[entry["id"]] = entry["result"]
    return kinds


REGISTRY = Path(__file__).resolve().parents[2] / "synth" / "indices" / "registry"
KINDS = result_kinds()


def scaled(value: float, unit: str, index: str) -> float:
    kind = KINDS.get(index, "per_share" if index.startswith(("eps_", "shares_")) else "currency")
    if kind == "percent":
        return value * 100
    if kind == "currency":
        if unit not in SCALE:
            raise Missing(f"unit {unit!r} for a currency answer")
        return value / SCALE[unit]
    return value


def same(mine: float, answer, decimals: int) -> str | None:
    """'exact', 'boundary' (|diff| within half a last digit + float noise), or None."""
    if round_half_away(mine, decimals) == Decimal(str(answer)).quantize(Decimal(1).scaleb(-decimals)):
        return "exact"
    if abs(mine - float(answer)) <= 0.5 * 10 ** -decimals * (1 + 1e-9) + 1e-12:
        return "boundary"
    return None


def one_split_basis(engine: Engine) -> bool:
    """Did every per-share value and share count the evaluation read come from filings on one split basis?"""
    factors = {engine.c.basis_factor(u["filed"]) for u in engine.used if u.get("concept") in KIND}
    return len(factors) <= 1


def cells(item: dict):
    """(index, period, answer) for every cell of a single or table item."""
    answer = item["answer"]
    if item["paradigm"] == "single":
        yield item["indices"][0], item["target_periods"][0], answer
        return
    for i, index in enumerate(item["indices"]):
        for j, period in enumerate(item["target_periods"]):
            yield index, period, answer[i][j]


def _classify(mine: float, theirs: float) -> str:
    if theirs and mine:
        r = abs(mine / theirs)
        for k in (1000, 10, 20, 4, 2, 3, 5, 7, 8, 15):
            for rr in (k, 1 / k):
                if abs(r - rr) <= 0.02 * rr:
                    return f"factor {k if rr == k else f'1/{k}'} (split or scale)"
        if (mine > 0) != (theirs > 0):
            return "sign"
    return "value differs"


def report_label(company: Company, start, end) -> str:
    """The report (contract-2 label of a year-to-date window) whose statements show a value for (start, end)."""
    year = next((y for y in range(end.year - 1, end.year + 3) if company.fy_end(y) >= end - dt.timedelta(days=3)), None)
    if year is None:
        raise Missing(f"no fiscal year for {end}")
    if abs((company.fy_end(year) - end).days) <= 3:
        q = 4
    else:
        q = next((k for k in (1, 2, 3) if abs((company.quarter_end(year, k) - end).days) <= 3), None)
        if q is None:
            raise Missing(f"{end} is no quarter end")
    return {4: f"FY{year}", 1: f"FY{year}Q1", 2: f"FY{year}H1", 3: f"FY{year}Q3YTD"}[q]


def needed_reports(item: dict, company: Company) -> set[str]:
    """Reports an answer needs when quarters come from year-to-date reports (as a prompt shows them)."""
    needed = set()
    for index, period, _answer in cells(item):
        engine = Engine(company, quarter="derived", eps_q4="ni_over_shares")
        evaluate(index, engine, period)
        for u in engine.used:
            if "end" in u and u.get("concept") not in KIND:
                needed.add(report_label(company, dt.date.fromisoformat(u["start"]) if u["start"] else None,
                                        dt.date.fromisoformat(u["end"])))
    return needed


def check_deficiency(item: dict, companies: dict[str, Company]) -> dict:
    """'Insufficient information' is right when a report the answer needs is not among the shown ones."""
    if item["company"] not in companies:
        return {"status": "not_covered", "reason": "company not in the embedded companyfacts, FSDS or XBRL-instance data"}
    if any(i in INDEX and any(k in i for k in ("eps", "per_share", "dilution")) for i in item["indices"]):
        return {"status": "not_covered", "reason": "deficiency item on a per-share index (3-month EPS columns: which report shows them is not independent)"}
    try:
        needed = needed_reports(item, companies[item["company"]])
    except (Missing, ZeroDivisionError, KeyError) as err:
        return {"status": "not_covered", "reason": f"deficiency item: needed reports not determined ({_reason(str(err))})"}
    missing = needed - set(item.get("context_periods", []))
    if missing:
        return {"status": "pass", "boundary": 0, "accepted": []}
    return {"status": "mismatch", "class": "answered 'Insufficient information' although the shown reports suffice",
            "cells": [{"index": item["indices"][0], "period": item["target_periods"][0], "answer": INSUFFICIENT, "mine": None,
                       "class": "answered 'Insufficient information' although the shown reports suffice",
                       "facts": [{"note": f"needed {sorted(needed)}; shown {item.get('context_periods')}"}]}]}


def check_item(item: dict, companies: dict[str, Company]) -> dict:
    """{'status': pass|mismatch|not_covered, 'reason'|'class', 'cells': [...]}"""
    tick = item["company"]
    if item.get("answer") == INSUFFICIENT:
        return check_deficiency(item, companies)
    if tick not in companies:
        return {"status": "not_covered", "reason": "company not in the embedded companyfacts, FSDS or XBRL-instance data"}
    if any(t.get("kind") == "parent_distractor" for t in item.get("traps", [])):
        pass  # scope is consolidated in companyfacts; the distractor only adds context
    unit, decimals = item["unit"], int(item["decimals"])
    out_cells, boundary, accepted = [], 0, []
    for index, period, answer in cells(item):
        surplus = index in SURPLUS_RESERVE and companies[tick].has("surplus_reserve")  # filers with a statutory reserve line
        if index in CAS_ONLY and companies[tick].currency != "CNY" and not surplus:
            return {"status": "mismatch", "class": "CAS-only index asked of a US-GAAP/IFRS filer",
                    "cells": [{"index": index, "period": period, "answer": answer, "mine": None,
                               "class": "CAS-only index asked of a US-GAAP/IFRS filer", "facts": []}]}
        if index in NOT_COVERED:
            return {"status": "not_covered", "reason": NOT_COVERED[index]}
        if index not in INDEX:
            return {"status": "not_covered", "reason": "index not implemented independently"}
        if answer == INSUFFICIENT or answer is None:
            return {"status": "not_covered", "reason": "cell answered 'Insufficient information'"}
        engine = Engine(companies[tick])
        try:
            mine = scaled(evaluate(index, engine, period), unit, index)
        except (Missing, ZeroDivisionError) as err:
            # not derivable under the primary conventions: an accepted convention that derives it becomes the reference
            for name, opts in ACCEPTED:
                engine = Engine(companies[tick], **opts)
                try:
                    mine = scaled(evaluate(index, engine, period), unit, index)
                except (Missing, ZeroDivisionError):
                    continue
                accepted.append(name)
                break
            else:
                return {"status": "not_covered", "reason": "division by zero" if isinstance(err, ZeroDivisionError) else _reason(str(err))}
        verdict = same(mine, answer, decimals)
        if verdict:
            boundary += verdict == "boundary"
            continue
        accepted_as = None
        for name, opts in ACCEPTED:
            alt_engine = Engine(companies[tick], **opts)
            try:
                alt = scaled(evaluate(index, alt_engine, period), unit, index)
            except (Missing, ZeroDivisionError):
                continue
            if opts.get("pick") in ("as_filed", "latest_raw") and not one_split_basis(alt_engine):
                continue  # unrescaled values from both sides of a split: never an accepted convention
            if same(alt, answer, decimals):
                accepted_as = name
                break
        if accepted_as:
            accepted.append(accepted_as)
            continue
        alt_name = None
        for name, opts in ALTERNATES:
            try:
                alt = scaled(evaluate(index, Engine(companies[tick], **opts), period), unit, index)
            except (Missing, ZeroDivisionError):
                continue
            if same(alt, answer, decimals):
                alt_name = name
                break
        klass = f"reproduced only with: {alt_name}" if alt_name else _classify(mine, float(answer))
        out_cells.append({"index": index, "period": period, "answer": answer, "mine": float(round_half_away(mine, decimals)),
                          "class": klass, "facts": engine.used[:12]})
    if out_cells:
        return {"status": "mismatch", "class": out_cells[0]["class"], "cells": out_cells}
    if not any(k in i for i in item["indices"] for k in ("eps", "per_share", "dilution")):
        try:  # the answer must be derivable from what the prompt shows
            missing = needed_reports(item, companies[tick]) - set(item.get("context_periods", []))
        except (Missing, ZeroDivisionError, KeyError):
            missing = set()
        if missing:
            klass = "answer needs a report the prompt does not show"
            return {"status": "mismatch", "class": klass, "cells": [{"index": item["indices"][0], "period": item["target_periods"][0],
                    "answer": item["answer"], "mine": None, "class": klass,
                    "facts": [{"note": f"missing {sorted(missing)}; shown {item.get('context_periods')}"}]}]}
    return {"status": "pass", "boundary": boundary, "accepted": accepted}


def _reason(msg: str) -> str:
    if "not tagged" in msg:
        concept = msg.split(": ", 1)[1].split(" for ")[0]
        return f"concept {concept} not tagged for a needed window"
    if "TTM window" in msg or "Q4" in msg or "division by zero" in msg:
        return msg.split(": ", 1)[-1]
    return msg


def load_items(data: Path) -> list[dict]:
    files = [data] if data.is_file() else [data / f"{s}.jsonl" for s in ("train", "dev", "test")]
    items = []
    for f in files:
        if not f.exists():
            raise SystemExit(f"error: {f}: no such dataset file")
        for n, line in enumerate(f.open(encoding="utf-8"), 1):
            try:
                items.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise SystemExit(f"error: {f}:{n}: not JSON ({err.msg})")
    return items


def run(items: list[dict]) -> dict:
    companies, unreadable = {}, {}
    xbrl = {p.name.split("-")[0].upper() for p in (DATA.parent / "xbrl").glob("*-*_htm.xml.gz")}
    for t in sorted({i["company"] for i in items} & (companyfacts_tickers() | fsds_tickers() | xbrl)):
        try:
            companies[t] = Company(t)
        except (FileNotFoundError, ValueError) as err:
            unreadable[t] = f"raw data not readable independently ({err})"
    results = [(item, {"status": "not_covered", "reason": unreadable[item["company"]]}) if item["company"] in unreadable
               else (item, check_item(item, companies)) for item in items]
    status = Counter(r["status"] for _, r in results)
    reasons = Counter(r["reason"] for _, r in results if r["status"] == "not_covered")
    classes = defaultdict(list)
    for item, r in results:
        if r["status"] == "mismatch":
            classes[r["class"]].append((item, r))
    boundary = sum(r.get("boundary", 0) for _, r in results)
    accepted = Counter(a for _, r in results for a in set(r.get("accepted", [])))
    return {"n": len(items), "status": status, "reasons": reasons, "classes": classes, "boundary": boundary, "accepted": accepted,
            "splits": {t: c.split_events for t, c in companies.items()}}


def render(summary: dict, examples: int = 1000) -> str:
    s = summary["status"]
    lines = [f"items: {summary['n']}  pass: {s['pass']}  mismatch: {s['mismatch']}  not covered: {s['not_covered']}"
             f"  (cells equal only at the rounding boundary: {summary['boundary']})",
             f"split events detected (first filing on the new basis, factor): {summary['splits']}", ""]
    lines += [f"passing items that used an accepted convention: {n} x {why}" for why, n in summary["accepted"].most_common()]
    lines += ["", "not covered, by reason:"]
    lines += [f"  {n:5d}  {why}" for why, n in summary["reasons"].most_common()]
    lines += ["", "mismatches, by class:"]
    for klass, rows in sorted(summary["classes"].items(), key=lambda kv: -len(kv[1])):
        lines.append(f"  {len(rows):5d}  {klass}")
    lines += ["", "mismatch list (item id, company, index, period: dataset answer vs recomputed; facts used):"]
    for klass, rows in sorted(summary["classes"].items(), key=lambda kv: -len(kv[1])):
        lines.append(f"== {klass} ({len(rows)})")
        for item, r in rows[:examples]:
            for c in r["cells"][:3]:
                lines.append(f"  {item['id']} {item['company']} {c['index']} {c['period']} [{item['unit']}, {item['decimals']} dp]: "
                             f"dataset {c['answer']} vs recomputed {c['mine']}")
                for f in c["facts"][:6]:
                    lines.append("      " + (f.get("note") or f"{f['concept']} {f['tag']} {f['start']}..{f['end']} = {f['value']:,} ({f['accn']}, filed {f['filed']})"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", type=Path, help="dataset folder (train/dev/test.jsonl) or one JSONL file")
    ap.add_argument("--sample", type=int, help="check a random sample of N items")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="also write the report here")
    args = ap.parse_args(argv)
    items = load_items(args.data)
    if args.sample:
        items = random.Random(args.seed).sample(items, min(args.sample, len(items)))
    text = render(run(items))
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
