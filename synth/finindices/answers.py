"""Scale, round and write answers: unit constraints, half-away-from-zero rounding, table answer formats.

    python -c "from ledgerlm.synth.finindices.answers import answer_text; print(answer_text(1153987775.78, 'currency', 'thousands', 2))"

Rounding rule (stated in the dataset card): decimal half away from zero, applied once to the
scaled value by `ledgerlm.synth.indices.compute.format_answer` (the one definition of the ground
truth). The unrounded base-unit value is kept in each row (`value_unrounded`).
"""
from __future__ import annotations

import functools

from ledgerlm.synth.indices.compute import format_answer

INSUFFICIENT = "Insufficient information"

CURRENCY_UNITS = ("units", "thousands", "ten_thousands", "millions", "hundred_millions", "billions")
TABLE_FORMATS = ("html_table", "json", "tuple_list")


def answer_unit(result_kind: str, currency_unit: str) -> str:
    """The `format_answer` unit for one index: the item's currency unit, percent, or plain units (ratios, days, …)."""
    return currency_unit if result_kind == "currency" else "percent" if result_kind == "percent" else "units"


@functools.lru_cache(maxsize=1 << 16)
def answer_text(value: float, result_kind: str, currency_unit: str, decimals: int) -> str:
    """The answer as text with exactly `decimals` places (scaled, rounded half away from zero; never '-0.00').
    Memoised: a cell is written for the unit re-draw (`rounds_to_zero`), the answer and the worked solution. Equal
    keys give equal text (1 and 1.0 scale alike; 0.0 and -0.0 both print '0', without the minus)."""
    text = format(format_answer(value, result_kind, answer_unit(result_kind, currency_unit), decimals), "f")
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def table_text(rows: list[list[str]], row_labels: list[str], col_labels: list[str], answer_format: str) -> str:
    """A table answer written the way the prompt asks (rows = indices, columns = periods)."""
    if answer_format == "html_table":
        head = "<tr><th>Index</th>" + "".join(f"<th>{c}</th>" for c in col_labels) + "</tr>"
        body = "".join(
            f"<tr><td>{label}</td>" + "".join(f"<td>{v}</td>" for v in row) + "</tr>" for label, row in zip(row_labels, rows)
        )
        return f"<table>{head}{body}</table>"
    if answer_format == "json":
        return "```json\n[" + ", ".join("[" + ", ".join(row) + "]" for row in rows) + "]\n```"  # valid JSON, keeps the decimals
    if answer_format == "tuple_list":
        return "[" + ", ".join("(" + ", ".join([repr(label)] + list(row)) + ")" for label, row in zip(row_labels, rows)) + "]"
    raise ValueError(f"unknown table answer format {answer_format!r}; expected one of {TABLE_FORMATS}")


def rounds_to_zero(value: float, result_kind: str, currency_unit: str, decimals: int) -> bool:
    """True when a non-zero value is written as 0 at this unit and precision (issue 11: re-draw the unit)."""
    return value != 0 and float(answer_text(value, result_kind, currency_unit, decimals)) == 0
