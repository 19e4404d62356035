"""Long commands show progress: EPSBench prints one line per agent round, MacroLens advances a rich bar
per batch and prints a line per task x level (now the harness runner's bar), fidelity iterates under a bar.

    python -m pytest -q tests/test_progress.py
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_epsbench_agent import docs, scripted_agent  # noqa: E402,F401  (docs is a fixture)

from ledgerlm.evaluate.cli import eval_main  # noqa: E402


def test_epsbench_prints_a_line_per_round(docs, tmp_path, capsys):  # noqa: F811
    from openai_stub_server import StubServer

    with StubServer(responder=scripted_agent) as server:
        assert eval_main(["--benchmark", "epsbench", "--model", "openai:stub", "--base-url", server.url, "--docs", str(docs),
                          "--instances", "GOOGL_2026Q1", "ADBE_2025Q4", "--out", str(tmp_path / "run"), "--runs", "1"]) == 0
    err = capsys.readouterr().err
    assert "epsbench: run s1 round 1: 2 conversations active, 0/2 finished" in err
    assert "epsbench: run s1 round 2: 1 conversations active, 1/2 finished" in err  # ADBE answered in round 1
    assert "epsbench: run s1 round 4: 1 conversations active" in err
