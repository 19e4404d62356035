"""Worked solutions quote each figure as the prompt shows it, then in base units, and write the unit conversion
as an exact quotient before rounding (issue 15: the steps a small model gets wrong when it does them silently).

    python -m pytest tests/test_synth_solution_steps.py -q

Checked against the prompt text itself (the figure must appear on the line item's row of the shown report) and with
plain `Decimal` arithmetic, not with the code that wrote the solution.
"""
from __future__ import annotations

import html
import re
from decimal import Decimal

import pytest
from hypothesis import given, settings, strategies as st

from ledgerlm.synth.finindices.config import SynthConfig
from ledgerlm.synth.finindices.pipeline import Stats

SHOWN = re.compile(r"^- (?P<label>.+) \((?P<concept>[\w]+)\): (?P<shown>[\d,]+) (?P<word>thousand|million|billion) = (?P<base>[\d,]+)$")
QUOTIENT = re.compile(r": (?P<raw>-?[\d,]+(?:\.\d+)?) / (?P<div>[\d,]+) = (?P<exact>-?[\d,]+(?:\.\d+)?) -> (?P<unit>\w+), (?P<dec>\d) decimals? = (?P<text>-?[\d.]+)$")
WORDS = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
UNITS = {"thousands": 1_000, "millions": 1_000_000, "billions": 1_000_000_000}


@pytest.fixture(scope="module")
def rows():
    from ledgerlm.synth.finindices.contexts import Builder

    builder = Builder.from_config(SynthConfig(seed=5, languages=["en"], traps=False))
    stats, out = Stats(), []
    for slot in range(80):
        out += builder.slot(slot, stats)
    return [r for r in out if r["answer"] != "Insufficient information"]


def _user(row):
    return next(m["content"] for m in row["messages"] if m["role"] == "user")


def _solution_lines(rows, pattern):
    """(row, line, match) for every worked-solution line the pattern matches."""
    for row in rows:
        for line in row["solution"].splitlines():
            m = pattern.search(line)
            if m:
                yield row, line, m


def test_shown_figures_are_on_the_prompts_rows_and_scale_exactly(rows):
    seen = 0
    for row, line, m in _solution_lines(rows, SHOWN):
        seen += 1
        user = _user(row)
        shown, base = int(m["shown"].replace(",", "")), int(m["base"].replace(",", ""))
        assert shown * WORDS[m["word"]] == base, line
        # the figure as shown is a whole number on a line of the prompt (the filer's row label may differ from the
        # canonical label the solution names), and some report of the prompt is shown in that unit
        # (tuple-list blocks write Python floats: 64000.0 for 64,000)
        plain = m["shown"].replace(",", "")
        assert (re.search(rf"(?<![\d,.]){re.escape(m['shown'])}(?![\d,])", user)
                or re.search(rf"(?<![\d.]){plain}\.0\)", user)), (row["id"], line)
        assert f"(in {m['word']}s of" in user, (row["id"], line)
        # ... under the label the prompt shows (seed-6262 prompt audit: "Total assets" for the prompt's "Assets")
        label = m["label"]
        assert any(form in user for form in (label, html.escape(label, quote=False), label.replace("&", r"\&"))), (row["id"], line)
    assert seen >= 20, f"only {seen} scaled figures in {len(rows)} rows"


def test_unit_conversion_is_the_exact_quotient_then_half_away_from_zero(rows):
    seen = 0
    for _, line, m in _solution_lines(rows, QUOTIENT):
        seen += 1
        raw, div = Decimal(m["raw"].replace(",", "")), int(m["div"].replace(",", ""))
        assert div == UNITS[m["unit"]], line
        assert Decimal(m["exact"].replace(",", "")) == raw / div, line
        half_up = (abs(raw / div) * 10 ** int(m["dec"]) + Decimal("0.5")).to_integral_value(rounding="ROUND_FLOOR")
        expected = half_up / Decimal(10) ** int(m["dec"]) * (1 if raw >= 0 else -1)
        assert Decimal(m["text"]) == expected, line
        assert len(m["text"].split(".")[1] if "." in m["text"] else "") == int(m["dec"]), line
    assert seen >= 20, f"only {seen} unit conversions in {len(rows)} rows"


def test_compact_style_keeps_the_figures_and_final_answer_in_fewer_characters():
    from ledgerlm.synth.finindices.contexts import Builder

    rows = {}
    for style in ("full", "compact"):
        builder = Builder.from_config(SynthConfig(seed=3, languages=["en"], traps=False, solution_style=style))
        stats, out = Stats(), []
        for slot in range(15):
            out += builder.slot(slot, stats)
        rows[style] = {r["id"]: r for r in out}
    assert rows["full"].keys() == rows["compact"].keys() and rows["full"]
    for rid, full in rows["full"].items():
        compact = rows["compact"][rid]
        assert compact["answer"] == full["answer"] and compact["messages"] == full["messages"]  # only the solution differs
        assert compact["solution"].splitlines()[-1] == full["solution"].splitlines()[-1]  # the final answer line
        if full["answer"] != "Insufficient information":
            assert "Step 1" not in compact["solution"] and len(compact["solution"]) < len(full["solution"]), rid
            # every conversion line of the full solution is in the compact one
            assert all(line in compact["solution"] for line in full["solution"].splitlines() if QUOTIENT.search(line)), rid


def test_unknown_solution_style_is_one_error_naming_the_field(tmp_path):
    from ledgerlm.errors import InputError
    from ledgerlm.synth.finindices.config import load_config

    cfg = tmp_path / "slice.yaml"
    cfg.write_text("solution_style: short\n")
    with pytest.raises(InputError, match="solution_style"):
        load_config(str(cfg))


def test_memoised_trace_numbers_and_fact_lines_print_as_unmemoised():
    """The memos behind `num` and the fact lines key on equal numbers that print differently (0.0 / -0.0, and a
    Decimal equal to a float): whichever comes first, each prints as the plain formatting does."""
    from ledgerlm.synth.finindices import solutions

    solutions._num_memo.cache_clear()
    solutions._fact_memo.cache_clear()
    assert [solutions.num(x) for x in (0.0, -0.0, 0, Decimal("2.50"), 2.5, 1234.5, -7750.0)] == \
        ["0", "-0", "0", "2.50", "2.5", "1,234.50", "-7,750"]
    assert [solutions.num(x) for x in (-0.0, 0.0)] == ["-0", "0"]
    for order in ((0.0, -0.0, 64000.0, 64000), (-0.0, 0.0, 64000, 64000.0)):
        lines = [solutions._fact_line("revenue", x, 1000, "en") for x in order]
        plain = [f"- Revenue (revenue): {solutions._as_shown('revenue', x, 1000, solutions.PHRASES['en'])}" for x in order]
        assert lines == plain and lines[0] != lines[1] and lines[2] == "- Revenue (revenue): 64 thousand = 64,000"


def _shown_by_decimal(value, scale: int):
    """The definition: the decimal the figure's repr writes, divided by the scale, when that is a whole number."""
    shown = Decimal(repr(float(value))) / scale
    return int(shown) if shown == shown.to_integral_value() else None


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.integers(-2**70, 2**70).map(float), st.floats(allow_nan=False, allow_infinity=False),
                 st.integers(-10**12, 10**12).map(lambda n: float(n * 1000)), st.integers(-2**60, 2**60)),
       st.sampled_from([1_000, 10_000, 1_000_000, 1_000_000_000]))
def test_scaled_figure_is_the_decimal_quotient(value, scale):
    """A fact quoted at its report's scale (`2,908,086 thousand`): whole floats below 2**53 are divided as ints, the
    rest as the Decimal of their repr; both give what the Decimal definition gives (above 2**53 a float's repr is not
    its integer: 2**60 + 2**8 prints as 1.1529215046068472e+18)."""
    from ledgerlm.synth.finindices.solutions import _scaled_whole

    assert _scaled_whole(value, scale) == _shown_by_decimal(value, scale)
    assert _scaled_whole(float(2**60 + 2**8), 1_000) == _shown_by_decimal(float(2**60 + 2**8), 1_000) != (2**60 + 2**8) // 1_000


def test_conversion_lines_name_the_kind_of_result_not_a_currency_unit():
    """Chinese solutions labelled days and plain ratios "元(原单位)" (seed-9001 analyst audit): a currency label on a
    day count. A conversion line names days, times, a plain number or per-share amounts for those results."""
    from ledgerlm.synth.finindices.contexts import Builder

    builder = Builder.from_config(SynthConfig(seed=7, languages=["zh"], traps=False, paradigms={"single": 1.0},
                                              indices=["receivables_days", "current_ratio", "inventory_turnover"]))
    from ledgerlm.synth.indices.registry import load_registry

    registry = load_registry()  # a Chinese conversion line names its index in Chinese (no index id in zh solutions)
    stats, seen = Stats(), {}
    for slot in range(60):
        for row in builder.slot(slot, stats):
            for line in row["solution"].splitlines():
                if line.startswith(tuple(registry[i].name_zh + " " for i in row["indices"])) and " -> " in line:
                    seen[row["indices"][0]] = line
    assert "元(原单位)" not in "".join(seen.values()) and "原币单位" not in "".join(seen.values())
    assert "-> 天，" in seen["receivables_days"] and "-> 数值，" in seen["current_ratio"] and "-> 次，" in seen["inventory_turnover"]
