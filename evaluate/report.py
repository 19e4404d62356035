"""`ledgerlm report RUN… --out DIR`: a markdown report and PNG plots for one or more runs.

    ledgerlm report runs/before runs/after --out runs/report

Plots (matplotlib, Agg backend, one PNG each):
- `hint_vs_nohint.png`: accuracy with and without the formula hint per capability axis, one panel
  per paradigm, one bar pair per run — the paper's Tables 11/12.
- `single_vs_table.png`: accuracy per paradigm × hint for each run — the paper's Table 3.
- `deltas.png` (two or more runs): each later run minus the first, per paradigm × hint, with
  paired bootstrap CIs (McNemar p in the markdown), n and p in each label.
Every bar carries its 95% CI as an error bar and its n above it (`stats.score_ci`: Wilson score
intervals for accuracies, so a 32/32 group is [89.3%, 100%], not a zero-width [100%, 100%]).
Runs whose results.json declare `"score_kind": "loss"` (EPSBench, MacroLens; lower is better) get
instead a summary of the loss (mean with 95% bootstrap CI, median, format failures), `losses.png`
(mean loss per group of the runs' `group_by` fields, one panel per value of the first) and
`deltas.png` of the mean loss difference (Wilcoxon p in the markdown; see `ledgerlm compare`).

Multi-task runs of the harness (OUT/<task>/ folders) get one report per task under OUT/<task>/ and an
index OUT/report.md.

`--paper-tables` (FinIndices): the runs are repeated runs of ONE model (the paper uses 3) and report.md
gets the paper's layouts, each cell the mean ± std over runs of the per-run accuracy (%):
Table 3 (rows: hint setting × paradigm; columns: split) and Tables 11/12 (one per hint setting; rows:
paradigm; columns: capability axis). std is numpy's (ddof=0) unless `--std-ddof 1`; the paper does not say.

    ledgerlm report runs/s1 runs/s2 runs/s3 --out runs/report --paper-tables
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ledgerlm.atomic import check_folder, make_folder
from ledgerlm.errors import InputError
from ledgerlm.evaluate import stats
from ledgerlm.evaluate.compare import _loss_value, compare_runs, score_kind, task_folders, to_markdown
from ledgerlm.evaluate.runfiles import atomic_write_text, read_run


def _pyplot():
    """matplotlib.pyplot on the Agg backend, imported when a plot is drawn (`ledgerlm` commands import no heavy package at start-up)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    return matplotlib.pyplot

HINT_LABEL = {True: "with hint", False: "no hint", None: "hint n/a"}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ledgerlm report", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="run folders; the first is the baseline for deltas")
    parser.add_argument("--out", required=True, help="folder for report.md and the PNGs")
    parser.add_argument("--n-boot", type=int, default=stats.N_BOOT,
                        help=f"bootstrap resamples for the plotted CIs (default {stats.N_BOOT}, as `ledgerlm eval`: same CIs)")
    parser.add_argument("--paper-tables", action="store_true", help="FinIndices: runs are repeats of one model; add Table 3 / 11 / 12 layouts")
    parser.add_argument("--std-ddof", type=int, default=0, help="ddof of the std over runs in --paper-tables (default 0)")
    args = parser.parse_args(argv)
    check_folder(args.out, "--out folder")  # a file (or a file above it): one error before any work
    folders = [task_folders(r) for r in args.runs]
    if any(folders):  # multi-task harness runs (OUT/<task>/): one report per task under OUT/<task>/, and an index
        return _multitask_report(args, folders)
    return _report(args.runs, Path(args.out), args)


def _multitask_report(args: argparse.Namespace, folders: list[dict[str, Path]]) -> int:
    tasks = sorted(set.intersection(*(set(f) for f in folders)))
    if not tasks or any(not f for f in folders):
        raise InputError("report: give either multi-task runs holding the same tasks or single-task run folders",
                         path=str(args.runs[0]), field="task_folders")
    out = Path(args.out)
    for task in tasks:
        _report([f[task] for f in folders], out / task, args, title=f"{task}: ")
    index = [f"# Evaluation report: {', '.join(Path(r).name for r in args.runs)}", ""] + [f"- [{t}]({t}/report.md)" for t in tasks]
    atomic_write_text(out / "report.md", "\n".join(index) + "\n")
    print(f"wrote {out / 'report.md'} (index of {len(tasks)} task reports)")
    return 0


def _report(run_paths: list, out: Path, args: argparse.Namespace, title: str = "") -> int:
    make_folder(out, "--out folder")
    args.runs = [str(r) for r in run_paths]
    runs = [(Path(r).name if not title else Path(r).parent.name, *read_run(r)) for r in args.runs]
    kind = score_kind(runs[0][1], runs[0][1], args.runs[0], args.runs[0])
    for path, (_, results, _) in zip(args.runs[1:], runs[1:]):
        score_kind(runs[0][1], results, args.runs[0], path)  # all runs must score the same way
    sections = [f"# {title}Evaluation report: {', '.join(name for name, _, _ in runs)}", ""]
    if kind == "loss":
        sections += _loss_summary_table(runs, args.n_boot)
        plot_losses(runs, out / "losses.png", args.n_boot)
        sections += ["", "![losses](losses.png)", ""]
    else:
        sections += _summary_table(runs, args.n_boot)
        plot_hint_vs_nohint(runs, out / "hint_vs_nohint.png", args.n_boot)
        plot_single_vs_table(runs, out / "single_vs_table.png", args.n_boot)
        sections += ["", "![hint vs no hint](hint_vs_nohint.png)", "", "![single vs table](single_vs_table.png)", ""]
    if args.paper_tables:
        sections += [finindices_paper_tables([samples for _, _, samples in runs], ddof=args.std_ddof), ""]
    if len(runs) > 1 and not args.paper_tables:
        comparisons = [compare_runs(args.runs[0], r, n_boot=args.n_boot) for r in args.runs[1:]]
        plot_deltas(comparisons, [name for name, _, _ in runs], out / "deltas.png")
        sections += ["![deltas](deltas.png)", ""] + [to_markdown(c) for c in comparisons]
    atomic_write_text(out / "report.md", "\n".join(sections) + "\n")
    print(f"wrote {out / 'report.md'} and {len(list(out.glob('*.png')))} plots")
    return 0


def _mean_std_cell(runs: list[list[dict]], ddof: int, **where: Any) -> str:
    """'mean ± std (n)' of the per-run accuracy (%) of the items matching `where`; '—' when no run has any."""
    accs, n = [], 0
    for samples in runs:
        scores = [s["score"] for s in samples if all(s.get(k) == v for k, v in where.items())]
        if scores:
            accs.append(100.0 * sum(scores) / len(scores))
            n = len(scores)
    if not accs:
        return "—"
    std = float(np.std(accs, ddof=ddof)) if len(accs) > ddof else float("nan")
    return f"{np.mean(accs):.2f} ± {std:.2f} (n={n}, runs={len(accs)})"


def finindices_paper_tables(runs: list[list[dict]], ddof: int = 0) -> str:
    """Table 3 (hint × paradigm by split) and Tables 11/12 (paradigm by axis, per hint), mean ± std over runs."""
    items = [s for samples in runs for s in samples]
    splits = sorted({str(s.get("split")) for s in items if s.get("split") is not None}) or ["all"]
    axes = sorted({s.get("axis") for s in items if s.get("axis") is not None})
    paradigms = [p for p in ("single", "table") if any(s.get("paradigm") == p for s in items)]
    split_key = (lambda sp: {} if sp == "all" else {"split": sp})  # noqa: E731
    out = ["## Table 3 layout: accuracy (%) mean ± std over runs", "",
           "| hint | paradigm | " + " | ".join(splits) + " |", "|---|---|" + "---|" * len(splits)]
    for hint in (True, False):
        for par in paradigms:
            out.append(f"| {HINT_LABEL[hint]} | {par} | " + " | ".join(_mean_std_cell(runs, ddof, hint=hint, paradigm=par, **split_key(sp))
                                                                      for sp in splits) + " |")
    for hint, table in ((True, "11"), (False, "12")):
        out += ["", f"## Table {table} layout ({HINT_LABEL[hint]}): accuracy (%) by capability axis, mean ± std over runs", "",
                "| paradigm | " + " | ".join(map(str, axes)) + " |", "|---|" + "---|" * len(axes)]
        for par in paradigms:
            out.append(f"| {par} | " + " | ".join(_mean_std_cell(runs, ddof, hint=hint, paradigm=par, axis=ax) for ax in axes) + " |")
    return "\n".join(out)


def _acc(samples: list[dict], n_boot: int, **where: Any) -> stats.Estimate:
    """Accuracy of the matching samples with its 95% CI (Wilson for 0/1 scores; `n_boot` only for other scores)."""
    scores = [s["score"] or 0 for s in samples if all(s.get(k) == v for k, v in where.items())]
    return stats.score_ci(scores, n_boot=n_boot)


def _summary_table(runs: list, n_boot: int) -> list[str]:
    lines = ["| run | model | n | accuracy [95% Wilson CI] | positional | parse fail | format fail | completion tokens | time (s) |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|"]
    for name, results, samples in runs:
        m = results.get("metrics", {})
        acc = _acc(samples, n_boot)
        positional = sum(s.get("positional", 0) or 0 for s in samples) / max(1, len(samples))
        lines.append(f"| {name} | {results.get('model')} | {len(samples)} | {acc.value:.1%} [{acc.ci_low:.1%}, {acc.ci_high:.1%}] | "
                     f"{positional:.1%} | {m.get('parse_failure_rate', 0):.1%} | {m.get('format_failure_rate', 0):.1%} | "
                     f"{results.get('tokens', {}).get('completion', 0)} | {results.get('time', {}).get('wall_s', 0):.1f} |")
    return lines


def _losses(samples: list[dict], **where: Any) -> list[float]:
    return [v for s in samples if all(s.get(k) == w for k, w in where.items()) if (v := _loss_value(s.get("score"))) is not None]


def _loss_summary_table(runs: list, n_boot: int) -> list[str]:
    name = runs[0][1].get("score_name") or "score"
    lines = [f"Score: {name}, **lower is better**; format failures are samples with a null score (left out of the mean).", "",
             f"| run | model | n | format failures | mean {name} [95% bootstrap CI] (n) | median | time (s) |", "|---|---|---:|---:|---|---:|---:|"]
    for run, results, samples in runs:
        values = _losses(samples)
        est = stats.bootstrap_ci(values, n_boot=n_boot)
        median = float(np.median(values)) if values else float("nan")
        lines.append(f"| {run} | {results.get('model')} | {len(samples)} | {len(samples) - len(values)} | "
                     f"{est.value:.4g} [{est.ci_low:.4g}, {est.ci_high:.4g}] (n={est.n}) | {median:.4g} | {results.get('time', {}).get('wall_s', 0):.1f} |")
    return lines


def plot_losses(runs: list, path: Path, n_boot: int):
    """Mean loss with 95% bootstrap CIs per group; one panel per value of the first group_by field (scales differ by task)."""
    plt = _pyplot()
    by = list(runs[-1][1].get("group_by") or [])
    by = [k for k in by if any(k in s for _, _, ss in runs for s in ss)]
    panel_key, bar_keys = (by[0], by[1:]) if by else (None, [])
    panels_of = sorted({s.get(panel_key) for _, _, ss in runs for s in ss}, key=str) if panel_key else [None]
    fig, panels = plt.subplots(1, len(panels_of), figsize=(max(5, 4 * len(panels_of)), 4.5), squeeze=False)
    colors = plt.get_cmap("tab10").colors
    width = 0.8 / len(runs)
    for ax, value in zip(panels[0], panels_of):
        where = {panel_key: value} if panel_key else {}
        bars = sorted({tuple(s.get(k) for k in bar_keys) for _, _, ss in runs for s in ss if all(s.get(k) == v for k, v in where.items())}, key=str)
        for r, (name, _, samples) in enumerate(runs):
            estimates = [stats.bootstrap_ci(_losses(samples, **where, **dict(zip(bar_keys, bar))), n_boot=n_boot) for bar in bars]
            _bars(ax, [x - 0.4 + width * (r + 0.5) for x in range(len(bars))], estimates, width, name, colors[r % 10])
        ax.set_xticks(range(len(bars)), [" ".join(str(v) for v in bar) or "all" for bar in bars])
        ax.set_title(f"{panel_key}={value}" if panel_key else "all instances")
        ax.set_ylabel(f"mean {runs[0][1].get('score_name') or 'score'} (lower is better)")
        ax.grid(axis="y", alpha=0.3)
    panels[0][0].legend(fontsize=8)
    fig.suptitle("Mean loss per group (95% bootstrap CI, n above each bar; lower is better)")
    return _save(fig, path)


def _save(fig, path: Path):
    """Write the PNG and release pyplot's handle; the Figure (its bars, error bars, n labels) is returned for tests."""
    plt = _pyplot()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return fig


def _bars(ax, centers, estimates, width, label, color):
    """Bars with 95% CI error bars and `n=` above each (an empty group: no bar, `n=0`)."""
    values = [e.value if e.n else 0.0 for e in estimates]
    errors = [[max(0.0, e.value - e.ci_low) if e.n else 0.0 for e in estimates],
              [max(0.0, e.ci_high - e.value) if e.n else 0.0 for e in estimates]]
    ax.bar(centers, values, width, yerr=errors, capsize=3, label=label, color=color, edgecolor="black", linewidth=0.5)
    for x, e, top in zip(centers, estimates, errors[1]):
        y = (e.value + top) if e.n else 0.0
        ax.annotate(f"n={e.n}", (x, y), xytext=(0, 2), textcoords="offset points", ha="center", va="bottom",
                    fontsize=6, rotation=90 if width < 0.25 else 0)


def plot_hint_vs_nohint(runs: list, path: Path, n_boot: int):
    plt = _pyplot()
    paradigms = sorted({s.get("paradigm") for _, _, ss in runs for s in ss}, key=str)
    axes_names = sorted({s.get("axis") for _, _, ss in runs for s in ss}, key=str)
    fig, panels = plt.subplots(1, len(paradigms), figsize=(6 * len(paradigms), 4.5), squeeze=False, sharey=True)
    colors = plt.get_cmap("tab20").colors
    slots = [(r, h) for r in range(len(runs)) for h in (True, False)]
    width = 0.8 / len(slots)
    for ax, paradigm in zip(panels[0], paradigms):
        for k, (r, hint) in enumerate(slots):
            name, _, samples = runs[r]
            estimates = [_acc(samples, n_boot, paradigm=paradigm, axis=a, hint=hint) for a in axes_names]
            centers = [x - 0.4 + width * (k + 0.5) for x in range(len(axes_names))]
            _bars(ax, centers, estimates, width, f"{name}: {HINT_LABEL[hint]}", colors[(2 * r + (0 if hint else 1)) % 20])
        ax.set_title(f"{paradigm} items")
        ax.set_xticks(range(len(axes_names)), [str(a) for a in axes_names], rotation=15)
        ax.set_ylim(0, 1.15)  # room for the n labels
        ax.set_ylabel("accuracy")
        ax.grid(axis="y", alpha=0.3)
    handles, labels = panels[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(4, len(labels)), fontsize=8, frameon=False)
    fig.suptitle("Accuracy with vs without formula hint, per capability axis (95% Wilson CI, n above each bar)")
    fig.tight_layout(rect=(0, 0.06 + 0.04 * ((len(labels) - 1) // 4), 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return fig


def plot_single_vs_table(runs: list, path: Path, n_boot: int):
    plt = _pyplot()
    groups = [(p, h) for p in ("single", "table") for h in (True, False)]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    width = 0.8 / len(runs)
    colors = plt.get_cmap("tab10").colors
    for r, (name, _, samples) in enumerate(runs):
        estimates = [_acc(samples, n_boot, paradigm=p, hint=h) for p, h in groups]
        _bars(ax, [x - 0.4 + width * (r + 0.5) for x in range(len(groups))], estimates, width, name, colors[r % 10])
    ax.set_xticks(range(len(groups)), [f"{p}\n{HINT_LABEL[h]}" for p, h in groups])
    ax.set_ylim(0, 1.15)  # room for the n labels
    ax.set_ylabel("accuracy")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Single vs table items, with and without hint (95% Wilson CI, n above each bar)")
    return _save(fig, path)


def plot_deltas(comparisons: list[dict], names: list[str], path: Path):
    plt = _pyplot()
    loss = comparisons[0].get("score_kind") == "loss"
    scale = 1 if loss else 100  # losses in their own unit, accuracies in points
    shown = [[row for row in c["rows"] if len(row["group"]) <= (1 if loss else 2)] for c in comparisons]  # overall + first level
    fig, ax = plt.subplots(figsize=(9, 1.6 + 0.4 * sum(map(len, shown))))
    labels, y = [], 0
    colors = plt.get_cmap("tab10").colors
    for k, rows in enumerate(shown):
        for row in rows:
            delta = scale * row["delta"]
            err = [[max(0.0, delta - scale * row["ci_low"])], [max(0.0, scale * row["ci_high"] - delta)]]
            ax.errorbar([delta], [y], xerr=err, fmt="o", color=colors[(k + 1) % 10], capsize=4)
            group = ", ".join(f"{v if k2 != 'hint' else HINT_LABEL.get(v, v)}" for k2, v in row["group"].items()) or "all"
            labels.append(f"{names[k + 1]} − {names[0]}: {group} (n={row.get('n_used', row['n'])}, p={row['p_value']:.2g})")
            y += 1
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"mean {comparisons[0]['score_name']} delta (lower is better), paired bootstrap 95% CI" if loss
                  else "accuracy delta (points), paired bootstrap 95% CI")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title("Before/after deltas (n = paired items in each label)")
    return _save(fig, path)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
