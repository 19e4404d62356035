"""Reference backends without a model: `oracle` answers with each item's worked `solution`;
`wrong_unit` does the same but scales every number of the final answer by 1,000 (a unit slip).

    ledgerlm eval --benchmark finindices --model oracle --data runs/data --out runs/oracle

Sanity anchors: the oracle must score 100%, the wrong-unit oracle 0% on every item whose answer
has a non-zero number. The rows are passed to `generate` as `items=` (the sampler interface's
escape hatch for reference backends); the messages themselves are ignored.
"""
from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from ledgerlm.errors import InputError
from ledgerlm.evaluate.finindices import extract
from ledgerlm.inference.sampling import Completion, GenerationParams, Messages

_NUMBER = extract._NUMBER  # the scorer's own number grammar, so the slip hits exactly what it reads


class OracleSampler:
    """Answers with `item["solution"]`; with `scale != 1`, the final answer's numbers are scaled."""

    def __init__(self, *, scale: int = 1, **_ignored: Any):
        self.scale = scale
        self.model_id = "oracle" if scale == 1 else f"wrong_unit_x{scale}"

    def generate(self, batch: list[Messages], params: GenerationParams, *, items: list[dict] | None = None, **kwargs: Any) -> list[Completion]:
        if items is None or len(items) != len(batch):
            raise InputError(f"the {self.model_id} backend needs items= (one dataset row per conversation)")
        out = []
        for item in items:
            solution = item.get("solution")
            if not isinstance(solution, str) or not solution.strip():
                raise InputError(f"sample {item.get('id')!r} has no worked solution", field="solution")
            text = solution if self.scale == 1 else scale_final_answer(solution, item.get("answer_format") or "number", self.scale)
            out.append(Completion(text=text, completion_tokens=len(text.split())))
        return out


def scale_final_answer(text: str, answer_format: str, factor: int) -> str:
    """Multiply every number inside the final answer (the requested block, or the answer line) by `factor`."""
    if answer_format == "number":
        start, end, _ = extract.answer_span(text)
    else:
        start, end = _last_block_span(text, answer_format)
    if start < 0:
        return text
    scaled = _NUMBER.sub(lambda m: _times(m.group(), factor), text[start:end])
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

