"""Build evaluation instances for T1-T7 from a loaded release (point-in-time contexts + targets).

    python -c "from ledgerlm.evaluate.macrolens import fixture, instances, data; \
r = data.load_release(fixture.write_fixture('/tmp/mlfx')); print(len(instances.build('T1', r, instances.TaskConfig())[0]))"

An instance is a dict: `id`, `task`, `ticker`, `anchor` (the date t), `cluster` (bootstrap key),
`strata` (sector, cap_quartile, filing_tercile, category), `target`, `meta` (what scoring needs) and
`context` (what prompts and baselines may read; never saved). Every context is gated at t: fundamentals
come from the panel row at t, filings / news / scenarios dated on or before t.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ledgerlm.errors import InputError
from ledgerlm.evaluate.macrolens import data as D
from ledgerlm.evaluate.macrolens.metrics import STATEMENT_FIELDS
from ledgerlm.evaluate.macrolens.release_layout import INSTANCE_KEYS
from ledgerlm.evaluate.macrolens.sampling_plan import DEFAULT_BUDGETS, STRATA, stratified_sample
from ledgerlm.evaluate.macrolens.schema import input_features, load_schema

HORIZON = {"daily": 252, "weekly": 52, "monthly": 12}  # the paper's reported T1 horizons
LOOKBACK = {"daily": 63, "weekly": 26, "monthly": 12}
VALUATION_LOOKBACK = 21  # rows of OHLCV shown for T2/T5 (ladder step A)
POST_EVENT_DAYS = 63  # T4 post-event window, calendar days
MIN_PRE_EVENT_PRICE = 0.50  # T4: drop rows whose pre-event price is below $0.50
TASKS = ("T1", "T2", "T3", "T4", "T5", "T6", "T7")


@dataclass
class TaskConfig:
    granularity: str = "daily"
    lookback: int | None = None  # T1/T4 rows of history (default per granularity)
    horizon: int | None = None  # T1 steps ahead (default per granularity)
    budgets: dict = field(default_factory=lambda: dict(DEFAULT_BUDGETS))
    t3_instances: str = "latest"  # latest: each holdout ticker's latest filing (paper); test: every test-window filing
    excerpt_chars: int = 1200  # filing excerpt length shown at ladder step E
    news_items: int = 3
    seed: int = 42

    def L(self) -> int:
        return self.lookback or LOOKBACK[self.granularity]

    def H(self) -> int:
        return self.horizon or HORIZON[self.granularity]


# ---- strata ------------------------------------------------------------------------------------------
def _quantile_labels(values: pd.Series, k: int, names: list[str]) -> pd.Series:
    pct = values.rank(method="first", pct=True)
    idx = np.ceil(pct * k).clip(1, k).fillna(0).astype(int)
    return idx.map(lambda i: names[i - 1] if i else "n/a")


def filing_terciles(release: D.Release) -> dict[str, str]:
    counts = release.filings.groupby("ticker").size().reindex(release.tickers(), fill_value=0)
    return dict(_quantile_labels(counts.astype(float), 3, ["low", "mid", "high"]))


def _with_strata(cands: pd.DataFrame, release: D.Release) -> pd.DataFrame:
    cands = cands.copy()
    cands["cap_quartile"] = _quantile_labels(cands["market_cap"].astype(float), 4, ["Q1", "Q2", "Q3", "Q4"])
    cands["filing_tercile"] = cands["ticker"].map(filing_terciles(release)).fillna("low")
    cands["sector"] = cands["sector"].fillna("unknown").astype(str)
    return cands


# ---- shared context ----------------------------------------------------------------------------------
def _values(row: pd.Series, keys) -> dict[str, float]:
    out = {}
    for k in keys:
        v = row.get(k)
        if v is not None and not (isinstance(v, float) and np.isnan(v)) and not pd.isna(v):
            out[k] = float(v) if not isinstance(v, (bool, np.bool_)) else int(v)
    return out


def _context(release: D.Release, g: pd.DataFrame, i: int, rows: int, task: str, cfg: TaskConfig) -> dict:
    schema = load_schema()
    row = g.iloc[i]
    t = row["date"]
    hist = g.iloc[max(0, i - rows + 1): i + 1]
    ohlcv = [k for k in schema.group("ohlcv") if k in g.columns]
    history = [{"date": d.strftime("%Y-%m-%d"), **_values(r, ohlcv)} for d, (_, r) in zip(hist["date"], hist.iterrows())]
    filing = D.visible_filings(release, row["ticker"], t).head(1)
    news = D.visible_news(release, row["ticker"], t).head(cfg.news_items)
    recent = D.visible_scenarios(release, t, since=hist["date"].iloc[0])
    return {
        "history": history,
        "fundamentals": _values(row, input_features(task, schema)),
        "macro": _values(row, release.macro_series or schema.group("macro")),
        "scenario_flags": _values(row, schema.group("scenario_flags")),
        "recent_scenarios": [{"date": r.event_date.strftime("%Y-%m-%d"), "description": r.description} for r in recent.head(5).itertuples()],
        "filing": None if filing.empty else {"date": filing.iloc[0]["filing_date"].strftime("%Y-%m-%d"), "form": str(filing.iloc[0].get("form", "")),
                                             "accession": str(filing.iloc[0]["accession"]), "text": str(filing.iloc[0]["text"])[: cfg.excerpt_chars]},
        "news": [{"date": r.published.strftime("%Y-%m-%d"), "headline": r.headline} for r in news.itertuples()],
        "static": _static(release, row["ticker"]),
    }


def _static(release: D.Release, ticker: str) -> dict:
    s = release.static[release.static["ticker"] == ticker]
    if s.empty:
        return {"ticker": ticker}
    r = s.iloc[0]
    return {k: str(r[k]) for k in ("ticker", "name", "sector", "industry", "description") if k in s.columns and pd.notna(r[k])}


def _by_ticker(release: D.Release) -> dict[str, pd.DataFrame]:
    return {t: g.reset_index(drop=True) for t, g in release.panel.groupby("ticker", sort=True)}


def _instance(task, iid, ticker, anchor, cluster, row, target, meta, context) -> dict:
    strata = {k: str(row[k]) for k in ("sector", "cap_quartile", "filing_tercile") if k in row}
    for k in ("category", "event_type", "property_type", "state"):
        if k in row:
            strata[k] = str(row[k])
    return {"id": iid, "task": task, "ticker": ticker, "anchor": anchor, "cluster": str(cluster), "strata": strata,
            "target": target, "meta": meta, "context": context}


def _select(task: str, release: D.Release, cands: pd.DataFrame, cfg: TaskConfig) -> pd.DataFrame:
    """The release's own instances when it ships them (their keys, in their order, up to the budget), else the
    seeded stratified sample."""

    shipped = (release.shipped or {}).get(task)
    if shipped is None:
        return stratified_sample(cands, cfg.budgets[task], STRATA[task], cfg.seed)
    keys = list(INSTANCE_KEYS[task])
    norm = lambda df: df[keys].astype(str).agg("|".join, axis=1)  # noqa: E731
    wanted = shipped.assign(date=shipped["date"].dt.strftime("%Y-%m-%d")) if "date" in keys else shipped
    have = cands.assign(date=pd.to_datetime(cands["date"]).dt.strftime("%Y-%m-%d")) if "date" in keys else cands
    picked = cands[norm(have).isin(set(norm(wanted))).to_numpy()]
    return picked.head(cfg.budgets[task]) if cfg.budgets[task] else picked


# ---- T1 ------------------------------------------------------------------------------------------------
def build_t1(release: D.Release, cfg: TaskConfig):
    L, H = cfg.L(), cfg.H()
    groups = _by_ticker(release)
    parts = []
    for ticker, g in groups.items():
        n = len(g)
        idx = np.flatnonzero(D.is_test_date(g["date"], release.granularity).to_numpy())
        idx = idx[(idx >= L - 1) & (idx + H < n)]
        if idx.size:
            parts.append(pd.DataFrame({"ticker": ticker, "i": idx, "date": g["date"].iloc[idx].to_numpy(), "sector": g["sector"].iloc[idx].to_numpy(),
                                       "market_cap": g["market_cap"].iloc[idx].to_numpy() if "market_cap" in g else np.nan}))
    if not parts:
        return [], {"no_anchor_with_full_lookback_and_horizon": len(groups)}
    cands = _select("T1", release, _with_strata(pd.concat(parts, ignore_index=True), release), cfg)
    out = []
    for c in cands.to_dict("records"):
        g, i = groups[c["ticker"]], int(c["i"])
        t = g["date"].iloc[i].strftime("%Y-%m-%d")
        target = g["close"].iloc[i + 1: i + 1 + H].astype(float).tolist()
        last = float(g["close"].iloc[i])
        out.append(_instance("T1", f"T1/{c['ticker']}/{t}", c["ticker"], t, c["ticker"], c, target,
                             {"last_close": last, "horizon": H, "lookback": L}, _context(release, g, i, L, "T1", cfg)))
    return out, {}


# ---- T2 / T5 -------------------------------------------------------------------------------------------
def build_valuation(task: str, release: D.Release, cfg: TaskConfig):
    holdout = D.release_holdout(release, seed=cfg.seed)
    groups = _by_ticker(release)
    fields = [f for f in STATEMENT_FIELDS if f in release.panel.columns]
    rows, drops = [], {}
    shipped = (release.shipped or {}).get(task)
    if shipped is not None:  # the release's own instances: their (ticker, date), not rebuilt
        for r in shipped.itertuples():
            g = groups.get(str(r.ticker))
            hit = np.flatnonzero((g["date"] == pd.Timestamp(r.date)).to_numpy()) if g is not None else []
            if len(hit) == 0 or pd.isna(g["market_cap"].iloc[hit[0]]):
                drops["shipped_instance_not_in_panel"] = drops.get("shipped_instance_not_in_panel", 0) + 1
                continue
            i = int(hit[0])
            rows.append({"ticker": str(r.ticker), "i": i, "sector": g["sector"].iloc[i], "market_cap": float(g["market_cap"].iloc[i])})
        holdout = set()
    for ticker in sorted(holdout):
        g = groups[ticker]
        ok = np.flatnonzero((g["market_cap"].notna() & g[fields].notna().any(axis=1)).to_numpy()) if fields else []
        if len(ok) == 0:
            drops["no_valid_snapshot"] = drops.get("no_valid_snapshot", 0) + 1
            continue
        rows.append({"ticker": ticker, "i": int(ok[-1]), "sector": g["sector"].iloc[ok[-1]], "market_cap": float(g["market_cap"].iloc[ok[-1]])})
    if not rows:
        return [], drops
    cands = _with_strata(pd.DataFrame(rows), release)
    cands = cands.head(cfg.budgets[task]) if shipped is not None and cfg.budgets[task] else \
        cands if shipped is not None else stratified_sample(cands, cfg.budgets[task], STRATA[task], cfg.seed)
    out = []
    for c in cands.to_dict("records"):
        g, i = groups[c["ticker"]], int(c["i"])
        t = g["date"].iloc[i].strftime("%Y-%m-%d")
        out.append(_instance(task, f"{task}/{c['ticker']}/{t}", c["ticker"], t, c["ticker"], c, float(c["market_cap"]), {},
                             _context(release, g, i, VALUATION_LOOKBACK, task, cfg)))
    return out, drops


# ---- T3 / T6 -------------------------------------------------------------------------------------------
def statement_snapshots(g: pd.DataFrame) -> pd.DataFrame:
    """One row per filing seen in a ticker's panel (the first date it is visible), oldest first."""
    snaps = g.dropna(subset=["filing_accession"]).drop_duplicates("filing_accession", keep="first")
    return snaps.sort_values(["filing_date", "date"]).reset_index(drop=True)


def build_statement(task: str, release: D.Release, cfg: TaskConfig):
    holdout = D.release_holdout(release, seed=cfg.seed)
    groups = _by_ticker(release)
    rows, drops, snaps_of = [], {}, {}
    for ticker in sorted(holdout):
        snaps = snaps_of[ticker] = statement_snapshots(groups[ticker])
        ks = [k for k in range(1, len(snaps)) if snaps["filing_date"].iloc[k] >= release.split_date]
        if cfg.t3_instances == "latest" and task not in (release.shipped or {}):  # shipped instances pick their own filings
            ks = ks[-1:]
        if not ks:
            drops["no_test_window_filing_with_prior"] = drops.get("no_test_window_filing_with_prior", 0) + 1
        rows += [{"ticker": ticker, "k": k, "accession": snaps["filing_accession"].iloc[k], "sector": snaps["sector"].iloc[k],
                  "market_cap": snaps["market_cap"].iloc[k]} for k in ks]
    if not rows:
        return [], drops
    cands = _select(task, release, _with_strata(pd.DataFrame(rows), release), cfg)
    out = []
    for c in cands.to_dict("records"):
        snaps, k = snaps_of[c["ticker"]], int(c["k"])
        tgt = snaps.iloc[k]
        filed = tgt["filing_date"]
        prior = snaps[(snaps.index < k) & (snaps["filing_date"] < filed)].tail(2)
        target = {f: (float(tgt[f]) if f in tgt and pd.notna(tgt[f]) else None) for f in STATEMENT_FIELDS}
        context = {"static": _static(release, c["ticker"]), "target_period_end": tgt["period_end"].strftime("%Y-%m-%d")}
        if task == "T3":
            context["prior"] = [{"period_end": p["period_end"].strftime("%Y-%m-%d"), "filing_date": p["filing_date"].strftime("%Y-%m-%d"),
                                 "values": _values(p, STATEMENT_FIELDS)} for _, p in prior.iterrows()]
        anchor = filed.strftime("%Y-%m-%d")
        out.append(_instance(task, f"{task}/{c['ticker']}/{tgt['filing_accession']}", c["ticker"], anchor, c["ticker"], c, target,
                             {"period_end": context["target_period_end"], "filing_date": anchor}, context))
    return out, drops


# ---- T4 ------------------------------------------------------------------------------------------------
def build_t4(release: D.Release, cfg: TaskConfig):
    L = cfg.L()
    groups = _by_ticker(release)
    ev = release.scenarios[D.is_test_date(release.scenarios["event_date"], release.granularity)].copy()
    post = ev["post_end"] if "post_end" in ev else pd.Series(pd.NaT, index=ev.index)
    ev["post_end"] = post.fillna(ev["event_date"] + pd.Timedelta(days=POST_EVENT_DAYS))
    rows, drops = [], {}
    for ticker, g in groups.items():
        dates = g["date"].to_numpy()
        pre = np.searchsorted(dates, ev["event_date"].to_numpy(), side="right") - 1
        end = np.searchsorted(dates, ev["post_end"].to_numpy(), side="right") - 1
        ok = (pre >= 1) & (ev["post_end"].to_numpy() <= dates[-1]) & (end > pre)
        for j in np.flatnonzero(ok):
            p0, p1 = float(g["close"].iloc[pre[j]]), float(g["close"].iloc[end[j]])
            if not p0 >= MIN_PRE_EVENT_PRICE:
                drops["pre_event_price_below_0.50"] = drops.get("pre_event_price_below_0.50", 0) + 1
                continue
            e = ev.iloc[j]
            rows.append({"ticker": ticker, "i": int(pre[j]), "event_id": str(e["event_id"]), "event_type": str(e["event_type"]),
                         "category": str(e["category"]), "sector": g["sector"].iloc[pre[j]],
                         "market_cap": g["market_cap"].iloc[pre[j]] if "market_cap" in g else np.nan,
                         "ret": 100.0 * (p1 / p0 - 1.0), "p0": p0, "event_date": e["event_date"], "description": str(e["description"])})
    if not rows:
        return [], drops
    cands = _select("T4", release, _with_strata(pd.DataFrame(rows), release), cfg)
    out = []
    for c in cands.to_dict("records"):
        g, i = groups[c["ticker"]], int(c["i"])
        context = _context(release, g, i, L, "T4", cfg)
        context["event"] = {"event_id": c["event_id"], "type": c["event_type"], "category": c["category"],
                            "date": c["event_date"].strftime("%Y-%m-%d"), "description": c["description"]}
        out.append(_instance("T4", f"T4/{c['event_id']}/{c['ticker']}", c["ticker"], c["event_date"].strftime("%Y-%m-%d"), c["event_id"], c,
                             float(c["ret"]), {"pre_event_price": c["p0"], "event_type": c["event_type"]}, context))
    return out, drops


# ---- T7 ------------------------------------------------------------------------------------------------
T7_ATTRIBUTES = ("city", "county", "state", "zip", "property_type", "square_footage", "lot_size", "bedrooms", "bathrooms",
                 "year_built", "latitude", "longitude", "last_sale_date", "years_since_last_sale")


def build_t7(release: D.Release, cfg: TaskConfig):
    props = release.properties.copy()
    props["address"] = props["address"].astype(str)
    test = D.address_split(props["address"], seed=cfg.seed)
    cands = props[props["address"].isin(test)].copy()
    cands["property_type"] = cands["property_type"].fillna("unknown").astype(str)
    cands["state"] = cands["state"].fillna("unknown").astype(str)
    cands = _select("T7", release, cands.reset_index(drop=True), cfg)
    out = []
    for c in cands.to_dict("records"):
        attrs = {k: (c[k].strftime("%Y-%m-%d") if isinstance(c[k], pd.Timestamp) else c[k]) for k in T7_ATTRIBUTES
                 if k in c and not pd.isna(c[k])}
        out.append(_instance("T7", f"T7/{c['address']}", "", "", c["address"], c, [float(c["rent"]), float(c["price"])],
                             {"metro": str(c.get("metro", ""))}, {"attributes": attrs}))
    return out, {}


def build(task: str, release: D.Release, cfg: TaskConfig) -> tuple[list[dict], dict[str, int]]:
    """(instances, drops by reason) for one task."""
    if task == "T1":
        return build_t1(release, cfg)
    if task in ("T2", "T5"):
        return build_valuation(task, release, cfg)
    if task in ("T3", "T6"):
        return build_statement(task, release, cfg)
    if task == "T4":
        return build_t4(release, cfg)
    if task == "T7":
        return build_t7(release, cfg)
    raise InputError(f"unknown task {task!r}; choose from {', '.join(TASKS)}", field="--tasks")
