"""Separate a model's reasoning from its answer before scoring.

    python -c "from ledgerlm.inference.reasoning import split_reasoning; print(split_reasoning('<think>2+2</think>4'))"

Rules: text inside `<think>…</think>` is reasoning and is never scored; when the chat template
already opened the think block in the prompt, text before a lone `</think>` is reasoning; an opened
but unterminated `<think>` means the model never reached its answer (answer = None). A separate
`reasoning_content` (OpenAI-compatible servers, vLLM reasoning parsers) is passed through as is.
"""
from __future__ import annotations

import re

_ANY_RE = re.compile(r"</?think>", re.IGNORECASE)
_OPEN_RE = re.compile(r"<think>", re.IGNORECASE)
_CLOSE_RE = re.compile(r"</think>", re.IGNORECASE)


def split_reasoning(text: str | None, reasoning_content: str | None = None) -> tuple[str | None, str | None]:
    """Return `(answer, reasoning)`; `answer` is None when a `<think>` block is never closed."""
    text = text or ""
    if "<" not in text or not _ANY_RE.search(text):
        return text.strip(), reasoning_content
    closes = list(_CLOSE_RE.finditer(text))
    if not closes:
        if _OPEN_RE.search(text):
            return None, _OPEN_RE.split(text, maxsplit=1)[1].strip()
        return text.strip(), reasoning_content
    last = closes[-1]
    inner = text[: last.start()]
    reasoning = _OPEN_RE.sub("", inner).strip()
    answer = text[last.end():]
    if _OPEN_RE.search(answer):  # a second think block opened after the last close and never closed
        return None, reasoning
    if reasoning_content:
        reasoning = f"{reasoning_content}\n{reasoning}".strip()
    return answer.strip(), reasoning or None
