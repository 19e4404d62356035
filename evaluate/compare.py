"""`ledgerlm compare RUN_A RUN_B`: paired accuracy deltas (B − A) with significance.

    ledgerlm compare runs/before runs/after --out runs/after/compare.md

Samples are paired by `id` (only ids present in both runs count; the rest are reported). For the
whole set, each paradigm × hint, and each paradigm × axis × hint: n, accuracy of A and B, the
delta with a paired bootstrap 95% CI (items resampled, pairs kept together) and McNemar's exact
p-value (binomial test on the discordant pairs). A markdown table goes to stdout and to `--out`
(default: RUN_B/compare_vs_<name of A>.md); `--json` writes the same numbers as JSON.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence

from ledgerlm.evaluate import stats
from ledgerlm.evaluate.runfiles import atomic_write_text, read_run


def compare_runs(run_a: str | Path, run_b: str | Path, *, by: Sequence[str] = ("paradigm", "axis", "hint"),
                 n_boot: int = stats.N_BOOT, seed: int = 0, metric: str = "score") -> dict[str, Any]:
    """Paired comparison of two run folders (see module docstring)."""
    _, samples_a = read_run(run_a)
    _, samples_b = read_run(run_b)
    a = {s["id"]: s for s in samples_a}
    b = {s["id"]: s for s in samples_b}
    ids = [i for i in a if i in b]
    levels = ([(by[0], by[-1])] if len(by) > 2 else []) + ([tuple(by)] if by else [])  # paradigm × hint, then all keys
    rows = [_row({}, ids, a, b, n_boot, seed, metric)]
    for keys in levels:
        groups: dict[tuple, list[str]] = {}
        for i in ids:
            groups.setdefault(tuple(b[i].get(k, a[i].get(k)) for k in keys), []).append(i)
        for group in sorted(groups, key=lambda g: tuple(str(x) for x in g)):
            rows.append(_row(dict(zip(keys, group)), groups[group], a, b, n_boot, seed, metric))
    return {"run_a": str(run_a), "run_b": str(run_b), "metric": metric, "n_paired": len(ids),
            "only_a": len(a) - len(ids), "only_b": len(b) - len(ids), "rows": rows}


def _row(group: dict, ids: list[str], a: dict, b: dict, n_boot: int, seed: int, metric: str) -> dict[str, Any]:
    xa = [int(a[i].get(metric) or 0) for i in ids]
    xb = [int(b[i].get(metric) or 0) for i in ids]
    delta = stats.paired_bootstrap(xa, xb, n_boot=n_boot, seed=seed)
    p_value, b01, b10 = stats.mcnemar_exact(xa, xb)
    n = len(ids)
    return {"group": group, "n": n, "acc_a": sum(xa) / n if n else float("nan"), "acc_b": sum(xb) / n if n else float("nan"),
            "delta": delta.value, "ci_low": delta.ci_low, "ci_high": delta.ci_high, "p_value": p_value, "b01": b01, "b10": b10}


def to_markdown(result: dict[str, Any]) -> str:
    lines = [f"# {result['metric']}: {result['run_b']} vs {result['run_a']}", "",
             f"{result['n_paired']} paired samples (only in A: {result['only_a']}, only in B: {result['only_b']}). "
             "Δ = B − A; 95% CI by paired bootstrap; p by McNemar's exact test. "
             "b01 = right only in B, b10 = right only in A.", "",
             "| group | n | A | B | Δ (pts) | 95% CI | p | b01 | b10 |", "|---|---:|---:|---:|---:|---|---:|---:|---:|"]
    for r in result["rows"]:
        name = " · ".join(f"{k}={v}" for k, v in r["group"].items()) or "**all**"
        lines.append(f"| {name} | {r['n']} | {r['acc_a']:.1%} | {r['acc_b']:.1%} | {100 * r['delta']:+.1f} | "
                     f"[{100 * r['ci_low']:+.1f}, {100 * r['ci_high']:+.1f}] | {r['p_value']:.3g} | {r['b01']} | {r['b10']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ledgerlm compare", description=__doc__.splitlines()[0])
    parser.add_argument("run_a", help="baseline run folder (e.g. before training)")
    parser.add_argument("run_b", help="candidate run folder (e.g. after training)")
    parser.add_argument("--out", help="markdown file (default RUN_B/compare_vs_<A>.md)")
    parser.add_argument("--json", help="also write the numbers as JSON here")
    parser.add_argument("--by", default="paradigm,axis,hint", help="sample fields to group by, comma-separated")
    parser.add_argument("--metric", default="score", help="0/1 field of samples.jsonl: score | positional")
    parser.add_argument("--n-boot", type=int, default=stats.N_BOOT)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    result = compare_runs(args.run_a, args.run_b, by=[k for k in args.by.split(",") if k], n_boot=args.n_boot, seed=args.seed, metric=args.metric)
    markdown = to_markdown(result)
    print(markdown, end="")
    atomic_write_text(args.out or Path(args.run_b) / f"compare_vs_{Path(args.run_a).name}.md", markdown)
    if args.json:
        atomic_write_text(args.json, json.dumps(result, indent=2) + "\n")
    return 0
