"""Hint ablation: base and tuned model, with and without formula hints, in the FinIndices paper's layout.

    python recipes/hint_ablation.py --config recipes/configs/hint_ablation.yaml

Table 3 of the paper: accuracy per model for Single-/Table-Index with and without the formula hint
(the drop without it is the finding). Table 4: base vs SFT and the absolute improvement. Both models
answer the same items (each item in its hint and no-hint variant); `ledgerlm compare` adds paired
significance. Writes OUT/REPORT.md; finished evaluations are reused on a rerun.
"""
from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass
class AblationConfig:
    out_dir: str = field(default="runs/hint-ablation", metadata={"help": "everything the recipe writes"})
    data: str = field(default="runs/recipe-finindices-sft/data", metadata={"help": "synthesized dataset folder"})
    base_model: str = field(default="runs/recipe-finindices-sft/base-model", metadata={"help": "Hub id or folder"})
    tuned_model: str = field(default="runs/recipe-finindices-sft/sft", metadata={"help": "LoRA adapter or model folder"})
    split: str = field(default="test", metadata={"help": "dataset split to evaluate"})
    limit: int = field(default=0, metadata={"help": "first N items (0 = all)"})
    eval_args: list[str] = field(default_factory=list, metadata={"help": "extra ledgerlm eval flags"})


def run(*command: str) -> None:
    print("\n$ " + " ".join(shlex.quote(c) for c in command), flush=True)
    subprocess.run(command, cwd=REPO, check=True)


def accuracy(run_dir: Path) -> dict[tuple[str, bool], float]:
    """(paradigm, hint) -> accuracy in percent, from results.json."""
    metrics = json.loads((run_dir / "results.json").read_text())["metrics"]["by_paradigm_hint"]
    return {(c["paradigm"], c["hint"]): 100 * c["value"] for c in metrics}


def fmt(value: float | None, signed: bool = False) -> str:
    return "-" if value is None else (f"{value:+.2f}" if signed else f"{value:.2f}")


def table3(acc: dict[str, dict]) -> str:
    lines = ["| Model | Single w/ Hint | Single w/o Hint | Δ | Table w/ Hint | Table w/o Hint | Δ |", "|---|---|---|---|---|---|---|"]
    for name, a in acc.items():
        cells = []
        for paradigm in ("single", "table"):
            with_hint, without = a.get((paradigm, True)), a.get((paradigm, False))
            delta = None if with_hint is None or without is None else without - with_hint
            cells += [fmt(with_hint), fmt(without), fmt(delta, signed=True)]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def table4(base: dict, tuned: dict) -> str:
    columns = [("single", False), ("table", False), ("single", True), ("table", True)]
    header = "| Model | " + " | ".join(f"{p.title()}-Index ({'w/' if h else 'w/o'} Hint)" for p, h in columns) + " |"
    rows = [header, "|---|" + "---|" * len(columns)]
    rows.append("| Base | " + " | ".join(fmt(base.get(c)) for c in columns) + " |")
    rows.append("| SFT on Base | " + " | ".join(fmt(tuned.get(c)) for c in columns) + " |")
    deltas = [None if base.get(c) is None or tuned.get(c) is None else tuned[c] - base[c] for c in columns]
    rows.append("| Absolute Improvement (Δ) | " + " | ".join(fmt(d, signed=True) for d in deltas) + " |")
    return "\n".join(rows)


def main(cfg: AblationConfig) -> Path:
    out = (REPO / cfg.out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    tuned = Path(cfg.tuned_model)
    models = {
        "base": ["--model", f"hf:{cfg.base_model}"],
        "tuned": ["--model", f"hf:{cfg.base_model}", "--peft", str(tuned)] if (tuned / "adapter_config.json").is_file()
        else ["--model", f"hf:{cfg.tuned_model}"],
    }

    # 1. Each model answers every item in both variants (--both): with and without the formula hint
    limit = ["--limit", str(cfg.limit)] if cfg.limit else []
    for name, model in models.items():
        if not (out / name / "results.json").is_file():
            run("ledgerlm", "eval", "--benchmark", "finindices", *model, "--data", cfg.data, "--split", cfg.split,
                "--both", *limit, *cfg.eval_args, "--out", str(out / name))

    # 2. Paired base -> tuned deltas by paradigm x hint, and the plots
    run("ledgerlm", "compare", str(out / "base"), str(out / "tuned"), "--by", "paradigm,hint",
        "--out", str(out / "compare.md"), "--json", str(out / "compare.json"))
    run("ledgerlm", "report", str(out / "base"), str(out / "tuned"), "--out", str(out / "report"))

    # 3. The paper's tables
    acc = {name: accuracy(out / name) for name in models}
    report = out / "REPORT.md"
    report.write_text("\n\n".join([
        "# Hint ablation (FinIndices, accuracy %)",
        f"Data `{cfg.data}` split `{cfg.split}`{f' (first {cfg.limit} items)' if cfg.limit else ''}; "
        f"base `{cfg.base_model}`, tuned `{cfg.tuned_model}`.",
        "## Table 3 layout: with vs without the formula hint\n\n" + table3({"Base": acc["base"], "SFT on Base": acc["tuned"]}),
        "## Table 4 layout: improvement from SFT\n\n" + table4(acc["base"], acc["tuned"]),
        "## Paired deltas (tuned - base)\n\n" + (out / "compare.md").read_text(),
        "Plots: [report/report.md](report/report.md).",
    ]) + "\n")
    print(f"\nreport written to {report}")
    return report


if __name__ == "__main__":
    from trl import TrlParser

    from ledgerlm.configcheck import check_config_argv

    check_config_argv(sys.argv, (AblationConfig,), "recipes/hint_ablation.py")  # one line for a missing/broken file or a typo'd key
    (config,) = TrlParser((AblationConfig,)).parse_args_and_config()
    main(config)
