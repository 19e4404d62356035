"""FinIndices SFT recipe: synth -> (distill) -> SFT -> eval before and after -> compare -> report.

    python recipes/finindices_sft.py --config recipes/configs/finindices_sft.yaml

Each step is one `ledgerlm` / `accelerate launch` command, printed before it runs, so any step can be
rerun by hand. A step whose output already exists is skipped: rerunning the recipe resumes it.
The result is OUT/REPORT.md (before/after accuracy per paradigm x hint, paired deltas, plots).
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
class RecipeConfig:
    out_dir: str = field(default="runs/recipe-finindices-sft", metadata={"help": "everything the recipe writes"})
    base_model: str = field(default="tiny", metadata={"help": "Hub id or folder; 'tiny' builds the tiny random model"})
    synth_num: int = field(default=200, metadata={"help": "samples to attempt (ledgerlm synth --num)"})
    synth_seed: int = field(default=0, metadata={"help": "synthesis seed"})
    synth_max_tokens: int = field(default=32768, metadata={"help": "prompt token cap, counted with the base model's tokenizer"})
    teacher: str | None = field(default=None, metadata={"help": "distill from openai:M / vllm:P / hf:P; none = worked solutions"})
    teacher_base_url: str | None = field(default=None, metadata={"help": "OpenAI-compatible server for the teacher"})
    distill_args: list[str] = field(default_factory=list, metadata={"help": "extra ledgerlm distill flags"})
    accelerate_config: str = field(default="configs/accelerate/single.yaml", metadata={"help": "accelerate preset"})
    sft_config: str = field(default="configs/sft/tiny-cpu.yaml", metadata={"help": "train/sft.py YAML"})
    sft_args: list[str] = field(default_factory=list, metadata={"help": "extra train/sft.py flags (override the YAML)"})
    eval_split: str = field(default="test", metadata={"help": "held-out split: its companies never appear in train"})
    eval_limit: int = field(default=0, metadata={"help": "first N items (0 = all)"})
    eval_args: list[str] = field(default_factory=list, metadata={"help": "extra ledgerlm eval flags (--max-tokens, --batch-size)"})


def run(*command: str) -> None:
    print("\n$ " + " ".join(shlex.quote(c) for c in command), flush=True)
    subprocess.run(command, cwd=REPO, check=True)


def summary_table(runs: dict[str, Path]) -> str:
    """Accuracy (95% CI) per paradigm x hint, one column per run."""
    results = {name: json.loads((path / "results.json").read_text()) for name, path in runs.items()}
    cells = sorted({(c["paradigm"], c["hint"]) for r in results.values() for c in r["metrics"]["by_paradigm_hint"]})
    lines = ["| paradigm | hint | " + " | ".join(runs) + " |", "|---|---|" + "---|" * len(runs)]
    for paradigm, hint in [("all", None), *cells]:
        row = []
        for r in results.values():
            m = r["metrics"]["accuracy"] if hint is None else next(
                (c for c in r["metrics"]["by_paradigm_hint"] if (c["paradigm"], c["hint"]) == (paradigm, hint)), None)
            row.append("-" if m is None else f"{100 * m['value']:.2f}% [{100 * m['ci_low']:.1f}, {100 * m['ci_high']:.1f}] (n={m['n']})")
        lines.append(f"| {paradigm} | {'' if hint is None else ('with' if hint else 'without')} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(cfg: RecipeConfig) -> Path:
    out = (REPO / cfg.out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    data, sft, before, after = out / "data", out / "sft", out / "eval-before", out / "eval-after"

    # 0. Base model (the tiny random one builds offline in seconds)
    base = cfg.base_model
    if base == "tiny":
        base = str(out / "base-model")
        if not (Path(base) / "config.json").is_file():
            run(sys.executable, "-m", "ledgerlm.train.tiny_model", "--out", base)

    # 1. Synthesize a dataset from the embedded real SEC filings (train / dev / test by company)
    if not (data / "manifest.json").is_file():
        run("ledgerlm", "synth", "--out", str(data), "--num", str(cfg.synth_num), "--seed", str(cfg.synth_seed),
            "--tokenizer", base if Path(base).is_dir() else "o200k_base", "--max-tokens", str(cfg.synth_max_tokens),
            "--no-progress")

    # 2. Optionally distill teacher trajectories (verified by the scorer); else train on the worked solutions
    train_data = data
    if cfg.teacher:
        train_data = out / "distill"
        if not (train_data / "train.jsonl").is_file():
            url = ["--base-url", cfg.teacher_base_url] if cfg.teacher_base_url else []
            run("ledgerlm", "distill", "--data", str(data), "--split", "train", "--teacher", cfg.teacher, *url,
                "--out", str(train_data), *cfg.distill_args)

    # 3. Fine-tune (LoRA or full, as the SFT YAML says), scoring the dev split during training
    if not (sft / "trainer_state.json").is_file():
        run("accelerate", "launch", "--config_file", cfg.accelerate_config, "train/sft.py", "--config", cfg.sft_config,
            "--model_name_or_path", base, "--dataset_name", str(train_data), "--eval_dataset", str(data),
            "--output_dir", str(sft), *cfg.sft_args)
    tuned = ["--model", f"hf:{base}", "--peft", str(sft)] if (sft / "adapter_config.json").is_file() else ["--model", f"hf:{sft}"]

    # 4. Evaluate before and after on the held-out split, same items, same generation settings
    limit = ["--limit", str(cfg.eval_limit)] if cfg.eval_limit else []
    for run_dir, model in ((before, ["--model", f"hf:{base}"]), (after, tuned)):
        if not (run_dir / "results.json").is_file():
            run("ledgerlm", "eval", "--benchmark", "finindices", *model, "--data", str(data), "--split", cfg.eval_split,
                *limit, *cfg.eval_args, "--out", str(run_dir))

    # 5. Paired comparison (same sample ids) and plots
    run("ledgerlm", "compare", str(before), str(after), "--out", str(out / "compare.md"), "--json", str(out / "compare.json"))
    run("ledgerlm", "report", str(before), str(after), "--out", str(out / "report"))

    # 6. One report: what ran, the before/after table, the paired deltas, the training curve's ends
    state = json.loads((sft / "trainer_state.json").read_text())["log_history"]
    losses = [e["loss"] for e in state if "loss" in e]
    speeds = [e["tokens_per_second"] for e in state if "tokens_per_second" in e]
    report = out / "REPORT.md"
    report.write_text("\n\n".join([
        "# FinIndices SFT: before vs after",
        f"Base model `{cfg.base_model}`; training data `{train_data.relative_to(out)}` "
        f"({'teacher ' + cfg.teacher if cfg.teacher else 'worked solutions'}); SFT `{cfg.sft_config}` "
        f"{' '.join(cfg.sft_args)}; eval split `{cfg.eval_split}`.",
        f"Training: {len(losses)} logged steps, loss {losses[0]:.4f} -> {losses[-1]:.4f}; "
        f"median {sorted(speeds)[len(speeds) // 2] if speeds else 0:.0f} tokens/s.",
        "## Accuracy by paradigm x hint\n\n" + summary_table({"before": before, "after": after}),
        "## Paired deltas (after - before)\n\n" + (out / "compare.md").read_text(),
        "Plots and per-axis tables: [report/report.md](report/report.md).",
    ]) + "\n")
    print(f"\nreport written to {report}")
    return report


if __name__ == "__main__":
    from trl import TrlParser

    from ledgerlm.configcheck import check_config_argv

    check_config_argv(sys.argv, (RecipeConfig,), "recipes/finindices_sft.py")  # one line for a missing/broken file or a typo'd key
    (config,) = TrlParser((RecipeConfig,)).parse_args_and_config()
    main(config)
