"""FinIndices scoring rules (paper §2.2.2), the oracle anchors and the official-release adapter."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # eval_fixtures, openai_stub_server
from eval_fixtures import make_rows, table_text  # noqa: E402

from ledgerlm.errors import InputError  # noqa: E402
from ledgerlm.inference.backends import make_backend  # noqa: E402
from ledgerlm.evaluate.finindices.reference import scale_final_answer  # noqa: E402
from ledgerlm.evaluate.finindices.adapter import from_official, load_rows  # noqa: E402
from ledgerlm.evaluate.finindices.extract import extract_numbers, normalize, parse_cell  # noqa: E402
from ledgerlm.evaluate.finindices.scoring import precision_key, score_response  # noqa: E402
from ledgerlm.inference.reasoning import split_reasoning  # noqa: E402
from ledgerlm.inference.sampling import GenerationParams  # noqa: E402


def single(answer, decimals=2, **extra):
    return {"id": "s", "paradigm": "single", "answer_format": "number", "answer": answer, "decimals": decimals,
            "target_periods": ["FY2024"], **extra}


def table(answer, fmt, decimals=2):
    return {"id": "t", "paradigm": "table", "answer_format": fmt, "answer": answer, "decimals": decimals, "target_periods": ["FY2022", "FY2023"]}


# --- numbers ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("1,234.50", [1234.5]),
    ("\u22121,234.5 and \uff11\uff12\uff13\uff0e\uff14", [-1234.5, 123.4]),  # unicode minus, full-width digits
    ("12.5% growth; 1.5e3 units; 3.2万 ; 4亿", [12.5, 1500.0, 3.2, 4.0]),
    ("FY2023 and 2023Q3 are labels, 7 is not", [7.0]),
    ("[11.27,113.94]", [11.27, 113.94]),
    ("&minus;5.5", [-5.5]),
    # a token is read whole: a thousands group is never a number of its own (paper §2.2.2, Φ)
    ("RMB1,234.5 and USD12,345,678.90; Rs1,234.5", [1234.5, 12345678.9, 1234.5]),
    ("1,234.5USD, 100 RMB", [1234.5, 100.0]),
    ("ABC1,234.5 XRMB1,234 1,234.5x 2023Q3,7", [7.0]),
    ("abc-5 FY2023,2024 1.2.3", [5.0, 2024.0]),
    # second audit (s22): a list without spaces, a dot before a glued token, a minus before the currency, any case
    ("[100,2500] [100,250] 1,2345", [100.0, 2500.0, 100250.0, 1.0, 2345.0]),
    ("approx.1,234.5 ...1,234.5 Rs.1,234.5", [1234.5]),
    ("-$1,234.5, -RMB 1,234.5, \u2212\u00a51,234.5, RMB-5", [-1234.5, -1234.5, -1234.5, -5.0]),
    ("rmb1,234.5 Rmb1,234.5 MYR1,234.5", [1234.5, 1234.5, 1234.5]),
])
def test_extract_numbers(text, expected):
    assert extract_numbers(normalize(text)) == expected


def test_parse_cell_accounting_negative_and_labels():
    assert parse_cell("(1,234.5)") == -1234.5
    assert parse_cell(" $12.0% ") == 12.0
    assert parse_cell("Revenue") is None and parse_cell("2023Q3") is None and parse_cell(True) is None


def test_precision_key_half_away_from_zero():
    assert precision_key(1.005, 2) == 101 and precision_key(-1.005, 2) == -101
    assert precision_key(1234.5, 2) == precision_key(1234.50, 2)
    assert precision_key(float("inf"), 2) is None


# --- single items ----------------------------------------------------------------------------------

def test_single_equivalence_at_requested_precision():
    sample = single(1153987.78)
    assert score_response(sample, "Final answer: 1,153,987.78").score == 1
    assert score_response(sample, "so the answer is:\n1153987.78").score == 1
    wrong = score_response(sample, "Final answer: 1153987.8")  # the paper's example: not equal at 2 decimals
    assert (wrong.score, wrong.error_reason, wrong.extracted) == (0, "wrong_value", 1153987.8)
    assert score_response(single(1234.5), "Answer: 1,234.50").score == 1


def test_currency_glued_number_is_read_whole():
    """Audit s21 (deviation 5): `RMB1,234.5` was read as 234.5 — a false hit on 234.5, a miss on 1234.5."""
    assert score_response(single(1234.5), "Final answer: RMB1,234.5").score == 1
    assert score_response(single(234.5), "Final answer: RMB1,234.5").score == 0
    assert score_response(table([[12345678.9]], "html_table"), "<table><tr><td>USD12,345,678.90</td></tr></table>").score == 1
    assert score_response(table([[345678.9]], "html_table"), "<table><tr><td>USD12,345,678.90</td></tr></table>").score == 0


def test_single_uses_final_answer_not_intermediate_numbers():
    sample = single(-19368.16)
    text = "Working capital = 1,000 - 20,368.16 = -19,368.16 thousand.\nFinal answer: \u221219,368.16 (FY2024, 2024-12-31)"
    assert score_response(sample, text).score == 1
    assert score_response(sample, "Step: -19368.16\nFinal answer: 19368.16").score == 0  # sign matters
    assert score_response(sample, r"The result is \boxed{-19368.16}. Later: 5").score == 1
    assert score_response(sample, "Final answer: -19,368.16 (thousands, 2 decimals)").score == 1
    assert score_response(sample, "So from 3 reports, working capital is -19,368.16").score == 1  # no marker: last number


def test_reasoning_is_stripped_and_unterminated_think_is_no_answer():
    sample = single(42.0)
    assert score_response(sample, "<think>maybe 41</think>\nFinal answer: 42.00").score == 1
    assert score_response(sample, "<think>I think 42 ... Final answer: 42").error_reason == "unterminated_think"
    assert score_response(sample, "<think>Final answer: 42</think>\nFinal answer: 41").score == 0
    assert split_reasoning("prefilled thoughts</think>42") == ("42", "prefilled thoughts")
    assert split_reasoning("42", "chain") == ("42", "chain")
    assert score_response(sample, "").error_reason == "empty_response"


# --- table items -----------------------------------------------------------------------------------

GRID = [[11.27, 5.44], [113.94, 75.23]]


@pytest.mark.parametrize("fmt", ["html_table", "json", "tuple_list"])
def test_table_formats_full_credit_and_all_or_nothing(fmt):
    rows = [[f"{v:.2f}" for v in r] for r in GRID]
    text = "Working...\n" + table_text(rows, ["ROE", "Owner's equity (TTM)"], ["FY2022", "FY2023"], fmt)
    result = score_response(table(GRID, fmt), text)
    assert (result.score, result.positional) == (1, 1)
    rows[1][1] = "75.2"  # one cell off at the requested precision -> nothing
    assert score_response(table(GRID, fmt), table_text(rows, ["a", "b"], ["FY2022", "FY2023"], fmt)).score == 0


def test_numbers_must_be_inside_the_requested_block():
    text = "ROE: 11.27, 5.44; ROIC: 113.94, 75.23\n```json\n[[11.27, 5.44]]\n```"
    assert score_response(table(GRID, "json"), text).error_reason == "missing_values"
    html_instead = table_text([[f"{v}" for v in r] for r in GRID], ["a", "b"], ["x", "y"], "html_table")
    assert score_response(table(GRID, "json"), html_instead).error_reason == "no_block"
    truncated = "<table><tr><td>11.27</td><td>5.44</td></tr><tr><td>113.94</td><td>75.23</td></tr>"
    assert score_response(table(GRID, "html_table"), truncated).error_reason == "no_block"


def test_last_block_counts_and_thousands_separators_in_cells():
    draft = "```json\n[[1, 2], [3, 4]]\n```"
    final = '```json\n[["11.27", "5.44"], ["113.94", "75.23"]]\n```'
    assert score_response(table(GRID, "json"), draft + "\nCorrected:\n" + final).score == 1
    assert score_response(table(GRID, "json"), final + "\nOops:\n" + draft).score == 0
    big = [[1234567.5, -2000.25]]
    assert score_response(table(big, "html_table"), "<table><tr><td>1,234,567.50</td><td>\u22122,000.25</td></tr></table>").score == 1


def test_positional_variant_catches_swapped_cells_and_number_dumps():
    swapped = '```json\n[["5.44", "11.27"], ["113.94", "75.23"]]\n```'
    result = score_response(table(GRID, "json"), swapped)
    assert (result.score, result.positional) == (1, 0)  # the set rule passes, the cell positions are wrong
    transposed = "```json\n[[11.27, 113.94], [5.44, 75.23]]\n```"  # periods as rows: same cells, transposed
    assert score_response(table(GRID, "json"), transposed).positional == 1
    dump = "```json\n[[11.27, 5.44, 113.94, 75.23, 1, 2, 3]]\n```"
    assert score_response(table(GRID, "json"), dump).positional == 0


def test_paper_table14_tuple_list_answered_with_dictionary_keys_scores_zero():
    truth = [[-19368.16, 20477.45], [75991.92, 68198.91], [274889.0, 363636.97]]
    sample = table(truth, "tuple_list")
    model_output = ('[{"Year": "2022Y", "Working_Capital_10k": -1936.82, "Retained_Earnings_10k": 7599.19, '
                    '"Total_Invested_Capital_10k": 27494.20}, {"Year": "2023Y", "Working_Capital_10k": 2047.75, '
                    '"Retained_Earnings_10k": 6819.89, "Total_Invested_Capital_10k": 36363.70}]')
    result = score_response(sample, model_output)
    assert (result.score, result.positional, result.error_reason) == (0, 0, "not_rows")
    # right values but dictionary keys: still a format failure, not a numeric one
    keyed = json.dumps([{"Year": y, "WC": a, "RE": b, "TIC": c} for y, (a, b, c) in zip(["2022Y", "2023Y"], zip(*truth))])
    assert score_response(sample, keyed).error_reason == "not_rows"
    tuples = "[" + ", ".join(f"('{y}', {a}, {b}, {c})" for y, (a, b, c) in zip(["2022Y", "2023Y"], zip(*truth))) + "]"
    assert score_response(sample, tuples).score == 1


# --- deficiency items ------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["number", "html_table", "json", "tuple_list"])
def test_deficiency_needs_explicit_refusal_and_no_numeric_answer(fmt):
    sample = {**table("Insufficient information", fmt), "target_periods": ["FY2023Q4"]}
    assert score_response(sample, "The FY2023Q3YTD report (2023-09-30) is missing.\nFinal answer: Insufficient information").score == 1
    assert score_response(sample, "Final answer: 12.5").error_reason == "no_refusal"
    assert score_response(sample, "Insufficient information, but roughly: 12.5").error_reason == "answered_deficient"
    if fmt != "number":
        guess = table_text([["1.0"]], ["x"], ["FY2023Q4"], fmt)
        assert score_response(sample, "Insufficient information\n" + guess).score == 0


def test_refusing_an_answerable_item_scores_zero():
    assert score_response(single(3.5), "Final answer: Insufficient information").error_reason == "refused"


def test_bad_ground_truth_names_the_sample():
    with pytest.raises(InputError, match="'s'"):
        score_response(single("n/a"), "1")
    with pytest.raises(InputError, match="decimals"):
        score_response({**single(1.0), "decimals": None}, "1")


# --- reference backends ----------------------------------------------------------------------------

def test_oracle_scores_everything_and_wrong_unit_only_deficiency_items():
    rows = make_rows(240, seed=3)
    params = GenerationParams()
    oracle, wrong = make_backend("oracle"), make_backend("wrong_unit")
    right = oracle.generate([r["messages"] for r in rows], params, items=rows)
    slipped = wrong.generate([r["messages"] for r in rows], params, items=rows)
    assert all(score_response(r, c.text).score == 1 for r, c in zip(rows, right))
    for row, completion in zip(rows, slipped):
        result = score_response(row, completion.text)
        assert result.score == (row["answer"] == "Insufficient information"), (row["id"], completion.text[-200:])
    assert {r["answer_format"] for r in rows} == {"number", "html_table", "json", "tuple_list"}


def test_wrong_unit_scales_only_the_final_answer():
    text = "Step 1: 2,000 / 1,000 = 2.00\nFinal answer: 2.00"
    assert scale_final_answer(text, "number", 1000) == "Step 1: 2,000 / 1,000 = 2.00\nFinal answer: 2000"
    with pytest.raises(InputError, match="items="):
        make_backend("oracle").generate([[{"role": "user", "content": "x"}]], GenerationParams())


# --- official release adapter ----------------------------------------------------------------------

def test_official_rows_map_into_contract4(tmp_path):
    official = [
        {"id": 7, "question": "Q", "answer": "1153987.78", "task_type": "single_indice", "capability": "domain"},
        {"id": 8, "question": "Q", "answer": '```json [ ["11.27", "5.44", "52.17"], ["113.94", "75.23", "202.25"] ] ```',
         "task_type": "table_indice", "capability": "temporal+caliber"},
        {"id": 9, "question": "Q", "answer": "Insufficient information to calculate the final value", "task_type": "single_indice"},
        {"id": 10, "query": "Q", "gt": "<table> <tr><td>Metric</td><td>2023Q3</td><td>2023Y</td></tr> <tr><td>A</td><td>51.7</td><td>39.1</td></tr></table>"},
    ]
    path = tmp_path / "official.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in official), encoding="utf-8")
    rows = load_rows(path)
    assert [(r["paradigm"], r["answer_format"], r["decimals"]) for r in rows] == [
        ("single", "number", 2), ("table", "json", 2), ("single", "number", 2), ("table", "html_table", 1)]
    assert rows[1]["answer"] == [[11.27, 5.44, 52.17], [113.94, 75.23, 202.25]]
    assert rows[2]["answer"] == "Insufficient information" and rows[3]["answer"] == [[51.7, 39.1]]
    assert rows[0]["messages"] == [{"role": "user", "content": "Q"}]
    assert score_response(rows[1], '```json\n[[11.27, 5.44, 52.17], [113.94, 75.23, 202.25]]\n```').score == 1
    with pytest.raises(InputError, match="prompt"):
        from_official({"answer": "1"}, 0, "test")


def test_score_cli_scores_saved_predictions(tmp_path, capsys):
    from ledgerlm.evaluate.cli import score_main
    from ledgerlm.evaluate.runfiles import read_run

    rows = make_rows(12, seed=4)
    preds = [{**r, "response": r["solution"] if k % 3 else "<think>unfinished"} for k, r in enumerate(rows)]
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in preds), encoding="utf-8")
    assert score_main(["--benchmark", "finindices", "--predictions", str(path), "--out", str(tmp_path / "scored"), "--n-boot", "200"]) == 0
    results, samples = read_run(tmp_path / "scored")
    assert [s["score"] for s in samples] == [int(k % 3 != 0) for k in range(12)]
    assert results["metrics"]["accuracy"]["value"] == pytest.approx(8 / 12)
    assert results["metrics"]["parse_failure_rate"] == pytest.approx(4 / 12)
    assert samples[0]["error_reason"] == "unterminated_think" and samples[0]["answer_text"] is None
    assert "accuracy 66.67%" in capsys.readouterr().out


def test_integer_too_large_for_a_float_is_no_answer_not_a_crash():
    """A JSON cell of 400 digits used to raise OverflowError (fixed in scorer version 2)."""
    from ledgerlm.evaluate.finindices.extract import parse_cell

    assert parse_cell(10**400) is None
    assert parse_cell(int("9" * 4000)) is None
    assert parse_cell(12) == 12.0


def test_accounting_negative_answer_and_large_values_at_their_precision():
    """Helper audit of the scorers against the paper: "Final answer: (1,234)" was read as +1234 (a cell read it as -1234),
    and precision_key's 1e-12 nudge shifted the rounding from 5e11 units on (123,456,789,012.344 at 2 decimals keyed
    as .35), so a correct "123,456,789,012.34" scored 0."""
    assert score_response(single(-1234.0, 0), "Final answer: (1,234)").score == 1
    assert score_response(single(1234.0, 0), "Final answer: (1,234)").score == 0
    assert score_response(single(-12.5, 1), "The change is 3 points.\nFinal answer: (12.5)").score == 1
    assert score_response(single(12.5, 1), "Final answer: 12.5 (rounded to 1 decimal)").score == 1  # not a whole cell
    assert precision_key(123456789012.344, 2) == precision_key(123456789012.34, 2) == 12345678901234
    assert score_response(single(123456789012.34, 2), "Final answer: 123,456,789,012.34").score == 1
    assert precision_key(2.675, 2) == 268 and precision_key(-9.375, 2) == -938  # floats a few ulps short of .5
