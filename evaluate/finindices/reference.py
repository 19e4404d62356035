"""FinIndices reference models for the backend table: `wrong_unit` — the oracle with every number of
the final answer x1000 (a unit slip), cut by the scorer's own answer grammar.

    ledgerlm eval --model wrong_unit --tasks finindices --data runs/data --output_path runs/wrong_unit

Sanity anchor: it scores 0% on every item whose answer has a non-zero number. Importing this module
(done by `ledgerlm.evaluate.finindices`) adds the `wrong_unit` row to
`ledgerlm.inference.backends.BACKENDS`; the inference layer itself never imports a benchmark.
"""
from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from ledgerlm.evaluate.finindices import extract
from ledgerlm.inference.backends import Backend, register_backend
from ledgerlm.inference.backends.oracle import OracleSampler

FACTOR = 1000


class WrongUnitSampler(OracleSampler):
    """The oracle whose final-answer numbers are all multiplied by FACTOR."""

    def __init__(self, **_ignored: Any):
        super().__init__(transform=_slip, name=f"wrong_unit_x{FACTOR}")


def _slip(solution: str, item: dict) -> str:
    return scale_final_answer(solution, item.get("answer_format") or "number", FACTOR)


def scale_final_answer(text: str, answer_format: str, factor: int) -> str:
    """Multiply every number inside the final answer (the requested block, or the answer line) by `factor`."""
    if answer_format == "number":
        start, end, _ = extract.answer_span(text)
    else:
        start, end = _last_block_span(text, answer_format)
    if start < 0:
        return text
    scaled = extract.replace_numbers(text[start:end], lambda token: _times(token, factor))  # Φ's own grammar
    return text[:start] + scaled + text[end:]


def _last_block_span(text: str, answer_format: str) -> tuple[int, int]:
    block = extract.isolate_block(text, answer_format)
    if block is None:
        return -1, -1
    start = text.rfind(block.text)
    return start, start + len(block.text)


def _times(token: str, factor: int) -> str:
    try:
        value = Decimal(token.replace(",", "")) * factor
    except InvalidOperation:
        return token
    return format(value.normalize(), "f") if "e" not in token.lower() else f"{value:E}"



register_backend("wrong_unit", Backend(__name__, "WrongUnitSampler", {}, needs_target=False))
