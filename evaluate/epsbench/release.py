"""Load an EPSBench release: instances, ground truth, prices, schemas (and consensus if supplied).

    python -c "from ledgerlm.evaluate.epsbench.release import load_release; r = load_release(); print(len(r.instances))"

Layout (the public release JadeXu16/epsbench, embedded under `release/`, CC BY 4.0):
    data/instances.csv      ticker, fiscal_quarter, release_date, cutoff, news_window_start
    data/ground_truth.csv   eps_gaap_diluted, pretax_income, operating_income (USD millions),
                            diluted_shares, eps_year_ago, eps_last_quarter
    data/prices.csv         close on the last trading day before release
    data/consensus.csv      optional, user-supplied (ticker, fiscal_quarter, eps_gaap_consensus)
    ticker_schemas_v4/<TICKER>_<FQ>.json
A schema's `_validation` block (reported EPS) stays on `Schema.validation`; what a model sees is
`Schema.public()`, which leaves it out.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ledgerlm.errors import InputError
from ledgerlm.evaluate.epsbench.calculator import Schema, load_schema

EMBEDDED_RELEASE = Path(__file__).resolve().parent / "release"
SCHEMA_DIR = "ticker_schemas_v4"


@dataclass(frozen=True)
class Instance:
    ticker: str
    fiscal_quarter: str  # e.g. 2026Q1 (the company's fiscal calendar)
    release_date: str
    cutoff: str  # τ: last day whose documents the agent may read
    news_window_start: str  # τ0: the previous earnings call

    @property
    def id(self) -> str:
        return f"{self.ticker}_{self.fiscal_quarter}"


@dataclass
class Truth:
    eps: float | None
    pretax: float | None  # USD millions
    operating: float | None  # USD millions; blank for banks
    diluted_shares: float | None  # shares (not millions)
    eps_year_ago: float | None
    eps_last_quarter: float | None


@dataclass
class Release:
    root: Path
    instances: list[Instance]
    truth: dict[str, Truth]
    prices: dict[str, float]
    consensus: dict[str, float] | None

    def instance(self, instance_id: str) -> Instance:
        for inst in self.instances:
            if inst.id == instance_id:
                return inst
        raise InputError(f"instance {instance_id!r} is not in the release", path=str(self.root / "data" / "instances.csv"))

    def schema_path(self, instance_id: str) -> Path:
        return self.root / SCHEMA_DIR / f"{instance_id}.json"

    def schema(self, instance_id: str) -> Schema:
        return load_schema(self.schema_path(instance_id))


def _num(value) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(out) else out


def _read(path: Path, required: list[str]) -> pd.DataFrame:
    if not path.is_file():
        raise InputError("release file not found", path=str(path))
    frame = pd.read_csv(path, dtype={"ticker": str, "fiscal_quarter": str}, keep_default_na=True)
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise InputError(f"missing column(s) {missing}", path=str(path))
    frame["id"] = frame["ticker"].str.upper() + "_" + frame["fiscal_quarter"]
    return frame


def load_release(root: str | Path | None = None) -> Release:
    """Read a release folder (default: the embedded copy)."""
    root = Path(root) if root else EMBEDDED_RELEASE
    data = root / "data"
    inst = _read(data / "instances.csv", ["ticker", "fiscal_quarter", "release_date", "cutoff", "news_window_start"])
    instances = [Instance(r.ticker.upper(), r.fiscal_quarter, str(r.release_date), str(r.cutoff), str(r.news_window_start))
                 for r in inst.itertuples()]
    gt = _read(data / "ground_truth.csv", ["eps_gaap_diluted", "pretax_income", "operating_income", "diluted_shares"])
    truth = {r["id"]: Truth(_num(r["eps_gaap_diluted"]), _num(r["pretax_income"]), _num(r["operating_income"]),
                            _num(r["diluted_shares"]), _num(r.get("eps_year_ago")), _num(r.get("eps_last_quarter")))
             for r in gt.to_dict("records")}
    prices_df = _read(data / "prices.csv", ["close_price"])
    prices = {r["id"]: float(r["close_price"]) for r in prices_df.to_dict("records") if _num(r["close_price"])}
    consensus = None
    if (data / "consensus.csv").is_file():
        cons = _read(data / "consensus.csv", ["eps_gaap_consensus"])
        consensus = {r["id"]: v for r in cons.to_dict("records") if (v := _num(r["eps_gaap_consensus"])) is not None}
    return Release(root, instances, truth, prices, consensus)
