"""Bad input to `ledgerlm eval/score`: one line naming file and field, exit 1, no traceback, no run folder."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from eval_fixtures import make_rows, write_dataset


def _ledgerlm(*args: str, cwd, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ledgerlm.cli", *args], capture_output=True, text=True, cwd=cwd, env=env)


def _write(path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _fails_cleanly(run, out, *needles) -> None:
    assert run.returncode == 1, run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert all(n in run.stderr for n in needles), run.stderr
    assert not out.exists()


@pytest.mark.parametrize("case", ["missing_file", "no_response", "official_without_prompt", "official_answer_without_number"])
def test_score_bad_predictions(tmp_path, case):
    rows = make_rows(3, seed=5)
    preds = tmp_path / "preds.jsonl"
    if case == "no_response":
        _write(preds, [{**rows[0], "response": "1"}, rows[1]])  # second row lacks `response`
        needles = (str(preds), "'response'", rows[1]["id"])
    elif case == "official_without_prompt":
        _write(preds, [{"id": "q1", "answer": "1.5", "response": "1.5"}])
        needles = (str(preds), "'prompt'")
    elif case == "official_answer_without_number":
        _write(preds, [{"id": "q1", "question": "Gross margin?", "answer": "n/a", "response": "1.5"}])
        needles = (str(preds), "'answer'")
    else:
        needles = (str(preds), "no such file")
    out = tmp_path / "scored"
    _fails_cleanly(_ledgerlm("score", "--benchmark", "finindices", "--predictions", str(preds), "--out", str(out), cwd=tmp_path), out, *needles)


def test_eval_unloadable_hf_model(tmp_path):
    write_dataset(tmp_path / "data", make_rows(2, seed=1))
    out = tmp_path / "run"
    run = _ledgerlm("eval", "--benchmark", "finindices", "--model", f"hf:{tmp_path / 'no_model_here'}",
                    "--data", str(tmp_path / "data"), "--out", str(out), cwd=tmp_path)
    _fails_cleanly(run, out, "'--model'", "no_model_here")


def test_eval_mistyped_local_model_folder_fails_at_once(tmp_path):
    """New-user audit: pretrained=./no/such/folder was taken for a Hub id (52 s of retries online)."""
    write_dataset(tmp_path / "data", make_rows(2, seed=1))
    out = tmp_path / "run"
    run = _ledgerlm("eval", "--model", "hf", "--model_args", "pretrained=./no/such/folder", "--tasks", "finindices",
                    "--data", str(tmp_path / "data"), "--output_path", str(out), cwd=tmp_path)
    _fails_cleanly(run, out, "no such model folder: ./no/such/folder")


@pytest.mark.parametrize("form", ["legacy", "lm-eval"])
def test_eval_openai_without_api_key_fails_before_any_request(tmp_path, form, monkeypatch):
    """New-user audit: openai:gpt-4o-mini with OPENAI_API_KEY unset retried for 63 s, then left a partial run folder.
    A server of one's own (--base-url) still needs no key."""
    write_dataset(tmp_path / "data", make_rows(2, seed=1))
    out = tmp_path / "run"
    model = (["--benchmark", "finindices", "--model", "openai:gpt-4o-mini", "--out", str(out)] if form == "legacy" else
             ["--model", "openai", "--model_args", "model=gpt-4o-mini", "--tasks", "finindices", "--output_path", str(out)])
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    run = _ledgerlm("eval", *model, "--data", str(tmp_path / "data"), cwd=tmp_path, env=env)
    _fails_cleanly(run, out, "the environment variable OPENAI_API_KEY is not set")
    from ledgerlm.inference.backends import make_backend

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert make_backend("openai:m", base_url="http://127.0.0.1:8000/v1").model_id == "openai:m@http://127.0.0.1:8000/v1"


def test_eval_warns_when_backend_gives_no_answer(tmp_path):
    """An unreachable server: the run is written (errors scored 0, not cached, results marked partial), stderr says
    why, and the exit status is 3 (issue #16: a dead backend is a failure, not a 0 % score)."""
    write_dataset(tmp_path / "data", make_rows(2, seed=1))
    run = _ledgerlm("eval", "--benchmark", "finindices", "--model", "openai:m", "--base-url", "http://127.0.0.1:9/v1",
                    "--max-retries", "0", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "run"), "--limit", "2", cwd=tmp_path)
    assert run.returncode == 3 and "Traceback" not in run.stderr
    assert "2 of 2 items got no answer" in run.stderr and "ConnectError" in run.stderr
    assert json.loads((tmp_path / "run" / "results.json").read_text())["partial"] is True


def test_benchmark_form_takes_a_fraction_limit_as_its_error_says(tmp_path):
    """`--limit 0` says a fraction below 1 is allowed; `--benchmark finindices --limit 0.5` was 'invalid int' (audit s22)."""
    rows = make_rows(4, seed=1)
    _write(tmp_path / "d.jsonl", rows)
    run = _ledgerlm("eval", "--benchmark", "finindices", "--model", "oracle", "--data", str(tmp_path / "d.jsonl"),
                    "--limit", "0.5", "--out", str(tmp_path / "r"), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / "r" / "results.json").read_text())["n-samples"]["finindices"]["effective"] == 2
