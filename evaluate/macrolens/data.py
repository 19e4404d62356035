"""Load the MacroLens release (Hub or local Parquet) and apply the paper's splits and point-in-time gates.

    python -c "from ledgerlm.evaluate.macrolens.data import load_release; print(load_release('runs/ml_fixture', 'daily').panel.shape)"

Splits (paper §4.5, §5.1): chronological at 2024-09-03 (daily), 2024-09-06 (weekly), 2024-09-01
(monthly); a 30 % company-level holdout (seed 42) for T2/T3/T5/T6; an address-level 70/30 split
(seed 42) for T7. Text gating: a filing or news item is visible at anchor t iff its filing /
publication date is on or before t.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ledgerlm.errors import InputError
from ledgerlm.evaluate.macrolens import release_layout
from ledgerlm.evaluate.macrolens.schema import GRANULARITIES, Schema, load_schema
from ledgerlm.evaluate.macrolens.tables import SPLIT_DATES, Release, logical as _logical  # noqa: F401 (re-exported: D.Release, D.SPLIT_DATES)

HOLDOUT_FRACTION = 0.3  # company-level holdout, T2/T3/T5/T6
ADDRESS_TEST_FRACTION = 0.3  # T7
SEED = 42

def _read_table(source: str, table: str, schema: Schema) -> pd.DataFrame:
    spec = schema.tables[table]
    folder = Path(source)
    if folder.is_dir():
        file = folder / spec["file"]
        if not file.is_file():
            raise InputError(f"missing table {table!r} (expected {spec['file']})", path=str(folder))
        return pd.read_parquet(file)
    if source.count("/") != 1 or source.startswith(("/", ".", "~")) or folder.exists():
        raise InputError("neither a local folder of Parquet files nor a Hub dataset id (owner/name)", path=source)
    import datasets  # only when reading from the Hub

    try:
        return datasets.load_dataset(source, name=spec["config"], split="train").to_pandas()
    except Exception as err:  # offline, unknown id or config: one line naming the source and table
        raise InputError(f"cannot load table {table!r} from the Hub ({type(err).__name__}: {err})", path=source) from err


def load_release(source: str, granularity: str = "daily", schema: Schema | None = None) -> Release:
    """Read one granularity's panel plus the side tables from a local folder or the Hub (`DeepAuto-AI/MacroLens`)."""
    if granularity not in GRANULARITIES:
        raise InputError(f"granularity must be one of {GRANULARITIES}, got {granularity!r}", field="granularity")
    schema = schema or load_schema()
    source = str(source)
    if Path(source).is_dir() and release_layout.is_layout(source):  # the public release's data/{daily,...} folders
        return release_layout.load_layout(source, granularity, schema)
    panel_table = f"panel_{granularity}"
    tables = {"panel": _logical(_read_table(source, panel_table, schema), "panel", panel_table, schema, source)}
    for kind in ("static", "scenarios", "filings", "news", "properties"):
        tables[kind] = _logical(_read_table(source, kind, schema), kind, kind, schema, source)
    tables["panel"] = tables["panel"].sort_values(["ticker", "date"]).reset_index(drop=True)
    return Release(granularity=granularity, source=source, **tables)


# ---- splits ------------------------------------------------------------------------------------------
def is_test_date(dates: pd.Series, granularity: str) -> pd.Series:
    return pd.to_datetime(dates) >= pd.Timestamp(SPLIT_DATES[granularity])


def company_holdout(tickers, fraction: float = HOLDOUT_FRACTION, seed: int = SEED) -> set[str]:
    """The held-out companies: a seeded sample of floor(fraction * n) tickers (at least one) - the paper's
    1,324 of 4,416 (0.3 x 4,416 = 1,324.8)."""
    universe = sorted(set(tickers))
    k = max(1, int(fraction * len(universe))) if universe else 0
    return set(random.Random(seed).sample(universe, k))


def release_holdout(release: "Release", seed: int = SEED) -> set[str]:
    """The release's own holdout list when it ships one, else the seeded 30 % sample."""
    return set(release.holdout) if release.holdout else company_holdout(release.tickers(), seed=seed)


def address_split(addresses, test_fraction: float = ADDRESS_TEST_FRACTION, seed: int = SEED) -> set[str]:
    """The T7 test addresses: a seeded random 30 % of the distinct addresses."""
    universe = sorted(set(map(str, addresses)))
    return set(random.Random(seed).sample(universe, round(test_fraction * len(universe))))


# ---- point-in-time gates -----------------------------------------------------------------------------
def visible_filings(release: Release, ticker: str, t) -> pd.DataFrame:
    """Filings of `ticker` filed on or before `t`, newest first."""
    f = release.filings
    rows = f[(f["ticker"] == ticker) & (f["filing_date"] <= pd.Timestamp(t))]
    return rows.sort_values("filing_date", ascending=False)


def visible_news(release: Release, ticker: str, t) -> pd.DataFrame:
    """News about `ticker` published on or before `t`, newest first."""
    n = release.news
    rows = n[(n["ticker"] == ticker) & (n["published"] <= pd.Timestamp(t))]
    return rows.sort_values("published", ascending=False)


def visible_scenarios(release: Release, t, since=None) -> pd.DataFrame:
    """Scenario events dated on or before `t` (and on or after `since`), newest first."""
    s = release.scenarios
    m = s["event_date"] <= pd.Timestamp(t)
    if since is not None:
        m &= s["event_date"] >= pd.Timestamp(since)
    return s[m].sort_values("event_date", ascending=False)
