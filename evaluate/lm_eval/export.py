"""`ledgerlm export-lm-eval`: write a FinIndices task folder that lm-evaluation-harness runs.

    ledgerlm export-lm-eval --data runs/finindices --out runs/lmeval_tasks [--task finindices_nohint] [--limit 100]
    lm_eval --model hf --model_args pretrained=MODEL --tasks finindices --include_path runs/lmeval_tasks --apply_chat_template

The folder holds `<task>.yaml` (lm-eval's task schema, v0.4: dataset_path json + data_files, output_type
generate_until, doc_to_text/description from the chat messages, generation_kwargs, metric_list with
aggregation mean and higher_is_better, `process_results: !function utils.process_results`), `utils.py`
(calls ledgerlm's scorer with the task's answer_extraction) and `<task>.jsonl` (the selected items as lm-eval
docs, see hooks.py). Everything comes from the ledgerlm task YAML (`--task`, evaluate/tasks/finindices/):
select, split, answer_extraction, metrics, generation_kwargs, version. `data_files` is an absolute path:
export again after moving the folder. lm-eval itself is optional (`pip install 'ledgerlm[lmeval]'`).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from ledgerlm.errors import InputError, LedgerError
from ledgerlm.evaluate.finindices import adapter
from ledgerlm.evaluate.lm_eval.hooks import to_doc
from ledgerlm.evaluate.tasks import TaskSpec, load_task

NOT_IN_LM_EVAL = ("backend_error_rate", "truncated_rate")  # lm-eval hands process_results no finish reason or transport error

UTILS = '''"""lm-evaluation-harness hooks for the ledgerlm task {task!r} (written by `ledgerlm export-lm-eval`; needs ledgerlm).

process_results scores one generation with ledgerlm's FinIndices scorer, as `ledgerlm eval` does.
"""
from ledgerlm.evaluate.lm_eval.hooks import process_results as _score

EXTRACTION = {extraction!r}  # the task YAML's answer_extraction
METRICS = {metrics!r}


def process_results(doc, results):
    return _score(doc, results, extraction=EXTRACTION, metrics=METRICS)
'''


def lm_eval_config(spec: TaskSpec, data_file: Path) -> dict[str, Any]:
    """The lm-eval task mapping (without the `!function` line, which `write_yaml` appends)."""
    g = spec.generation_kwargs
    gen: dict[str, Any] = {"until": list(g.stop), "do_sample": g.temperature > 0, "temperature": g.temperature}
    if g.max_gen_toks is not None:
        gen["max_gen_toks"] = g.max_gen_toks
    if g.temperature > 0:
        gen["top_p"] = g.top_p
    return {
        "task": spec.task,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(data_file)}},
        "test_split": "test",
        "output_type": "generate_until",
        "description": "system",      # the doc's system message (a field name: lm-eval reads doc['system'])
        "doc_to_text": "user",        # the doc's user message
        "doc_to_target": "answer_text",
        "target_delimiter": "",
        "num_fewshot": 0,
        "generation_kwargs": gen,
        "metric_list": [{"metric": m.name, "aggregation": m.aggregation, "higher_is_better": m.higher_is_better}
                        for m in spec.metrics if m.name not in NOT_IN_LM_EVAL],
        "metadata": {"version": spec.version, "ledgerlm_task": spec.task, "answer_extraction": spec.answer_extraction},
    }


def export(data: str | Path, out: str | Path, task: str = "finindices", *, split: str | None = None,
           limit: int | None = None) -> Path:
    """Write OUT/<task>.yaml, OUT/utils.py and OUT/<task>.jsonl; return the YAML path."""
    spec = load_task(task)
    if spec.benchmark != "finindices":
        raise InputError(f"only FinIndices tasks export to lm-eval, {spec.task} is {spec.benchmark}", field="--task")
    rows = spec.select_rows(adapter.load_rows(data, split=split or spec.split), limit=limit)
    if not rows:
        raise InputError(f"no items match task {spec.task} (select {spec.select})", path=str(data))
    docs = [to_doc(r, file=str(data)) for r in rows]  # every row checked before anything is written
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data_file = (out / f"{spec.task}.jsonl").resolve()
    metrics = tuple(m.name for m in spec.metrics if m.name not in NOT_IN_LM_EVAL)
    _write(data_file, "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs))
    _write(out / "utils.py", UTILS.format(task=spec.task, extraction=spec.answer_extraction, metrics=metrics))
    text = (f"# lm-evaluation-harness task written by `ledgerlm export-lm-eval` from {spec.path.name} (ledgerlm task {spec.task}).\n"
            f"# lm_eval --model hf --model_args pretrained=MODEL --tasks {spec.task} --include_path {out} --apply_chat_template\n"
            + yaml.safe_dump(lm_eval_config(spec, data_file), sort_keys=False, allow_unicode=True)
            + "process_results: !function utils.process_results\n")
    _write(out / f"{spec.task}.yaml", text)
    return out / f"{spec.task}.yaml"


def _write(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a failed export never leaves half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ledgerlm export-lm-eval", description=__doc__.split("\n\n")[0],
                                     epilog="then, with lm-eval installed (pip install 'ledgerlm[lmeval]'):\n  lm_eval --model hf "
                                            "--model_args pretrained=MODEL --tasks TASK --include_path OUT --apply_chat_template",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="dataset folder, JSONL file, or Findata/Finindice (as `ledgerlm eval --data`)")
    parser.add_argument("--out", required=True, help="task folder to write (give it to lm_eval --include_path)")
    parser.add_argument("--task", default="finindices", help="ledgerlm task YAML (name under evaluate/tasks/finindices/ or a path)")
    parser.add_argument("--split", default=None, help="dataset file in a folder (default: the task's)")
    parser.add_argument("--limit", type=int, default=None, help="first N selected items only")
    args = parser.parse_args(argv)
    try:
        path = export(args.data, args.out, args.task, split=args.split, limit=args.limit)
    except LedgerError as exc:
        print(f"ledgerlm export-lm-eval: error: {exc}", file=sys.stderr)
        return 1
    n = sum(1 for _ in open(path.with_suffix(".jsonl"), encoding="utf-8"))
    print(f"wrote {path} ({n} items); run: lm_eval --model hf --model_args pretrained=MODEL --tasks {path.stem} "
          f"--include_path {path.parent} --apply_chat_template")
    return 0


if __name__ == "__main__":
    sys.exit(main())
