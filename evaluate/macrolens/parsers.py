"""Robust numeric parsers for model responses: single values, trajectories, 11-field statements (JSON).

    python -c "from ledgerlm.evaluate.macrolens.parsers import parse_value; print(parse_value('about \$1.2 billion'))"

A parse failure returns None (single value / trajectory) or None for that field (statement); the
metrics score those as the paper does and count them. Reasoning (`<think>...</think>`) is stripped first.
"""
from __future__ import annotations

import json
import re

_THINK = re.compile(r"<think>.*?</think>|<think>.*\Z", re.S | re.I)
_NUM = re.compile(
    r"(?P<neg>-|\u2212|\()?\s*\$?\s*(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\d+)\s*\)?"
    r"\s*(?P<suf>trillion|billion|million|thousand|bn|mn|tn|[TBMK](?![a-zA-Z]))?",
    re.I,
)
_SCALE = {"trillion": 1e12, "tn": 1e12, "t": 1e12, "billion": 1e9, "bn": 1e9, "b": 1e9, "million": 1e6, "mn": 1e6,
          "m": 1e6, "thousand": 1e3, "k": 1e3}
_ANSWER = re.compile(r"(?:final answer|answer|prediction|predicted|forecast|estimate)\s*[:=]", re.I)


def strip_reasoning(text: str | None) -> str:
    return _THINK.sub("", text or "").strip()


def _to_float(m: re.Match) -> float:
    value = float(m.group("num").replace(",", ""))
    if m.group("suf"):
        value *= _SCALE[m.group("suf").lower()]
    return -value if m.group("neg") else value


def numbers(text: str) -> list[float]:
    """Every number in `text`, with $ / thousands separators / (negatives) / unit words handled."""
    return [_to_float(m) for m in _NUM.finditer(text)]


def parse_value(text: str | None) -> float | None:
    """One number: the first after an 'Answer:'-style cue, else the last number in the response."""
    body = strip_reasoning(text)
    cues = list(_ANSWER.finditer(body))
    if cues:
        found = numbers(body[cues[-1].end():])
        if found:
            return found[0]
    found = numbers(body)
    return found[-1] if found else None


def _json_candidates(body: str, open_: str, close: str) -> list[str]:
    """Balanced `open_ ... close` spans, outermost first (code fences need no special case)."""
    out, depth, start = [], 0, None
    for i, ch in enumerate(body):
        if ch == open_:
            if depth == 0:
                start = i
            depth += 1
        elif ch == close and depth:
            depth -= 1
            if depth == 0:
                out.append(body[start:i + 1])
    return out


def _loads(span: str):
    span = re.sub(r",\s*([}\]])", r"\1", span)  # trailing commas
    try:
        return json.loads(span)
    except json.JSONDecodeError:
        return None


def _as_number(value) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        found = numbers(value)
        return found[0] if found else None
    return None


def parse_trajectory(text: str | None) -> list[float] | None:
    """A list of numbers: the last JSON array of numbers, else every number after an answer cue or in the text."""
    body = strip_reasoning(text)
    for span in reversed(_json_candidates(body, "[", "]")):
        data = _loads(span)
        if isinstance(data, list) and data and all(_as_number(x) is not None for x in data):
            return [_as_number(x) for x in data]
    cues = list(_ANSWER.finditer(body))
    found = numbers(body[cues[-1].end():]) if cues else numbers(body)
    return found or None


def _norm_key(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")


def parse_fields(text: str | None, fields: tuple[str, ...], aliases: dict[str, str] | None = None) -> dict[str, float | None]:
    """Named numbers (an 11-field statement, or rent/price) from a JSON object, else from `name: value` lines.
    Keys match case- and punctuation-insensitively; `aliases` maps other spellings to field names."""
    body = strip_reasoning(text)
    lookup = {_norm_key(f): f for f in fields}
    lookup.update({_norm_key(k): v for k, v in (aliases or {}).items()})
    out: dict[str, float | None] = {f: None for f in fields}
    for span in reversed(_json_candidates(body, "{", "}")):
        data = _loads(span)
        if isinstance(data, dict):
            for k, v in data.items():
                f = lookup.get(_norm_key(str(k)))
                if f and out[f] is None:
                    out[f] = _as_number(v)
            if any(v is not None for v in out.values()):
                return out
    for line in body.splitlines():
        m = re.match(r"\s*[-*]?\s*\**([A-Za-z][A-Za-z0-9 &'()/_.-]*?)\**\s*[:=]\s*(.+)", line)
        if m:
            f = lookup.get(_norm_key(m.group(1)))
            if f and out[f] is None:
                found = numbers(m.group(2))
                out[f] = found[0] if found else None
    return out
