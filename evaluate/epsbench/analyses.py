"""The paper's analysis tables from scored EPSBench runs: naive baselines, near/far instances, accounting stages.

    ledgerlm score --benchmark epsbench --predictions runs/eps --out runs/eps/scored   # -> tables.md, results.json "tables"

Each follows the release's script (JadeXu16/epsbench bbf98810, CC BY 4.0 / MIT; rules re-implemented, no code copied):
  naive_baselines      main_tables.py NAIVE: copy year-ago EPS (q-4), copy last quarter (q-1), predict zero;
                       median PDE over instances with a value (Table 1's reference rows)
  far_instances        table2_departure.py (Table 2): instances ordered by |y - year-ago EPS| / P; near = the
                       49 smallest, far = the 50 largest (scaled as 49/149 and 50/149 of a smaller grid); instance
                       PDE = median over the instance's records (unparseable = inf); error halved = far instances
                       with instance PDE <= half the year-ago error; wrong direction = far instances whose median
                       over runs of (ŷ - ya)(y - ya) is < 0 (no forecast = 0); numeric evidence = share of far runs
                       whose most-adjusted driver (the one whose reset to its year-ago value moves EPS most) has an
                       evidence line citing a number (App. G: dollar amount, percentage, thousands-separated figure,
                       number with a unit) - needs the records' `evidence` and the schemas
  stage_decomposition  attribution.py + table14_layers.py (Table 14): per run op_pde = |op_pred - op_actual| x 1e6 /
                       diluted shares / P, likewise pretax (rounded to 6 decimals as attribution.csv); components
                       Operating = op_pde, Non-operating = pretax_pde - op_pde, Tax and shares = pde - pretax_pde;
                       instance = median over runs (instances whose runs all have both subtotals), table = median over
                       instances, and counts of the largest |component| (O / N / T)
"""
from __future__ import annotations

import math
import re
import statistics
from typing import Any, Mapping

from ledgerlm.errors import LedgerError
from ledgerlm.evaluate.epsbench.calculator import calculate, neutral_drivers
from ledgerlm.evaluate.epsbench.release import Release
from ledgerlm.evaluate.epsbench.scoring import _finite as _num  # numbers as the release's common.f reads them
from ledgerlm.evaluate.epsbench.scoring import instance_pdes

NEAR, FAR, GRID_SIZE = 49, 50, 149
CITES_NUMBER = re.compile(
    r"\$\s?\d|\d(?:\.\d+)?\s?%|\b\d{1,3}(?:,\d{3})+\b|\d(?:\.\d+)?\s?(?:million|billion|thousand|bn|mn|mm|m|b|k|bps|basis points|x|shares)\b",
    re.IGNORECASE)


def naive_baselines(release: Release, grid: list[str], model_pde: Mapping[str, float | None] | None = None) -> list[dict[str, Any]]:
    rows = []
    truth, prices = release.truth, release.prices
    for name, pick in (("copy year-ago quarter (q-4)", lambda t: t.eps_year_ago), ("copy last quarter (q-1)", lambda t: t.eps_last_quarter),
                       ("predict zero", lambda t: 0.0)):
        errs = [abs(pick(truth[i]) - truth[i].eps) / prices[i] for i in grid
                if i in truth and truth[i].eps is not None and pick(truth[i]) is not None and prices.get(i)]
        rows.append({"forecaster": name, "n": len(errs), "median_pde": statistics.median(errs) if errs else None})
    if release.consensus:
        errs = [abs(release.consensus[i] - truth[i].eps) / prices[i] for i in grid if i in release.consensus and truth[i].eps is not None]
        rows.append({"forecaster": "analyst consensus", "n": len(errs), "median_pde": statistics.median(errs) if errs else None})
    if model_pde is not None:
        finite = [v for v in model_pde.values() if v is not None]
        rows.append({"forecaster": "this run (main_tables median PDE)", "n": len(finite), "median_pde": statistics.median(finite) if finite else None})
    return rows


def _top_driver_cites_number(release: Release, iid: str, record: Mapping[str, Any], cache: dict) -> bool | None:
    preds, evidence = record.get("fundamental_predictions"), record.get("evidence")
    if not isinstance(preds, dict) or not preds or not isinstance(evidence, dict):
        return None
    try:
        schema = cache.setdefault(iid, release.schema(iid))
        drivers = {k: float(v) for k, v in preds.items() if _num(v) is not None and k in schema.drivers}
        base = calculate(schema, drivers, strict=False)["eps"]
        neutral = neutral_drivers(schema)
        moves = {k: abs(base - calculate(schema, {**drivers, k: neutral[k]}, strict=False)["eps"]) for k in drivers if k in neutral}
    except (LedgerError, KeyError, OSError):
        return None
    if not moves:
        return None
    top = max(moves, key=moves.get)
    return bool(CITES_NUMBER.search(str(evidence.get(top, ""))))


def far_instances(release: Release, rows: list, grid: list[str]) -> dict[str, Any]:
    truth, prices = release.truth, release.prices
    usable = [i for i in grid if i in truth and truth[i].eps is not None and truth[i].eps_year_ago is not None and prices.get(i)]
    order = sorted(usable, key=lambda i: abs(truth[i].eps - truth[i].eps_year_ago) / prices[i])
    n_near = NEAR if len(order) >= GRID_SIZE else round(len(order) * NEAR / GRID_SIZE)
    n_far = FAR if len(order) >= GRID_SIZE else round(len(order) * FAR / GRID_SIZE)
    near, far = order[:n_near], order[len(order) - n_far:]
    preds: dict[str, list] = {}
    for r in rows:
        preds.setdefault(r.id, []).append(r)
    run_pde = lambda x, i: abs(x - truth[i].eps) / prices[i] if x is not None else math.inf  # noqa: E731
    inst = {i: statistics.median(run_pde(r.eps_pred, i) for r in preds[i]) for i in usable if i in preds}
    ya_err = {i: abs(truth[i].eps_year_ago - truth[i].eps) / prices[i] for i in usable}

    def med(ids, values):
        got = [values[i] for i in ids if i in values]
        return statistics.median(got) if got else None

    halved = sum(1 for i in far if i in inst and inst[i] <= 0.5 * ya_err[i])
    wrong = sum(1 for i in far if i in preds and statistics.median(
        [(r.eps_pred - truth[i].eps_year_ago) * (truth[i].eps - truth[i].eps_year_ago) if r.eps_pred is not None else 0 for r in preds[i]]) < 0)
    cache: dict = {}
    cites = [c for i in far for r in preds.get(i, []) if (c := _top_driver_cites_number(release, i, r.raw, cache)) is not None]
    return {"n_near": len(near), "n_far": len(far), "near_ids": near, "far_ids": far,
            "year_ago": {"near": med(near, ya_err), "far": med(far, ya_err)},
            "model": {"near": med(near, inst), "far": med(far, inst), "n_far_with_records": sum(i in inst for i in far),
                      "error_halved": halved, "wrong_direction": wrong,
                      "numeric_evidence": (sum(cites) / len(cites)) if cites else None, "n_runs_coded": len(cites)}}


def run_attribution(release: Release, row) -> dict[str, Any] | None:
    """attribution.py's row for one run (None when there is no forecast or reported EPS is 0/missing)."""
    i, t, price = row.id, release.truth.get(row.id), release.prices.get(row.id)
    p = row.eps_pred
    if p is None or t is None or not t.eps or not price:
        return None
    sh = t.diluted_shares
    op_p, pt_p = _num(row.raw.get("operating_pred")), _num(row.raw.get("pretax_pred"))
    op = abs(op_p - t.operating) * 1e6 / sh / price if (sh and op_p is not None and t.operating is not None) else None
    pt = abs(pt_p - t.pretax) * 1e6 / sh / price if (sh and pt_p is not None and t.pretax is not None) else None
    r6 = lambda v: round(v, 6) if v is not None else None  # noqa: E731
    return {"id": i, "run": row.run, "pde": r6(abs(p - t.eps) / price), "op_pde": r6(op), "pretax_pde": r6(pt)}


def stage_decomposition(release: Release, rows: list, grid: list[str]) -> dict[str, Any]:
    per: dict[str, list] = {}
    for row in rows:
        if row.id in grid and (a := run_attribution(release, row)) is not None:
            per.setdefault(row.id, []).append((a["op_pde"], a["pretax_pde"], a["pde"]))
    layers = {}
    for i, runs in per.items():
        runs = [r for r in runs if r[2] is not None]
        if runs and all(r[0] is not None and r[1] is not None for r in runs):
            layers[i] = (statistics.median(r[0] for r in runs), statistics.median(r[1] - r[0] for r in runs),
                         statistics.median(r[2] - r[1] for r in runs))
    largest = {"O": 0, "N": 0, "T": 0}
    for v in layers.values():
        largest["ONT"[max(range(3), key=lambda k: abs(v[k]))]] += 1
    med = lambda k: statistics.median(v[k] for v in layers.values()) if layers else None  # noqa: E731
    return {"n": len(layers), "operating": med(0), "non_operating": med(1), "tax_and_shares": med(2), "largest": largest,
            "instances": {i: list(v) for i, v in sorted(layers.items())}}


def all_tables(release: Release, rows: list, runs: list[str], grid: list[str]) -> dict[str, Any]:
    by_instance: dict[str, dict] = {}
    for r in rows:
        by_instance.setdefault(r.id, {})[r.run] = r
    inst = {i: (v if math.isfinite(v) else None) for i, v in instance_pdes(by_instance, grid, runs).items()}
    return {"naive_baselines": naive_baselines(release, grid, inst), "far_instances": far_instances(release, rows, grid),
            "stage_decomposition": stage_decomposition(release, rows, grid)}


def to_markdown(tables: Mapping[str, Any]) -> str:
    pp = lambda v: "n/a" if v is None else f"{100 * v:.3f}"  # noqa: E731
    out = ["## Naive baselines (main_tables.py; median PDE, % of price)", "", "| forecaster | n | median PDE (%) |", "|---|---|---|"]
    out += [f"| {r['forecaster']} | {r['n']} | {pp(r['median_pde'])} |" for r in tables["naive_baselines"]]
    f = tables["far_instances"]
    m = f["model"]
    evid = "n/a" if m["numeric_evidence"] is None else f"{m['numeric_evidence']:.0%}"
    out += ["", f"## Near / far instances (Table 2; near = {f['n_near']}, far = {f['n_far']}; median PDE, %)", "",
            "| forecaster | near | far | numeric evidence | error halved | wrong direction |", "|---|---|---|---|---|---|",
            f"| year-ago EPS | {pp(f['year_ago']['near'])} | {pp(f['year_ago']['far'])} | -- | -- | -- |",
            f"| this run | {pp(m['near'])} | {pp(m['far'])} | {evid} | {m['error_halved']} | {m['wrong_direction']} |"]
    s = tables["stage_decomposition"]
    big = s["largest"]
    out += ["", "## Error by accounting stage (Table 14; pp of price, medians)", "",
            "| n | Operating | Non-operating | Tax and shares | Largest component O / N / T |", "|---|---|---|---|---|",
            f"| {s['n']} | {pp(s['operating'])} | {pp(s['non_operating'])} | {pp(s['tax_and_shares'])} | {big['O']} / {big['N']} / {big['T']} |", ""]
    return "\n".join(out)
