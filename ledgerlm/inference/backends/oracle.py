"""`oracle` — a reference backend without a model: answers with each item's worked `solution`.

    ledgerlm eval --model oracle --tasks finindices --data runs/data --output_path runs/oracle

Sanity anchor: the oracle must score 100% on FinIndices. The rows are passed to `generate` as
`items=` (the sampler interface's escape hatch for reference backends); the messages are ignored.
An optional `transform(text, item)` rewrites each solution: the FinIndices `wrong_unit` backend
(every final-answer number x1000, `ledgerlm.evaluate.finindices.reference`) is this class with the
scorer's own answer grammar as its transform, registered in the backend table by that module, so
this layer never imports a benchmark.
"""
from __future__ import annotations

from typing import Any, Callable

from ledgerlm.errors import InputError
from ledgerlm.inference.sampling import Completion, GenerationParams, Messages


class OracleSampler:
    """Answers with `item["solution"]`, optionally rewritten by `transform(solution, item)`."""

    def __init__(self, *, transform: Callable[[str, dict], str] | None = None, name: str = "oracle", **_ignored: Any):
        self.transform = transform
        self.model_id = name

    def generate(self, batch: list[Messages], params: GenerationParams, *, items: list[dict] | None = None, **kwargs: Any) -> list[Completion]:
        if items is None or len(items) != len(batch):
            raise InputError(f"the {self.model_id} backend needs items= (one dataset row per conversation)")
        out = []
        for item in items:
            solution = item.get("solution")
            if not isinstance(solution, str) or not solution.strip():
                raise InputError(f"sample {item.get('id')!r} has no worked solution", field="solution")
            text = solution if self.transform is None else self.transform(solution, item)
            out.append(Completion(text=text, completion_tokens=len(text.split())))
        return out
