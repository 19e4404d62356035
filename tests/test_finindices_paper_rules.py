"""FinIndices scored as the paper (§2.2.2, Eq. 1-2, Table 14) scores it; the lenient variant is opt-in.

    python -m pytest -q tests/test_finindices_paper_rules.py
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgerlm.evaluate.cli import score_main
from ledgerlm.evaluate.finindices.scoring import exact_at, score_response


def single(answer, decimals=2):
    return {"id": "s", "paradigm": "single", "answer_format": "number", "answer": answer, "decimals": decimals, "target_periods": []}


def table(answer, fmt, decimals=2):
    return {"id": "t", "paradigm": "table", "answer_format": fmt, "answer": answer, "decimals": decimals, "target_periods": []}


@pytest.mark.parametrize("text", ["Final answer: 1,234.50", "Final answer: 1234.5", "Final answer: 1234.500", "Final answer: 1,234.5%"])
def test_paper_example_symbolic_equality_after_normalisation(text):
    # the paper's own example: 1,234.50 ≈ 1234.5 (thousands separators, %, trailing zeros)
    assert score_response(single(1234.5), text).score == 1


def test_integer_truth_matches_its_trailing_zero_forms():
    assert score_response(single(100.0), "Final answer: 100").score == 1
    assert score_response(single(100.0), "Final answer: 100.00").score == 1


@pytest.mark.parametrize("text", ["Final answer: 1153987.784123", "Final answer: 1153987.7812"])
def test_more_decimals_than_asked_is_wrong_by_default(text):
    """Precision is part of the answer: 6 decimals when 2 were asked is not ≈ the 2-decimal truth."""
    sample = single(1153987.78)
    assert score_response(sample, text).score == 0 and score_response(sample, text).error_reason == "wrong_value"
    assert score_response(sample, text, lenient_precision=True).score == 1  # ledgerlm's opt-in variant


def test_fewer_decimals_is_wrong_in_both_rules():
    assert score_response(single(1153987.78), "Final answer: 1153987.8").score == 0
    assert score_response(single(1153987.78), "Final answer: 1153987.8", lenient_precision=True).score == 0


def test_exact_at():
    assert exact_at(1234.5, 2) and exact_at(1234.0, 0) and exact_at(0.0, 0) and exact_at(-19368.16, 2)
    assert not exact_at(1153987.784, 2) and not exact_at(0.1, 0)


def test_a_bare_year_in_the_answer_line_is_not_the_answer():
    sample = single(5.2, decimals=1)
    got = score_response(sample, "Final answer: In 2023, the ratio was 5.2")
    assert got.score == 1 and got.extracted == 5.2
    assert score_response(sample, "最终答案：2023年该比率为5.2").score == 1
    assert score_response(single(2023.0, 0), "Final answer: 2023").score == 1  # a year-like answer alone stays the answer


GT = [[-19368.16, 20477.45], [75991.92, 68198.91]]


def test_eq2_json_asked_list_of_objects_with_the_right_values_counts():
    """Eq. 2: Ψ(O, JSON) isolates the ```json block, Φ regex-extracts its values; the set rule holds."""
    objects = [{"year": "2022Y", "working_capital": -19368.16, "retained": 75991.92},
               {"year": "2023Y", "working_capital": 20477.45, "retained": 68198.91}]
    text = "```json\n" + json.dumps(objects) + "\n```"
    got = score_response(table(GT, "json"), text)
    assert got.score == 1 and got.positional == 0  # no grid to hold values at their row and column
    wrong = [dict(o, retained=o["retained"] / 10) for o in objects]
    assert score_response(table(GT, "json"), "```json\n" + json.dumps(wrong) + "\n```").score == 0


def test_tuple_list_asked_dictionaries_fail_as_table_14():
    objects = [{"Year": "2022Y", "Working_Capital_10k": -19368.16, "Retained_Earnings_10k": 75991.92},
               {"Year": "2023Y", "Working_Capital_10k": 20477.45, "Retained_Earnings_10k": 68198.91}]
    got = score_response(table(GT, "tuple_list"), "```json\n" + json.dumps(objects) + "\n```")
    assert got.score == 0 and got.error_reason == "not_rows"


def test_table_value_with_extra_decimals_is_missing():
    text = "```json\n[[-19368.1612, 20477.45], [75991.92, 68198.91]]\n```"
    assert score_response(table(GT, "json"), text).score == 0
    assert score_response(table(GT, "json"), text, lenient_precision=True).score == 1


def test_lenient_precision_is_recorded_in_results_json(tmp_path: Path):
    rows = [{**single(1153987.78), "id": "a", "axis": "x", "hint": True, "split": "test",
             "messages": [{"role": "user", "content": "q"}], "response": "Final answer: 1153987.7812"}]
    preds = tmp_path / "p.jsonl"
    preds.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert score_main(["--benchmark", "finindices", "--predictions", str(preds), "--out", str(tmp_path / "strict")]) == 0
    assert score_main(["--benchmark", "finindices", "--predictions", str(preds), "--out", str(tmp_path / "lenient"), "--lenient-precision"]) == 0
    strict = json.loads((tmp_path / "strict" / "results.json").read_text())
    lenient = json.loads((tmp_path / "lenient" / "results.json").read_text())
    assert strict["metrics"]["accuracy"]["value"] == 0.0 and strict["config"]["lenient_precision"] is False
    assert lenient["metrics"]["accuracy"]["value"] == 1.0 and lenient["config"]["lenient_precision"] is True
    assert lenient["precision_rule"].startswith("lenient") and strict["precision_rule"].startswith("paper")
