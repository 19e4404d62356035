"""Read the public MacroLens release in its folder layout `data/{daily,filings,fundamentals,macro,monthly,prices,processed,real_estate}`.

    ledgerlm eval --benchmark macrolens --data PATH/TO/MacroLens --model baseline:naive --out runs/ml
    python -m ledgerlm.evaluate.macrolens.fixture --layout --out runs/ml_layout_fixture   # a small copy in this layout

The paper (§4, App. A, D) documents what the release holds but not file names, so the layout is ONE table,
`LAYOUT` below: logical table -> (folder under data/, file glob, shape). A user whose copy differs edits
that table (or passes `layout=` to `load_layout`); column names still go through `columns.yaml`.

| logical table      | folder / glob                          | shape (logical columns, after columns.yaml)                   |
|--------------------|----------------------------------------|---------------------------------------------------------------|
| panel_daily        | daily/*.parquet                        | ticker, date, OHLCV, statement fields, ratios, macro, flags   |
| panel_monthly      | monthly/*.parquet                      | same, month-end rows                                          |
| panel_weekly       | processed/panel_weekly*.parquet        | same, week-end rows; else resampled from daily (W-FRI)        |
| prices             | prices/*.parquet                       | ticker, date, open, high, low, close, volume                  |
| fundamentals       | fundamentals/*.parquet                 | ticker, filing_date, period_end, filing_accession, fields     |
| macro              | macro/*.parquet                        | date + one column per series (the paper's 53: 46 FRED, 7 EIA) |
| filings            | filings/*.parquet                      | ticker, filing_date, form, accession, text                    |
| properties         | real_estate/*.parquet                  | address, metro, state, property_type, attributes, rent, price |
| static             | processed/static*.parquet              | ticker, name, sector, industry, description                   |
| scenarios          | processed/scenarios*.parquet           | event_id, event_type, category, event_date, description       |
| news               | processed/news*.parquet (optional)     | ticker, published, headline                                   |
| holdout            | processed/holdout_tickers*.parquet     | ticker - the release's company holdout (1,324 tickers)        |
| instances_<task>   | processed/instances_<task>*.parquet    | the release's own evaluation instances (keys per task below)  |

When `daily/` (or `monthly/`) is absent the panel is assembled from prices + fundamentals (backward as-of join
on filing_date: the as-reported figures visible at t) + macro (by date). Shipped instances are used as they
are instead of rebuilt: their keys select the anchors - T1/T2/T5 (ticker, date), T3/T6 (ticker, accession),
T4 (event_id, ticker), T7 (address). Every macro column in `macro/` is shown at ladder step C.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ledgerlm.errors import InputError
from ledgerlm.evaluate.macrolens.schema import Schema, load_schema
from ledgerlm.evaluate.macrolens.tables import Release, logical

FOLDERS = ("daily", "filings", "fundamentals", "macro", "monthly", "prices", "processed", "real_estate")
LAYOUT: dict[str, tuple[str, str]] = {
    "panel_daily": ("daily", "*.parquet"),
    "panel_monthly": ("monthly", "*.parquet"),
    "panel_weekly": ("processed", "panel_weekly*.parquet"),
    "prices": ("prices", "*.parquet"),
    "fundamentals": ("fundamentals", "*.parquet"),
    "macro": ("macro", "*.parquet"),
    "filings": ("filings", "*.parquet"),
    "properties": ("real_estate", "*.parquet"),
    "static": ("processed", "static*.parquet"),
    "scenarios": ("processed", "scenarios*.parquet"),
    "news": ("processed", "news*.parquet"),
    "holdout": ("processed", "holdout_tickers*.parquet"),
}
INSTANCE_KEYS = {"T1": ("ticker", "date"), "T2": ("ticker", "date"), "T5": ("ticker", "date"), "T3": ("ticker", "accession"),
                 "T6": ("ticker", "accession"), "T4": ("event_id", "ticker"), "T7": ("address",)}
# 53 macro series as the paper counts them (46 FRED + 7 EIA); the ids are ledgerlm's choice for the fixture -
# the reader shows whichever series the release's macro/ table holds.
FRED_SERIES = ("FEDFUNDS", "DFF", "DGS1MO", "DGS3MO", "DGS6MO", "DGS1", "DGS2", "DGS3", "DGS5", "DGS7", "DGS10", "DGS20", "DGS30",
               "T10Y2Y", "T10Y3M", "T5YIE", "T10YIE", "DFII10", "BAMLH0A0HYM2", "BAMLC0A0CM", "AAA10Y", "BAA10Y", "CPIAUCSL",
               "CPILFESL", "PCEPI", "PCEPILFE", "PPIACO", "UNRATE", "PAYEMS", "ICSA", "CIVPART", "INDPRO", "TCU", "RSAFS",
               "HOUST", "PERMIT", "CSUSHPISA", "MORTGAGE30US", "M2SL", "WALCL", "DTWEXBGS", "DEXUSEU", "DEXJPUS", "VIXCLS",
               "UMCSENT", "GDPC1")
EIA_SERIES = ("RWTC", "RBRTE", "RNGWHHD", "EMM_EPMR_PTE_NUS_DPG", "EMD_EPD2D_PTE_NUS_DPG", "WCESTUS1", "WCRFPUS2")


def is_layout(root: str | Path) -> bool:
    """True when `root` (or root/data) has the release's folders."""
    base = data_dir(root)
    return base is not None


def data_dir(root: str | Path) -> Path | None:
    root = Path(root)
    for base in (root / "data", root):
        if base.is_dir() and sum((base / f).is_dir() for f in FOLDERS) >= 4:
            return base
    return None


def _read(base: Path, table: str, layout: dict, *, required: bool = True) -> pd.DataFrame | None:
    folder, pattern = layout[table]
    files = sorted((base / folder).glob(pattern))
    if not files:
        if required:
            raise InputError(f"release layout: no {pattern} under {folder}/ for table {table!r} (edit release_layout.LAYOUT if your copy differs)",
                             path=str(base / folder))
        return None
    try:
        return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    except (OSError, ValueError) as err:
        raise InputError(f"release layout: cannot read {table!r} ({err})", path=str(base / folder)) from None


def _assemble_panel(base: Path, layout: dict, schema: Schema, macro: pd.DataFrame) -> pd.DataFrame:
    """prices + fundamentals (as-of filing date) + macro (by date) + static keys (sector, industry);
    market cap = close x shares outstanding where the release gives no market_cap column."""
    prices = schema.to_logical(_read(base, "prices", layout), "panel_daily", required=("ticker", "date", "close"))
    funds = schema.to_logical(_read(base, "fundamentals", layout), "panel_daily", required=("ticker", "filing_date"))
    prices["date"], funds["filing_date"] = pd.to_datetime(prices["date"]), pd.to_datetime(funds["filing_date"])
    parts = []
    for ticker, px in prices.sort_values("date").groupby("ticker"):
        f = funds[funds["ticker"] == ticker].drop(columns=["ticker"]).sort_values("filing_date")
        parts.append(pd.merge_asof(px, f, left_on="date", right_on="filing_date", direction="backward") if len(f) else px)
    panel = pd.concat(parts, ignore_index=True)
    static = schema.to_logical(_read(base, "static", layout), "static", required=("ticker", "sector"))
    keys = [c for c in ("sector", "industry", "exchange") if c in static.columns and c not in panel.columns]
    panel = panel.merge(static[["ticker", *keys]], on="ticker", how="left")
    if "market_cap" not in panel.columns and "shares_outstanding" in panel.columns:
        panel["market_cap"] = panel["close"] * panel["shares_outstanding"]
    return panel.merge(macro, on="date", how="left")


def load_layout(root: str | Path, granularity: str = "daily", schema: Schema | None = None, layout: dict | None = None):
    """A `data.Release` from the release's folder layout (see the module table)."""
    schema, layout = schema or load_schema(), {**LAYOUT, **(layout or {})}
    base = data_dir(root)
    if base is None:
        raise InputError(f"not a MacroLens release folder (expected data/ with {', '.join(FOLDERS)})", path=str(root))
    macro = _read(base, "macro", layout)
    macro["date"] = pd.to_datetime(macro["date"])
    macro = macro.rename(columns={v: k for k, v in schema.group("macro").items() if v in macro.columns})  # columns.yaml names
    series = [c for c in macro.columns if c != "date"]
    panel = _read(base, f"panel_{granularity}", layout, required=False)
    if panel is None and granularity == "weekly":
        daily = _read(base, "panel_daily", layout, required=False)
        daily = _assemble_panel(base, layout, schema, macro) if daily is None else schema.to_logical(daily, "panel_daily")
        daily["date"] = pd.to_datetime(daily["date"])
        last = daily.groupby(["ticker", pd.Grouper(key="date", freq="W-FRI")])["date"].transform("max")
        panel = daily[daily["date"] == last].reset_index(drop=True)
    elif panel is None:
        panel = _assemble_panel(base, layout, schema, macro)
    else:
        panel = schema.to_logical(panel, f"panel_{granularity}")
        missing = [c for c in series if c not in panel.columns]
        if missing:
            panel["date"] = pd.to_datetime(panel["date"])
            panel = panel.merge(macro[["date", *missing]], on="date", how="left")
    tables = {"panel": logical(panel, "panel", f"panel_{granularity}", schema, str(root))}
    for kind in ("static", "scenarios", "filings", "properties"):
        tables[kind] = logical(_read(base, kind, layout), kind, kind, schema, str(root))
    news = _read(base, "news", layout, required=False)
    tables["news"] = (logical(news, "news", "news", schema, str(root)) if news is not None
                      else pd.DataFrame({"ticker": pd.Series(dtype=str), "published": pd.Series(dtype="datetime64[ns]"),
                                         "headline": pd.Series(dtype=str)}))
    tables["panel"] = tables["panel"].sort_values(["ticker", "date"]).reset_index(drop=True)
    release = Release(granularity=granularity, source=str(root), **tables)
    release.macro_series = series
    hold = _read(base, "holdout", layout, required=False)
    release.holdout = set(hold["ticker"].astype(str)) if hold is not None else None
    release.shipped = {}
    for task, keys in INSTANCE_KEYS.items():
        found = sorted((base / "processed").glob(f"instances_{task}*.parquet"))
        if found:
            df = pd.concat([pd.read_parquet(f) for f in found], ignore_index=True)
            miss = [k for k in keys if k not in df.columns]
            if miss:
                raise InputError(f"shipped instances for {task} lack key column(s) {miss}", path=str(found[0]))
            if "date" in df:
                df["date"] = pd.to_datetime(df["date"])
            release.shipped[task] = df
    return release
