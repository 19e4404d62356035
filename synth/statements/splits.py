"""Per-share values and share counts on one basis: stock splits and the filers' own scale slips.

    python -m ledgerlm.synth.statements.splits            # splits and slips found in the embedded data

Filings state per-share values and share counts on the share structure of their filing date: a
10-Q filed before a 10-for-1 split shows EPS 5.98, the next year's 10-Q shows the same quarter as
0.60. Picking the latest-filed value cell by cell mixes the two bases (NVIDIA FY2025Q1 diluted EPS
0.60 against FY2024Q1 0.82: -27 % instead of +629 %). `normalize` therefore, per company:

1. scale slips: a weighted share count whose filing reports net income and EPS for the same window
   but whose net income / shares misses the EPS while net income / (shares x 1000) meets it (NVIDIA
   tagged FY2009-FY2011 share counts in thousands: 548,126 with EPS -0.05) is multiplied by the
   proven factor, with a note. A share count about 1/1000 of the same count in neighbouring
   windows whose factor cannot be proven by EPS is dropped (never synthesised from). Shares outstanding about 1/1000
   of the same filing's weighted basic shares are multiplied by 1000, with a note (`fix_outstanding_slips`).
2. splits: the same window reported by two filings with share counts in the ratio k (k a split
   factor: 2, 3, 4, 7, 10, 20, ..., or 1/k) and per-share values in the ratio 1/k, found at least
   twice, is a k-for-1 split between those filings. Each event is dated by the first filing on the
   new basis (filings state per-share data on the basis of their issue date, ASC 260-10-55-12).
3. every per-share value and share count is put on the *latest* basis (the share structure of the
   newest filing in the data, or of `as_of`): shares x k, per-share / k for each later split, with a
   note naming the split; a later filing's split-restated comparative that only repeats the earlier
   figure at lower precision (0.60 vs 5.98 / 10) is dropped in favour of the earlier figure / k.

Notes go to the `adjustment` column; `select_latest` (facts.py) calls `normalize` first.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pandas as pd

from ledgerlm.synth.statements.factindex import currency_of
from ledgerlm.synth.statements.taxonomy import concept_info

SPLIT_FACTORS = (2, 3, 4, 5, 6, 7, 8, 10, 15, 20, 25, 30, 40, 50, 100, 1.5, 2.5)
SLIP_FACTORS = (1000.0, 0.001)
SHARE_TOL = 0.01  # relative: share counts restated for a split agree within 1 %
CENT = 0.0051  # per-share figures are rounded to the cent
EPS_OF = {"shares_basic": "eps_basic", "shares_diluted": "eps_diluted"}
NET_INCOME = ("net_income_parent", "net_income")


@dataclass(frozen=True)
class Split:
    company: str
    factor: float  # new shares per old share (10 = 10-for-1; 0.1 = 1-for-10 reverse split)
    last_old: str  # filing date of the last filing seen on the old basis
    first_new: str  # filing date of the first filing seen on the new basis (the event's date here)
    evidence: int  # windows that show the ratio

    def describe(self) -> str:
        k = _fmt_factor(self.factor)
        return f"{k}-for-1 stock split (filings up to {self.last_old} on the old basis, from {self.first_new} on the new)"


def _fmt_factor(k: float) -> str:
    return str(int(k)) if float(k).is_integer() else f"{k:g}"


def _kinds(df: pd.DataFrame) -> pd.Series:
    """per_share | shares | '' for every row (taxonomy kind, else the unit)."""
    kinds = {}
    for concept in df["concept"].unique():
        try:
            kinds[concept] = concept_info(concept).kind if concept else ""
        except KeyError:
            kinds[concept] = ""
    kind = df["concept"].map(kinds).fillna("")
    unit = df["unit"].astype(str)
    kind = kind.where(kind.isin(["per_share", "shares"]), "")
    kind = kind.where(kind != "", np.where(unit.str.endswith("/share"), "per_share", np.where(unit.str.lower() == "shares", "shares", "")))
    return kind


# -- 1. scale slips ---------------------------------------------------------------------------------
def fix_scale_slips(df: pd.DataFrame, kind: pd.Series) -> tuple[pd.DataFrame, list[str]]:
    """Multiply provable slips (EPS agrees after x factor), drop unprovable ones; returns (frame, notes)."""
    notes: list[str] = []
    shares = df[(kind == "shares") & df["concept"].isin(list(EPS_OF)) & (df["start"] != "")]
    if shares.empty:
        return df, notes
    win = ["company", "scope", "source", "start", "end"]
    # EPS and net income of one filing's window in one currency (TSMC files both in TWD and in USD: a TWD EPS proved
    # against whichever net income came first, USD or TWD, depending on an unstable sort and on the other companies
    # in the frame); the preferred net income concept first, ties in frame order
    eps = df[df["concept"].isin(list(EPS_OF.values()))]
    ni = df[df["concept"].isin(NET_INCOME)].sort_values(
        "concept", key=lambda s: s.map({c: i for i, c in enumerate(NET_INCOME)}), kind="stable")
    eps_at: dict[tuple, dict[str, float]] = {}
    for k, c, currency, v in zip(eps[win].itertuples(index=False, name=None), eps["concept"], map(currency_of, eps["unit"]), eps["value"]):
        if currency is not None:
            eps_at.setdefault((*k, c), {})[currency] = v
    ni_at: dict[tuple, float] = {}
    for k, currency, v in zip(ni[win].itertuples(index=False, name=None), map(currency_of, ni["unit"]), ni["value"]):
        if currency is not None:
            ni_at.setdefault((*k, currency), v)
    fix: dict[int, float] = {}
    drop: list[int] = []
    groups = {k: g for k, g in df[df["concept"].isin(list(EPS_OF))].groupby(["company", "concept"])}
    for idx, row in shares.iterrows():
        value = float(row["value"])
        if value <= 0:
            continue
        key = (row["company"], row["scope"], row["source"], row["start"], row["end"])
        e = n = None
        for currency, per_share in sorted(eps_at.get((*key, EPS_OF[row["concept"]]), {}).items()):
            if (*key, currency) in ni_at:  # the first currency (by code) with both figures in this filing's window
                e, n = per_share, ni_at[(*key, currency)]
                break
        proven = None
        if e is not None and n is not None and abs(e) >= 0.01:
            if abs(n / value - e) > CENT + 0.02 * abs(e):
                proven = next((f for f in SLIP_FACTORS if abs(n / (value * f) - e) <= CENT + 0.02 * abs(e)), None)
                if proven is not None:
                    fix[idx] = proven
                    notes.append(f"{row['company']} {row['concept']} {row['start']}..{row['end']} filed {row['filed']} "
                                 f"({row['source']}): {value:,.0f} x {proven:g} (scale slip: net income {n:,.0f} / "
                                 f"{value * proven:,.0f} = {n / (value * proven):.4f}, reported EPS {e})")
                    continue
            else:
                continue  # EPS confirms the count
        # no EPS proof: compare with the same count in other windows (median of the other filings' values)
        same = groups[(row["company"], row["concept"])]
        same = same[same["source"] != row["source"]]
        near = same[(same["end"].str.slice(0, 4).astype(int) - int(row["end"][:4])).abs() <= 2]["value"]
        if len(near) >= 2:
            ratio = float(near.median()) / value
            if any(0.5 <= ratio / f <= 2 for f in SLIP_FACTORS):
                drop.append(idx)
                notes.append(f"{row['company']} {row['concept']} {row['start']}..{row['end']} filed {row['filed']} "
                             f"({row['source']}): {value:,.0f} excluded (about 1/{ratio:,.0f} of neighbouring windows; "
                             f"no EPS in the filing proves the factor)")
    if fix or drop:
        df = _rescale(df, fix, "net income / shares meets the reported EPS only after it").drop(index=drop)
    return df, notes


def _rescale(df: pd.DataFrame, factors: dict, why: str) -> pd.DataFrame:
    """A copy with each row `idx` of `factors` multiplied by its factor and noted as a scale slip (`why`)."""
    df = df.copy()
    for idx, f in factors.items():
        df.at[idx, "value"] = float(df.at[idx, "value"]) * f
        df.at[idx, "adjustment"] = _join(df.at[idx, "adjustment"], f"filed as {_num(df.at[idx, 'value'] / f)} (scale slip x {f:g}: {why})")
    return df


def fix_outstanding_slips(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Multiply by 1000 the period-end shares outstanding a filing tags in thousands: about 1/1000 of the weighted basic
    shares the same filing reports (one filing, one split basis; outstanding and weighted counts differ by a few per
    cent, never a thousandfold). Apple's FY2014 Q2 10-Q tags 861,745 shares outstanding at 2014-03-29 beside 881 M
    weighted basic shares: shown on the 28x basis as 24,128,860 instead of 24,128,860,000."""
    notes: list[str] = []
    out = df[(df["concept"] == "shares_outstanding") & (df["value"] > 0) & (df["filed"].astype(str) != "")]
    weighted = df[(df["concept"] == "shares_basic") & (df["start"] != "") & (df["value"] > 0)]
    if out.empty or weighted.empty:
        return df, notes
    reference = weighted.groupby(["company", "scope", "source"])["value"].median().to_dict()
    fix = {}
    for idx, company, scope, source, end, value in zip(out.index, out["company"], out["scope"], out["source"], out["end"], out["value"]):
        ref = reference.get((company, scope, source))
        if ref is not None and 500 <= ref / value <= 2000:
            fix[idx] = 1000.0
            notes.append(f"{company} shares_outstanding at {end} ({source}): {value:,.0f} x 1000 (scale slip: the filing's "
                         f"weighted basic shares are {ref:,.0f})")
    if not fix:
        return df, notes
    return _rescale(df, fix, "about 1/1000 of the filing's weighted basic shares"), notes


# -- 2. splits ---------------------------------------------------------------------------------------
def detect_splits(df: pd.DataFrame, kind: pd.Series) -> list[Split]:
    """Split events of each company, from windows that two filings state on different bases."""
    key = ["company", "scope", "concept", "start", "end", "unit"]
    rows = df[kind != ""].assign(_kind=kind[kind != ""])
    rows = rows.sort_values(key + ["filed"]).drop_duplicates(key + ["filed"], keep="last")
    same = (rows[key] == rows[key].shift(-1)).all(axis=1).to_numpy()  # row i and i+1: one window, two filings
    early, late = rows["value"].to_numpy(dtype=float), rows["value"].shift(-1).to_numpy(dtype=float)
    shares = (rows["_kind"] == "shares").to_numpy()
    found = np.full(len(rows), np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = same & (early != 0) & (late != 0) & (np.sign(early) == np.sign(late))
        ratio = late / early
        precise = np.minimum(np.abs(early), np.abs(late)) >= 0.1
        for k in SPLIT_FACTORS:
            for f in (k, 1 / k):
                hit_s = shares & (np.abs(ratio / f - 1) <= SHARE_TOL)
                hit_p = ~shares & precise & (np.abs(early / f - late) <= CENT * max(1.0, 1 / f)) & (np.abs(early - late) > CENT)
                found = np.where(np.isnan(found) & ok & (hit_s | hit_p), f, found)
    hits = np.flatnonzero(~np.isnan(found))
    filed, company = rows["filed"].to_numpy(), rows["company"].to_numpy()
    evidence: dict[str, list[tuple[str, str, float]]] = {}
    for i in hits:
        evidence.setdefault(str(company[i]), []).append((str(filed[i]), str(filed[i + 1]), float(found[i])))
    events = []
    for company, ev in evidence.items():
        # narrowest intervals first; evidence with the same factor and overlapping interval is one event
        clusters: list[list] = []  # [lo, hi, factor, count]
        for lo, hi, f in sorted(ev, key=lambda e: (pd.Timestamp(e[1]) - pd.Timestamp(e[0]), e[1])):
            for c in clusters:
                if abs(c[2] / f - 1) < 1e-9 and lo < c[1] and c[0] < hi:
                    c[0], c[1], c[3] = max(c[0], lo), min(c[1], hi), c[3] + 1
                    break
            else:
                clusters.append([lo, hi, f, 1])
        accepted: list[Split] = []
        for lo, hi, f, n in sorted(clusters, key=lambda c: pd.Timestamp(c[1]) - pd.Timestamp(c[0])):
            # an interval spanning an accepted event shows a product of factors (4 x 10 = 40): not an event
            if n >= 2 and not any(lo <= a.last_old and a.first_new <= hi for a in accepted):
                accepted.append(Split(company, f, lo, hi, n))
        events += accepted
    return sorted(events, key=lambda e: (e.company, e.first_new))


# -- 3. one basis ------------------------------------------------------------------------------------
def normalize(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Facts with per-share values and share counts on each company's latest basis; (frame, notes).

    Rows without a filing date (a bare XBRL instance, a table) cannot be placed on a basis: untouched."""
    if "adjustment" not in df.columns:
        df = df.assign(adjustment="")
    kind = _kinds(df)
    kind = kind.where(df["filed"].astype(str) != "", "")
    if not (kind != "").any():
        return df, []
    df, notes = fix_scale_slips(df, kind)
    df, more = fix_outstanding_slips(df)
    notes += more
    kind = kind.loc[df.index]
    events = detect_splits(df, kind)
    if not events:
        return df, notes
    df = df.copy()
    for e in events:
        notes.append(f"{e.company}: {e.describe()}, seen in {e.evidence} windows")
    kind = kind.reindex(df.index)
    factor = pd.Series(1.0, index=df.index)
    why = pd.Series("", index=df.index)
    for e in events:
        before = (df["company"] == e.company) & (kind != "") & (df["filed"] < e.first_new)
        factor[before] *= e.factor
        why[before] = [_join(w, e.describe()) for w in why[before]]
    idx = factor[factor != 1.0].index
    if len(idx):
        is_shares = kind.loc[idx] == "shares"
        old = df.loc[idx, "value"].astype(float)
        exact = [Decimal(repr(o)) * Decimal(repr(f)) if sh else Decimal(repr(o)) / Decimal(repr(f))
                 for o, f, sh in zip(old, factor[idx], is_shares)]
        # a rescaled per-share figure is kept at the decimals every statement format prints (3.6475 / 7 = 0.521071),
        # so a prompt shows exactly the figure an answer is computed from (issue 11)
        new = [float(x if sh else x.quantize(PER_SHARE_QUANTUM, ROUND_HALF_UP)) for x, sh in zip(exact, is_shares)]
        df.loc[idx, "value"] = new
        verb = np.where(is_shares, "x", "/")
        df.loc[idx, "adjustment"] = [
            _join(a, f"as filed {_num(o)} {v} {_fmt_factor(f)} = {_num(n)}{'' if Decimal(repr(n)) == x else ' (to 6 decimals)'}"
                     f" on the latest share basis ({w})")
            for a, o, v, f, n, x, w in zip(df.loc[idx, "adjustment"], old, verb, factor[idx], new, exact, why[idx])
        ]
        df = _prefer_precise(df, factor, kind)
    return df, notes


def _prefer_precise(df: pd.DataFrame, factor: pd.Series, kind: pd.Series) -> pd.DataFrame:
    """Drop per-share figures that only repeat another filing's figure for the window at lower precision.

    A figure filed on a later basis (0.60 after a 10-for-1 split) that agrees with an earlier filing's
    figure rescaled to the same basis (5.98 / 10 = 0.598) within its own rounding (half a cent on the
    basis it was filed on) carries fewer digits: the figure with the larger rescale factor is kept."""
    key = ["company", "scope", "concept", "tag", "start", "end", "unit"]
    ps = df[(kind == "per_share") & df.index.isin(factor[factor != 1.0].index.union(df.index))].assign(_f=factor)
    ps = ps[ps.groupby(key)["_f"].transform("nunique") > 1]
    if ps.empty:
        return df
    pairs = ps.reset_index(names="row_id").merge(ps[key + ["value", "_f"]], on=key, suffixes=("", "_other"))
    coarser = pairs[(pairs["_f_other"] > pairs["_f"])
                    & ((pairs["value"] - pairs["value_other"]).abs() <= CENT / pairs["_f"])]
    return df.drop(index=coarser["row_id"].unique()) if len(coarser) else df


PER_SHARE_QUANTUM = Decimal("0.000001")  # render._number prints 6 decimals in every text format


def _num(x: float) -> str:
    """A number for a note: thousands separators for large values, never e-notation."""
    if abs(x) >= 1000:
        return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.2f}"
    return format(Decimal(repr(float(x))).normalize(), "f")


def _join(a: str, b: str) -> str:
    return f"{a}; {b}" if a else b


def main(argv: list[str] | None = None) -> int:
    from ledgerlm.synth.statements.sources import load_facts  # here, not at the top: sources -> facts -> splits

    raw = load_facts(argv or None, latest_only=False)
    _, notes = normalize(raw.assign(adjustment=""))
    print("\n".join(notes) or "no splits or scale slips found")
    return 0


if __name__ == "__main__":
    sys.exit(main())
