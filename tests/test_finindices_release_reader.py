"""The FinIndices release reader on a small fixture in the release's layout (tests/data/finindices_release).

    python -m pytest -q tests/test_finindices_release_reader.py
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgerlm.evaluate.finindices.adapter import OFFICIAL_FIELDS, decimals_asked, load_rows
from ledgerlm.evaluate.finindices.bench import select_rows
from ledgerlm.evaluate.finindices.scoring import score_response
from ledgerlm.evaluate.tasks import load_task

DATA = Path(__file__).parent / "data" / "finindices_release" / "test.jsonl"


def test_every_release_row_gives_a_hint_and_a_nohint_item():
    rows = load_rows(DATA)
    assert len(rows) == 10  # 5 release rows x {hint, nohint}
    by_id = {r["id"]: r for r in rows}
    hinted, bare = by_id["fi-001:hint"], by_id["fi-001:nohint"]
    assert hinted["hint"] is True and bare["hint"] is False
    assert "提示：投入资本" in hinted["messages"][-1]["content"] and "提示" not in bare["messages"][-1]["content"]
    task = load_task("finindices")  # select: paradigm null, hint null
    assert {r["hint"] for r in select_rows(rows, task, "nohint", None)} == {False}
    assert len(select_rows(rows, task, "hint", None)) == 5


def test_an_integer_answer_does_not_set_decimals_to_zero():
    row = {r["id"]: r for r in load_rows(DATA)}["fi-001:nohint"]
    assert row["answer"] == 100.0 and row["decimals"] == 2 and row["provenance"]["decimals_from"] == "prompt"
    assert score_response(row, "最终答案：100.00").score == 1
    assert score_response(row, "最终答案：100.004").score == 0  # 2 decimals were asked


def test_html_ground_truth_headers_and_labels_are_not_answer_cells():
    row = {r["id"]: r for r in load_rows(DATA)}["fi-003:hint"]
    assert row["answer"] == [[51.7, 39.1, 100.0], [0.3, 0.5, 0.1]] and row["decimals"] == 1
    answer = ("<table><tr><th>指标</th><th>2023Q3</th><th>2023Y</th><th>2024Q1</th></tr><tr><td>现金转换周期</td><td>51.7</td>"
              "<td>39.1</td><td>100.0</td></tr><tr><td>净资产周转率</td><td>0.3</td><td>0.5</td><td>0.1</td></tr></table>")
    assert score_response(row, answer).score == 1
    # a response holding only the header years and not the values must not score
    assert score_response(row, "<table><tr><td>2023</td><td>2024</td></tr></table>").score == 0


def test_json_string_cells_and_deficiency():
    rows = {r["id"]: r for r in load_rows(DATA)}
    assert rows["fi-004:nohint"]["answer"] == [[11.27, 5.44], [113.94, 75.0]] and rows["fi-004:nohint"]["answer_format"] == "json"
    assert rows["fi-005:hint"]["answer"] == "Insufficient information"
    assert rows["fi-002:hint"]["decimals"] == 1 and rows["fi-002:hint"]["axis"] == "temporal"


def test_field_map_corrects_the_column_names(tmp_path: Path):
    raw = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines()]
    renamed = tmp_path / "renamed.jsonl"
    renamed.write_text("".join(json.dumps({("题目" if k == "question" else k): v for k, v in r.items()}, ensure_ascii=False) + "\n"
                               for r in raw), encoding="utf-8")
    with pytest.raises(Exception, match="no prompt"):
        load_rows(renamed)
    assert len(load_rows(renamed, field_map={"prompt": ["题目"]})) == 10
    assert "题目" not in OFFICIAL_FIELDS["prompt"]  # the defaults are unchanged


@pytest.mark.parametrize("prompt, expected", [("rounded to two decimal places", 2), ("Round to 1 decimal", 1), ("保留两位小数", 2),
                                              ("保留3位小数", 3), ("精确到小数点后1位", 1), ("结果取整", 0), ("no instruction", None)])
def test_decimals_asked(prompt, expected):
    assert decimals_asked(prompt) == expected
