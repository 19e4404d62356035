"""Score MacroLens sample rows: parse responses, build metric arrays, bootstrap CIs, stratify.

    ledgerlm score --benchmark macrolens --predictions RUN/samples.jsonl --out RUN_rescored

A sample row carries `task`, `level`, `target`, `meta`, `cluster`, `strata` and the raw `response`,
so scoring needs nothing but the rows (offline re-scoring gives the same numbers).
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ledgerlm.evaluate.stats import cluster_bootstrap, stratified, stratified_points
from ledgerlm.evaluate.macrolens.metrics import COUNTS, METRICS, PRIMARY, STATEMENT_FIELDS, instance_loss
from ledgerlm.evaluate.macrolens.parsers import parse_fields, parse_trajectory, parse_value, strip_reasoning
from ledgerlm.evaluate.macrolens.prompts import LADDER, LADDER_TASKS

SCORER_VERSION = 4  # 4: T3/T6 parse rate over the whole field x ticker grid (paper §5.1; the old rate is parse_pct_applicable), T4 DA: a zero forecast misses a zero return; 3: an unparsed T1 answer hits no direction (DA), T3/T6 parse rate over the fields with a target; 2: T1 unparsed = zero path, T3/T6 MAPE = mean of per-field MAPEs, every metric stratified
T7_FIELDS = ("rent", "price")
T7_ALIASES = {"monthly_rent": "rent", "rent_estimate": "rent", "sale_price": "price", "price_estimate": "price", "value": "price"}
STRATA_KEYS = ("sector", "cap_quartile", "filing_tercile", "category", "property_type", "state")
NO_CI = COUNTS | {"parse_pct", "parse_pct_applicable"}


class Extraction(NamedTuple):
    """What `extract` read from one response: `parsed` (every value the task asks for, in full), `answered` (any
    value at all: a T1 trajectory of the wrong length is answered but not parsed; an unparsed T1 answer hits no
    direction in DA) and `reason` (the row's `error_reason`, None when parsed)."""

    prediction: Any
    parsed: bool
    answered: bool
    reason: str | None


def extract(row: dict) -> Extraction:
    """What one sample row's response gives (`Extraction`)."""
    task, text = row["task"], row.get("response") or ""
    if task == "T1":
        h = row["meta"]["horizon"]
        traj = parse_trajectory(text)
        if not traj:
            return Extraction([0.0] * h, False, False, "unparsed: scored as a zero forecast (the paper's zero convention)")
        n = len(traj)
        traj = (traj + [traj[-1]] * h)[:h]
        return Extraction(traj, n == h, True, None if n == h else f"partial: {n} values for horizon {h}, padded/truncated")
    if task in ("T2", "T5", "T4"):
        v = parse_value(text)
        why = None if v is not None else ("non-response: scored as 0" if task == "T4" else "unparsed: scored as 0")
        return Extraction(v, v is not None, v is not None, why)
    fields = STATEMENT_FIELDS if task in ("T3", "T6") else T7_FIELDS
    got = parse_fields(text, fields, T7_ALIASES if task == "T7" else None)
    missing = [f for f in fields if got[f] is None]
    return Extraction(got, not missing, len(missing) < len(fields),
                      f"unparsed fields scored as 0: {', '.join(missing)}" if missing else None)


def arrays_for(task: str, rows: list[dict], got: list[Extraction]) -> dict[str, np.ndarray]:
    nan = float("nan")
    preds = [g.prediction for g in got]
    if task == "T1":
        return {"pred": np.array(preds, float), "true": np.array([r["target"] for r in rows], float),
                "last_close": np.array([r["meta"]["last_close"] for r in rows], float),
                "parsed": np.array([g.parsed for g in got], bool), "answered": np.array([g.answered for g in got], bool)}
    if task in ("T2", "T5", "T4"):
        return {"pred": np.array([nan if p is None else p for p in preds], float), "true": np.array([r["target"] for r in rows], float)}
    fields = STATEMENT_FIELDS if task in ("T3", "T6") else T7_FIELDS
    pred = np.array([[nan if p[f] is None else p[f] for f in fields] for p in preds], float)
    if task == "T7":
        true = np.array([r["target"] for r in rows], float)
    else:
        true = np.array([[nan if r["target"].get(f) is None else r["target"][f] for f in fields] for r in rows], float)
    return {"pred": pred, "true": true}


BOOTSTRAP_SEED = 42  # the paper's seed (§5.1, App. F)


def score_row(row: dict) -> dict:
    """Fill one sample row's `extracted`, `answer_text`, `score` (its primary loss), `error_reason`; the same
    numbers as `score_rows` gives it among the others (a row's loss depends on that row only)."""
    got = extract(row)
    row["extracted"], row["error_reason"] = got.prediction, got.reason
    row["answer_text"] = strip_reasoning(row.get("response"))
    row["score"] = instance_loss(row["task"], arrays_for(row["task"], [row], [got]), 0)
    return row


def score_rows(rows: list[dict], *, b_min: int = 1000, b_max: int = 10_000, seed: int = BOOTSTRAP_SEED) -> dict:
    """Fill `extracted`, `answer_text`, `score`, `error_reason` in place; return per task x level summaries.
    CIs: cluster bootstrap (`evaluate/stats.py`; clusters = ticker, scenario or address), B adaptive from
    `b_min` to `b_max` (rel. width 5 %), sorted cluster numbering, one default_rng(seed) per interval."""
    out: dict = {}
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        groups.setdefault((r["task"], r.get("level", "-")), []).append(r)
    for (task, level), part in sorted(groups.items()):
        got = [extract(r) for r in part]
        for r, g in zip(part, got):
            r["extracted"], r["error_reason"] = g.prediction, g.reason
            r["answer_text"] = strip_reasoning(r.get("response"))
        a = arrays_for(task, part, got)
        for i, r in enumerate(part):
            r["score"] = instance_loss(task, a, i)
        clusters = np.array([r["cluster"] for r in part])
        kw = {"b_min": b_min, "b_max": b_max, "seed": seed}
        metrics, counts = {}, {"n": len(part), "n_clusters": int(len(set(clusters)))}
        for name, fn in METRICS[task].items():
            if name in NO_CI or name.startswith("mape_"):
                counts[name] = fn(a)
            else:
                metrics[name] = cluster_bootstrap(a, clusters, fn, **kw).as_dict()
        strata = {}  # every metric, stratified as the paper's tables: sector, cap quartile, filing tercile, scenario category, ...
        for key in STRATA_KEYS:
            labels = [r["strata"].get(key) for r in part]
            if not any(lab is not None for lab in labels):
                continue
            per_label: dict = {}
            for name, fn in METRICS[task].items():
                if name in NO_CI or name.startswith("mape_"):
                    for lab, value in stratified_points(a, labels, fn).items():
                        per_label.setdefault(lab, {})[name] = value
                else:
                    for lab, iv in stratified(a, clusters, labels, fn, **kw).items():
                        per_label.setdefault(lab, {})[name] = iv.as_dict()
            strata[key] = per_label
        out.setdefault(task, {})[level] = {"primary": PRIMARY[task], "metrics": metrics, "counts": counts, "strata": strata}
    return out


def ladder_table(summary: dict) -> tuple[dict, str]:
    """Primary metric per task x ladder level, and the text table (paper Table 11)."""
    table, lines = {}, []
    for task, levels in summary.items():
        if task not in LADDER_TASKS or len([lv for lv in levels if lv in LADDER]) < 2:
            continue
        table[task] = {lv: levels[lv]["metrics"][levels[lv]["primary"]]["value"] for lv in LADDER if lv in levels}
    if table:
        cols = [lv for lv in LADDER if any(lv in row for row in table.values())]
        lines.append("task  metric  " + "  ".join(f"{c:>12}" for c in cols) + "   best")
        for task, row in table.items():
            prim = summary[task][next(iter(row))]["primary"]
            best = min(row, key=lambda k: row[k])
            lines.append(f"{task:<5} {prim:<7} " + "  ".join(f"{row[c]:>12.4g}" if c in row else f"{'':>12}" for c in cols) + f"   {best}")
    return table, "\n".join(lines)
