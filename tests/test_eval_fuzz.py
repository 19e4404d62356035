"""Property-based fuzzing of the FinIndices scorer: random and malformed outputs never crash it,
and scoring is deterministic. The default suite runs 400 examples; `pytest -m slow` runs 10,000."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # eval_fixtures, openai_stub_server
from eval_fixtures import make_rows, table_text  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ledgerlm.evaluate.finindices.scoring import FORMAT_ERRORS, PARSE_ERRORS, score_response  # noqa: E402

SAMPLES = make_rows(16, seed=21)  # every answer format, both paradigms, deficiency items

number = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(lambda d: f"{d:,}"),
    st.integers(-10**30, 10**30).map(str),
    st.floats(-1e9, 1e9).map(lambda x: f"{x:.3e}"),
    st.floats(-1e6, 1e6).map(lambda x: f"{x:.2f}".replace("-", "\u2212")),  # unicode minus
    st.integers(0, 10**9).map(lambda n: str(n).translate(str.maketrans("0123456789", "０１２３４５６７８９"))),  # full-width
    st.floats(-1e4, 1e4).map(lambda x: f"{x:.2f}%"),
    st.floats(0, 1e4).map(lambda x: f"{x:.2f}万"),
    st.floats(0, 1e4).map(lambda x: f"{x:.2f}亿"),
    st.sampled_from(["(1,234.50)", "1,2,3", ".5", "-.5e-3", "1e999", "1,234,5678", "0x1F", "１２３．４５"]),
)
fragment = st.one_of(
    number,
    st.text(max_size=40),
    st.sampled_from(["<table>", "</table>", "<tr>", "<td>", "</td>", "<th>", "</tr>", "<table><tr><td>", "<td colspan=2>",
                     "```json\n", "```", "[", "]", "[[", "]]", "(", ")", "{", "}", '"', "'", ",", ": ", "\n",
                     "<think>", "</think>", "Final answer:", "Answer：", "答案：", "\\boxed{", "Insufficient information",
                     "信息不足", "&minus;", "&nbsp;", "FY2023Q3YTD", "2023-06-30", "None", "null", "NaN", "Infinity"]),
)
output = st.one_of(
    st.lists(fragment, max_size=60).map("".join),
    st.builds(lambda rows, fmt: table_text(rows, [f"r{i}" for i in range(len(rows))], ["FY2023"] * len(rows[0]), fmt),
              st.lists(st.lists(number, min_size=1, max_size=4), min_size=1, max_size=4),
              st.sampled_from(["html_table", "json", "tuple_list"])),
    st.builds(lambda depth, tail: "```json\n" + "[" * depth + tail + "]" * (depth // 2), st.integers(1, 3000), st.text(max_size=20)),
    st.builds(lambda n, body: body * n, st.integers(1, 20_000), st.sampled_from(["1,234.5 ", "<td>9</td>", "[1,", "万"])),
)


def check(sample: dict, text: str) -> None:
    first = score_response(sample, text)
    assert first == score_response(sample, text)  # deterministic
    assert first.score in (0, 1) and first.positional in (0, 1) and first.positional <= first.score
    assert (first.error_reason is None) == (first.score == 1)
    assert first.error_reason is None or isinstance(first.error_reason, str)
    if first.error_reason in PARSE_ERRORS | FORMAT_ERRORS:
        assert first.score == 0


@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.sampled_from(SAMPLES), output)
def test_scorer_never_crashes_and_is_deterministic(sample, text):
    check(sample, text)


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.sampled_from(SAMPLES), output)
def test_scorer_fuzz_10k(sample, text):
    check(sample, text)
