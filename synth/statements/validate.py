"""Checks on canonical facts, company by company and period by period.

    ledgerlm validate                      # the embedded SEC data
    ledgerlm validate --source my_facts.csv --strict

    ledgerlm validate --audit                # + the fidelity audit against filed figures (audit.py)

Checks: assets = liabilities + equity within 0.5% (else the gap); duplicate facts that conflict
(same company, scope, concept, window and filing, different values); unit mixups (share counts in
currency, money in shares, per-share values without a ratio unit) and 1000x scale slips in the
filer's own figures (net income / weighted shares = 1000 x the EPS the same filing reports, e.g.
NVIDIA FY2009 shares tagged in thousands: -54.81 computed vs -0.05 reported); and periods whose
standalone quarter cannot be derived (with the missing report named).
"""
from __future__ import annotations

import pandas as pd

from ledgerlm.errors import NotDerivable
from ledgerlm.synth.statements import sanity
from ledgerlm.synth.statements.periods import Period
from ledgerlm.synth.statements.store import FactStore

BALANCE_TOLERANCE = 0.005  # |A - (L + E)| / A
QUARTER_PROBES = ("revenue", "net_income", "operating_income", "operating_cash_flow")


def _equity(store: FactStore, company: str, report, scope: str) -> tuple[float | None, str]:
    for concept in ("total_equity",):
        try:
            return store.reported(company, concept, report, scope).value, concept
        except NotDerivable:
            pass
    try:
        parent = store.reported(company, "equity_parent", report, scope).value
    except NotDerivable:
        return None, ""
    try:
        minority = store.reported(company, "minority_interest", report, scope).value
        return parent + minority, "equity_parent + minority_interest"
    except NotDerivable:
        return parent, "equity_parent"


def check_balance(store: FactStore, company: str) -> list[dict]:
    out = []
    for scope in store.scopes(company):
        for report in store.reports(company, scope):
            try:
                assets = store.reported(company, "total_assets", report, scope).value
            except NotDerivable:
                continue
            equity, how = _equity(store, company, report, scope)
            try:
                liabilities = store.reported(company, "total_liabilities", report, scope).value
            except NotDerivable:
                liabilities = None
            if liabilities is None or equity is None:
                try:
                    total = store.reported(company, "liabilities_and_equity", report, scope).value
                    gap = assets - total
                    out.append({"report": report.label, "scope": scope, "ok": abs(gap) <= BALANCE_TOLERANCE * abs(assets),
                                "assets": assets, "liabilities_and_equity": total, "gap": gap, "how": "total_assets vs liabilities_and_equity"})
                except NotDerivable:
                    out.append({"report": report.label, "scope": scope, "ok": True, "skipped": "total liabilities or equity not reported"})
                continue
            try:  # redeemable (mezzanine) equity sits between liabilities and equity
                temporary = store.reported(company, "temporary_equity", report, scope).value
                how += " + temporary_equity"
            except NotDerivable:
                temporary = 0.0
            gap = assets - (liabilities + temporary + equity)
            out.append({"report": report.label, "scope": scope, "ok": abs(gap) <= BALANCE_TOLERANCE * abs(assets),
                        "assets": assets, "liabilities": liabilities, "equity": equity + temporary, "gap": gap,
                        "how": f"total_liabilities + {how}"})
    return out


def check_conflicts(facts: pd.DataFrame, *, same_tag: bool = True) -> list[dict]:
    """Facts for one (concept, window, unit) in one filing whose values differ by > 0.1 %.

    same_tag=True: the same tag reported twice with different values (a real conflict);
    same_tag=False: alternate tags mapped to one concept disagree (a taxonomy question, reported apart).
    """
    keys = [c for c in ("company", "scope", "concept", "start", "end", "unit", "source") if c in facts.columns]
    if same_tag and "tag" in facts.columns:
        keys.append("tag")
    df = facts[keys + ["value"]].copy()
    df["start"] = df["start"].astype(str)
    df["end"] = df["end"].astype(str)
    spread = df.groupby(keys, dropna=False)["value"].agg(["min", "max", "count"]).reset_index()
    scale = spread[["min", "max"]].abs().max(axis=1).clip(lower=1.0)
    bad = spread[(spread["count"] > 1) & ((spread["max"] - spread["min"]) > 0.001 * scale)]
    return [{"concept": r.concept, "scope": r.scope, "start": r.start, "end": r.end, "source": getattr(r, "source", ""),
             "values": [r.min, r.max]} for r in bad.itertuples(index=False)]


def _alternates_only(facts: pd.DataFrame) -> list[dict]:
    same = {(x["concept"], x["start"], x["end"], x["source"]) for x in check_conflicts(facts)}
    return [x for x in check_conflicts(facts, same_tag=False) if (x["concept"], x["start"], x["end"], x["source"]) not in same]


def check_units(facts: pd.DataFrame, store: FactStore) -> list[dict]:
    out = []
    for (concept, unit), _ in facts.groupby(["concept", "unit"]):
        kind = store.kind_of(concept)
        unit_s = str(unit)
        is_shares, is_ratio = unit_s.lower() == "shares", "/" in unit_s
        problem = None
        if kind == "shares" and not is_shares:
            problem = f"share count {concept} in {unit_s}"
        elif kind == "per_share" and not is_ratio:
            problem = f"per-share value {concept} in {unit_s} (expected currency/shares)"
        elif kind in ("flow", "stock") and (is_shares or is_ratio):
            problem = f"money amount {concept} in {unit_s}"
        if problem:
            out.append({"concept": concept, "unit": unit_s, "problem": problem})
    return out


SCALE_EPS = {"eps_basic": "shares_basic", "eps_diluted": "shares_diluted"}


def check_scale(facts: pd.DataFrame) -> list[dict]:
    """1000x slips within one filing: net income (to the parent) / weighted shares vs the EPS filed for the same window."""
    out = []
    need = ["net_income_parent", "net_income"] + list(SCALE_EPS) + list(SCALE_EPS.values())
    df = facts[facts["concept"].isin(need) & (facts["scope"] == "consolidated")].copy()
    if df.empty:
        return out
    df["start"], df["end"] = df["start"].astype(str), df["end"].astype(str)
    for (source, start, end), grp in df.groupby(["source", "start", "end"]):
        vals = dict(zip(grp["concept"], grp["value"].astype(float)))
        ni = vals.get("net_income_parent", vals.get("net_income"))
        for eps_c, sh_c in SCALE_EPS.items():
            eps, shares = vals.get(eps_c), vals.get(sh_c)
            if ni is None or not eps or not shares or abs(eps) < 0.005:
                continue
            ratio = (ni / shares) / eps
            for factor, what in ((1000, "in thousands"), (1e6, "in millions"), (1e-3, "1000x too large")):
                if abs(ratio / factor - 1) < 0.1:
                    period = f"{start}..{end}"
                    out.append({"concept": sh_c, "unit": "shares", "problem": f"scale slip: {sh_c} {period} in {source} looks {what} "
                                f"(net income / shares = {ni / shares:,.2f} vs reported {eps_c} {eps:,.2f})", "source": source, "window": period})
    return out


def check_quarters(store: FactStore, company: str) -> list[dict]:
    out = []
    concepts = [c for c in QUARTER_PROBES if c in store.concepts(company)]
    years = sorted({r.fiscal_year for r in store.reports(company) if not r.is_annual})
    for concept in concepts:
        for year in years:
            for q in (1, 2, 3, 4):
                try:
                    store.value(company, concept, Period(year, "Q", q))
                except NotDerivable as err:
                    out.append({"concept": concept, "period": f"FY{year}Q{q}", "missing": err.missing})
    return out


def validate_facts(facts: pd.DataFrame, companies: list[str] | None = None) -> dict:
    """Run every check; `facts` may hold restated duplicates (conflicts are judged per filing)."""
    store = FactStore(facts)  # as the product builds it (FactStore.from_sources): the store selects among filed versions
    chosen = [store.resolve_company(c) for c in companies] if companies else store.companies()
    result = []
    for company in chosen:
        cfacts = facts[facts["company"].astype(str) == company]
        checks = {
            "balance": check_balance(store, company),
            "conflicts": check_conflicts(cfacts),
            "alternate_tags_disagree": _alternates_only(cfacts),
            "units": check_units(cfacts, store) + check_scale(cfacts) + sanity.currency_mixups(cfacts),
            "quarters": check_quarters(store, company),
        }
        ok = all(c["ok"] for c in checks["balance"]) and not checks["conflicts"] and not checks["units"]
        result.append({"company": company, "name": store.company_name(company), "ok": ok, "checks": checks})
    return {"companies": result}


def render_report(report: dict) -> str:
    lines = []
    for c in report["companies"]:
        checks = c["checks"]
        bal = checks["balance"]
        bad_bal = [b for b in bal if not b["ok"]]
        lines.append(f"{c['company']} ({c['name']}): {'OK' if c['ok'] else 'PROBLEMS'}")
        lines.append(f"  balance A = L + E: {len(bal) - len(bad_bal)}/{len(bal)} reports within 0.5%")
        for b in bad_bal[:10]:
            lines.append(f"    {b['report']} [{b['scope']}] gap {b['gap']:,.0f} ({b['how']})")
        lines.append(f"  conflicting duplicate facts: {len(checks['conflicts'])}")
        for x in checks["conflicts"][:10]:
            lines.append(f"    {x['concept']} {x['start']}..{x['end']} in {x['source']}: {x['values']}")
        alternates = checks.get("alternate_tags_disagree", [])
        lines.append(f"  alternate tags for one concept that disagree (informational): {len(alternates)}")
        lines.append(f"  unit mixups: {len(checks['units'])}")
        for x in checks["units"][:10]:
            lines.append(f"    {x['problem']}")
        lines.append(f"  standalone quarters not derivable: {len(checks['quarters'])}")
        for x in checks["quarters"][:10]:
            lines.append(f"    {x['concept']} {x['period']}: missing {', '.join(x['missing'])}")
    return "\n".join(lines)
