"""Errors that help: period errors name the latest period in the data, an empty --source folder is an
error, `score` rescoring eval's own samples.jsonl, and the CI eval prints is the CI report shows.

    python -m pytest -q tests/test_errors_help.py
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_fixtures import make_rows, write_dataset  # noqa: E402

from ledgerlm import cli  # noqa: E402


def test_underivable_statement_names_the_latest_period(capsys):
    assert cli.main(["statements", "--company", "AAPL", "--period", "FY2035", "--statement", "income"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("ledgerlm statements: error: AAPL: no consolidated income statement can be derived for FY2035; "
                          "the data for AAPL has: latest annual report FY20")
    assert err.count("\n") == 0


def test_empty_source_folder_is_an_error(tmp_path, capsys):
    for command in (["validate"], ["statements", "--company", "X", "--period", "FY2023", "--statement", "income"]):
        assert cli.main([*command, "--source", str(tmp_path)]) == 1
        assert f"file {tmp_path}: no facts found" in capsys.readouterr().err


def test_score_rescoring_eval_samples_and_eval_ci_equals_report_ci(tmp_path, capsys):
    write_dataset(tmp_path / "data", make_rows(30, seed=5))
    run = tmp_path / "run"
    assert cli.main(["eval", "--benchmark", "finindices", "--model", "wrong_unit", "--data", str(tmp_path / "data"),
                     "--out", str(run)]) == 0
    printed = capsys.readouterr().out
    acc = json.loads((run / "results.json").read_text())["metrics"]["accuracy"]
    assert 0 < acc["value"] < 1 and acc["ci_low"] < acc["value"] < acc["ci_high"]  # a CI worth comparing
    assert f"{100 * acc['value']:.2f}% [{100 * acc['ci_low']:.2f}%, {100 * acc['ci_high']:.2f}%]" in printed
    assert cli.main(["score", "--benchmark", "finindices", "--predictions", str(run / "samples.jsonl"), "--out", str(tmp_path / "re")]) == 0
    rescored = json.loads((tmp_path / "re" / "results.json").read_text())["metrics"]["accuracy"]
    assert rescored == acc
    assert cli.main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    assert f"{acc['value']:.1%} [{acc['ci_low']:.1%}, {acc['ci_high']:.1%}]" in report


def test_score_explains_an_old_samples_file(tmp_path, capsys):
    row = {"id": "a", "prompt": [{"role": "user", "content": "x"}], "response": "1", "answer": 1.0, "score": 1,
           "paradigm": "single", "answer_format": "number"}
    (tmp_path / "s.jsonl").write_text(json.dumps(row) + "\n")
    assert cli.main(["score", "--benchmark", "finindices", "--predictions", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "o")]) == 1
    assert "looks like an eval samples.jsonl row but has no 'decimals'" in capsys.readouterr().err


def test_validate_does_not_list_future_quarters_as_underivable(capsys):
    assert cli.main(["validate", "--company", "NVDA", "--json"]) == 0
    checks = json.loads(capsys.readouterr().out)["companies"][0]["checks"]
    periods = {x["period"] for x in checks["quarters"]}
    assert checks["future_quarters_skipped"] > 0
    assert not any(p.startswith("FY2027") for p in periods)  # NVDA's latest filing is a FY2027 10-Q: Q2-Q4 are ahead
    assert "FY2009Q2" in periods  # a real gap in the filings stays listed


def test_future_is_judged_against_the_latest_filed_report():
    import pandas as pd

    from ledgerlm.synth.statements.validate_cli import drop_future_quarters

    facts = pd.DataFrame({"company": ["A", "A"], "fiscal_year": [2024, 2025], "fiscal_period": ["FY", "Q1"]})
    report = {"companies": [{"company": "A", "checks": {"quarters": [
        {"period": "FY2025Q2", "missing": ["FY2025H1"]}, {"period": "FY2024Q2", "missing": ["FY2024H1"]},
        {"period": "FY2025Q1", "missing": ["FY2025Q1"]}]}}]}
    drop_future_quarters(report, facts)
    assert [x["period"] for x in report["companies"][0]["checks"]["quarters"]] == ["FY2024Q2", "FY2025Q1"]
