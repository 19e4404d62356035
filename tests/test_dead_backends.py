"""A dead backend is a failure, not a 0 % score: `ledgerlm eval` and `ledgerlm distill` against an
unreachable --base-url exit 3 with the transport error, and mark their results partial.

    python -m pytest -q tests/test_dead_backends.py
"""
from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_fixtures import make_rows, write_dataset  # noqa: E402

from ledgerlm import cli  # noqa: E402


@pytest.fixture()
def dead_url() -> str:
    """A loopback port nobody listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture()
def data(tmp_path) -> Path:
    write_dataset(tmp_path / "data", make_rows(5, seed=3))
    return tmp_path / "data"


def test_eval_against_a_dead_server_exits_3_with_the_transport_error(dead_url, data, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    code = cli.main(["eval", "--benchmark", "finindices", "--model", "openai:m", "--base-url", dead_url, "--max-retries", "0",
                     "--timeout", "5", "--data", str(data), "--out", str(tmp_path / "run")])
    assert code == 3
    err = capsys.readouterr().err
    assert "ledgerlm eval: error: 5 of 5 samples got no answer" in err and "ConnectError" in err
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["partial"] is True and results["backend_failures"]["failed"] == 5


def test_eval_under_the_failed_fraction_warns_and_marks_partial(tmp_path, capsys):
    from ledgerlm.evaluate.cli import check_backend_failures

    run = tmp_path / "run"
    run.mkdir()
    rows = [{"id": str(i), "backend_error": "ReadTimeout" if i == 0 else None} for i in range(4)]
    (run / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "results.json").write_text(json.dumps({"model": "m"}))
    assert check_backend_failures(run, 0.5) == 0
    assert json.loads((run / "results.json").read_text())["partial"] is True
    assert "1 of 4 samples got no answer from m" in capsys.readouterr().err
    assert check_backend_failures(run, 0.2) == 3


def test_distill_against_a_dead_server_exits_3_and_writes_no_rows(dead_url, data, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    out = tmp_path / "distill"
    code = cli.main(["distill", "--data", str(data), "--split", "test", "--teacher", "openai:m", "--base-url", dead_url,
                     "--max-retries", "0", "--timeout", "5", "--samples-per-item", "2", "--out", str(out), "--no-progress"])
    assert code == 3
    assert "teacher requests failed" in capsys.readouterr().err
    assert not (out / "test.jsonl").exists()
    assert json.loads((out / "manifest.json").read_text())["partial"] is True
