"""Contract 1 — the canonical facts table every loader yields, and the helpers all loaders share.

    python -c "from ledgerlm.synth.statements.sources import load_facts; print(load_facts().head())"

One row per reported value, columns `FACT_COLUMNS` in this order. Conventions (all loaders):
- dates are strings 'YYYY-MM-DD'; `start` is '' for instants (balance-sheet items), so string
  comparison orders dates and groupby keys never hold NaN;
- text columns are plain str with '' for missing; `value` is float64; `fiscal_year` is Int64;
- `fiscal_year` / `fiscal_period` are the *filing's* focus (companyfacts fy/fp, FSDS sub fy/fp, XBRL
  DocumentFiscalYearFocus/PeriodFocus) — a 10-K repeats comparatives under the same fy, so the
  period of a fact is always `start`/`end`, never these two columns;
- units: USD, CNY, TWD, shares, USD/share (per-share units are singular), pure;
- `tag` is `taxonomy:Name` (e.g. `us-gaap:Revenues`) or the statement label for tables.
"""
from __future__ import annotations

import gzip
import math
import os
import io
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: functions that build or read frames import pandas (a warm synth run never does)
    import pandas as pd

from ledgerlm.errors import InputError
from ledgerlm.synth.statements.taxonomy import tag_precedence

FACT_COLUMNS = [
    "company", "company_name", "scope", "statement", "concept", "label", "value", "unit",
    "start", "end", "fiscal_year", "fiscal_period", "form", "filed", "source", "tag",
]
TEXT_COLUMNS = [c for c in FACT_COLUMNS if c not in ("value", "fiscal_year")]
DATE_COLUMNS = ["start", "end", "filed"]
SCOPES = ("consolidated", "parent")
PERIOD_KEY = ["company", "scope", "concept", "start", "end", "unit"]
MIN_YEAR, MAX_YEAR = 1000, 9999  # `fiscal_year` is a four-digit year
# `fiscal_period`: SEC fp values (FY, Q1-Q4, H1, H2, M9, CY, T1-T3) and the table loader's Q3YTD / Q1TTM
FISCAL_PERIODS = r"|FY|CY|H[12]|M9|T[1-3]|Q[1-4](?:YTD|TTM)?"


def _is_year(years: pd.Series) -> pd.Series:
    """Which numbers (from pd.to_numeric, NaN where the text was none) are whole years MIN_YEAR..MAX_YEAR."""
    return years.between(MIN_YEAR, MAX_YEAR) & (years.astype("float64") % 1 == 0)


def empty_facts() -> pd.DataFrame:
    """A zero-row facts frame with the contract-1 columns and dtypes."""
    return conform({c: [] for c in FACT_COLUMNS})


def conform(columns: dict | pd.DataFrame) -> pd.DataFrame:
    """Build a facts frame from column lists (or a frame): contract order and dtypes, '' for missing text."""
    import pandas as pd

    df = pd.DataFrame(columns)
    for col in TEXT_COLUMNS:
        if col not in df:
            df[col] = ""
        df[col] = df[col].fillna("").astype(str)
    df["value"] = pd.to_numeric(df.get("value", pd.Series(dtype=float)), errors="raise").astype("float64")
    years = pd.to_numeric(df.get("fiscal_year", pd.Series(dtype="Int64")), errors="coerce")
    if len(years):  # a year that is no four-digit integer is no year (as 'FY20X3'): NA, not an Int64 overflow in pandas
        years = years.where(_is_year(years))
    df["fiscal_year"] = years.astype("Int64")
    return df[FACT_COLUMNS].reset_index(drop=True)


def check_facts_frame(df: pd.DataFrame, source: str) -> pd.DataFrame:
    """Validate a frame that claims to be contract-1 facts; return it conformed, or raise InputError naming the field."""
    import pandas as pd

    missing = [c for c in FACT_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}; expected {', '.join(FACT_COLUMNS)}", path=source, field=missing[0])
    out = df[FACT_COLUMNS].copy()
    values = pd.to_numeric(out["value"], errors="coerce")
    bad = values.isna() & out["value"].notna() & (out["value"].astype(str).str.strip() != "")
    if bad.any():
        row = int(bad.idxmax())
        raise InputError(f"row {row + 1}: {out['value'][row]!r} is not a number", path=source, field="value")
    out["value"] = values
    years = pd.to_numeric(out["fiscal_year"], errors="coerce")
    given = out["fiscal_year"].notna() & (out["fiscal_year"].astype(str).str.strip() != "")
    bad = given & ~_is_year(years)
    if bad.any():
        row = int(bad.idxmax())
        raise InputError(f"row {row + 1}: {out['fiscal_year'][row]!r} is not a year", path=source, field="fiscal_year")
    out["fiscal_year"] = years
    for col in TEXT_COLUMNS:
        out[col] = out[col].fillna("").astype(str)
    for col in DATE_COLUMNS:
        text = out[col].str.strip()
        ok = (text == "") | text.str.fullmatch(r"\d{4}-\d{2}-\d{2}")
        if not ok.all():
            row = int((~ok).idxmax())
            raise InputError(f"row {row + 1}: {out[col][row]!r} is not a YYYY-MM-DD date", path=source, field=col)
        out[col] = text
    no_company = out["company"].str.strip() == ""
    if no_company.any():
        row = int(no_company.idxmax())
        more = f" (and {int(no_company.sum()) - 1} more row(s))" if no_company.sum() > 1 else ""
        raise InputError(f"row {row + 1}: company is empty{more}", path=source, field="company")
    bad_period = ~out["fiscal_period"].str.strip().str.fullmatch(FISCAL_PERIODS, case=False)
    if bad_period.any():
        row = int(bad_period.idxmax())
        raise InputError(f"row {row + 1}: fiscal_period {out['fiscal_period'][row]!r} is not a fiscal period (FY, Q1-Q4, H1, H2, M9, CY, T1-T3, Q1-Q4 with YTD/TTM, or empty)",
                         path=source, field="fiscal_period")
    bad_scope = ~out["scope"].isin(SCOPES)
    if bad_scope.any():
        row = int(bad_scope.idxmax())
        raise InputError(f"row {row + 1}: scope {out['scope'][row]!r} is not one of {SCOPES}", path=source, field="scope")
    return conform(out)


def select_latest(df: pd.DataFrame, as_of: str | None = None) -> pd.DataFrame:
    """One value per (company, scope, concept, start, end, unit).

    `as_of` ('YYYY-MM-DD') first keeps only rows filed on or before that date (point-in-time view;
    rows with an empty `filed`, e.g. from a bare XBRL instance or a table, are left out of it).
    Then (splits.normalize) per-share values and share counts are put on each company's latest share
    basis and the filers' provable scale slips corrected. Among alternates the tag with the higher
    precedence (taxonomy order) wins for a period, and lower-precedence tags fill periods it lacks;
    for the same tag the latest `filed` wins (restatements), then the latest source — unless the
    later value is not the same line (`keep_same_line`). Rows without a mapped concept are kept
    untouched. The result has two extra columns: `adjustment`, the note of every correction ('' if none), and
    `alternates`, what other tags of the concept report for the window (`with_alternates`).
    """
    import pandas as pd

    from ledgerlm.synth.statements.splits import normalize  # numpy and pandas: imported when facts are selected

    if as_of:  # rows without a filing date cannot be placed in time: they leave a point-in-time view
        df = df[(df["filed"] != "") & (df["filed"] <= str(as_of))]
    if df.empty:
        return df.assign(adjustment="", alternates="").reset_index(drop=True)
    df = df.assign(**{c: df[c] if c in df.columns else "" for c in EXTRA_COLUMNS})
    unmapped = df[df["concept"] == ""]
    mapped = drop_wrong_share_counts(drop_section_subtotals(drop_twin_mistags(drop_partial_totals(df[df["concept"] != ""]))))
    for step in (extension_lines_of_the_latest_sheet, positive_payments, without_partial_cost_of_revenue, with_construction_capex, with_vie_receivables,
                 with_investment_parts, with_inventory_parts, with_licence_intangibles, with_current_equity_securities,
                 with_consolidated_net_income, keep_precise):
        mapped = step(mapped)
    mapped, _ = normalize(mapped)
    mapped = keep_same_line(mapped)
    keys = mapped["concept"] + "\0" + mapped["tag"]
    uniq = pd.unique(keys)
    prec = dict(zip(uniq, (tag_precedence(k.split("\0")[1], k.split("\0")[0]) for k in uniq)))
    order = mapped.assign(_prec=keys.map(prec).fillna(0).astype(int), _sheet=_without_sheet(mapped))
    order = order.sort_values(["_sheet", "_prec", "filed", "source"], ascending=[True, True, False, False], kind="stable")
    first = ~order.duplicated(PERIOD_KEY, keep="first")
    latest = with_alternates(order[first].drop(columns=["_prec", "_sheet"]), order[~first])
    out = pd.concat([latest, unmapped])
    out = out.sort_index(kind="stable").reset_index(drop=True)  # a row a step added may share a label with an unmapped one
    return out[[c for c in out.columns if c not in EXTRA_COLUMNS] + list(EXTRA_COLUMNS)]


def extension_lines_of_the_latest_sheet(df: pd.DataFrame) -> pd.DataFrame:
    """A balance read from a filer's own element (taxonomy "ext", extensions.yaml) only where it comes from the
    latest-filed balance sheet at its date (the filing whose total assets win there): such a line is a re-presentation,
    and a later sheet that does not show it holds its amount in another line. GE's 10-Q for 2010Q1 splits "Non-recourse
    borrowings of consolidated securitization entities" (3,883 M) out of its 2009-12-31 borrowings (short-term 130,252 M),
    while its later 8-K recasting the 2009 10-K shows 133,054 M short-term and no such line: added to the 8-K's
    borrowings it counted 3,883 M twice."""
    ext = df["tag"].str.startswith("ext:") & (df["start"] == "")
    if not ext.any():
        return df
    sheets = df[(df["concept"] == "total_assets") & (df["start"] == "")].sort_values(["filed", "source"], kind="stable")
    latest = dict(zip(zip(sheets["company"], sheets["scope"], sheets["end"]), sheets["source"]))  # the last one wins
    rows = df[ext]
    stale = [i for i, c, sc, e, src in zip(rows.index, rows["company"], rows["scope"], rows["end"], rows["source"])
             if latest.get((c, sc, e), src) != src]
    return df.drop(index=stale) if stale else df


def _without_sheet(df: pd.DataFrame):
    """1 for a balance at a date taken from a filing that shows no balance sheet at that date (no total assets there),
    else 0 (flows too): such a value gives way to one from a filing that does, whatever its tag or filing date. TSMC's
    2020 20-F gives equity at 2017-12-31 as 1,495,692.3 M TWD, the opening balance of its equity statement after
    adopting IFRS 9 and 15, where its 2017 and 2018 20-F balance sheets show 1,494,446.5 M; taken as the latest filed,
    it sat in the FY2017 balance sheet beside the other lines (parent equity + noncontrolling interests 1,494,446.5 M)
    and moved FY2017 long-term-capital debt ratio from 6.88 % to 6.87 %."""
    instant = df["start"] == ""
    at = df["company"] + "\0" + df["scope"] + "\0" + df["source"] + "\0" + df["end"]
    sheets = set(at[instant & (df["concept"] == "total_assets")])
    return (instant & ~at.isin(sheets)).astype(int)


EXTRA_COLUMNS = ("adjustment", "alternates")  # select_latest's own columns, after contract 1's


def with_alternates(kept: pd.DataFrame, dropped: pd.DataFrame) -> pd.DataFrame:
    """`kept` with an `alternates` column: for each kept value, what the filings report for the same window under the
    concept's other tags (`tag=value` joined by `;`, each tag's values as its filings give them; '' if none, or what an
    earlier selection recorded). The store reads it before combining values of two tags in one derivation (a quarter
    from two year-to-date reports, a TTM, an average of two balances): Duke's FY2009 H1 net income is NetIncomeLoss
    (no ProfitLoss filed for it) and its Q1 is ProfitLoss, 349 M, while the same 10-Q reports NetIncomeLoss 344 M for
    Q1, so H1 - Q1 would subtract a different line (the noncontrolling interests' share) and is refused. Entries
    `@filed=value` are the kept tag's own restatements (`_restatements`)."""
    import pandas as pd

    previous = kept["alternates"] if "alternates" in kept.columns else pd.Series("", index=kept.index)
    if dropped.empty:
        return kept.assign(alternates=previous)
    tags = kept.set_index(PERIOD_KEY)["tag"]
    joined = dropped.join(tags.rename("_kept_tag"), on=PERIOD_KEY)
    other = joined[joined["tag"] != joined["_kept_tag"]].drop_duplicates(PERIOD_KEY + ["tag", "value"])
    texts = []
    if not other.empty:
        texts.append((other["tag"] + "=" + other["value"].astype(float).map(repr)).groupby([other[c] for c in PERIOD_KEY]).agg(";".join))
    restated = _restatements(kept, joined[joined["tag"] == joined["_kept_tag"]])
    if restated is not None:
        texts.append(restated)
    if not texts:
        return kept.assign(alternates=previous)
    found = [kept.join(text.rename("_alt"), on=PERIOD_KEY)["_alt"].fillna("") for text in texts]
    joined_text = [";".join(x for x in parts if x) for parts in zip(previous, *found)]
    return kept.assign(alternates=joined_text)


def _restatements(kept: pd.DataFrame, earlier: pd.DataFrame):
    """Per window whose filings changed the kept tag's value: `@filed=value` for each value as first filed, oldest first,
    the kept value's first filing last (None when no window was restated). The store reads them before combining
    windows of different filings (`store._restated_after`): Alphabet's FY2014 operating cash flow, 22,376 M as filed
    in its FY2014 10-K, is 23,024 M from a 2016 8-K recast on, while its 9M FY2014 (16,012 M) was never re-filed, so
    a TTM FY2015Q3 = 9M FY2015 + FY2014 - 9M FY2014 would mix the two bases (seed-5353 helper audit)."""
    import pandas as pd

    if earlier.empty:
        return None
    rows = pd.concat([kept[PERIOD_KEY + ["filed", "value"]], earlier[PERIOD_KEY + ["filed", "value"]]])
    rows = rows[rows["filed"].astype(str) != ""]
    varied = rows.groupby(PERIOD_KEY, sort=False, dropna=False)["value"].transform("nunique").gt(1)
    rows = rows[varied.to_numpy()].assign(filed=lambda d: d["filed"].astype(str)).sort_values(PERIOD_KEY + ["filed"], kind="stable")
    if rows.empty:
        return None
    starts = rows[rows["value"].ne(rows.groupby(PERIOD_KEY, sort=False, dropna=False)["value"].shift())]  # each value's first filing
    return ("@" + starts["filed"] + "=" + starts["value"].astype(float).map(repr)).groupby([starts[c] for c in PERIOD_KEY]).agg(";".join)


TOTAL_PARTS = {"total_costs_and_expenses": ("cost_of_revenue",), "total_assets": ("current_assets",),
               "total_liabilities": ("current_liabilities",)}  # a total and lines it contains, all reported as positive


def drop_partial_totals(df: pd.DataFrame) -> pd.DataFrame:
    """Drop a company's tag for a total where any of its filings reports it below a line the total contains, for the same
    window: that filer uses the tag for something else. General Electric tags "Other costs and expenses" (FY2009
    37,804 M) with CostsAndExpenses beside 50,580 M of cost of goods sold, in every filing: shown as total costs and
    expenses (营业总成本) it contradicted its own cost of revenue."""
    key = ["company", "scope", "source", "start", "end", "unit"]
    wrong = set()
    for total, parts in TOTAL_PARTS.items():
        totals = df[df["concept"] == total]
        if totals.empty:
            continue
        for part in parts:
            pairs = totals[key + ["tag", "value"]].merge(df.loc[df["concept"] == part, key + ["value"]], on=key, suffixes=("", "_part"))
            below = pairs[(pairs["value_part"] > 0) & (pairs["value"] < pairs["value_part"])]
            wrong |= {(c, total, t) for c, t in zip(below["company"], below["tag"])}
    if not wrong:
        return df
    return df[~_rows_in(df, ["company", "concept", "tag"], list(wrong))]


def _rows_in(df: pd.DataFrame, columns: list[str], keys) -> "numpy.ndarray":
    """A boolean per row of `df`: its `columns` are among `keys` (tuples, or a frame with those columns); one vectorised
    look-up, not a Python test per row (select_latest runs on bulk inputs of millions of rows)."""
    import pandas as pd

    if isinstance(keys, pd.DataFrame):
        keys = pd.MultiIndex.from_frame(keys[columns])
    return pd.MultiIndex.from_frame(df[columns]).isin(keys)


TWINS = {"other_current_assets": "other_noncurrent_assets", "other_current_liabilities": "other_noncurrent_liabilities"}


def drop_twin_mistags(df: pd.DataFrame) -> pd.DataFrame:
    """Drop a company's tag for a current line where a filing reports under it the very figure (non-zero) that the
    non-current line of the same date has, in filings that also report the current line under another tag: the
    filer put its non-current line under the current tag. NVIDIA's FY2013 and FY2019 10-Qs tag "Other assets"
    (non-current; 120.3 M at 2012-01-29, 319 M at 2018-01-28, its 10-Ks' OtherAssetsNoncurrent) as OtherAssetsCurrent
    beside "Prepaid expenses and other current assets" (49.4 M, 86 M): shown as other current assets, the lines came to
    more than total current assets (seed-6061 helper audit)."""
    import pandas as pd

    at = ["company", "scope", "end"]
    rows = df[df["concept"].isin([*TWINS, *TWINS.values()])]
    rows = rows[rows["value"].notna()]
    wrong = []
    for current, twin in TWINS.items():
        cur = rows[(rows["concept"] == current) & (rows["value"] != 0)]
        if not cur.empty:
            pairs = cur[at + ["tag", "value"]].merge(rows.loc[rows["concept"] == twin, at + ["value"]], on=at + ["value"])
            wrong.append(pairs[["company", "tag"]].assign(concept=current))
    wrong = pd.concat(wrong).drop_duplicates() if wrong else None
    if wrong is None or wrong.empty:
        return df
    key = ["company", "scope", "source", "end", "concept"]
    current_rows = rows[rows["concept"].isin(list(TWINS))]
    tags_per_filing = current_rows.groupby(key)["tag"].nunique()
    several = tags_per_filing[tags_per_filing > 1].index
    candidates = current_rows[_rows_in(current_rows, key, several)]
    bad = candidates[_rows_in(candidates, ["company", "concept", "tag"], wrong)]
    return df.drop(index=bad.index) if len(bad) else df


SUBTOTAL_TOLERANCE = (0.01, 0.05)  # of total liabilities (or assets) / of total liabilities and equity
_SUBTOTAL_INPUTS = ["noncurrent_liabilities", "noncurrent_assets", "total_liabilities", "current_liabilities",
                    "liabilities_and_equity", "total_assets", "total_equity", "equity_parent", "temporary_equity",
                    "current_assets"]  # the lines drop_section_subtotals compares


def drop_section_subtotals(df: pd.DataFrame) -> pd.DataFrame:
    """Drop a company's tag (in that scope) for total non-current liabilities (assets) where a filing's figure is not
    the rest of its total liabilities (assets) after the current ones — or, without total liabilities, leaves more than
    5 % of total liabilities and equity unaccounted beside current liabilities and total equity: the filer uses the tag for a
    section subtotal. Con Edison tags "Total other non-current liabilities" (5,379 M at 2008-12-31, long-term debt of
    9,232 M not in it) as LiabilitiesNoncurrent; shown as total non-current liabilities, it entered long-term capital
    ratios as if the company had no long-term debt (seed-6061 helper audit)."""
    import pandas as pd

    key = ["company", "scope", "source", "end", "unit"]
    instants = df[(df["start"] == "") & df["concept"].isin(_SUBTOTAL_INPUTS) & df["value"].notna()]
    subtotals = instants[instants["concept"].isin(["noncurrent_liabilities", "noncurrent_assets"])]
    if subtotals.empty:
        return df
    lines = instants.drop_duplicates(key + ["concept"]).set_index(key + ["concept"])["value"].unstack("concept")
    col = lambda name: lines[name] if name in lines.columns else pd.Series(float("nan"), index=lines.index)  # noqa: E731
    tight, loose = SUBTOTAL_TOLERANCE
    base = col("liabilities_and_equity").fillna(col("total_assets"))
    equity = col("total_equity").fillna(col("equity_parent")) + col("temporary_equity").fillna(0)
    checks = pd.DataFrame({"ncl_rest": col("total_liabilities") - col("current_liabilities"), "tl": col("total_liabilities"),
                           "rest_of_le": base - col("current_liabilities") - equity, "le": base,
                           "nca_rest": col("total_assets") - col("current_assets"), "ta": col("total_assets")}).reset_index()
    got = subtotals.merge(checks, on=key, how="left")  # each filed subtotal row with its own filing's totals, tag kept
    ncl = got["concept"] == "noncurrent_liabilities"
    bad_ncl = ncl & (((got["value"] - got["ncl_rest"]).abs() > tight * got["tl"].abs()) |
                     (got["ncl_rest"].isna() & ((got["rest_of_le"] - got["value"]).abs() > loose * got["le"].abs())))
    bad_nca = ~ncl & ((got["value"] - got["nca_rest"]).abs() > tight * got["ta"].abs())
    wrong = got.loc[bad_ncl | bad_nca, ["company", "scope", "concept", "tag"]].drop_duplicates()
    if wrong.empty:
        return df
    return df[~_rows_in(df, ["company", "scope", "concept", "tag"], wrong)]


def drop_wrong_share_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Drop shares outstanding of 0 (Sempra's FY2009 H1 10-Q) and shares outstanding at a date where they equal the shares
    issued that a filing reports for that date while treasury shares are held then: issued shares include the treasury
    shares, outstanding ones do not, so the figure is shares issued under the wrong tag. Safeway's FY2009 10-K tags
    592.6 M (FY2009) and 590.7 M (FY2008) as CommonStockSharesOutstanding, the numbers its 10-Qs tag
    CommonStockSharesIssued, with 204.3 M and 161.8 M treasury shares; book value per share would have divided by the
    issued count (~50 % too many shares)."""
    df = df[(df["concept"] != "shares_outstanding") | (df["value"] != 0)]
    at = ["company", "scope", "end"]
    outstanding = df[(df["concept"] == "shares_outstanding") & (df["value"] > 0)]
    issued = df[df["concept"] == "shares_issued"]
    treasury = df[(df["concept"] == "treasury_shares") & (df["value"] > 0)]
    if outstanding.empty or issued.empty or treasury.empty:
        return df
    held = treasury[at].drop_duplicates()
    pairs = outstanding[at + ["value"]].rename_axis("row_id").reset_index().merge(held, on=at)
    pairs = pairs.merge(issued[at + ["value"]], on=at, suffixes=("", "_issued"))
    wrong = pairs.loc[(pairs["value"] - pairs["value_issued"]).abs() < 0.5, "row_id"].unique()
    return df.drop(index=wrong) if len(wrong) else df


OUTFLOW_CONCEPTS = ("capex", "dividends_paid", "share_repurchase")  # outflows their elements report as positive amounts


def positive_payments(df: pd.DataFrame) -> pd.DataFrame:
    """A Payments... element is an outflow reported as a positive amount; a filer that tags it negative (Kellogg's 2009
    10-Q/A: PaymentsToAcquirePropertyPlantAndEquipment -179 M, its 2007 10-K +472 M; Honeywell's 2009 filings) has the
    sign flipped back, with a note: subtracting a negative capex added it to free cash flow (Honeywell FY2008 FCF margin
    12.79 % instead of 7.95 %; a helper audit found 7 item pairs of a 2,000-sample run)."""
    wrong = (df["concept"].isin(OUTFLOW_CONCEPTS)) & (df["value"].astype(float) < 0)
    if not wrong.any():
        return df
    out = df.copy()
    notes = [f"the filing tags this outflow as {v:,.0f}; Payments elements are positive" for v in out.loc[wrong, "value"]]
    out.loc[wrong, "value"] = -out.loc[wrong, "value"].astype(float)
    out.loc[wrong, "adjustment"] = [f"{a}; {n}" if a else n for a, n in zip(out.loc[wrong, "adjustment"], notes)]
    return out


CAPEX_LINES = ("PaymentsToAcquirePropertyPlantAndEquipment", "PaymentsForConstructionInProcess")  # summed where both are filed


NCI_NOTE = "the filing tags no consolidated total"
NCI_INCOME_TAGS = ("NetIncomeLossAttributableToNoncontrollingInterest", "MinorityInterestInNetIncomeLossOfConsolidatedEntities")


def with_consolidated_net_income(df: pd.DataFrame) -> pd.DataFrame:
    """Consolidated net income (the noncontrolling interests' share included) where a filing tags only its parts.

    - A filing that reports NetIncomeLoss and a non-zero noncontrolling interests' share for a window, and no ProfitLoss
      for it, gives net income as their sum (with a note): Honeywell's 2009 filings show "Net income 859 M, less
      noncontrolling interests 12 M, attributable to Honeywell 847 M" and tag only the last two, so net income fell back
      to the parent's share while the statement showed the 12 M line beside it (seed-9001 analyst audit).
    - A filing's ProfitLoss equal to its own NetIncomeLoss while that same filing reports a non-zero noncontrolling
      interests' share for the window is the parent's share tagged as the total, and is dropped where another filing
      reports the window's ProfitLoss apart from it. Equal figures alone prove nothing: Ford's 8-K of 2010-05-07
      recasts FY2009 for SFAS 167 (dealer entities deconsolidated: revenue 118,308 -> 116,283 M, no noncontrolling
      share left), so its ProfitLoss 2,717 M = NetIncomeLoss is a restatement of the 10-K's 2,962 M (245 M to
      noncontrolling interests), not a mis-tag (seed-7373 one-vintage audit: the rule had dropped it, and Ford's
      FY2009 ROA and FY2010Q1 TTMs mixed the 10-K's net income with the 8-K's other figures).
    - Such a filing, equal totals and no noncontrolling line of its own, states a noncontrolling share of 0 by its own
      arithmetic (ProfitLoss - NetIncomeLoss); where another filing reports a non-zero share for the window, that 0 is
      added as the filing's figure (with a note), so the recast's statement does not show the 10-K's 245 M beside its
      own equal totals and the older share counts as restated.
    """
    import pandas as pd

    tags = df["tag"].str.rsplit(":", n=1).str[-1]
    window = ["company", "scope", "start", "end", "unit", "source"]
    parent = df[(df["concept"] == "net_income_parent") & (tags == "NetIncomeLoss")][window + ["value"]]
    if parent.empty:
        return df
    out = df
    nci = df[(df["concept"] == "net_income_minority") & tags.isin(NCI_INCOME_TAGS) & (df["value"] != 0)]
    totals = df[(df["concept"] == "net_income") & (tags == "ProfitLoss")]
    if len(totals) and len(nci):
        same = totals.rename_axis("row_id").reset_index().merge(parent.rename(columns={"value": "_parent"}), on=window)
        apart = set(map(tuple, same.loc[same["value"] != same["_parent"], window[:5]].values))
        in_apart = pd.Series([tuple(r) in apart for r in same[window[:5]].values], index=same.index, dtype=bool)
        with_nci = set(map(tuple, nci[window].values))  # the filing itself shows a share left to noncontrolling interests
        has_nci = pd.Series([tuple(r) in with_nci for r in same[window].values], index=same.index, dtype=bool)
        equal = same["value"] == same["_parent"]
        drop = same[equal & in_apart & has_nci]["row_id"]
        out = out.drop(index=drop.unique()) if len(drop) else out
        out = _with_recast_zero_share(out, df.loc[same.loc[equal & ~has_nci, "row_id"]], nci, window)
    if nci.empty:
        return out
    out_tags = out["tag"].str.rsplit(":", n=1).str[-1]
    fallback = out[(out["concept"] == "net_income") & (out_tags == "NetIncomeLoss")]
    with_total = set(map(tuple, out.loc[(out["concept"] == "net_income") & (out_tags == "ProfitLoss"), window].values))
    pairs = fallback.rename_axis("row_id").reset_index().merge(
        nci[window + ["value"]].drop_duplicates(window).rename(columns={"value": "nci_value"}), on=window)
    pairs = pairs[pd.Series([tuple(r) not in with_total for r in pairs[window].values], index=pairs.index, dtype=bool)]
    # still the parent's share (a corrected row, e.g. read back from a canonical CSV, is not corrected twice)
    pairs = pairs.merge(parent.rename(columns={"value": "parent_value"}), on=window)
    pairs = pairs[pairs["value"] == pairs["parent_value"]]
    if pairs.empty:
        return out
    out = out.copy()
    for row in pairs.itertuples(index=False):
        total = row.value + row.nci_value
        note = (f"net income = NetIncomeLoss {row.value:,.0f} + noncontrolling interests {row.nci_value:,.0f} = {total:,.0f} "
                f"({NCI_NOTE})")
        out.at[row.row_id, "value"] = total
        if "label" in out.columns:
            out.at[row.row_id, "label"] = "Net income (including noncontrolling interests)"
        previous = out.at[row.row_id, "adjustment"]
        out.at[row.row_id, "adjustment"] = f"{previous}; {note}" if previous else note
    return out


def _with_recast_zero_share(out: pd.DataFrame, equal_totals: pd.DataFrame, nci: pd.DataFrame, window: list[str]) -> pd.DataFrame:
    """Rows of 0 noncontrolling share for the filings in `equal_totals` (ProfitLoss rows equal to their filing's
    NetIncomeLoss, no noncontrolling line in that filing) whose window another filing (`nci`) gives a non-zero share."""
    import pandas as pd

    if equal_totals.empty:
        return out
    other = nci.drop_duplicates(window[:5]).set_index(window[:5])
    added = []
    for row in equal_totals.itertuples(index=False):
        key = tuple(getattr(row, c) for c in window[:5])
        if key not in other.index:
            continue
        model = other.loc[key]
        note = (f"noncontrolling interests = ProfitLoss {row.value:,.0f} - NetIncomeLoss {row.value:,.0f} = 0 in this filing "
                f"(it tags no noncontrolling line; filing {model['source']} reported {model['value']:,.0f})")
        new = row._asdict()
        new.update(concept="net_income_minority", tag=model["tag"], value=0.0,
                   label=model["label"] if "label" in model.index else new.get("label", ""),
                   adjustment=f"{new['adjustment']}; {note}" if new.get("adjustment") else note)
        added.append(new)
    if not added:
        return out
    start = int(out.index.max()) + 1 if len(out) else 0  # new labels: the callers' row ids stay unique
    rows = pd.DataFrame(added, columns=out.columns, index=range(start, start + len(added))).astype(out.dtypes.to_dict())
    return pd.concat([out, rows])


def without_partial_cost_of_revenue(df: pd.DataFrame) -> pd.DataFrame:
    """No cost of revenue for a window where the company reports revenue of a finance or insurance business inside its
    total revenue (financial_services_revenue, any filing): the cost line it files covers only the rest, and gross
    margin, cost-of-revenue ratio and the like divide it by all revenue. UnitedHealth's "Cost of products sold" (1,765 M
    of 87,138 M revenue, premiums 79,315 M beside medical costs 65,289 M) read as a 97.97 % gross margin for FY2009;
    GE's cost of goods sold against revenue with services and GECS 67.74 %; Ford's automotive cost of sales against
    revenue with Financial Services 14.98 % (IS/CF gap audit, helper). They have no gross margin: refused."""
    mixed = df[(df["concept"] == "financial_services_revenue") & (df["value"].astype(float) != 0)]
    if mixed.empty:
        return df
    windows = set(zip(mixed["company"], mixed["scope"], mixed["start"], mixed["end"]))
    cost = df[df["concept"] == "cost_of_revenue"]
    partial = [i for i, k in zip(cost.index, zip(cost["company"], cost["scope"], cost["start"], cost["end"])) if k in windows]
    return df.drop(index=partial)


def with_construction_capex(df: pd.DataFrame) -> pd.DataFrame:
    """Capex where a filing presents it as two cash-flow lines: purchases of PP&E plus construction expenditures
    (`PaymentsForConstructionInProcess`, utilities). Con Edison's 2009 10-K reports non-utility construction of 9 M as
    PaymentsToAcquirePropertyPlantAndEquipment and utility construction of 2,184 M beside it: capex alone was 9 M, its free
    cash flow overstated by 2.2 B. Where one filing reports both for a window, the first line's row carries their sum
    (with a note) and the second is dropped; a construction line alone is the filing's capex."""
    main, part = CAPEX_LINES
    return _with_summed_lines(df, "capex", (main,), part, keep_alone=True,
                              label="Capital expenditures (utility construction and other property, plant and equipment)")


VIE_RECEIVABLES = "RestrictedReceivablesOfVariableInterestEntitiesNet"
RECEIVABLES_TAGS = ("AccountsReceivableNetCurrent", "ReceivablesNetCurrent", "AccountsReceivableNet")


def with_vie_receivables(df: pd.DataFrame) -> pd.DataFrame:
    """Receivables where a filing presents them as two balance lines: receivables plus the restricted receivables of
    consolidated variable interest entities. Duke Energy's 10-Q of 2010-05-07 re-presents its 2009-12-31 receivables
    after SFAS 167 (the receivables-securitisation entity consolidated) as ReceivablesNetCurrent 845 M beside
    RestrictedReceivablesOfVariableInterestEntitiesNet 896 M, where its 2009 10-K showed one line of 1,741 M: receivables
    days at FY2009 read 23.89 instead of 49.23 (seed-9191 helper audit). Where one filing reports both at a date, the
    receivables row carries their sum (with a note, as the VIE debt is added to debt) and the VIE line is dropped; a VIE
    line alone is never a filing's receivables (dropped)."""
    return _with_summed_lines(df, "accounts_receivable", RECEIVABLES_TAGS, VIE_RECEIVABLES, keep_alone=False,
                              label="Receivables, net (incl. restricted receivables of variable interest entities)")


EQUITY_SECURITIES = "EquitySecuritiesFvNi"
CURRENT_ASSET_LINES = ("cash", "short_term_investments", "accounts_receivable", "inventory", "other_current_assets")


def with_current_equity_securities(df: pd.DataFrame) -> pd.DataFrame:
    """Short-term investments where a filing shows its marketable securities as two current lines, debt securities
    (DebtSecuritiesCurrent) and equity securities at fair value (EquitySecuritiesFvNi, a tag that does not say current):
    their sum, only where that filing's current assets are exactly its cash, short-term investments, receivables,
    inventory and other current assets plus these equity securities (within 0.5 %), so the line is proven current.
    NVIDIA's 10-Q of 2026-05-20: 39,065 + 12,886 M at 2026-01-25 (current assets 125,605 M, to the million) and
    37,098 + 30,237 M at 2026-04-26 (gap audit, helper: the FY2026 10-K shows one line of 51,951 M). Elsewhere the
    equity securities stay unmapped (dropped)."""
    sti = df["concept"] == "short_term_investments"
    tags = _bare_tags(df, sti)
    parts = df.loc[tags.index[tags == EQUITY_SECURITIES]]
    if parts.empty:
        return df
    debt = set(_keys(df.loc[tags.index[tags == "DebtSecuritiesCurrent"]]))
    lines = df[df["concept"].isin(CURRENT_ASSET_LINES) & ~df.index.isin(parts.index)].drop_duplicates(FILING_WINDOW + ["concept"])
    line_sums = dict(zip(_keys(lines.drop_duplicates(FILING_WINDOW)), lines.groupby(FILING_WINDOW, sort=False)["value"].sum()))
    assets = df[df["concept"] == "current_assets"].drop_duplicates(FILING_WINDOW)
    totals = dict(zip(_keys(assets), assets["value"]))
    unproven = [i for i, k, v in zip(parts.index, _keys(parts), parts["value"])
                if not (k in debt and k in totals and k in line_sums and abs(totals[k] - line_sums[k] - v) <= 0.005 * abs(totals[k]))]
    # the proven ones summed into the debt securities' row (the summing rule drops every equity row it does not sum)
    return _with_summed_lines(df.drop(index=unproven), "short_term_investments", ("DebtSecuritiesCurrent",),
                              EQUITY_SECURITIES, keep_alone=False, label="Marketable securities (debt and equity securities)")


# IFRS 9 / IAS 39 current financial assets that are a filer's short-term investments, one face line each (TSMC: financial
# assets at FVTOCI 154,531 M + at amortised cost 66,761 M at 2023-12-31; available-for-sale + held-to-maturity before
# 2018); FVTPL (forward exchange contracts) and hedging derivatives are not investments of cash
INVESTMENT_PARTS = ("CurrentFinancialAssetsAtFairValueThroughOtherComprehensiveIncome", "CurrentFinancialAssetsAtAmortisedCost",
                    "CurrentFinancialAssetsAvailableforsale", "CurrentHeldtomaturityInvestments")


def with_investment_parts(df: pd.DataFrame) -> pd.DataFrame:
    """Short-term investments where a filing shows them only as current financial assets by IFRS category: their sum
    (with a note) on the first part's row, the other parts dropped; where the filing also tags a short-term investments
    line the parts are dropped (they are its breakdown). TSMC's 20-Fs tag no short-term investments line, so net
    financial debt left out ~221 bn TWD of investments at FY2023 (gap audit, helper)."""
    return _with_parts(df, "short_term_investments", INVESTMENT_PARTS, "current financial assets by category",
                       "Short-term investments (current financial assets at FVTOCI and amortised cost)")


# Inventory lines a balance sheet may show instead of one inventories line: Safeway's "Merchandise inventories"
# (InventoryFinishedGoods 2,508.9 M in its 2009 10-K), Kellogg's 10-Qs (raw materials and supplies 223 M + finished
# goods and work in process 610 M), Con Edison (fuel oil 39 M + gas in storage 164 M + materials and supplies 152 M)
INVENTORY_PARTS = ("InventoryRawMaterials", "InventoryRawMaterialsAndSupplies", "InventoryRawMaterialsAndSuppliesNetOfReserves",
                   "InventoryWorkInProcess", "InventoryFinishedGoods", "InventoryFinishedGoodsAndWorkInProcessNetOfReserves",
                   "EnergyRelatedInventoryOtherFossilFuel", "EnergyRelatedInventoryGasStoredUnderground")


def with_inventory_parts(df: pd.DataFrame) -> pd.DataFrame:
    """Inventory where a filing shows it only as its parts (raw materials, work in process, finished goods, fuel and gas
    in storage): their sum (with a note) on the first part's row, only where the same filing shows current assets at that
    date (a balance sheet) that the parts fit in; where the filing also tags an inventories line (InventoryNet) the parts
    are dropped: they are its note breakdown (NVIDIA's inventory note, Texas Instruments' face lines above its total).
    Safeway (every date), Kellogg's 10-Qs and Con Edison had no inventory, so inventory turnover, the quick ratio and
    the cash conversion cycle were refused for them (gap audit, helper)."""
    assets = df[df["concept"] == "current_assets"].drop_duplicates(FILING_WINDOW)
    totals = dict(zip(_keys(assets), assets["value"]))
    return _with_parts(df, "inventory", INVENTORY_PARTS, "inventory lines of the balance sheet", "Inventories",
                       fits=lambda k, total: k in totals and 0 <= total <= totals[k])


LICENCES = "IndefiniteLivedLicenseAgreements"
LICENCE_LABEL = "Intangible assets (licences and other intangible assets, net)"


def with_licence_intangibles(df: pd.DataFrame) -> pd.DataFrame:
    """Intangible assets (goodwill excluded) where a balance sheet shows them as indefinite-lived licences beside its
    other (finite-lived) intangibles and tags no intangibles line: their sum, with a note. Verizon's sheets show "Wireless
    licenses" (IndefiniteLivedLicenseAgreements, 72,067 M at 2009-12-31) and "Other intangible assets, net"
    (FiniteLivedIntangibleAssetsNet, 6,764 M): intangible assets 78,831 M, which tangible assets and tangible book value
    take out (they were refused: gap audit, helper). The finite-lived line keeps its own concept; where the filing
    tags an intangibles line the licence rows are dropped (a breakdown)."""
    rows = df["concept"] == "intangible_assets"
    tags = _bare_tags(df, rows)
    licences = df.loc[tags.index[tags == LICENCES]]
    if licences.empty:
        return df
    whole_lines = set(_keys(df.loc[tags.index[tags != LICENCES]]))
    finite = df[df["concept"] == "finite_lived_intangible_assets"].drop_duplicates(FILING_WINDOW)
    finite_values = dict(zip(_keys(finite), finite["value"]))
    out, drop = df.copy(), []
    # summed by an earlier selection (its note, or its label where the note is gone: canonical CSV / Parquet round trip)
    summed = licences["adjustment"].str.contains(f"intangible_assets = {LICENCES}", regex=False)
    if "label" in licences.columns:
        summed |= licences["label"] == LICENCE_LABEL
    for row_id, k, value, done in zip(licences.index, _keys(licences), licences["value"], summed):
        if k in whole_lines:
            drop.append(row_id)
        elif k in finite_values and not done:
            total = float(value + finite_values[k])
            _write_sum(out, row_id, total, f"intangible_assets = {LICENCES} {value:,.0f} + FiniteLivedIntangibleAssetsNet "
                       f"{finite_values[k]:,.0f} = {total:,.0f} (two balance lines of the filing)",
                       LICENCE_LABEL)
    return out.drop(index=drop)


def _with_parts(df: pd.DataFrame, concept: str, parts: tuple[str, ...], what: str, label: str, *, fits=None) -> pd.DataFrame:
    """Rows of `concept` tagged one of `parts`: where the same filing tags another (whole) line of the concept for the
    window, dropped; else summed onto the first part's row (one value per tag, in the order of `parts`; `label` and a note
    naming `what` when there are several), where `fits(window, sum)` allows (else dropped)."""
    tags = _bare_tags(df, df["concept"] == concept)
    is_part = tags.isin(parts)
    if not is_part.any():
        return df
    whole_lines = set(_keys(df.loc[tags.index[~is_part]]))
    rows = df.loc[tags.index[is_part]].assign(_rank=tags[is_part].map(parts.index)).sort_values("_rank", kind="stable")
    drop, out = [], df.copy()
    for k, group in rows.groupby(FILING_WINDOW, sort=False):
        categories = group.drop_duplicates("tag")  # one value per category (a filing's repeats of one fact)
        total = float(categories["value"].sum())
        kept = None if k in whole_lines or (fits is not None and not fits(k, total)) else categories.index[0]
        drop.extend(i for i in group.index if i != kept)
        if kept is not None and len(categories) > 1:
            terms = " + ".join(f"{str(t).rsplit(':', 1)[-1]} {v:,.0f}" for t, v in zip(categories["tag"], categories["value"]))
            _write_sum(out, kept, total, f"{concept} = {terms} = {total:,.0f} ({what})", label)
    return out.drop(index=sorted(drop))


FILING_WINDOW = ["company", "scope", "start", "end", "unit", "source"]  # one filing's figure for one window


def _bare_tags(df: pd.DataFrame, rows: pd.Series) -> pd.Series:
    """The element names (no namespace prefix) of the rows `rows` selects, indexed as in `df`."""
    return df.loc[rows, "tag"].str.rsplit(":", n=1).str[-1]


def _keys(df: pd.DataFrame) -> list[tuple]:
    """Each row's (company, scope, start, end, unit, source)."""
    return list(zip(*(df[c] for c in FILING_WINDOW)))


def _write_sum(out: pd.DataFrame, row_id, total: float, note: str, label: str) -> None:
    """Row `row_id` of `out` becomes the sum `total`: the note appended to its adjustments, `label` for the filer's
    label of its first line (which no longer fits the sum)."""
    out.at[row_id, "value"] = total
    if "label" in out.columns:
        out.at[row_id, "label"] = label
    previous = out.at[row_id, "adjustment"]
    out.at[row_id, "adjustment"] = f"{previous}; {note}" if previous else note


def _with_summed_lines(df: pd.DataFrame, concept: str, mains: tuple[str, ...], part: str, *, keep_alone: bool,
                       label: str) -> pd.DataFrame:
    """Rows of `concept` tagged `part` added into the row of one of `mains` the same filing reports for the same window
    (the first of `mains` it reports), with a note and `label`; the `part` rows are dropped (those no main line
    pairs with too, unless `keep_alone`)."""
    tags = _bare_tags(df, df["concept"] == concept)
    parts = df.loc[tags.index[tags == part]]
    if parts.empty:
        return df
    rank = tags[tags.isin(mains)].map(mains.index)
    main_rows = df.loc[rank.index]
    main_rows = main_rows[rank == rank.groupby([main_rows[c] for c in FILING_WINDOW]).transform("min")]  # the first main tag filed
    pairs = main_rows.rename_axis("row_id").reset_index().merge(
        parts[FILING_WINDOW + ["value"]].rename_axis("part_id").reset_index(), on=FILING_WINDOW, suffixes=("", "_part"))
    dropped = set(pairs["part_id"]) if keep_alone else set(parts.index)
    if not dropped:
        return df
    out = df.drop(index=sorted(dropped)).copy()
    for row in pairs.itertuples(index=False):
        total = row.value + row.value_part
        main_tag = str(row.tag).rsplit(":", 1)[-1]
        _write_sum(out, row.row_id, total, f"{concept} = {main_tag} {row.value:,.0f} + {part} {row.value_part:,.0f} = "
                   f"{total:,.0f} (two {'cash-flow' if row.start else 'balance'} lines of the filing)", label)
    return out


ROUNDING_CAP = 1_000_000  # filers tag amounts rounded to at most millions: a rounder figure is not a coarser rounding


def rounding_of(value: float) -> float:
    """The rounding a whole amount shows: the largest of 1, 10, ... `ROUNDING_CAP` that divides it (1 for 0 or a fraction)."""
    quantum = 1.0
    if value and float(value).is_integer():
        while quantum < ROUNDING_CAP and math.fmod(abs(value), quantum * 10) == 0:
            quantum *= 10
    return quantum


def keep_precise(df: pd.DataFrame) -> pd.DataFrame:
    """Drop later values that only repeat an earlier filing's value for the same tag and window at a coarser rounding.

    A later filing's comparative replaces the original (latest filed wins), but when it shows the same figure rounded
    further - NVIDIA's FY2016 10-Q gives its FY2015 nine-month diluted shares as 566,000,000 where the FY2015 10-Q
    filed 565,653,000 - the answers computed from it differ from the filer's own (a quarter derived from two rounded
    year-to-date share counts: 556 M instead of 558.2 M, dilution ratio 1.016 instead of 1.019). A later figure less than
    one unit of its own rounding away from an earlier, finer one is that figure rounded (or, as NVIDIA's FY2016 10-Q
    gives its FY2015 first-half net income, 265 M for 264,492 k, a sum of rounded quarters) and gives way to it; a
    later value further away is a restatement and still wins. Flows and weighted share counts only (what quarters, Q4
    and TTM are derived from, where a rounded figure's error is multiplied): a balance sheet's lines are read as one
    filing presents them (a later filing may tag a line differently, and a finer figure kept for one tag would sit
    beside the later filing's coarser figures for the others). Per-share values are compared across split bases by
    splits.normalize (`_prefer_precise`)."""
    import numpy as np

    from ledgerlm.synth.statements.splits import _kinds

    values = df["value"].astype(float)
    whole = ((_kinds(df) != "per_share") & (df["filed"] != "") & (df["start"] != "") & (np.fmod(values, 1.0) == 0))
    key = PERIOD_KEY + ["tag"]
    rows = df[whole]
    rows = rows[rows.duplicated(key, keep=False)]
    if rows.empty:
        return df
    q = rows["value"].astype(float).map(rounding_of)
    zero = rows["value"].astype(float) == 0
    if zero.any():  # a 0 shows no rounding of its own: the rounding its filing shows (the median over its non-zero flows).
        # NVIDIA's 10-Q of 2015-11-18 (in millions) repeats FY2015Q3 other non-operating income, -125,000 in the 10-Q of
        # 2014-11-19, as 0: the quarter read 0 (Q4 / quarter audit, helper)
        filing = df["company"] + "\0" + df["source"]
        flows = whole & (values != 0)
        typical = values[flows].map(rounding_of).groupby(filing[flows]).median()
        q[zero] = filing[rows.index[zero]].map(typical).fillna(1.0).to_numpy()
    rows = rows[key + ["value", "filed"]].assign(_q=q).rename_axis("row_id").reset_index()
    pairs = rows.merge(rows[key + ["value", "filed", "_q"]], on=key, suffixes=("", "_earlier"))
    coarser = pairs[(pairs["filed_earlier"] < pairs["filed"]) & (pairs["_q_earlier"] < pairs["_q"])
                    & ((pairs["value"] - pairs["value_earlier"]).abs() < pairs["_q"])]
    return df.drop(index=coarser["row_id"].unique()) if len(coarser) else df


ANCHORS = ("revenue", "net_income", "total_assets")  # totals a restatement would change
LINE_JUMP = 10.0  # a revision of the same line does not change it tenfold


def keep_same_line(df: pd.DataFrame) -> pd.DataFrame:
    """Drop later values that are not the same line as the value first filed for that tag and window.

    A later filing's comparative replaces the original value (latest filed wins) unless it is more
    than `LINE_JUMP` times larger or smaller (same sign, both non-zero) while that later filing shows
    the window's anchor totals (revenue, net income, total assets: every one both filings show, at
    least one) unchanged within 0.5 %: then no restatement happened and the tag was moved to another
    line (TSMC's 2021 20-F tags 2019 dividend income, 417.3 M TWD, as FinanceIncome, which its 2019
    20-F used for 16,606.7 M of finance income). The original stays, with a note; per-share values
    and share counts are left to splits.normalize.
    """
    from ledgerlm.synth.statements.splits import _kinds

    flows = df[(_kinds(df) == "") & (df["filed"] != "") & (df["value"] != 0)]
    key = PERIOD_KEY + ["tag"]
    multi = flows[flows.duplicated(key, keep=False)]
    if multi.empty:
        return df
    first = multi.sort_values(["filed", "source"], kind="stable").drop_duplicates(key, keep="first")
    pairs = multi.rename_axis("row_id").reset_index().merge(first[key + ["value", "source", "filed"]], on=key, suffixes=("", "_orig"))
    ratio = (pairs["value"] / pairs["value_orig"]).abs()
    jump = pairs[(pairs["filed"] > pairs["filed_orig"]) & (pairs["value"] * pairs["value_orig"] > 0)
                 & ((ratio > LINE_JUMP) | (ratio < 1 / LINE_JUMP))]
    if jump.empty:
        return df
    akey = ["company", "scope", "source", "start", "end", "unit", "concept"]
    at = df[df["concept"].isin(ANCHORS)].drop_duplicates(akey).set_index(akey)["value"].to_dict()
    drop, notes = [], {}
    # the note names the latest filing showing the other line (the last written wins: filing order, not row order;
    # row-order audit 2026-12-04: NVIDIA's and TSMC's notes named another filing when the rows came in another order)
    for row in jump.sort_values(["filed", "source"], kind="stable").itertuples(index=False):
        both = [(at.get((row.company, row.scope, row.source_orig, s, e, row.unit, c)),
                 at.get((row.company, row.scope, row.source, s, e, row.unit, c))) for c in ANCHORS
                for s, e in ((row.start, row.end), ("", row.end))]  # flows' totals and the balance sheet at the end
        both = [(a, b) for a, b in both if a is not None and b is not None]
        if both and all(abs(a - b) <= 0.005 * max(abs(a), abs(b)) for a, b in both):
            drop.append(row.row_id)
            notes[(row.company, row.scope, row.concept, row.tag, row.start, row.end, row.unit)] = (
                f"value as first filed ({row.filed_orig}) kept: the {row.filed} filing shows {row.value:,.0f} under the same tag "
                f"{row.tag} with unchanged totals, a different line (re-tagged comparative), not a revision")
    if not drop:
        return df
    out = df.drop(index=drop).copy()
    keys = zip(out["company"], out["scope"], out["concept"], out["tag"], out["start"], out["end"], out["unit"])
    out["adjustment"] = [f"{a}; {n}" if a and n else a or n for a, n in zip(out["adjustment"], (notes.get(k, "") for k in keys))]
    return out


def read_bytes(path: str | Path) -> bytes:
    """The file's bytes, gunzipped when it ends in .gz; a damaged file is an InputError naming it."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror}", path=str(path)) from None
    if path.suffix == ".gz" or raw[:2] == b"\x1f\x8b":
        try:
            return gunzip_capped(raw, str(path))
        except (EOFError, OSError, zlib.error) as err:
            raise InputError(f"damaged or truncated gzip data ({err})", path=str(path), field="gzip") from None
    return raw


MAX_GUNZIP_BYTES = int(os.environ.get("LEDGERLM_MAX_GUNZIP_MB", "2048")) << 20  # a gzip bomb stops here
MAX_GUNZIP_RATIO, RATIO_FREE_BYTES = 200, 64 << 20  # past 64 MiB, more than 200x the compressed size is a bomb (text: ~5-30x)


def gunzip_capped(raw: bytes, source: str, limit: int | None = None) -> bytes:
    """`gzip.decompress(raw)` (every member) inflated 1 MiB at a time; InputError once the output passes
    `limit` bytes (default MAX_GUNZIP_BYTES, env LEDGERLM_MAX_GUNZIP_MB) or, past 64 MiB, 200x the compressed
    size — a bomb never inflates further (a 300 MB bomb stops at 64 MiB)."""
    limit = MAX_GUNZIP_BYTES if limit is None else limit
    limit = min(limit, max(RATIO_FREE_BYTES, MAX_GUNZIP_RATIO * len(raw)))
    out, size, data = [], 0, raw
    while data:
        inflater = zlib.decompressobj(wbits=31)
        pending = data
        while pending:
            chunk = inflater.decompress(pending, 1 << 20)
            size += len(chunk)
            if size > limit:
                raise InputError(f"gzip data inflates past {limit >> 20} MiB (a gzip bomb?); raise LEDGERLM_MAX_GUNZIP_MB to read it",
                                 path=source, field="gzip")
            out.append(chunk)
            pending = inflater.unconsumed_tail
            if inflater.eof:
                break
        if not inflater.eof:
            raise EOFError("compressed file ended before the end-of-stream marker was reached")
        data = inflater.unused_data.lstrip(b"\x00")  # another gzip member may follow (trailing NUL padding is allowed)
    return b"".join(out)


def open_text(path: str | Path) -> io.StringIO:
    """A text stream over the (possibly gzipped) file, decoded as UTF-8 (latin-1 fallback)."""
    data = read_bytes(path)
    try:
        return io.StringIO(data.decode("utf-8"))
    except UnicodeDecodeError:
        return io.StringIO(data.decode("latin-1"))


def normalize_unit(unit: str) -> str:
    """SEC unit names to contract units: 'USD/shares' -> 'USD/share', 'iso4217:USD' -> 'USD'."""
    unit = str(unit).replace("iso4217:", "").replace("xbrli:", "")
    if "/" in unit:
        num, den = unit.split("/", 1)
        den = den.replace("iso4217:", "").replace("xbrli:", "")
        if den.lower() in ("shares", "share"):
            return f"{num}/share"
        return f"{num}/{den}"
    return unit
