"""Datatrove-style small steps: each takes a sample and returns it or raises `Drop(reason)`; the run
counts kept samples and drops by named reason.

    python -c "from ledgerlm.synth.finindices.pipeline import *; s=Stats(); s.drop('over_token_cap'); print(s.as_dict())"

A slot (one item index) yields one sample per hint variant; a drop before the variants are made
counts once per variant, so `kept + sum(drops) == slots × variants` for every run.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable


class Drop(Exception):
    """A sample left out of the dataset; `reason` is a short snake_case name that the manifest counts."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail


@dataclass
class Stats:
    kept: int = 0
    drops: Counter = field(default_factory=Counter)

    def drop(self, reason: str, n: int = 1) -> None:
        self.drops[reason] += n

    def add(self, other: "Stats") -> None:
        self.kept += other.kept
        self.drops.update(other.drops)

    def as_dict(self) -> dict:
        return {"kept": self.kept, "drops": dict(sorted(self.drops.items()))}

    @classmethod
    def from_dict(cls, d: dict) -> "Stats":
        return cls(kept=int(d["kept"]), drops=Counter(d["drops"]))


Step = Callable[[dict], dict]


def run_steps(steps: list[tuple[str, Step]], samples: list[dict], stats: Stats) -> list[dict]:
    """Pass each sample through the steps in order; count drops by reason and return what is kept."""
    kept = []
    for sample in samples:
        try:
            for _name, step in steps:
                sample = step(sample)
        except Drop as drop:
            stats.drop(drop.reason)
            continue
        kept.append(sample)
    stats.kept += len(kept)
    return kept


VERIFY_EVERY = 50  # re-encode in full 1 prompt in 50 (2 %, chosen by a hash of the row id) ...
VERIFY_NEAR_CAP = 0.01  # ... and every prompt within 1 % of the cap


class TokenCountMismatch(RuntimeError):
    """The block-wise count of a prompt differs from its full encode: a bug, never a data problem."""


def _verify_pick(row_id: str) -> bool:
    import zlib

    return zlib.crc32(row_id.encode()) % VERIFY_EVERY == 0


def token_cap_step(counter, max_tokens: int, checked: list | None = None) -> Step:
    """Count the final prompt's tokens into `n_tokens` / `tokenizer`; drop `over_token_cap` above `max_tokens`.

    Rows may carry `_blocks` (the rendered report texts inside the user message, removed here): each is
    counted once per run (`TokenCounter.count_prompt`). A deterministic 2 % of rows and every row within
    1 % of the cap are re-encoded in full and must agree (else TokenCountMismatch stops the run);
    `checked`, when given, collects their ids."""

    def step(sample: dict) -> dict:
        blocks = sample.pop("_blocks", ())
        n = counter.count_prompt(sample["messages"], blocks)
        if _verify_pick(str(sample.get("id", ""))) or abs(n - max_tokens) <= VERIFY_NEAR_CAP * max_tokens:
            full = counter.count_messages(sample["messages"])
            if full != n:
                raise TokenCountMismatch(f"row {sample.get('id')}: block-wise count {n} != full encode {full} "
                                         f"({counter.name}); report this with the row")
            if checked is not None:
                checked.append(sample.get("id"))
        if n > max_tokens:
            raise Drop("over_token_cap", f"{n} > {max_tokens} tokens")
        sample["n_tokens"], sample["tokenizer"] = n, counter.name
        return sample

    return step
