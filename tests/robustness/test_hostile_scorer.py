"""Scorer ReDoS (#14.1): adversarial output shapes are scored in linear time, within a per-output budget.

    python -m pytest tests/robustness/test_hostile_scorer.py -q          # 4 KB shapes + 2 scaling checks + fuzz
    python -m pytest tests/robustness/test_hostile_scorer.py -q -m slow  # 200 KB shapes (MAX_CHARS)

The shapes are the ones that were super-linear before the fix — `answer` + blanks (cubic: a 3 KB
output took 50.8 s), an unclosed `<table` repeated (quadratic: 196 KB took 19.3 s), unclosed code
fences with blank runs, `<` without `>` — and every other marker/bracket/number fragment of the
scorer's grammar, repeated, padded and interleaved with non-ASCII (which takes the regex paths).
"""
from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledgerlm.evaluate.finindices.scoring import score_response

UNITS = ["answer", "answer ", "answer is", "final ", "final answer", "answer*", "answer \t", "answer is **", "<table",
         "<table>", "<table ", "</table", "</table ", "<tr", "<td", "<", ">", "```", "```json", "```json ", "``` ", "```py\n",
         "[", "]", "[1,", "(", "'", '"', "1", "1,", "1,000", ".5", "1e", "1.", "\\boxed{", "{", "}", "<think>", "</think>",
         "&amp;", "&#", "answer:", "最终答案", "答案", "insufficient ", " ", "\n", "é", "İ", "-", "1 ", "<table><tr><td>",
         "</td>", "<table\n", "None", ",", ", ]", "\u2212", "１"]
SHAPES = ("repeat", "unit+blanks", "repeat+x", "interleaved")
SAMPLES = [
    {"id": "n", "answer_format": "number", "answer": 1.5, "decimals": 2, "target_periods": ["FY2023"]},
    {"id": "h", "answer_format": "html_table", "answer": [[1.5, 2.0]], "decimals": 2},
    {"id": "j", "answer_format": "json", "answer": [[1.5, 2.0]], "decimals": 2},
    {"id": "t", "answer_format": "tuple_list", "answer": [[1.5, 2.0]], "decimals": 2},
    {"id": "d", "answer_format": "html_table", "answer": "Insufficient information", "decimals": 2},
]


def shape(unit: str, kind: str, n: int) -> str:
    k = max(1, n // len(unit))
    if kind == "repeat":
        return unit * k
    if kind == "unit+blanks":
        return unit + " " * n + "x"
    if kind == "repeat+x":
        return unit * k + "x"
    return (unit + "é") * (n // (len(unit) + 1))


def worst_time(text: str) -> float:
    """The most CPU seconds any answer format spends on `text` (CPU time: other processes on a busy
    machine do not count against the budget, a super-linear regex does)."""
    worst = 0.0
    for sample in SAMPLES:
        began = time.process_time()
        score_response(sample, text)
        worst = max(worst, time.process_time() - began)
    return worst


def test_the_issue_cases_are_fast():
    """The two measured cases of the issue: 3 KB `answer`+blanks (was 50.8 s), 196 KB of `<table` (was 19.3 s)."""
    assert worst_time("The answer" + " " * 3000 + "is unknown") < 0.5
    assert worst_time("<table" * (196_000 // 6)) < 2.0


@pytest.mark.parametrize("kind", SHAPES)
def test_every_shape_within_budget(kind):
    """4 KB per output, every unit, every answer format: 0.25 s each (the linear code takes ~10 ms)."""
    slow = [(unit, round(t, 3)) for unit in UNITS if (t := worst_time(shape(unit, kind, 4000))) > 0.25]
    assert not slow, slow


@pytest.mark.parametrize("text_of", [lambda n: "answer" + " " * n + "x", lambda n: "<table" * (n // 6),
                                     lambda n: "```json" + " " * n, lambda n: "<table><tr><td>" + "<" * n + "</table>"])
def test_time_grows_linearly(text_of):
    """4x the length costs well under 16x the time (quadratic) — linear within noise."""
    small, large = text_of(10_000), text_of(40_000)
    t_small = min(worst_time(small) for _ in range(2))
    t_large = min(worst_time(large) for _ in range(2))
    assert t_large < max(8 * t_small, 0.05), (t_small, t_large)


fragment = st.one_of(st.sampled_from(UNITS), st.text(max_size=8))
hostile = st.tuples(st.lists(fragment, min_size=1, max_size=6), st.integers(1, 3000)).map(lambda t: "".join(t[0]) * (t[1] // max(1, len("".join(t[0]))) + 1))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile, st.sampled_from(SAMPLES))
def test_fuzz_hostile_repetitions(text, sample):
    """Random repeated fragments up to ~3 KB: never an exception, never over 0.25 s."""
    began = time.process_time()
    result = score_response(sample, text)
    assert time.process_time() - began < 0.25
    assert result.score in (0, 1)


@pytest.mark.slow
@pytest.mark.parametrize("kind", SHAPES)
def test_every_shape_at_max_chars(kind):
    """200 KB (the scorer's MAX_CHARS) per output: under 3 CPU s each (measured 0.32 s worst, number-dense shapes)."""
    slow = [(unit, round(t, 3)) for unit in UNITS if (t := worst_time(shape(unit, kind, 200_000))) > 3.0]
    assert not slow, slow


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
@given(hostile, st.sampled_from(SAMPLES))
def test_fuzz_hostile_many(text, sample):
    """The fuzz above with 2000 examples (`pytest -m slow`)."""
    test_fuzz_hostile_repetitions.hypothesis.inner_test(text, sample)
