"""`ledgerlm compare RUN_A RUN_B`: paired deltas (B − A) with significance, for accuracies or losses.

    ledgerlm compare runs/before runs/after --out runs/after/compare.md

Samples are paired by `id` (only ids present in both runs count; the rest are reported). What
`score` means comes from each run's results.json: `"score_kind": "binary"` (the default when absent;
FinIndices) or `"loss"` (EPSBench PDE, MacroLens primary losses; `"score_name"` names it,
`"group_by"` lists the sample fields to group by, `"score_aggregate"` folds repeated ids, e.g.
EPSBench's runs s1..s3, into one score per instance: median, null counting as +inf).
- binary: for the whole set, each paradigm × hint, and each paradigm × axis × hint: n, accuracy of
  A and B (with right/n beside each), the delta with a paired bootstrap 95% CI (items resampled, pairs kept together) and
  McNemar's exact p-value (binomial test on the discordant pairs).
- loss (lower is better): the mean and median of A, of B and of B − A (n beside each) with paired bootstrap 95% CIs and the
  Wilcoxon signed-rank p-value. Null scores (format failures) are counted per side; pairs where
  either side is null are left out of the statistics and listed. EPSBench runs also get the release's own
  paired comparison (common.paired: median Δ, 90% CI by its random.Random(0) bootstrap, sign test).
A markdown table goes to stdout and to `--out` (default: RUN_B/compare_vs_<name of A>.md);
`--json` writes the same numbers as JSON. Multi-task runs of the harness (OUT/<task>/ folders, e.g.
`--tasks macrolens_t1,macrolens_t2`) are compared task by task: one table per task.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ledgerlm.errors import InputError
from ledgerlm.evaluate import stats
from ledgerlm.evaluate.runfiles import atomic_write_text, read_run


BINARY_GROUP_BY = ("paradigm", "axis", "hint")
KINDS = ("binary", "loss")
LISTED_EXCLUSIONS = 50  # excluded pairs named in the markdown (all of them are in the JSON)


def compare_runs(run_a: str | Path, run_b: str | Path, *, by: Sequence[str] | None = None,
                 n_boot: int = stats.N_BOOT, seed: int = 0, metric: str = "score", kind: str | None = None,
                 cluster: str | None = None) -> dict[str, Any]:
    """Paired comparison of two run folders (see module docstring); `kind` overrides the runs' score_kind;
    `cluster` (a sample field, e.g. company) makes the Δ CIs cluster-bootstrap ones (whole clusters resampled)."""
    results_a, samples_a = read_run(run_a)
    results_b, samples_b = read_run(run_b)
    kind = score_kind(results_a, results_b, run_a, run_b, metric, kind)
    if kind == "loss":
        return _compare_losses(run_a, run_b, results_a, results_b, samples_a, samples_b, by, n_boot, seed, metric, cluster)
    by = BINARY_GROUP_BY if by is None else by
    _check_binary(run_a, samples_a, metric)
    _check_binary(run_b, samples_b, metric)
    a = {s["id"]: s for s in samples_a}
    b = {s["id"]: s for s in samples_b}
    ids = [i for i in a if i in b]
    levels = ([(by[0], by[-1])] if len(by) > 2 else []) + ([tuple(by)] if by else [])  # paradigm × hint, then all keys
    rows = [_row({}, ids, a, b, n_boot, seed, metric, cluster)]
    for keys in levels:
        groups: dict[tuple, list[str]] = {}
        for i in ids:
            groups.setdefault(tuple(b[i].get(k, a[i].get(k)) for k in keys), []).append(i)
        for group in sorted(groups, key=lambda g: tuple(str(x) for x in g)):
            rows.append(_row(dict(zip(keys, group)), groups[group], a, b, n_boot, seed, metric, cluster))
    return {"run_a": str(run_a), "run_b": str(run_b), "metric": metric, "score_kind": "binary", "ci_method": _ci_method(cluster),
            "n_paired": len(ids),
            "only_a": len(a) - len(ids), "only_b": len(b) - len(ids), "rows": rows}


def score_kind(results_a: dict, results_b: dict, run_a: Any, run_b: Any, metric: str = "score", kind: str | None = None) -> str:
    """"binary" or "loss": `kind` when given, else what both results.json declare (undeclared = binary)."""
    if kind is not None:
        if kind not in KINDS:
            raise InputError(f"score kind must be one of {KINDS}, got {kind!r}", field="kind")
        return kind
    if metric != "score":
        return "binary"
    declared = (results_a.get("score_kind"), results_b.get("score_kind"))
    if declared[0] != declared[1]:
        raise InputError(f"runs disagree on score_kind: {run_a} declares {declared[0]!r}, {run_b} declares {declared[1]!r} "
                         "(compare runs of one benchmark, or pass --kind)", path=str(run_b), field="score_kind")
    found = declared[0] or "binary"
    if found not in KINDS:
        raise InputError(f"unknown score_kind {found!r} (expected one of {KINDS})", path=str(run_a), field="score_kind")
    return found


def _check_binary(run: Any, samples: list[dict], metric: str) -> None:
    for s in samples:
        value = s.get(metric)
        if value is not None and value not in (0, 1):
            raise InputError(f"sample {s.get('id')!r} has {metric} = {value!r}, not 0/1; a loss-scored run must declare "
                             '"score_kind": "loss" in results.json (or pass --kind loss)', path=str(run), field=metric)


def _loss_value(value: Any) -> float | None:
    """A finite loss, or None for a format failure (null, NaN, ±inf, not a number)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _per_instance(samples: list[dict], metric: str, aggregate: str, key: str = "id") -> dict[str, dict]:
    """instance -> {"score": loss or None, "rows": k, "fields": first row}; rows of one instance (same `key`: the
    id, or the field results.json names in `score_instance_key`, e.g. EPSBench's runs s1..s3) fold by `aggregate` (null = +inf)."""
    grouped: dict[str, list[dict]] = {}
    for s in samples:
        grouped.setdefault(str(s.get(key, s["id"])), []).append(s)
    fold = stats.STATISTICS.get(aggregate)
    if fold is None:
        raise InputError(f"score_aggregate must be one of {sorted(stats.STATISTICS)}, got {aggregate!r}", field="score_aggregate")
    out = {}
    for iid, rows in grouped.items():
        values = [_loss_value(r.get(metric)) for r in rows]
        folded = float(fold([math.inf if v is None else v for v in values]))
        out[iid] = {"score": folded if math.isfinite(folded) else None, "rows": len(rows), "null_rows": values.count(None), "fields": rows[0]}
    return out


def _compare_losses(run_a, run_b, results_a: dict, results_b: dict, samples_a: list[dict], samples_b: list[dict],
                    by: Sequence[str] | None, n_boot: int, seed: int, metric: str, cluster: str | None = None) -> dict[str, Any]:
    aggregate = results_b.get("score_aggregate") or results_a.get("score_aggregate") or "median"
    key = results_b.get("score_instance_key") or results_a.get("score_instance_key") or "id"
    a, b = _per_instance(samples_a, metric, aggregate, key), _per_instance(samples_b, metric, aggregate, key)
    ids = [i for i in a if i in b]
    if by is None:
        by = results_b.get("group_by", results_a.get("group_by", []))
    by = [k for k in by if any(k in a[i]["fields"] or k in b[i]["fields"] for i in ids)]
    release = "epsbench" in (results_a.get("benchmark"), results_b.get("benchmark"))  # + the release's own paired test
    rows = [_loss_row({}, ids, a, b, n_boot, seed, cluster, release)]
    if release and isinstance(results_a.get("instance_pde"), dict) and isinstance(results_b.get("instance_pde"), dict):
        # over the release's whole instance grid, as main_tables pairs P[a], P[b] over GRID: an instance or run a side
        # has no record of is +inf there (results.json's instance_pde holds it, null = +inf); the folded samples do not
        grid = {**results_a["instance_pde"], **results_b["instance_pde"]}
        side = lambda r: {i: {"score": r["instance_pde"].get(i)} for i in grid}  # noqa: E731
        rows[0].update(_release_paired(sorted(grid), side(results_a), side(results_b)))
    for depth in range(1, len(by) + 1):  # e.g. task, then task × level
        keys = tuple(by[:depth])
        groups: dict[tuple, list[str]] = {}
        for i in ids:
            groups.setdefault(tuple(b[i]["fields"].get(k, a[i]["fields"].get(k)) for k in keys), []).append(i)
        for group in sorted(groups, key=lambda g: tuple(str(x) for x in g)):
            rows.append(_loss_row(dict(zip(keys, group)), groups[group], a, b, n_boot, seed, cluster, release))
    side = lambda d: {"samples": sum(v["rows"] for v in d.values()), "null_samples": sum(v["null_rows"] for v in d.values()),  # noqa: E731
                      "instances": len(d), "null_instances": sum(v["score"] is None for v in d.values())}
    excluded = [{"id": i, "a": a[i]["score"], "b": b[i]["score"]} for i in ids if a[i]["score"] is None or b[i]["score"] is None]
    return {"run_a": str(run_a), "run_b": str(run_b), "metric": metric, "score_kind": "loss", "ci_method": _ci_method(cluster),
            "score_name": results_b.get("score_name") or results_a.get("score_name") or metric, "score_aggregate": aggregate,
            "lower_is_better": True, "n_paired": len(ids), "only_a": len(a) - len(ids), "only_b": len(b) - len(ids),
            "format_failures": {"a": side(a), "b": side(b)}, "excluded_pairs": excluded, "rows": rows}


def _ci_method(cluster: str | None) -> str:
    return f"cluster bootstrap over `{cluster}` (whole clusters resampled)" if cluster else "paired bootstrap over items"


def _delta(xa, xb, clusters: list | None, n_boot: int, seed: int, statistic: str = "mean") -> stats.Estimate:
    """Δ = b - a with its 95% CI: paired bootstrap over items, or over whole clusters when `clusters` is given."""
    if clusters is None:
        return stats.paired_bootstrap(xa, xb, n_boot=n_boot, seed=seed, statistic=statistic)
    diff = np.asarray(xb, dtype=float) - np.asarray(xa, dtype=float)
    est = stats.cluster_bootstrap(diff, [str(c) for c in clusters], statistic, n_boot=n_boot, seed=seed)
    return stats.Estimate(est.value, est.ci_low, est.ci_high, est.n)


def _clusters(ids: list[str], a: dict, b: dict, cluster: str | None, fields=lambda s: s) -> list | None:
    if cluster is None:
        return None
    values = [fields(b[i]).get(cluster, fields(a[i]).get(cluster)) for i in ids]
    missing = [i for i, v in zip(ids, values) if v is None]
    if missing:
        raise InputError(f"--cluster {cluster}: sample {missing[0]!r} has no {cluster!r} field ({len(missing)} such samples)", field="--cluster")
    return values


def _loss_row(group: dict, ids: list[str], a: dict, b: dict, n_boot: int, seed: int, cluster: str | None = None,
              release: bool = False) -> dict[str, Any]:
    used = [i for i in ids if a[i]["score"] is not None and b[i]["score"] is not None]
    xa = np.array([a[i]["score"] for i in used], dtype=float)
    xb = np.array([b[i]["score"] for i in used], dtype=float)
    clusters = _clusters(used, a, b, cluster, fields=lambda s: s["fields"])
    mean = _delta(xa, xb, clusters, n_boot, seed)
    median = _delta(xa, xb, clusters, n_boot, seed, statistic="median")
    statistic, p_value = stats.wilcoxon_signed_rank(xa, xb) if used else (float("nan"), float("nan"))
    nan = float("nan")
    return {"group": group, "n": len(ids), "n_used": len(used),
            "null_a": sum(a[i]["score"] is None for i in ids), "null_b": sum(b[i]["score"] is None for i in ids),
            "mean_a": float(xa.mean()) if used else nan, "mean_b": float(xb.mean()) if used else nan,
            "median_a": float(np.median(xa)) if used else nan, "median_b": float(np.median(xb)) if used else nan,
            "delta": mean.value, "ci_low": mean.ci_low, "ci_high": mean.ci_high,
            "median_delta": median.value, "median_ci_low": median.ci_low, "median_ci_high": median.ci_high,
            "p_value": p_value, "wilcoxon_statistic": statistic,
            "b_lower": int((xb < xa).sum()), "b_higher": int((xb > xa).sum()), "ties": int((xb == xa).sum()),
            **_with_failures(ids, a, b), **(_release_paired(ids, a, b) if release else {})}


def _release_paired(ids: list[str], a: dict, b: dict) -> dict[str, Any]:
    """EPSBench's own paired comparison (the release's common.paired, §5.4 "paired PDE … [+0.019, +0.047]"): a format
    failure is +inf, inf-inf pairs dropped, median of the finite B − A differences with the release's 90% bootstrap CI
    (random.Random(0), 10,000 medians) and the two-sided sign test over wins and losses (ties excluded)."""
    from ledgerlm.evaluate.epsbench.scoring import paired

    inf = lambda s: math.inf if s is None else s  # noqa: E731
    r = paired({i: inf(b[i]["score"]) for i in ids}, {i: inf(a[i]["score"]) for i in ids}, ids)
    return {"release_median_delta": r["median_diff"], "release_ci90_low": r["ci"][0], "release_ci90_high": r["ci"][1],
            "release_n_diffs": r["n_diffs"], "release_b_wins": r["wins"], "release_b_losses": r["losses"], "release_sign_p": r["sign_test_p"]}


def _with_failures(ids: list[str], a: dict, b: dict) -> dict[str, Any]:
    """Wins and losses of B over every paired instance, a format failure (null score) counting as a loss to a run that
    answered (both failed: a tie), and the two-sided sign-test p over them: EPSBench's own paired comparison with the
    consensus counts a failure as a loss, where the statistics above leave such pairs out (helper audit of the scorers)."""
    from scipy.stats import binomtest

    wins = sum(1 for i in ids if b[i]["score"] is not None and (a[i]["score"] is None or b[i]["score"] < a[i]["score"]))
    losses = sum(1 for i in ids if a[i]["score"] is not None and (b[i]["score"] is None or b[i]["score"] > a[i]["score"]))
    p = float(binomtest(wins, wins + losses).pvalue) if wins + losses else float("nan")
    return {"b_wins_failures_lose": wins, "b_losses_failures_lose": losses, "sign_p_failures_lose": p}


def _row(group: dict, ids: list[str], a: dict, b: dict, n_boot: int, seed: int, metric: str, cluster: str | None = None) -> dict[str, Any]:
    xa = [int(a[i].get(metric) or 0) for i in ids]
    xb = [int(b[i].get(metric) or 0) for i in ids]
    delta = _delta(xa, xb, _clusters(ids, a, b, cluster), n_boot, seed)
    p_value, b01, b10 = stats.mcnemar_exact(xa, xb)
    n = len(ids)
    return {"group": group, "n": n, "k_a": sum(xa), "k_b": sum(xb),
            "acc_a": sum(xa) / n if n else float("nan"), "acc_b": sum(xb) / n if n else float("nan"),
            "delta": delta.value, "ci_low": delta.ci_low, "ci_high": delta.ci_high, "p_value": p_value, "b01": b01, "b10": b10}


def to_markdown(result: dict[str, Any]) -> str:
    if result.get("score_kind") == "loss":
        return _loss_markdown(result)
    lines = [f"# {result['metric']}: {result['run_b']} vs {result['run_a']}", "",
             f"{result['n_paired']} paired samples (only in A: {result['only_a']}, only in B: {result['only_b']}). "
             f"A and B: accuracy (right / n). Δ = B − A; 95% CI by {result.get('ci_method', 'paired bootstrap')}; p by McNemar's exact test. "
             "b01 = right only in B, b10 = right only in A.", "",
             "| group | n | A | B | Δ (pts) | 95% CI | p | b01 | b10 |", "|---|---:|---:|---:|---:|---|---:|---:|---:|"]
    for r in result["rows"]:
        name = " · ".join(f"{k}={v}" for k, v in r["group"].items()) or "**all**"
        lines.append(f"| {name} | {r['n']} | {r['acc_a']:.1%} ({r['k_a']}/{r['n']}) | {r['acc_b']:.1%} ({r['k_b']}/{r['n']}) | {100 * r['delta']:+.1f} | "
                     f"[{100 * r['ci_low']:+.1f}, {100 * r['ci_high']:+.1f}] | {r['p_value']:.3g} | {r['b01']} | {r['b10']} |")
    return "\n".join(lines) + "\n"


def _loss_markdown(result: dict[str, Any]) -> str:
    fa, fb = result["format_failures"]["a"], result["format_failures"]["b"]
    g = lambda v: f"{v:.4g}"  # noqa: E731
    ci = lambda lo, hi: f"[{lo:+.4g}, {hi:+.4g}]"  # noqa: E731
    lines = [f"# {result['score_name']} (lower is better): {result['run_b']} vs {result['run_a']}", "",
             f"{result['n_paired']} paired instances (only in A: {result['only_a']}, only in B: {result['only_b']}); "
             f"repeated ids folded by {result['score_aggregate']}. **Lower is better**: Δ = B − A, negative = B better. "
             f"95% CIs by {result.get('ci_method', 'paired bootstrap over items')}; p by the Wilcoxon signed-rank test. "
             f"Format failures (null score): A {fa['null_samples']} of {fa['samples']} samples ({fa['null_instances']} of {fa['instances']} instances), "
             f"B {fb['null_samples']} of {fb['samples']} samples ({fb['null_instances']} of {fb['instances']} instances); "
             f"{len(result['excluded_pairs'])} pairs with a null side are left out of the statistics; every mean, median and Δ "
             "is over the `used` pairs (n=… beside each).", "",
             "Last two columns: B's wins / losses over all n paired instances with a format failure counted as a loss to the "
             "run that answered (EPSBench's convention), and the sign-test p over them.", "",
             "| group | n | used | null A | null B | A mean | B mean | Δ mean | 95% CI | A median | B median | Δ median | 95% CI | p | B lower | B higher | B wins / losses (failures lose) | sign p |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|"]
    for r in result["rows"]:
        name = " · ".join(f"{k}={v}" for k, v in r["group"].items()) or "**all**"
        u = f" (n={r['n_used']})"
        lines.append(f"| {name} | {r['n']} | {r['n_used']} | {r['null_a']} | {r['null_b']} | {g(r['mean_a'])}{u} | {g(r['mean_b'])}{u} | "
                     f"{r['delta']:+.4g}{u} | {ci(r['ci_low'], r['ci_high'])} | {g(r['median_a'])}{u} | {g(r['median_b'])}{u} | "
                     f"{r['median_delta']:+.4g}{u} | {ci(r['median_ci_low'], r['median_ci_high'])} | {r['p_value']:.3g} | {r['b_lower']} | {r['b_higher']} | "
                     f"{r['b_wins_failures_lose']} / {r['b_losses_failures_lose']} | {r['sign_p_failures_lose']:.3g} |")
    if "release_sign_p" in result["rows"][0]:
        lines += ["", "EPSBench's own paired comparison (the release's `common.paired`): format failure = +inf, pairs failed on both "
                  "sides dropped, median of the finite B − A differences with the release's 90% bootstrap CI (random.Random(0), "
                  "10,000 resamples), B's wins / losses with ties excluded, and the sign-test p.", "",
                  "| group | finite pairs | Δ median | 90% CI | B wins | B losses | sign p |", "|---|---:|---:|---|---:|---:|---:|"]
        for r in result["rows"]:
            name = " · ".join(f"{k}={v}" for k, v in r["group"].items()) or "**all**"
            delta = "—" if r["release_median_delta"] is None else f"{r['release_median_delta']:+.4g}"
            ci90 = "—" if r["release_ci90_low"] is None else ci(r["release_ci90_low"], r["release_ci90_high"])
            lines.append(f"| {name} | {r['release_n_diffs']} | {delta} | {ci90} | {r['release_b_wins']} | {r['release_b_losses']} | {r['release_sign_p']:.3g} |")
    if result["excluded_pairs"]:
        shown = result["excluded_pairs"][:LISTED_EXCLUSIONS]
        lines += ["", "Excluded pairs (null score = format failure): " + ", ".join(
            f"{e['id']} ({_null_sides(e)} null)"
            for e in shown) + (f", … and {len(result['excluded_pairs']) - len(shown)} more (see --json)" if len(result["excluded_pairs"]) > len(shown) else "")]
    return "\n".join(lines) + "\n"


def _null_sides(pair: dict) -> str:
    return " and ".join(side.upper() for side in ("a", "b") if pair[side] is None)


def task_folders(run: str | Path) -> dict[str, Path]:
    """task -> folder of a multi-task run (the runner's OUT/<task>/, listed under `task_folders` in OUT/results.json); {} otherwise."""
    path = Path(run) / "results.json"
    if not path.is_file() or (Path(run) / "samples.jsonl").is_file():
        return {}
    try:
        listed = json.loads(path.read_text(encoding="utf-8")).get("task_folders") or {}
    except (json.JSONDecodeError, AttributeError):
        return {}
    return {task: Path(run) / folder for task, folder in listed.items()}


def compare_multitask(run_a: str | Path, run_b: str | Path, **kwargs: Any) -> list[dict[str, Any]]:
    """One comparison per task both multi-task runs hold (e.g. macrolens_t1..t7); a task in one run only is an error."""
    a, b = task_folders(run_a), task_folders(run_b)
    if set(a) != set(b):
        raise InputError(f"the runs hold different tasks: only in A {sorted(set(a) - set(b))}, only in B {sorted(set(b) - set(a))}",
                         path=str(run_b), field="task_folders")
    return [{**compare_runs(a[task], b[task], **kwargs), "task": task} for task in sorted(a)]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ledgerlm compare", description=__doc__.splitlines()[0])
    parser.add_argument("run_a", help="baseline run folder (e.g. before training)")
    parser.add_argument("run_b", help="candidate run folder (e.g. after training)")
    parser.add_argument("--out", help="markdown file (default RUN_B/compare_vs_<A>.md)")
    parser.add_argument("--json", help="also write the numbers as JSON here")
    parser.add_argument("--by", default=None, help="sample fields to group by, comma-separated "
                        "(default: results.json group_by for losses, paradigm,axis,hint for accuracies)")
    parser.add_argument("--metric", default="score", help="field of samples.jsonl: score | positional (0/1)")
    parser.add_argument("--kind", choices=KINDS, default=None, help="override the runs' declared score_kind")
    parser.add_argument("--n-boot", type=int, default=stats.N_BOOT)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cluster", default=None, metavar="FIELD",
                        help="sample field whose values are clusters (e.g. company, or an item id shared by its variants): "
                             "Δ CIs by cluster bootstrap, whole clusters resampled (default: items are independent)")
    args = parser.parse_args(argv)
    by = None if args.by is None else [k for k in args.by.split(",") if k]
    kwargs = {"by": by, "n_boot": args.n_boot, "seed": args.seed, "metric": args.metric, "kind": args.kind, "cluster": args.cluster}
    if task_folders(args.run_a) or task_folders(args.run_b):  # multi-task runs (OUT/<task>/): one table per task
        result: Any = compare_multitask(args.run_a, args.run_b, **kwargs)
        markdown = "\n".join(f"## {r['task']}\n\n" + to_markdown(r) for r in result)
    else:
        result = compare_runs(args.run_a, args.run_b, **kwargs)
        markdown = to_markdown(result)
    print(markdown, end="")
    atomic_write_text(args.out or Path(args.run_b) / f"compare_vs_{Path(args.run_a).name}.md", markdown)
    if args.json:
        atomic_write_text(args.json, json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
