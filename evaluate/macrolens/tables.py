"""The MacroLens release as loaded: the `Release` tables and the logical-name conversion both readers share.

    python -c "from ledgerlm.evaluate.macrolens.tables import SPLIT_DATES; print(SPLIT_DATES)"

`data.load_release` (flat Parquet folder or Hub) and `release_layout.load_layout` (the public release's
data/ folders) both build a `Release` through `logical`; this module imports neither (no import cycle).
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ledgerlm.evaluate.macrolens.schema import Schema

SPLIT_DATES = {"daily": "2024-09-03", "weekly": "2024-09-06", "monthly": "2024-09-01"}

_REQUIRED = {
    "panel": ("ticker", "date", "sector", "close"),
    "static": ("ticker", "sector"),
    "scenarios": ("event_id", "event_type", "category", "event_date", "description"),
    "filings": ("ticker", "filing_date", "accession", "text"),
    "news": ("ticker", "published", "headline"),
    "properties": ("address", "state", "property_type", "rent", "price"),
}
_DATE_COLUMNS = {"panel": ("date", "filing_date", "period_end"), "scenarios": ("event_date", "pre_start", "post_end"),
                 "filings": ("filing_date",), "news": ("published",), "properties": ("last_sale_date",)}



@dataclass
class Release:
    """One granularity of the release, every table renamed to logical column names."""
    granularity: str
    panel: pd.DataFrame
    static: pd.DataFrame
    scenarios: pd.DataFrame
    filings: pd.DataFrame
    news: pd.DataFrame
    properties: pd.DataFrame
    source: str
    macro_series: list[str] | None = None  # every macro column of the release (layout reader); None: columns.yaml's group
    holdout: set[str] | None = None  # the release's own company holdout (processed/holdout_tickers), if shipped
    shipped: dict | None = None  # task -> the release's own instance keys (processed/instances_<task>), if shipped

    @property
    def split_date(self) -> pd.Timestamp:
        return pd.Timestamp(SPLIT_DATES[self.granularity])

    def tickers(self) -> list[str]:
        return sorted(self.panel["ticker"].unique())


def logical(df: pd.DataFrame, kind: str, table: str, schema: Schema, source: str) -> pd.DataFrame:
    df = schema.to_logical(df, table, required=_REQUIRED[kind])
    for col in _DATE_COLUMNS.get(kind, ()):
        if col in df.columns:
            df[col] = pd.to_datetime(df[col], errors="coerce")
    return df
