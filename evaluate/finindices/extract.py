"""Answer isolation and robust number extraction for FinIndices outputs (paper §2.2.2: Ψ and Φ).

    python -c "from ledgerlm.evaluate.finindices.extract import extract_numbers; print(extract_numbers('−1,234.50 and １２%'))"

The paper isolates the block of the requested format, B = Ψ(O, F), then reads every number in it
with a regex extractor Φ(B). This module is Ψ and Φ:

- `normalize`: NFKC (full-width digits and punctuation), unicode minus signs → `-`, HTML entities.
- `extract_numbers`: every number in free text — thousands separators (`1,234.5`), signs,
  scientific notation (`1.5e3`), percent / `万` / `亿` suffixes are units and are ignored (the
  prompt fixes the unit); numbers glued to letters (`FY2023`, `2023Q3`, `ABC1,234`) are labels, not
  values, except a currency code (`RMB1,234.5`, `1,234.5USD` → 1234.5); a token is read whole, never
  from inside (`ABC1,234.5` is not 234.5).
- `parse_cell`: one table cell that must be exactly one number (`(1,234)` is accounting negative).
- `isolate_block`: the LAST block of the requested format — `<table>…</table>`, a ```json fence,
  or a tuple list (`[[…], …]`, fenced or bare). A block that was opened but never closed is absent.
- `answer_span`: where the final answer of a `number` item sits — the last `\\boxed{}`, else the
  line after the last `Final answer:` / `Answer:` / `答案：` marker (its first number is the
  answer), else the last non-empty line (its last number is the answer).

Speed (tests/bench/scorer_speed.py): case-insensitive words are looked up in `text.lower()` with
str.find and confirmed with the regex at that spot (`lowered`), plain HTML tables are read in one
regex pass, JSON numbers and plain numeric cells skip `parse_cell`'s checks. Each fast path gives
exactly what the plain code gives; tests/test_eval_scorer_equivalence.py holds them to a reference.
"""
from __future__ import annotations

import functools
import html
import json
import math
import re
import unicodedata
from dataclasses import dataclass
from itertools import repeat
from typing import Any

_MINUS = str.maketrans({"\u2212": "-", "\u2012": "-", "\u2013": "-", "\ufe63": "-", "\u00a0": " ", "\u2009": " ", "\u202f": " "})
_MINUS_RE = re.compile("[\u2212\u2012\u2013\ufe63\u00a0\u2009\u202f]")
# a thousands-grouped number is never followed by another digit ([100,2500] is 100 and 2500, not a label)
_NUMBER_BODY = r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+"
# ISO codes (and Rs) a model may glue to an amount, any case: `RMB1,234.5`, `Rs.1,234.5`, `1,234.5USD` are 1234.5.
CURRENCY_CODES = ("RMB", "CNY", "USD", "HKD", "EUR", "GBP", "JPY", "TWD", "NTD", "INR", "KRW", "CHF", "CAD", "AUD", "SGD",
                  "MYR", "BRL", "ZAR", "MXN", "SEK", "NOK", "DKK", "NZD", "THB", "IDR", "RUB", "SAR", "AED", "PLN", "Rs")
_CODE = "(?i:" + "|".join(CURRENCY_CODES) + ")"
_AFTER_CODE = "|".join(rf"(?<=(?<![A-Za-z])(?i:{c}))" for c in CURRENCY_CODES)  # the position right after a code
_AFTER_CODE_DOT = "|".join(rf"(?<=(?<![A-Za-z])(?i:{c})\.)" for c in CURRENCY_CODES)
_GLUED_AFTER = r"(?!" + _CODE + r"(?![A-Za-z]))[A-Za-z_\d年月日季]|\.\d"
# One token per match, read whole. A number (`n`, taken atomically: lookahead + backreference) starts where no letter,
# digit or dot touches it, or right after a currency code (`RMB1,234.5`, `Rs.1,234.5`); `neg` is a minus before a
# currency sign or code (`-$1,234.5`, `-RMB 1,234.5`); `glued` is a letter touching its end (`2023Q3`). A run of digits
# a letter or dot touches (`FY2023`, `ABC1,234.5`, `approx.1,234.5`) is consumed whole as a `label`, so no number is
# ever read from inside a token (`234.5`).
_NUMBER = re.compile(  # (the leading class is a fast reject: a token starts at a sign, dot or digit)
    r"(?=[-+.\d])(?:(?:(?<![A-Za-z_\d.])|(?P<neg>(?<![A-Za-z_\d.])-\s?(?:US\$|HK\$|NT\$|[$¥￥€£]|" + _CODE + r"\.?)\s?)(?=\.?\d)"
    r"|(?<=[A-Za-z.])(?:" + _AFTER_CODE + r"|" + _AFTER_CODE_DOT + r")(?=[-+]?\d))"
    r"(?=(?P<n>[-+]?(?:" + _NUMBER_BODY + r")(?:[eE][-+]?\d+)?))(?P=n)"
    r"(?:(?P<glued>(?=" + _GLUED_AFTER + r"))|(?!" + _GLUED_AFTER + r"))"
    r"|(?P<label>(?<=[A-Za-z_.])(?!(?:" + _AFTER_CODE + r")\.\d)\.?\d+(?:,\d{3}(?!\d))*(?:\.\d+)*))"
)
_CELL = re.compile(
    r"\s*(\()?\s*[$¥￥€£]?\s*([-+]?(?:" + _NUMBER_BODY + r")(?:[eE][-+]?\d+)?)\s*(?:%|‰|万元|亿元|万|亿|元|千)?\s*(\))?\s*"
)
_DATE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}")
_TR = re.compile(r"<tr\b[^>]*>", re.IGNORECASE)
_CELL_SPLIT = re.compile(r"<t[dh]\b[^>]*>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")
# Blocks are found by one forward scan each (`_tables`, `_fences`); these match only the opening tag
# or fence header, never the body, so an unclosed `<table` or fence cannot make a search quadratic.
_TABLE_START = re.compile(r"<table\b", re.IGNORECASE)
_JSON_HEAD = re.compile(r"[ \t]*json[ \t]*\r?\n?", re.IGNORECASE)
_ANY_HEAD = re.compile(r"[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?")
# `answer`, optional `is`, optional `**`, a colon — each run of blanks belongs to exactly one `\s*`, so a
# failed match costs one scan of the blanks (the plain form `\s*(?:is)?\s*\**\s*` was cubic on them).
_MARKER = re.compile(r"(?:final\s+answer|answer)\s*(?:is\s*)?(?:\*+\s*)?[:：]|最终答案\s*[:：]?|答案\s*[:：]", re.IGNORECASE)
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
    for token in number_tokens(text):
        value = _to_float(token)
        if value is not None:
            out.append(value)
    return out


def number_tokens(text: str) -> list[str]:
    """The number tokens Φ reads in `text` (`1,234.5`, `-5`, `1.5e3`), labels such as `FY2023` left out."""
    return [_signed(m) for m in _NUMBER.finditer(text) if m["label"] is None and m["glued"] is None]


def _signed(m: re.Match) -> str:
    return "-" + m["n"] if m["neg"] is not None else m["n"]


def replace_numbers(text: str, replace) -> str:
    """`text` with every number token Φ reads replaced by `replace(token)`; labels stay as they are."""
    return _NUMBER.sub(lambda m: m.group() if m["label"] is not None or m["glued"] is not None
                       else m.group()[:len(m.group()) - len(m["n"])] + replace(m["n"]), text)


def parse_cell(cell: Any) -> float | None:
    """A table cell that is exactly one number (with optional currency, %, 万/亿, accounting parentheses)."""
    if isinstance(cell, bool) or cell is None:
        return None
    if isinstance(cell, (int, float)):
        try:  # a JSON integer of hundreds of digits does not fit a float: not a usable answer
            value = float(cell)
        except OverflowError:
            return None
        return value if math.isfinite(value) else None
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


_FOLD_SPECIAL = re.compile("[\u0130\u0131\u017f]")  # the only non-ASCII characters that (?i) matches to ASCII letters


def lowered(text: str) -> str | None:
    """`text.lower()` when a case-insensitive search for an ASCII word in `text` is the same as a plain
    search in it at the same positions (always for ASCII text); None otherwise (callers use the regex)."""
    if text.isascii():
        return text.lower()
    if len(text) > 2000 or _FOLD_SPECIAL.search(text):  # long non-ASCII text: lower() costs more than the regex  # İ ı ſ match i/s under re.IGNORECASE but not after lower()
        return None
    low = text.lower()
    return low if len(low) == len(text) else None


def _last_marker_end(text: str, low: str | None) -> int | None:
    """End of the last `_MARKER` match, found from the right: every match holds `answer` or `答案`,
    and a match nested in an earlier one (`answer:` in `final answer:`) ends where that one ends."""
    if low is None:
        last = None
        tail = max(0, len(text) - 2000)  # the last marker is usually near the end: search there first
        for last in _MARKER.finditer(text, tail):
            pass
        if last is None and tail:
            for last in _MARKER.finditer(text):
                pass
        return None if last is None else last.end()
    best_start, best_end = -1, None
    at = low.rfind("answer")
    while at >= 0:
        match = _MARKER.match(text, at)
        if match:
            best_start, best_end = at, match.end()
            break
        at = low.rfind("answer", 0, at)
    if not text.isascii():
        at = text.rfind("答案")
        while at > best_start:
            match = _MARKER.match(text, at) or (_MARKER.match(text, at - 2) if at >= 2 and text[at - 2 : at] == "最终" else None)
            if match:
                if match.start() > best_start:
                    best_end = match.end()
                break
            at = text.rfind("答案", 0, at)
    return best_end


def answer_span(text: str, low: str | None = None) -> tuple[int, int, bool]:
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
    end = _last_marker_end(text, lowered(text) if low is None else low)
    if end is not None:
        start = end
        while start < len(text) and text[start] in " \t*\r\n":
            start += 1
        end = text.find("\n", start)
        return start, len(text) if end < 0 else end, True
    end = len(text.rstrip())
    start = text.rfind("\n", 0, end) + 1
    return start, end, False


def strict_span(text: str, low: str | None = None) -> tuple[int, int, bool] | None:
    """Only an anchored answer (last `\\boxed{}` or the line after the last answer marker); None otherwise
    (lm-eval's "strict-match" flavour: an unmarked number is no answer)."""
    start, end, anchored = answer_span(text, low)
    return (start, end, True) if anchored else None


def last_number_span(text: str, low: str | None = None) -> tuple[int, int, bool]:
    """The whole response, unanchored: its LAST number is the answer (lm-eval's "flexible-extract" flavour)."""
    return 0, len(text), False


# Answer extractors for `number` items, selected by a task YAML's `answer_extraction` (evaluate/tasks/).
# Each maps (normalized text, lowered text or None) -> (start, end, anchored) or None (no answer).
# Table items always use `isolate_block` (the last block of the requested format).
ANSWER_SPANS = {"final_answer": answer_span, "strict": strict_span, "last_number": last_number_span}


@dataclass
class Block:
    """The isolated answer block: its text, its rows when the structure parsed, and why it did not."""

    text: str
    rows: list[list[Any]] | None
    structure_error: str | None = None  # "not_rows" (e.g. dicts for a tuple list) | "invalid" (unparseable)


def isolate_block(text: str, answer_format: str, low: str | None = None) -> Block | None:
    """Ψ(O, F): the last block of the requested format in `text`, or None when there is none.
    `low`: `lowered(text)` when the caller already has it."""
    if answer_format == "html_table":
        return _html_block(text, lowered(text) if low is None else low)
    if answer_format == "json":
        fences = _fences(text, _JSON_HEAD)
        return _list_block(fences[-1][1]) if fences else None
    if answer_format == "tuple_list":
        return _tuple_block(text)
    raise ValueError(f"answer_format {answer_format!r} has no block (expected html_table, json or tuple_list)")


def _html_block(text: str, low: str | None) -> Block | None:
    """The table opened last when it is closed, else the last closed table; cells split at `<tr>`/`<td>`
    (tolerant of unclosed `<tr>`/`<td>`, like browsers, and ~10x faster than lxml here)."""
    lower = text.lower() if low is None else low
    start = lower.rfind("<table")
    if start < 0:
        return None
    block = _last_opened_table(text, low, start) if low is not None else None
    if block is None:
        tables = _tables(text, start) or _tables(text)
        if not tables:
            return None
        block = tables[-1]
    rows = []
    if _PLAIN_TABLE.fullmatch(block):  # only table/tr/td/th tags, cells without markup: one regex pass
        cells: list[str] = []
        for row_tag, cell in _PLAIN_TOKEN.findall(block):
            if row_tag:
                cells = []
                rows.append(cells)
            else:
                cells.append(cell.strip())
        return Block(block, [row for row in rows if row])
    for row in _TR.split(block)[1:]:
        cells = [_cell_text(cell) for cell in _CELL_SPLIT.split(row)[1:]]
        if cells:
            rows.append(cells)
    return Block(block, rows)


# A table in which every `<` opens one of these tags splits into the same rows and cells either way.
_PLAIN_TABLE = re.compile(r"<table\b[^<>]*>\s*(?:<tr\b[^<>]*>\s*(?:<t[dh]\b[^<>]*>[^<]*</t[dh]\s*>\s*)*</tr\s*>\s*)*</table\s*>",
                          re.IGNORECASE)
_PLAIN_TOKEN = re.compile(r"<(tr)\b[^<>]*>|<t[dh]\b[^<>]*>([^<]*)", re.IGNORECASE)  # a row opens, or a cell and its text


_TABLE_OPEN = re.compile(r"<table\b[^>]*>", re.IGNORECASE)
_TABLE_CLOSE = re.compile(r"</table\s*>", re.IGNORECASE)


def _last_opened_table(text: str, low: str, start: int) -> str | None:
    """`_TABLE.match(text, start)` without the regex's lazy scan: the first `</table>` after the opening tag."""
    opened = _TABLE_OPEN.match(text, start)
    if not opened:
        return None
    at = low.find("</table", opened.end())
    while at >= 0:
        closed = _TABLE_CLOSE.match(text, at)
        if closed:
            return text[start : closed.end()]
        at = low.find("</table", at + 1)
    return None


_PLAIN_TAILS = frozenset(a + b + c for a in ("</td>", "</th>", "</TD>", "</TH>", "")
                         for b in ("</tr>", "</TR>", "") for c in ("</table>", "</TABLE>", ""))


def _cell_text(piece: str) -> str:
    """`_TAG.sub(" ", piece).strip()`, skipping the regex when the piece ends in plain closing tags."""
    at = piece.find("<")
    if at < 0:
        return piece.strip()
    if piece[at:] in _PLAIN_TAILS:
        return piece[:at].strip()
    return strip_tags(piece).strip()


def strip_tags(text: str) -> str:
    """`_TAG.sub(" ", text)` in linear time: a `<` with no `>` after it opens no tag, so only the text up to
    the last `>` is searched (there every `<` closes, and each match ends at the first `>`)."""
    last = text.rfind(">")
    if last < 0:
        return text
    return _TAG.sub(" ", text[: last + 1]) + text[last + 1 :]


def _tables(text: str, pos: int = 0) -> list[str]:
    """`re.findall(r"<table\\b[^>]*>.*?</table\\s*>", text[pos:], IGNORECASE | DOTALL)` in one forward scan.

    The opening tag ends at the first `>` after `<table`, the table at the first `</table>` after that;
    when either is missing, no later table can close either, so the scan stops (the regex would rescan
    the rest of the text from every later `<table`: quadratic on `<table<table<table…`)."""
    out = []
    while True:
        opened = _TABLE_START.search(text, pos)
        if opened is None:
            return out
        gt = text.find(">", opened.end())
        closed = _TABLE_CLOSE.search(text, gt + 1) if gt >= 0 else None
        if closed is None:
            return out
        out.append(text[opened.start() : closed.end()])
        pos = closed.end()


def _fences(text: str, head: re.Pattern) -> list[tuple[re.Match, str]]:
    """`re.findall("```" + head + "(.*?)```", text, DOTALL)` in one forward scan, as (header match, body).

    The header (language tag, blanks, newline) is matched greedily, as the regex's first try; the body
    runs to the next fence. A fence with no closing fence after it ends the scan (nothing later closes)."""
    out = []
    at = text.find("```")
    while at >= 0:
        header = head.match(text, at + 3)
        if header is None:
            at = text.find("```", at + 1)
            continue
        close = text.find("```", header.end())
        if close < 0:
            return out
        out.append((header, text[header.end() : close]))
        at = text.find("```", close + 3)
    return out


def _tuple_block(text: str) -> Block | None:
    for head, body in reversed(_fences(text, _ANY_HEAD)):
        lang = head.group(1)
        if body.lstrip()[:1] in ("[", "(") and lang.lower() in ("", "json", "python", "py", "text"):
            return _list_block(body)
    end = text.rfind("]")
    if end < 0:
        return None
    start = _matching_open(text, end)
    return _list_block(text[start : end + 1]) if start >= 0 else None


def _matching_open(text: str, end: int) -> int:
    """Position of the `[` that closes with the `]` at `end`, walking left bracket by bracket; -1 if none."""
    depth = 0
    close_at, open_at = end, text.rfind("[", 0, end)
    while True:
        if close_at > open_at:
            depth += 1
            close_at = text.rfind("]", 0, close_at)
        elif open_at < 0:
            return -1
        else:
            depth -= 1
            if depth == 0:
                return open_at
            open_at = text.rfind("[", 0, open_at)


def _list_block(body: str) -> Block:
    data = _loads_list(body)
    if data is None:
        return Block(body, None, "invalid")
    if not isinstance(data, list):
        return Block(body, None, "not_rows")
    if data and not any(map(isinstance, data, repeat((list, dict)))):
        data = [data]  # one index: a flat row
    if not all(map(isinstance, data, repeat(list))):
        return Block(body, None, "not_rows")
    return Block(body, data)


def _loads_list(body: str) -> Any:
    """JSON first; then a Python-style tuple list (`[('Revenue', 1.5, 2.0)]`): quoted strings become
    JSON strings, parentheses brackets — a literal translation, nothing is evaluated.

    The translation leaves valid JSON as it is (outside JSON strings there are no quotes, parentheses,
    None/True/False or trailing commas), so a body with `(` or `'` is translated first: the same
    value, without a failed `json.loads` first."""
    body = body.strip()
    if "(" not in body and "'" not in body:
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            pass
    try:
        return json.loads(_PY_TOKEN.sub(_py_to_json, body))
    except (ValueError, RecursionError):
        return None


# Every alternative starts with a literal character, so the regex engine skips to those characters:
# 'single quoted' | "double quoted" | ( | ) | None | True | False (whole words) | a trailing comma.
_PY_TOKEN = re.compile(r"'([^'\\\n]*(?:\\.[^'\\\n]*)*)'|\"[^\"\\\n]*(?:\\.[^\"\\\n]*)*\"|\(|\)"
                       r"|N(?<!\wN)one\b|T(?<!\wT)rue\b|F(?<!\wF)alse\b|,(?=\s*[\])])")
_PY_WORDS = {"(": "[", ")": "]", "None": "null", "True": "true", "False": "false"}


def _py_to_json(match: re.Match) -> str:
    inner = match.group(1)
    if inner is not None:  # 'single quoted' -> "json string"
        if '"' not in inner and "\\" not in inner and inner.isprintable():
            return f'"{inner}"'  # decodes to the same string as json.dumps(inner)
        return json.dumps(inner.replace("\\'", "'"))
    token = match.group()
    if token[0] == '"':
        return token
    return _PY_WORDS.get(token, "")  # a trailing comma before ] or ) is dropped


def block_values(block: Block) -> tuple[list[list[float]] | None, list[float]]:
    """(numeric grid, every number inside the block) in one pass.

    The grid is the block's rows reduced to their numeric cells, rows without numbers (headers)
    dropped; None when the structure did not parse. The numbers (Φ(B)) come from the cells when
    the structure parsed — numbers inside label cells included — else from the raw block text."""
    if block.rows is None:
        raw = strip_tags(block.text) if "<" in block.text else block.text
        return None, extract_numbers(normalize(raw))
    grid: list[list[float]] = []
    numbers: list[float] = []
    for row in block.rows:
        values = []
        for cell in row:
            kind = type(cell)
            if kind is float:  # JSON numbers: parse_cell(cell) is the cell itself when finite
                if cell - cell == 0:
                    values.append(cell)
            elif kind is str and cell[:1] in _ASCII_LETTERS:  # a label: parse_cell gives None
                if not cell.isascii() or "&" in cell:
                    numbers.extend(extract_numbers(normalize(cell)))
                elif _DIGIT.search(cell):
                    numbers.extend(_label_numbers(cell))
            elif kind is str and len(cell) <= 64 and "_" not in cell and (value := _float_or_none(cell)) is not None:
                values.append(value)  # parse_cell's own fast path, without its type checks
            else:
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


def _float_or_none(cell: str) -> float | None:
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if value - value == 0 else None


@functools.lru_cache(maxsize=4096)
def _label_numbers(label: str) -> tuple[float, ...]:
    """Numbers inside an ASCII label cell (`FY2023`, `Q3 2023`); labels repeat across outputs."""
    return tuple(extract_numbers(label))


_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGIT = re.compile(r"\d")


def block_numbers(block: Block) -> list[float]:
    """Every number inside the block (Φ(B))."""
    return block_values(block)[1]


def numeric_grid(block: Block) -> list[list[float]]:
    """Rows of the block reduced to their numeric cells; rows without numbers (headers) are dropped."""
    return block_values(block)[0] or []
