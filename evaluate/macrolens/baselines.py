"""Reference baselines that need no model (paper §5.2, Family 1) plus optional LightGBM, as samplers.

    ledgerlm eval --benchmark macrolens --model baseline:naive --data runs/ml_fixture --out runs/ml_naive

`baseline:naive` answers each task with the paper's naive method: Persistence (T1), Sector-Median
(T2, T3, T5, T6), HistoricalAnalogue (T4), Metro-Median (T7). `baseline:persistence`,
`baseline:sector_median`, `baseline:historical_analogue`, `baseline:metro_median` restrict to one method;
`baseline:lightgbm` (T2, T5, T7; `pip install ledgerlm[lightgbm]`) fits on the training side of the
split. Predictions are rendered as text and go through the same parsers, results and report path as a model.
Every fit uses only data visible to the instance: train companies / addresses, events realised before t.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ledgerlm.errors import InputError
from ledgerlm.evaluate.macrolens import data as D
from ledgerlm.evaluate.macrolens.instances import POST_EVENT_DAYS, T7_ATTRIBUTES, statement_snapshots
from ledgerlm.evaluate.macrolens.metrics import STATEMENT_FIELDS
from ledgerlm.evaluate.macrolens.prompts import render_answer
from ledgerlm.evaluate.macrolens.schema import input_features
from ledgerlm.inference.sampling import Completion

NAIVE = {"T1": "persistence", "T2": "sector_median", "T3": "sector_median", "T4": "historical_analogue", "T5": "sector_median",
         "T6": "sector_median", "T7": "metro_median"}
SUPPORTS = {"persistence": {"T1"}, "sector_median": {"T2", "T3", "T5", "T6"}, "historical_analogue": {"T4"},
            "metro_median": {"T7"}, "lightgbm": {"T2", "T5", "T7"}, "naive": set(NAIVE)}


def persistence(inst: dict) -> list[float]:
    return [inst["meta"]["last_close"]] * inst["meta"]["horizon"]


class Reference:
    """Fits per-task reference statistics on a release; `predict(instance)` returns a structured prediction."""

    def __init__(self, release: D.Release, seed: int = 42):
        self.release, self.seed = release, seed
        self.holdout = D.release_holdout(release, seed=seed)
        self._cache: dict = {}

    # T2/T5: median latest market cap of train companies in the same sector
    def sector_median_cap(self, inst: dict) -> float:
        if "caps" not in self._cache:
            p = self.release.panel
            train = p[~p["ticker"].isin(self.holdout) & p["market_cap"].notna() & (p["date"] <= pd.Timestamp(inst["anchor"]))]
            self._cache["caps"] = train.groupby("ticker").tail(1)[["sector", "market_cap"]]
        caps = self._cache["caps"]
        same = caps[caps["sector"] == inst["strata"].get("sector")]["market_cap"]
        return float((same if len(same) else caps["market_cap"]).median()) if len(caps) else 0.0

    # T3/T6: per field, median over train companies' filings filed on or before the target's filing date
    def sector_median_statement(self, inst: dict) -> dict:
        if "snaps" not in self._cache:
            p = self.release.panel
            parts = [statement_snapshots(g) for t, g in p[~p["ticker"].isin(self.holdout)].groupby("ticker")]
            self._cache["snaps"] = pd.concat(parts) if parts else pd.DataFrame(columns=["sector", "filing_date", *STATEMENT_FIELDS])
        snaps = self._cache["snaps"]
        snaps = snaps[snaps["filing_date"] <= pd.Timestamp(inst["meta"]["filing_date"])]
        same = snaps[snaps["sector"] == inst["strata"].get("sector")]
        pool = same if len(same) else snaps
        return {f: (float(pool[f].median()) if f in pool and pool[f].notna().any() else 0.0) for f in STATEMENT_FIELDS}

    # T4: mean realised post-event return of this ticker over earlier events of the same type (then any type), else 0
    def historical_analogue(self, inst: dict) -> float:
        t = pd.Timestamp(inst["anchor"])
        ev = self.release.scenarios
        post = ev["post_end"].fillna(ev["event_date"] + pd.Timedelta(days=POST_EVENT_DAYS)) if "post_end" in ev else ev["event_date"] + pd.Timedelta(days=POST_EVENT_DAYS)
        past = ev[post < t].assign(post_end=post[post < t])
        g = self.release.panel[self.release.panel["ticker"] == inst["ticker"]]
        dates, close = g["date"].to_numpy(), g["close"].to_numpy()
        for pool in (past[past["event_type"] == inst["meta"]["event_type"]], past):
            i0 = np.searchsorted(dates, pool["event_date"].to_numpy(), side="right") - 1
            i1 = np.searchsorted(dates, pool["post_end"].to_numpy(), side="right") - 1
            ok = (i0 >= 0) & (i1 > i0)
            if ok.any():
                return float(np.mean(100.0 * (close[i1[ok]] / close[i0[ok]] - 1.0)))
        return 0.0

    # T7: median rent / price of train addresses in the same metro, then state, then all
    def metro_median(self, inst: dict) -> dict:
        if "props" not in self._cache:
            pr = self.release.properties
            test = D.address_split(pr["address"].astype(str), seed=self.seed)
            self._cache["props"] = pr[~pr["address"].astype(str).isin(test)]
        train = self._cache["props"]
        for key, value in (("metro", inst["meta"].get("metro")), ("state", inst["strata"].get("state"))):
            pool = train[train[key].astype(str) == str(value)] if key in train else train.iloc[0:0]
            if len(pool):
                return {"rent": float(pool["rent"].median()), "price": float(pool["price"].median())}
        return {"rent": float(train["rent"].median()), "price": float(train["price"].median())}

    def lightgbm(self, inst: dict):
        model, cols = self._lgbm(inst["task"])
        if inst["task"] == "T7":
            x = pd.DataFrame([inst["context"]["attributes"]]).reindex(columns=cols)
            x = x.apply(pd.to_numeric, errors="coerce")
            return {"rent": float(np.exp(model[0].predict(x)[0])), "price": float(np.exp(model[1].predict(x)[0]))}
        x = pd.DataFrame([inst["context"]["fundamentals"]]).reindex(columns=cols)
        return float(np.exp(model.predict(x)[0]))

    def _lgbm(self, task: str):
        if task in self._cache:
            return self._cache[task]
        try:
            import lightgbm
        except ImportError as err:
            raise InputError("baseline:lightgbm needs the optional extra: pip install 'ledgerlm[lightgbm]'", field="--model") from err
        params = {"n_estimators": 200, "learning_rate": 0.05, "random_state": self.seed, "verbose": -1}
        if task == "T7":
            self.metro_median({"meta": {}, "strata": {}})  # fills the train-address cache
            pr = self._cache["props"]
            cols = [c for c in T7_ATTRIBUTES if c in pr and pd.api.types.is_numeric_dtype(pr[c])]
            models = [lightgbm.LGBMRegressor(**params).fit(pr[cols], np.log(pr[y])) for y in ("rent", "price")]
            self._cache[task] = (models, cols)
        else:
            p = self.release.panel
            train = p[~p["ticker"].isin(self.holdout) & p["market_cap"].notna() & (p["date"] < self.release.split_date)]
            cols = [c for c in input_features(task) if c in p]
            self._cache[task] = (lightgbm.LGBMRegressor(**params).fit(train[cols], np.log(train["market_cap"])), cols)
        return self._cache[task]

    def predict(self, method: str, inst: dict):
        task = inst["task"]
        method = NAIVE[task] if method == "naive" else method
        if task not in SUPPORTS.get(method, set()):
            raise InputError(f"baseline {method!r} does not cover {task} (it covers {sorted(SUPPORTS.get(method, []))}); "
                             "use baseline:naive or restrict --tasks", field="--model")
        if method == "persistence":
            return persistence(inst)
        if method == "sector_median":
            return self.sector_median_cap(inst) if task in ("T2", "T5") else self.sector_median_statement(inst)
        if method == "historical_analogue":
            return self.historical_analogue(inst)
        if method == "metro_median":
            return self.metro_median(inst)
        return self.lightgbm(inst)


class BaselineSampler:
    """The sampler interface over a reference baseline: needs `items=` (the instances) like the oracle backend."""

    def __init__(self, spec: str, release: D.Release, seed: int = 42):
        self.method = spec.partition(":")[2] or "naive"
        if self.method not in SUPPORTS:
            raise InputError(f"unknown baseline {self.method!r}; choose from {sorted(SUPPORTS)}", field="--model")
        self.model_id = f"baseline:{self.method}"
        self.reference = Reference(release, seed)

    def check(self, tasks) -> None:
        for task in tasks:
            if self.method != "naive" and task not in SUPPORTS[self.method]:
                self.reference.predict(self.method, {"task": task})

    def generate(self, batch, params, items=None, **kwargs) -> list[Completion]:
        if items is None or len(items) != len(batch):
            raise ValueError("baseline samplers need items= (one instance per conversation)")
        return [Completion(text=render_answer(inst["task"], self.reference.predict(self.method, inst))) for inst in items]
