"""EPSBench scores: price-deflated error, interval calibration, format compliance, resource use.

    ledgerlm score --benchmark epsbench --predictions runs/x --out runs/x/scored

Definitions (paper §3.4, App. B.4, Table 10), y = reported EPS, ŷ = forecast, P = price:
  PDE            |ŷ - y| / P  (a fraction of price; the paper prints it in %); a run with no
                 parseable forecast scores +inf (it loses every paired comparison)
  signed error   (y - ŷ) / P  (positive = forecast too low)
  interval       [p10, p90]; valid only when both are finite and p10 <= p90 (a flipped interval
                 is a compliance failure, as in the release's record maker)
  interval score IS = [(u - l) + (2/α)(l - y)1{y < l} + (2/α)(y - u)1{y > u}] / P, α = 0.2,
                 averaged (mean) over runs that return an interval
  coverage, tail rates above / below, width (u - l) / P: over runs that return an interval
Point comparisons pair instances: an instance's PDE is the median over its runs; the headline
is the median over instances with a bootstrap CI; company-level resampling is the robustness
check; with `data/consensus.csv` the model is paired against consensus (win/loss, sign test).
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np
from scipy import stats

from ledgerlm.evaluate.epsbench.release import Release
from ledgerlm.evaluate.epsbench.validation import Flag

ALPHA = 0.2  # 80% interval
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
    """A JSON number that is finite; strings, booleans, None and NaN are not."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


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

    @property
    def has_interval(self) -> bool:
        return self.p10 is not None and self.p90 is not None and self.p10 <= self.p90


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
    if p10 is not None and p90 is not None and p10 > p90:
        errors.append(f"interval flipped: p10 {p10} > p90 {p90}")
    usage = record.get("usage") if isinstance(record.get("usage"), dict) else {}
    usage = {k: float(v) for k, v in usage.items() if _finite(v) is not None}
    return Scored(rid, str(record.get("run", run)), eps, p10, p90, not errors, "; ".join(errors) or None, usage=usage)


UNREADABLE = "_unreadable"  # marks a JSONL line that is not a JSON object (it names no instance)


def unreadable_line(path, line: int, error: str) -> dict[str, Any]:
    """The record standing for an unreadable JSONL line: a format failure counted in n_records and
    listed under `unreadable_lines` in results.json, never silently dropped."""
    return {"id": f"{path}:{line}", "format_failure": True, "format_error": error,
            UNREADABLE: {"path": str(path), "line": line, "error": error}}


def score_records(release: Release, records: Iterable[tuple[str, Mapping[str, Any]]], flags: list[Flag],
                  *, exclude_flagged: bool = False, seed: int = 0, n_boot: int = N_BOOT) -> tuple[dict[str, Any], list[Scored]]:
    """(run label, record) pairs -> (results dict, one Scored row per record)."""
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
        truth, price = release.truth.get(row.id), release.prices.get(row.id)
        row.eps_actual, row.price, row.flags = (truth.eps if truth else None), price, flagged.get(row.id, [])
        if row.eps_actual is not None and price:
            row.pde = pde(row.eps_pred, row.eps_actual, price)
            if row.eps_pred is not None:
                row.signed_error = signed_error(row.eps_pred, row.eps_actual, price)
            if row.has_interval:
                row.interval_covered = row.p10 <= row.eps_actual <= row.p90
                row.interval_score = interval_score(row.p10, row.p90, row.eps_actual, price)
        rows.append(row)
    runs = sorted({r.run for r in rows})
    scored = [r for r in rows if not (exclude_flagged and r.flags)]
    results = summarize(release, scored, runs, seed=seed, n_boot=n_boot, n_unreadable=len(unreadable))
    results["unreadable_lines"] = unreadable
    results["validation"] = {"flags": [f.as_dict() for f in flags], "flagged_instances": sorted(flagged),
                             "excluded": sorted({r.id for r in rows if r.flags}) if exclude_flagged else []}
    results["unknown_records"] = unknown
    results["n_release_instances"] = len(known)
    results["n_instances_without_predictions"] = len(known - {r.id for r in rows})
    return results, rows


def summarize(release: Release, rows: list[Scored], runs: list[str], *, seed: int = 0, n_boot: int = N_BOOT,
              n_unreadable: int = 0) -> dict[str, Any]:
    """Metrics over scored rows; `n_unreadable` lines (no instance, no forecast) count as records that failed
    format and point compliance but add no instance."""
    rng = np.random.default_rng(seed)
    by_instance: dict[str, dict[str, Scored]] = defaultdict(dict)
    for row in rows:
        by_instance[row.id][row.run] = row
    ids = sorted(by_instance)
    # a run with no record for an instance that other runs answered counts as a failed run (PDE +inf)
    inst_pde = np.array([np.median([by_instance[i][r].pde if r in by_instance[i] else math.inf for r in runs]) for i in ids])
    companies = [i.rsplit("_", 1)[0] for i in ids]
    with_interval = [r for r in rows if r.interval_score is not None]
    out: dict[str, Any] = {
        "benchmark": "epsbench", "n_records": len(rows) + n_unreadable, "n_instances": len(ids), "runs": runs, "alpha": ALPHA, "ci_level": CI_LEVEL,
        "pde_median": _median(inst_pde), "pde_median_ci": _boot_ci(inst_pde, np.median, rng, n_boot),
        "pde_median_ci_company": _cluster_ci(inst_pde, companies, rng, n_boot),
        "pde_median_all_runs": _median([r.pde for r in rows]),
        "signed_error_median": _median([r.signed_error for r in rows if r.signed_error is not None]),
        "n_with_interval": len(with_interval),
        "coverage": _mean([r.interval_covered for r in with_interval]),
        "above_rate": _mean([r.eps_actual > r.p90 for r in with_interval]),
        "below_rate": _mean([r.eps_actual < r.p10 for r in with_interval]),
        "width_median": _median([(r.p90 - r.p10) / r.price for r in with_interval]),
        "interval_score_mean": _mean([r.interval_score for r in with_interval]),
        "format_compliance": _mean([r.format_ok for r in rows] + [False] * n_unreadable),
        "n_format_failures": sum(not r.format_ok for r in rows) + n_unreadable,
        "point_compliance": _mean([r.eps_pred is not None for r in rows] + [False] * n_unreadable),
    }
    for key in sorted({k for r in rows for k in r.usage}):
        out[f"{key}_median"] = _median([r.usage[key] for r in rows if key in r.usage])
    if release.consensus is not None:
        out["consensus"] = _versus_consensus(release, ids, inst_pde, companies, rng, n_boot)
    return out


def _versus_consensus(release: Release, ids: list[str], inst_pde: np.ndarray, companies: list[str], rng, n_boot: int) -> dict[str, Any]:
    keep = [k for k, i in enumerate(ids) if i in release.consensus and release.truth[i].eps is not None]
    cons = np.array([pde(release.consensus[ids[k]], release.truth[ids[k]].eps, release.prices[ids[k]]) for k in keep])
    model = inst_pde[keep]
    wins, losses = int(np.sum(model < cons)), int(np.sum(model > cons))
    finite = np.isfinite(model)
    diff = model[finite] - cons[finite]
    return {
        "n_paired": len(keep), "pde_median_consensus": _median(cons),
        "pde_diff_median": _median(diff), "pde_diff_ci": _boot_ci(diff, np.median, rng, n_boot),
        "pde_diff_ci_company": _cluster_ci(diff, [companies[k] for k, f in zip(keep, finite) if f], rng, n_boot),
        "wins": wins, "losses": losses, "win_rate": wins / len(keep) if keep else None,
        "sign_test_p": float(stats.binomtest(wins, wins + losses).pvalue) if wins + losses else None,
    }


def _boot_ci(values, statistic, rng, n_boot: int) -> list[float | None]:
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return [None, None]
    draws = statistic(values[rng.integers(0, len(values), size=(n_boot, len(values)))], axis=1)
    return _quantiles(draws)


def _cluster_ci(values, clusters: list[str], rng, n_boot: int) -> list[float | None]:
    """Resample companies (all of a company's instances together), then take the median."""
    values = np.asarray(values, dtype=float)
    groups = defaultdict(list)
    for k, c in enumerate(clusters):
        groups[c].append(k)
    members = list(groups.values())
    if len(members) < 2:
        return [None, None]
    draws = []
    for _ in range(n_boot):
        picked = rng.integers(0, len(members), size=len(members))
        draws.append(np.median(values[np.concatenate([members[p] for p in picked])]))
    return _quantiles(draws)


def _quantiles(draws) -> list[float | None]:
    tail = (1 - CI_LEVEL) / 2
    with np.errstate(invalid="ignore"):  # draws may hold +inf (failed runs); interpolating inf - inf is nan -> None
        return [_clean(np.quantile(draws, tail)), _clean(np.quantile(draws, 1 - tail))]


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
        "id": row.id, "run": row.run, "pde": row.pde if finite else None, "score": row.pde if finite else None,
        "signed_error": row.signed_error, "interval_covered": row.interval_covered, "interval_score": row.interval_score,
        "eps_pred": row.eps_pred, "eps_p10": row.p10, "eps_p90": row.p90, "eps_actual": row.eps_actual, "price": row.price,
        "format_ok": row.format_ok, "error": row.error, "flags": row.flags,
        # DESIGN contract 6 fields; the conversation itself is in the run's trajectory.json files
        "prompt": None, "response": None, "reasoning": None, "answer_text": None, "extracted": row.eps_pred, "error_reason": row.error,
    }
