"""EPSBench scores, aggregated exactly as the release's evaluation code.

    ledgerlm score --benchmark epsbench --predictions runs/x --out runs/x/scored

Reference: JadeXu16/epsbench, commit bbf98810, `stage_3_eval/main_tables.py` and `stage_3_eval/common.py`
(CC BY 4.0 / MIT; no code copied). y = reported EPS, ŷ = forecast, P = close price before release:
  run PDE        |ŷ - y| / P; a run whose record is missing or has no parseable forecast is +inf
                 (common.run_pde; it counts as a loss to the consensus)
  instance PDE   median over the configuration's runs (3 in the paper), +inf runs included;
                 an instance of the release with no record in any run is +inf in every run
  median PDE     median over the instances whose instance PDE is finite (main_tables: `finite`)
  compliance     runs with a parseable forecast / (release instances x runs)
  interval       every run whose record has numeric p10 and p90 counts, a flipped one (p10 > p90)
                 included as given (make_record.py: "a flipped interval is a compliance failure" but
                 stored unreordered): coverage = l <= y <= u, IS = [(u - l) + (2/α)(l - y)+ + (2/α)(y - u)+] / P,
                 α = 0.2, mean over those runs (also the median); width = (u - l) / P, median
  vs consensus   (needs data/consensus.csv) analyst PDE = |c - y| / P; paired over release instances,
                 inf-inf pairs dropped, wins/losses with ties excluded, median of the finite paired
                 differences with the release's 90% bootstrap (random.Random(0), 10,000 draws),
                 sign-test p as common.sign_p. Without the file, wins/losses are read from the
                 release's data/scores.csv for a named configuration (`--config`), as main_tables does.
Per-record scores match data/scores.csv (pde, interval_covered, interval_score): tests/test_epsbench_official.py.
  large errors   runs with a forecast whose PDE > 1 pp, over all runs (Table 4 "catastrophic")
  direction      (needs consensus) runs with (ŷ > c) == (y > c), ties with c left out (Table 1)
ledgerlm additions, named as such in results.json: a numpy bootstrap CI of the median PDE over instances and
over companies (resampling companies for the median PDE itself; App. B.4 resamples companies for the consensus
comparison intervals, a different quantity), signed error (Table 10), final-message format compliance.
Known edge difference: the release's f() keeps ±inf (a p10 of -Infinity counts as an interval, IS = inf);
here a non-finite value is not a number (the run has no interval).
"""
from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np

from ledgerlm.evaluate import stats
from ledgerlm.evaluate.epsbench.release import Release
from ledgerlm.evaluate.epsbench.validation import Flag

SCORER_VERSION = 3  # 3: the final message's JSON read as the release's final_json.py (first balanced object, any type), Table 4's catastrophic runs, Table 1's surprise direction; 2: aggregation exactly as the release's main_tables.py (finite-instance median, flipped intervals scored)
ALPHA = 0.2  # 80% interval
CATASTROPHIC_PDE = 0.01  # main_tables.py Table 4: a run with PDE > 1 pp is a large ("catastrophic") error
CI_LEVEL = 0.90  # the paper's bootstrap intervals are 90%
N_BOOT = 2000


def pde(pred: float | None, actual: float, price: float) -> float:
    """Price-deflated absolute error; +inf when there is no forecast."""
    return abs(pred - actual) / price if pred is not None else math.inf


def signed_error(pred: float, actual: float, price: float) -> float:
    return (actual - pred) / price


def interval_score(lower: float, upper: float, actual: float, price: float, alpha: float = ALPHA) -> float:
    """Gneiting-Raftery interval score of the central (1 - alpha) interval, deflated by price."""
    score = (upper - lower)
    if actual < lower:
        score += (2 / alpha) * (lower - actual)
    if actual > upper:
        score += (2 / alpha) * (actual - upper)
    return score / price


def _finite(value: Any) -> float | None:
    """A finite number as common.f reads it: numbers and numeric strings (float(x)); None, NaN, inf,
    booleans and other text are not."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        out = float(value)
    except ValueError:
        return None
    return out if math.isfinite(out) else None


@dataclass
class Scored:
    id: str
    run: str
    eps_pred: float | None
    p10: float | None
    p90: float | None
    format_ok: bool
    error: str | None
    eps_actual: float | None = None
    price: float | None = None
    pde: float = math.inf
    signed_error: float | None = None
    interval_covered: bool | None = None
    interval_score: float | None = None
    usage: dict[str, float] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)  # the record, for the analyses tables

    @property
    def has_interval(self) -> bool:
        """Both bounds numeric; a flipped interval counts, as the release scores it (main_tables Table 2)."""
        return self.p10 is not None and self.p90 is not None

    @property
    def flipped(self) -> bool:
        return self.has_interval and self.p10 > self.p90


def parse_record(record: Mapping[str, Any], run: str) -> Scored:
    """Read one `t-1.record.json`-shaped record; anything malformed is a format failure, not a crash."""
    ticker, quarter = record.get("ticker"), record.get("fiscal_quarter")
    rid = f"{str(ticker).upper()}_{quarter}" if isinstance(ticker, str) and isinstance(quarter, str) else str(record.get("id", "?"))
    eps, p10, p90 = (_finite(record.get(k)) for k in ("eps_gaap_pred", "eps_p10", "eps_p90"))
    errors = []
    if record.get("format_failure"):
        errors.append(str(record.get("format_error") or "final answer not parseable"))
    if eps is None:
        errors.append(f"eps_gaap_pred {record.get('eps_gaap_pred')!r} is not a finite number")
    for name, value in (("eps_p10", p10), ("eps_p90", p90)):
        if value is None:
            errors.append(f"{name} {record.get(name)!r} is not a finite number")
    for name in ("eps_gaap_pred", "eps_p10", "eps_p90"):
        if isinstance(record.get(name), str) and _finite(record.get(name)) is not None:
            errors.append(f"{name} is a string (scored as its number, as the release's f() does)")
    if p10 is not None and p90 is not None and p10 > p90:
        errors.append(f"interval flipped: p10 {p10} > p90 {p90}")
    usage = record.get("usage") if isinstance(record.get("usage"), dict) else {}
    usage = {k: float(v) for k, v in usage.items() if _finite(v) is not None}
    return Scored(rid, str(record.get("run", run)), eps, p10, p90, not errors, "; ".join(errors) or None, usage=usage, raw=record)


def score_row(release: Release, row: Scored, flags: list[str] | None = None) -> Scored:
    """One parsed record against the release's truth and price: PDE, signed error, interval coverage and score."""
    truth, price = release.truth.get(row.id), release.prices.get(row.id)
    row.eps_actual, row.price, row.flags = (truth.eps if truth else None), price, list(flags or [])
    if row.eps_actual is not None and price:
        row.pde = pde(row.eps_pred, row.eps_actual, price)
        if row.eps_pred is not None:
            row.signed_error = signed_error(row.eps_pred, row.eps_actual, price)
        if row.has_interval:
            row.interval_covered = row.p10 <= row.eps_actual <= row.p90
            row.interval_score = interval_score(row.p10, row.p90, row.eps_actual, price)
    return row


UNREADABLE = "_unreadable"  # marks a JSONL line that is not a JSON object (it names no instance)


def unreadable_line(path, line: int, error: str) -> dict[str, Any]:
    """The record standing for an unreadable JSONL line: a format failure counted in n_records and
    listed under `unreadable_lines` in results.json, never silently dropped."""
    return {"id": f"{path}:{line}", "format_failure": True, "format_error": error,
            UNREADABLE: {"path": str(path), "line": line, "error": error}}


def score_records(release: Release, records: Iterable[tuple[str, Mapping[str, Any]]], flags: list[Flag],
                  *, exclude_flagged: bool = False, seed: int = 0, n_boot: int = N_BOOT,
                  runs: list[str] | None = None) -> tuple[dict[str, Any], list[Scored]]:
    """(run label, record) pairs -> (results dict, one Scored row per record). `runs`: the run labels the
    configuration was meant to have (e.g. s1..s3); default: those present in the records."""
    flagged = defaultdict(list)
    for flag in flags:
        flagged[flag.id].append(flag.check)
    known = {inst.id for inst in release.instances}
    rows, unknown, seen, unreadable = [], [], set(), []
    for run, record in records:
        row = parse_record(record, run) if isinstance(record, Mapping) else Scored("?", run, None, None, None, False, "record is not a JSON object")
        if isinstance(record, Mapping) and UNREADABLE in record:
            unreadable.append(record[UNREADABLE] | {"run": row.run})
            continue
        if row.id not in known:
            unknown.append(row.id)
            continue
        if (row.id, row.run) in seen:
            unknown.append(f"{row.id} (duplicate in run {row.run})")
            continue
        seen.add((row.id, row.run))
        rows.append(score_row(release, row, flagged.get(row.id, [])))
    runs = sorted(set(runs or []) | {r.run for r in rows})
    scored = [r for r in rows if not (exclude_flagged and r.flags)]
    grid = [i for i in known if not (exclude_flagged and i in flagged)]
    results = summarize(release, scored, runs, seed=seed, n_boot=n_boot, n_unreadable=len(unreadable), grid=grid)
    results["unreadable_lines"] = unreadable
    results["validation"] = {"flags": [f.as_dict() for f in flags], "flagged_instances": sorted(flagged),
                             "excluded": sorted({r.id for r in rows if r.flags}) if exclude_flagged else []}
    results["unknown_records"] = unknown
    results["n_release_instances"] = len(known)
    results["n_instances_without_predictions"] = len(known - {r.id for r in rows})
    return results, rows


def summarize(release: Release, rows: list[Scored], runs: list[str], *, seed: int = 0, n_boot: int = N_BOOT,
              n_unreadable: int = 0, grid: list[str] | None = None) -> dict[str, Any]:
    """Metrics over scored rows, aggregated as main_tables.py (see the module docstring). `grid` is the
    release's instance list (every instance is scored, a missing one as +inf runs); `runs` the run labels."""
    grid = sorted(grid if grid is not None else {i.id for i in release.instances})
    runs = sorted(runs) or ["s1"]
    by_instance: dict[str, dict[str, Scored]] = defaultdict(dict)
    for row in rows:
        by_instance[row.id][row.run] = row
    inst = instance_pdes(by_instance, grid, runs)
    finite_ids = [i for i in grid if math.isfinite(inst[i])]
    finite = np.array([inst[i] for i in finite_ids])
    in_grid = [r for r in rows if r.id in set(grid)]
    with_interval = [r for r in in_grid if r.interval_score is not None]
    companies = [i.rsplit("_", 1)[0] for i in finite_ids]
    rng = np.random.default_rng(seed)
    ok = sum(r.eps_pred is not None for r in in_grid)
    out: dict[str, Any] = {
        "benchmark": "epsbench", "scorer_version": SCORER_VERSION, "n_records": len(rows) + n_unreadable, "n_instances": len(by_instance),
        "n_grid": len(grid), "runs": runs, "alpha": ALPHA, "ci_level": CI_LEVEL,
        "aggregation": "main_tables.py (JadeXu16/epsbench bbf98810): instance PDE = median over runs (missing/unparseable run = inf); "
                       "median PDE over finite instances; intervals pooled over runs with numeric p10/p90, flipped included",
        "pde_median": _median(finite), "n_instances_finite": len(finite_ids), "n_instances_failed": len(grid) - len(finite_ids),
        "instance_pde": {i: (v if math.isfinite(v) else None) for i, v in inst.items()},
        "compliance": ok / (len(grid) * len(runs)) if grid else None, "n_runs_expected": len(grid) * len(runs), "n_runs_with_forecast": ok,
        "n_with_interval": len(with_interval), "n_flipped_intervals": sum(r.flipped for r in with_interval),
        "coverage": _mean([r.interval_covered for r in with_interval]),
        "above_rate": _mean([r.eps_actual > r.p90 for r in with_interval]),
        "below_rate": _mean([r.eps_actual < r.p10 for r in with_interval]),
        "width_median": _median([(r.p90 - r.p10) / r.price for r in with_interval]),
        "interval_score_mean": _mean([r.interval_score for r in with_interval]),
        "interval_score_median": _median([r.interval_score for r in with_interval]),
        # Table 4 (main_tables.py "PDE > 1pp (catastrophic)"): runs with a forecast whose PDE exceeds 1 pp, of all runs
        "n_catastrophic_runs": sum(r.eps_pred is not None and r.pde > CATASTROPHIC_PDE for r in in_grid),
        "catastrophic_rate": (sum(r.eps_pred is not None and r.pde > CATASTROPHIC_PDE for r in in_grid) / (len(grid) * len(runs))) if grid else None,
        # ledgerlm additions (not in main_tables.py)
        "pde_median_ci": _boot_ci(finite, rng, n_boot),
        "pde_median_ci_company": _cluster_ci(finite, companies, rng, n_boot),
        "signed_error_median": _median([r.signed_error for r in rows if r.signed_error is not None]),
        "format_compliance": _mean([r.format_ok for r in rows] + [False] * n_unreadable),
        "n_format_failures": sum(not r.format_ok for r in rows) + n_unreadable,
        "point_compliance": _mean([r.eps_pred is not None for r in rows] + [False] * n_unreadable),
    }
    for key in sorted({k for r in rows for k in r.usage}):
        out[f"{key}_median"] = _median([r.usage[key] for r in rows if key in r.usage])
    if release.consensus is not None:
        out["consensus"] = versus_consensus(release, inst, grid)
        out["consensus"]["surprise_direction_accuracy"] = surprise_direction_accuracy(release, in_grid)
    return out


def instance_pdes(by_instance: Mapping[str, Mapping[str, Scored]], grid: list[str], runs: list[str]) -> dict[str, float]:
    """main_tables.inst_pde: per instance, the median over runs of the run PDE (+inf when the run has no record)."""
    return {i: float(statistics.median([by_instance.get(i, {})[r].pde if r in by_instance.get(i, {}) else math.inf for r in runs]))
            for i in grid}


def sign_p(wins: int, losses: int) -> float:
    """Two-sided sign-test p as common.sign_p: min(2 * P[X <= min(w, l)], 1), X ~ Bin(w + l, 1/2)."""
    n, k = wins + losses, min(wins, losses)
    return min(sum(math.comb(n, i) for i in range(k + 1)) * 2 / 2 ** n, 1.0) if n else 1.0


def release_boot_ci(values: list[float], n: int = 10000, alpha: float = 0.10, seed: int = 0) -> tuple[float, float] | tuple[None, None]:
    """common.boot_ci: medians of `n` resamples drawn with random.Random(seed).choices; the 5th and 95th order statistics
    (`stats.bootstrap_ci(scheme="epsbench-release")`)."""
    if not values:
        return None, None
    est = stats.bootstrap_ci(values, n_boot=n, seed=seed, level=1 - alpha, statistic="median", scheme="epsbench-release")
    return est.ci_low, est.ci_high


def paired(a: Mapping[str, float], b: Mapping[str, float], cells: Iterable[str], n_boot: int = 10000) -> dict[str, Any]:
    """common.paired: A, B instance -> PDE (may be inf). inf-inf pairs dropped; wins/losses with ties excluded;
    median of the finite differences with the release's bootstrap CI; sign-test p."""
    diffs, wins, losses = [], 0, 0
    for k in sorted(cells):
        x, y = a.get(k), b.get(k)
        if x is None or y is None or (math.isinf(x) and math.isinf(y)):
            continue
        wins += x < y
        losses += x > y
        if math.isfinite(x) and math.isfinite(y):
            diffs.append(x - y)
    lo, hi = release_boot_ci(diffs, n=n_boot)
    return {"median_diff": statistics.median(diffs) if diffs else None, "ci": [lo, hi], "wins": wins, "losses": losses,
            "win_rate": wins / (wins + losses) if wins + losses else None, "sign_test_p": sign_p(wins, losses), "n_diffs": len(diffs)}


def surprise_direction_accuracy(release: Release, rows: list[Scored]) -> float | None:
    """Table 1's surprise-direction accuracy (main_tables.direction_acc): over runs with a forecast p, the share with
    (p > c) == (y > c), c the consensus; runs where y or p equals c (within 1e-9) or c is missing are left out."""
    ok = n = 0
    for r in rows:
        c = release.consensus.get(r.id)
        if r.eps_pred is None or c is None or r.eps_actual is None or abs(r.eps_actual - c) < 1e-9 or abs(r.eps_pred - c) < 1e-9:
            continue
        n += 1
        ok += (r.eps_pred > c) == (r.eps_actual > c)
    return ok / n if n else None


def versus_consensus(release: Release, inst: Mapping[str, float], grid: list[str]) -> dict[str, Any]:
    """Table 1's consensus columns: analyst PDE = |consensus - y| / P, paired with the model's instance PDE."""
    analyst = {i: abs(release.consensus[i] - release.truth[i].eps) / release.prices[i] for i in grid
               if i in release.consensus and release.truth.get(i) and release.truth[i].eps is not None and release.prices.get(i)}
    r = paired(inst, analyst, grid)
    return {"n_paired": len(analyst), "pde_median_consensus": statistics.median(analyst.values()) if analyst else None,
            "pde_diff_median": r["median_diff"], "pde_diff_ci": r["ci"], "wins": r["wins"], "losses": r["losses"],
            "win_rate": r["win_rate"], "sign_test_p": r["sign_test_p"]}


def wins_from_scores_csv(path, config: str) -> dict[str, Any] | None:
    """main_tables.win_from_scores: without consensus, a configuration's instance wins/losses from the release's data/scores.csv."""
    import csv
    from pathlib import Path
    path = Path(path)
    if not path.is_file():
        return None
    with path.open(newline="", encoding="utf-8") as fh:
        inst = {(r["ticker"], r["fiscal_quarter"]): r["instance_vs_consensus"] for r in csv.DictReader(fh) if r["config"] == config}
    if not inst:
        return None
    wins, losses = sum(v == "win" for v in inst.values()), sum(v == "loss" for v in inst.values())
    return {"config": config, "wins": wins, "losses": losses, "win_rate": wins / (wins + losses) if wins + losses else None,
            "sign_test_p": sign_p(wins, losses), "source": str(path)}


def _boot_ci(values, rng, n_boot: int) -> list[float | None]:
    """Percentile CI of the median over instances (`stats.bootstrap_ci`, drawing from the shared `rng`)."""
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return [None, None]
    est = stats.bootstrap_ci(values, n_boot=n_boot, seed=rng, level=CI_LEVEL, statistic="median")
    return [_clean(est.ci_low), _clean(est.ci_high)]


def _cluster_ci(values, clusters: list[str], rng, n_boot: int) -> list[float | None]:
    """Resample companies (all of a company's instances together), then take the median
    (`stats.cluster_bootstrap`, companies numbered in first-seen order, drawing from the shared `rng`)."""
    if len(set(clusters)) < 2:
        return [None, None]
    est = stats.cluster_bootstrap(np.asarray(values, dtype=float), clusters, "median", n_boot=n_boot, seed=rng,
                                  alpha=1 - CI_LEVEL, cluster_order="first_seen")
    return [_clean(est.ci_low), _clean(est.ci_high)]


def _clean(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _median(values) -> float | None:
    values = [float(v) for v in values]
    return _clean(np.median(values)) if values else None


def _mean(values) -> float | None:
    values = [float(v) for v in values]
    return _clean(np.mean(values)) if values else None


def sample_row(row: Scored) -> dict[str, Any]:
    """One samples.jsonl row (non-finite numbers become null)."""
    finite = math.isfinite(row.pde)
    return {
        "id": row.id, "instance": row.id, "run": row.run, "pde": row.pde if finite else None, "score": row.pde if finite else None,
        "signed_error": row.signed_error, "interval_covered": row.interval_covered, "interval_score": row.interval_score,
        "eps_pred": row.eps_pred, "eps_p10": row.p10, "eps_p90": row.p90, "eps_actual": row.eps_actual, "price": row.price,
        "format_ok": row.format_ok, "error": row.error, "flags": row.flags,
        # DESIGN contract 6 fields; the conversation itself is in the run's trajectory.json files
        "prompt": None, "response": None, "reasoning": None, "answer_text": None, "extracted": row.eps_pred, "error_reason": row.error,
    }
