"""Answer isolation and robust number extraction for FinIndices outputs (paper §2.2.2: Ψ and Φ).

    python -c "from ledgerlm.evaluate.finindices.extract import extract_numbers; print(extract_numbers('−1,234.50 and １２%'))"

The paper isolates the block of the requested format, B = Ψ(O, F), then reads every number in it
with a regex extractor Φ(B). This module is Ψ and Φ:

- `normalize`: NFKC (full-width digits and punctuation), unicode minus signs → `-`, HTML entities.
- `extract_numbers`: every number in free text — thousands separators (`1,234.5`), signs,
  scientific notation (`1.5e3`), percent / `万` / `亿` suffixes are units and are ignored (the
  prompt fixes the unit); numbers glued to letters (`FY2023`, `2023Q3`) are labels, not values.
- `parse_cell`: one table cell that must be exactly one number (`(1,234)` is accounting negative).
- `isolate_block`: the LAST block of the requested format — `<table>…</table>`, a ```json fence,
  or a tuple list (`[[…], …]`, fenced or bare). A block that was opened but never closed is absent.
- `answer_span`: where the final answer of a `number` item sits — the last `\\boxed{}`, else the
  line after the last `Final answer:` / `Answer:` / `答案：` marker (its first number is the
  answer), else the last non-empty line (its last number is the answer).
"""
from __future__ import annotations

import functools
import html
import json
import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

_MINUS = str.maketrans({"\u2212": "-", "\u2012": "-", "\u2013": "-", "\ufe63": "-", "\u00a0": " ", "\u2009": " ", "\u202f": " "})
_MINUS_RE = re.compile("[\u2212\u2012\u2013\ufe63\u00a0\u2009\u202f]")
_NUMBER_BODY = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+"
_NUMBER = re.compile(
    r"(?<![A-Za-z_\d.])[-+]?(?:" + _NUMBER_BODY + r")(?:[eE][-+]?\d+)?(?![A-Za-z_\d年月日季]|\.\d)"
)
_CELL = re.compile(
    r"\s*(\()?\s*[$¥￥€£]?\s*([-+]?(?:" + _NUMBER_BODY + r")(?:[eE][-+]?\d+)?)\s*(?:%|‰|万元|亿元|万|亿|元|千)?\s*(\))?\s*"
)
_DATE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}")
_TR = re.compile(r"<tr\b[^>]*>", re.IGNORECASE)
_CELL_SPLIT = re.compile(r"<t[dh]\b[^>]*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")
_BRACKET = re.compile(r"[\[\]]")
_TABLE = re.compile(r"<table\b[^>]*>.*?</table\s*>", re.IGNORECASE | re.DOTALL)
_JSON_FENCE = re.compile(r"```[ \t]*json[ \t]*\r?\n?(.*?)```", re.IGNORECASE | re.DOTALL)
_ANY_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?(.*?)```", re.DOTALL)
_MARKER = re.compile(r"(?:final\s+answer|answer)\s*(?:is)?\s*\**\s*[:：]|最终答案\s*[:：]?|答案\s*[:：]", re.IGNORECASE)
MAX_CHARS = 200_000  # longer outputs are cut to their last MAX_CHARS characters (answers sit at the end)


def normalize(text: str) -> str:
    """Full-width → ASCII, unicode minus → '-', HTML entities decoded; ASCII text is returned as is."""
    if not text.isascii():
        if not unicodedata.is_normalized("NFKC", text):
            text = unicodedata.normalize("NFKC", text)
        text = _MINUS_RE.sub(_minus, text)
    if "&" in text:
        text = _MINUS_RE.sub(_minus, html.unescape(text))
    return text


def _minus(match: re.Match) -> str:
    return _MINUS[ord(match.group())]


def _to_float(token: str) -> float | None:
    try:
        value = float(token.replace(",", ""))
    except (ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def extract_numbers(text: str) -> list[float]:
    """Every number in `text`, in order (Φ). `text` should already be `normalize`d."""
    out = []
    for match in _NUMBER.finditer(text):
        value = _to_float(match.group())
        if value is not None:
            out.append(value)
    return out


def parse_cell(cell: Any) -> float | None:
    """A table cell that is exactly one number (with optional currency, %, 万/亿, accounting parentheses)."""
    if isinstance(cell, bool) or cell is None:
        return None
    if isinstance(cell, (int, float)):
        return float(cell) if math.isfinite(cell) else None
    if not isinstance(cell, str) or len(cell) > 64:
        return None
    if "_" not in cell:
        try:  # fast path: plain numbers such as "11.27", "-5", "1e3"
            value = float(cell)
        except ValueError:
            pass
        else:
            return value if math.isfinite(value) else None
    match = _CELL.fullmatch(normalize(cell))
    if not match:
        return None
    value = _to_float(match.group(2))
    if value is not None and match.group(1) and match.group(3):
        value = -abs(value)
    return value


def strip_periods(text: str, years: set[str] = frozenset()) -> str:
    """Drop dates and bare year numbers of the asked periods, so `12.5 (2024)` reads as 12.5."""
    if "-" in text or "/" in text or "." in text:
        text = _DATE.sub(" ", text)
    if years:
        text = _year_pattern(frozenset(years)).sub(" ", text)
    return text


@functools.lru_cache(maxsize=1024)
def _year_pattern(years: frozenset[str]) -> re.Pattern:
    return re.compile(r"(?<![\d.,])(?:" + "|".join(sorted(years)) + r")(?![\d.,]\d)")


def answer_span(text: str) -> tuple[int, int, bool]:
    """(start, end, anchored) of the final answer of a `number` item inside `text`.

    Anchored (True) when it is the last `\\boxed{}` or the line after the last answer marker —
    its FIRST number is the answer (trailing words may hold stray numbers: "12.5 (2 decimals)");
    otherwise the last non-empty line, whose LAST number is the answer."""
    box = text.rfind("\\boxed{")
    if box >= 0:
        start, depth = box + len("\\boxed{"), 1
        for i in range(start, len(text)):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    return start, i, True
    last = None
    tail = max(0, len(text) - 2000)  # the last marker is usually near the end: search there first
    for last in _MARKER.finditer(text, tail):
        pass
    if last is None and tail:
        for last in _MARKER.finditer(text):
            pass
    if last is not None:
        start = last.end()
        while start < len(text) and text[start] in " \t*\r\n":
            start += 1
        end = text.find("\n", start)
        return start, len(text) if end < 0 else end, True
    end = len(text.rstrip())
    start = text.rfind("\n", 0, end) + 1
    return start, end, False


@dataclass
class Block:
    """The isolated answer block: its text, its rows when the structure parsed, and why it did not."""

    text: str
    rows: list[list[Any]] | None
    structure_error: str | None = None  # "not_rows" (e.g. dicts for a tuple list) | "invalid" (unparseable)


def isolate_block(text: str, answer_format: str) -> Block | None:
    """Ψ(O, F): the last block of the requested format in `text`, or None when there is none."""
    if answer_format == "html_table":
        return _html_block(text)
    if answer_format == "json":
        fences = _JSON_FENCE.findall(text)
        return _list_block(fences[-1]) if fences else None
    if answer_format == "tuple_list":
        return _tuple_block(text)
    raise ValueError(f"answer_format {answer_format!r} has no block (expected html_table, json or tuple_list)")


def _html_block(text: str) -> Block | None:
    lower = text.lower()
    if "<table" not in lower:
        return None
    start = lower.rfind("<table")
    tables = _TABLE.findall(text, start) or _TABLE.findall(text)
    if not tables:
        return None
    block = tables[-1]
    rows = []
    for row in _TR.split(block)[1:]:  # tolerant of unclosed <tr>/<td>, like browsers (and ~10x faster than lxml here)
        cells = [_TAG.sub(" ", cell).strip() for cell in _CELL_SPLIT.split(row)[1:]]
        if cells:
            rows.append(cells)
    return Block(block, rows)


def _tuple_block(text: str) -> Block | None:
    for lang, body in reversed(_ANY_FENCE.findall(text)):
        if body.lstrip()[:1] in ("[", "(") and lang.lower() in ("", "json", "python", "py", "text"):
            return _list_block(body)
    end = text.rfind("]")
    if end < 0:
        return None
    depth = 0
    for i in range(end, -1, -1) if end < 64 else _bracket_positions(text, end):
        ch = text[i]
        if ch == "]":
            depth += 1
        elif ch == "[":
            depth -= 1
            if depth == 0:
                return _list_block(text[i : end + 1])
    return None


def _bracket_positions(text: str, end: int) -> list[int]:
    return [m.start() for m in _BRACKET.finditer(text, 0, end + 1)][::-1]


def _list_block(body: str) -> Block:
    data = _loads_list(body)
    if data is None:
        return Block(body, None, "invalid")
    if not isinstance(data, list):
        return Block(body, None, "not_rows")
    if data and all(not isinstance(x, (list, dict)) for x in data):
        data = [data]  # one index: a flat row
    if not all(isinstance(row, list) for row in data):
        return Block(body, None, "not_rows")
    return Block(body, data)


def _loads_list(body: str) -> Any:
    """JSON first; then a Python-style tuple list (`[('Revenue', 1.5, 2.0)]`): quoted strings become
    JSON strings, parentheses brackets — a literal translation, nothing is evaluated."""
    body = body.strip()
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        pass
    try:
        return json.loads(_PY_TOKEN.sub(_py_to_json, body))
    except (ValueError, RecursionError):
        return None


_PY_TOKEN = re.compile(r"'((?:[^'\\\n]|\\.)*)'|\"(?:[^\"\\\n]|\\.)*\"|[()]|\bNone\b|\bTrue\b|\bFalse\b|,(?=\s*[\])])")
_PY_WORDS = {"(": "[", ")": "]", "None": "null", "True": "true", "False": "false"}


def _py_to_json(match: re.Match) -> str:
    token = match.group()
    if match.group(1) is not None:  # 'single quoted' -> "json string"
        return json.dumps(match.group(1).replace("\\'", "'"))
    if token.startswith('"'):
        return token
    return _PY_WORDS.get(token, "")  # a trailing comma before ] or ) is dropped


def block_values(block: Block) -> tuple[list[list[float]] | None, list[float]]:
    """(numeric grid, every number inside the block) in one pass.

    The grid is the block's rows reduced to their numeric cells, rows without numbers (headers)
    dropped; None when the structure did not parse. The numbers (Φ(B)) come from the cells when
    the structure parsed — numbers inside label cells included — else from the raw block text."""
    if block.rows is None:
        raw = _TAG.sub(" ", block.text) if "<" in block.text else block.text
        return None, extract_numbers(normalize(raw))
    grid: list[list[float]] = []
    numbers: list[float] = []
    for row in block.rows:
        values = []
        for cell in row:
            value = parse_cell(cell)
            if value is not None:
                values.append(value)
            elif isinstance(cell, str):
                numbers.extend(extract_numbers(normalize(cell)))
            elif isinstance(cell, (list, dict)):
                numbers.extend(extract_numbers(normalize(json.dumps(cell, ensure_ascii=False))))
        if values:
            grid.append(values)
            numbers.extend(values)
    return grid, numbers


def block_numbers(block: Block) -> list[float]:
    """Every number inside the block (Φ(B))."""
    return block_values(block)[1]


def numeric_grid(block: Block) -> list[list[float]]:
    """Rows of the block reduced to their numeric cells; rows without numbers (headers) are dropped."""
    return block_values(block)[0] or []
