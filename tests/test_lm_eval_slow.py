"""The exported FinIndices task runs in the real lm-evaluation-harness (slow; needs `pip install 'ledgerlm[lmeval]'`).

    python -m pytest -q -m slow tests/test_lm_eval_slow.py

lm-eval's TaskManager loads the folder written by `ledgerlm export-lm-eval` (--include_path), and
`lm_eval.simple_evaluate` runs it end to end with two in-process models (no download): one answers
every prompt with the item's reference solution (accuracy 1), one with the right figures in the wrong
unit (accuracy 0); with `apply_chat_template` the model receives exactly the dataset's chat messages. lm-eval runs in a subprocess started in a temporary folder, because inside the
repository the folder `evaluate/` would shadow Hugging Face's `evaluate` package that lm-eval imports.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

from test_lm_eval_export import _dataset, _wrong_unit
from ledgerlm.evaluate.lm_eval.export import export

pytestmark = pytest.mark.slow

SCRIPT = textwrap.dedent('''
    import json, sys
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager, get_task_dict

    taskdir, answers_file = sys.argv[1], sys.argv[2]
    answers = json.load(open(answers_file))
    seen = []

    class Replay(LM):
        """Answers each request with a fixed text per doc id; records what lm-eval sent."""
        tokenizer_name = "replay"

        def __init__(self, texts):
            super().__init__()
            self.texts = texts
        def apply_chat_template(self, chat_history, add_generation_prompt=True):
            return json.dumps(chat_history)  # the messages themselves, so the test can compare them
        def generate_until(self, requests, disable_tqdm=False):
            seen.extend((r.doc["id"], r.arguments[0], r.arguments[1]) for r in requests)
            return [self.texts[r.doc["id"]] for r in requests]
        def loglikelihood(self, requests, disable_tqdm=False):
            raise NotImplementedError
        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            raise NotImplementedError

    manager = TaskManager(include_path=taskdir)
    task = get_task_dict(["finindices"], manager)["finindices"]
    docs = list(task.test_docs())
    direct = [task.process_results(d, [answers["oracle"][d["id"]]])["accuracy"] for d in docs]
    out = {"n_docs": len(docs), "direct": direct}
    for name in ("oracle", "wrong_unit"):
        res = simple_evaluate(model=Replay(answers[name]), tasks=["finindices"], task_manager=manager)
        out[name] = {k: v for k, v in res["results"]["finindices"].items() if isinstance(v, (int, float))}
        out[name + "_higher_is_better"] = res["higher_is_better"]["finindices"]
    out["seen"] = seen[:3]
    del seen[:]
    res = simple_evaluate(model=Replay(answers["oracle"]), tasks=["finindices"], task_manager=manager, apply_chat_template=True)
    out["chat"] = res["results"]["finindices"]["accuracy,none"]
    out["seen_chat"] = seen
    print("RESULT " + json.dumps(out))
''')


@pytest.mark.skipif(importlib.util.find_spec("lm_eval") is None, reason="lm-eval not installed (pip install 'ledgerlm[lmeval]')")
def test_lm_eval_loads_and_scores_the_exported_task(tmp_path):
    data, rows = _dataset(tmp_path, n=8)
    taskdir = tmp_path / "tasks"
    export(data, taskdir, "finindices")
    answers = {"oracle": {i: r["solution"] for i, r in rows.items()},
               "wrong_unit": {i: (_wrong_unit(r) if r["answer"] != "Insufficient information" else "Final answer: 12.5")
                              for i, r in rows.items()}}
    (tmp_path / "answers.json").write_text(json.dumps(answers))
    (tmp_path / "run.py").write_text(SCRIPT)
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run([sys.executable, "run.py", str(taskdir), "answers.json"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900)
    line = next((l for l in done.stdout.splitlines() if l.startswith("RESULT ")), None)
    assert done.returncode == 0 and line, done.stderr[-3000:]
    out = json.loads(line.removeprefix("RESULT "))
    assert out["n_docs"] == len(rows) and out["direct"] == [1.0] * len(rows)
    assert out["oracle"]["accuracy,none"] == 1.0 and out["oracle"]["positional_accuracy,none"] == 1.0
    assert out["oracle"]["parse_failure_rate,none"] == 0.0
    assert out["wrong_unit"]["accuracy,none"] == 0.0
    assert out["oracle_higher_is_better"] == {"accuracy": True, "positional_accuracy": True,
                                              "parse_failure_rate": False, "format_failure_rate": False}
    doc_id, prompt, gen_kwargs = out["seen"][0]
    row = rows[doc_id]
    assert row["messages"][0]["content"] in prompt and row["messages"][-1]["content"] in prompt
    assert gen_kwargs["until"] == [] and gen_kwargs["max_gen_toks"] == 8192 and gen_kwargs["do_sample"] is False
    # --apply_chat_template: the model gets exactly the dataset's messages (system + user), as `ledgerlm eval` sends them
    assert out["chat"] == 1.0 and len(out["seen_chat"]) == len(rows)
    for doc_id, prompt, _ in out["seen_chat"]:
        assert json.loads(prompt) == rows[doc_id]["messages"], doc_id
