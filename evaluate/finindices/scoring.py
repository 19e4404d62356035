"""FinIndices scoring (paper §2.2.2, eq. 1–2): all-or-nothing set match at the requested precision.

    python -c "from ledgerlm.evaluate.finindices.scoring import score_response as s; \
print(s({'id': 'x', 'answer_format': 'number', 'answer': 1153987.78, 'decimals': 2}, 'Final answer: 1,153,987.78'))"

Rules (one function, `score_response`, shared with distillation):
- Reasoning (`<think>…</think>`) is stripped first; an unterminated `<think>` is no answer.
- ≈ (paper §2.2.2) is symbolic equality of numbers after normalisation — thousands separators, %,
  trailing zeros: `1,234.50` ≈ `1234.5` ≈ `1234.50`. The ground truth is the value at `decimals`
  (round half away from zero). Precision is part of the answer: a prediction with more non-zero
  decimals than asked is wrong (`1153987.784` is not `1153987.78`), as is `1153987.8`.
  `lenient_precision=True` (`ledgerlm eval/score --lenient-precision`, named in results.json) instead
  rounds the prediction to `decimals` before comparing — ledgerlm's variant, not the paper's.
- single items (`answer_format: number`): the number of the final answer (the first one after a
  `Final answer:` marker or inside `\\boxed{}`, else the last one of the last line; see
  `extract.answer_span`; bare years of the asked periods and dates are not values, nor is a year
  introduced as one - "In 2023, the ratio was 5.2" answers 5.2) must be ≈ the ground truth.
- table items (Eq. 1-2): the ground truth N×T matrix is flattened to a set; the block of the requested
  format is isolated (Ψ), every number in it extracted (Φ); score 1 iff every required value has a ≈
  predicted value inside the block. Ψ for `json` is the ```json block whatever JSON it holds, so a
  list of objects with the right values counts (Φ is a regex over the block); Ψ for `tuple_list` is a
  list of rows, so dictionaries instead of the requested tuple array fail (Table 14).
- `positional`: the stricter variant — the block's numeric cells, read as a grid (header rows
  dropped; N×T or its transpose), hold each value at its own row and column.
- deficiency items (`answer == "Insufficient information"`): the answer must say `Insufficient
  information` (or `信息不足`) and carry no numeric answer (no number in the final answer line, no
  block of the requested format with numbers).
"""
from __future__ import annotations

import functools
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from ledgerlm.errors import InputError
from ledgerlm.evaluate.finindices import extract
from ledgerlm.inference.reasoning import split_reasoning

SCORER_VERSION = 5  # 5: a number token is read whole ("ABC1,234.5" is a label, not 234.5), currency codes glued to it are units ("RMB1,234.5" = 1234.5); 4: an answer span that is one figure is a cell ("(1,234)" negative), exact rounding of large values; 3: symbolic ≈ (precision is part of the answer), json objects, introduced years; bump together with `version` in evaluate/tasks/finindices/finindices.yaml
DEFICIENT = "Insufficient information"
PARSE_ERRORS = frozenset({"unterminated_think", "empty_response", "no_number"})
FORMAT_ERRORS = frozenset({"no_block", "not_rows"})
_REFUSAL = re.compile(r"insufficient\s+information|信息不足", re.IGNORECASE)
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")


@dataclass(frozen=True)
class ScoreResult:
    score: int  # 1 iff the set rule holds (the paper's metric)
    positional: int  # 1 iff every value also sits at its own row and column
    extracted: Any  # float | list[list[float]] | list[float] | "Insufficient information" | None
    error_reason: str | None  # None when score == 1


def precision_key(value: float, decimals: int) -> int | None:
    """`value` rounded half away from zero at `decimals`, as an integer count of 10**-decimals.

    A float a few ulps short of a rounding boundary (2.675 is 2.67499999...) is on it: the scaled value is nudged up by
    `_NUDGE` (~4.5 ulps) before rounding. Beyond `_FLOAT_EXACT` the nudge would reach half a unit (the former 1e-12
    nudge did from 5e11 units on: 123,456,789,012.34 at 2 decimals keyed as .35; helper audit), so such values are
    rounded from their shortest decimal form instead."""
    scaled = (value if value >= 0 else -value) * _POW10[decimals] if 0 <= decimals < 16 else abs(value) * 10.0**decimals
    if not scaled <= 1e300:  # also catches NaN and infinities
        return None
    units = int(scaled * _NUDGE + 0.5) if scaled < _FLOAT_EXACT else _decimal_units(value, decimals)
    return units if value >= 0 else -units


_POW10 = [10.0**k for k in range(16)]
_NUDGE = 1 + 1e-15
_FLOAT_EXACT = 1e14  # scaled values below this: the nudge stays under 0.1 unit


def _decimal_units(value: float, decimals: int) -> int:
    """|value| at `decimals`, half away from zero, from its shortest repr (exact decimal arithmetic)."""
    with localcontext() as ctx:  # every digit of any finite float at up to 15 decimals (1e27 overflowed the default 28)
        ctx.prec = 400
        return int(abs(Decimal(repr(float(value)))).scaleb(decimals).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _keys(values: list[float], decimals: int) -> list[int | None]:
    """`[precision_key(v, decimals) for v in values]`, inlined (the same float operations)."""
    if not 0 <= decimals < 16:
        return [precision_key(v, decimals) for v in values]
    scale = _POW10[decimals]
    out = []
    for value in values:
        if value >= 0:
            scaled = value * scale
            out.append(int(scaled * _NUDGE + 0.5) if scaled < _FLOAT_EXACT else precision_key(value, decimals))
        else:
            scaled = -value * scale
            out.append(-int(scaled * _NUDGE + 0.5) if scaled < _FLOAT_EXACT else precision_key(value, decimals))
    return out


def exact_at(value: float, decimals: int) -> bool:
    """True when `value` written in its shortest form has at most `decimals` non-zero decimals, i.e.
    it is ≈ (symbolically equal to) its own rounding at `decimals`: 1234.5 at 2 -> True, 1153987.784 -> False."""
    try:
        d = Decimal(repr(float(value)))
    except (InvalidOperation, ValueError, OverflowError):
        return False
    if not d.is_finite():
        return False
    return d == 0 or d.normalize().as_tuple().exponent >= -decimals


def _match_keys(values: list[float], decimals: int, lenient: bool) -> list[int | None]:
    """Precision keys of the predicted values that may match: all (lenient) or only exact ones (the paper's ≈)."""
    keys = _keys(values, decimals)
    return keys if lenient else [k if exact_at(v, decimals) else None for k, v in zip(keys, values)]


def score_response(sample: dict, response_text: str | None, *, lenient_precision: bool = False,
                   extraction: str = "final_answer") -> ScoreResult:
    """Score one raw model output against one Contract-4 sample row (the paper's ≈ unless `lenient_precision`).
    `extraction`: which `extract.ANSWER_SPANS` entry finds a number item's answer (a task YAML's `answer_extraction`)."""
    span = extract.ANSWER_SPANS.get(extraction)
    if span is None:
        raise InputError(f"unknown answer_extraction {extraction!r} (known: {', '.join(extract.ANSWER_SPANS)})", field="answer_extraction")
    text = response_text or ""
    if "<" in text and ("k>" in text or "K>" in text):  # a <think> or </think> tag may be there
        answer_text, _ = split_reasoning(text)
        if answer_text is None:
            return ScoreResult(0, 0, None, "unterminated_think")
    else:
        answer_text = text.strip()  # what split_reasoning returns without think tags
    if not answer_text:
        return ScoreResult(0, 0, None, "empty_response")
    if len(answer_text) > extract.MAX_CHARS:
        answer_text = answer_text[-extract.MAX_CHARS :]
    text = extract.normalize(answer_text)
    fmt = sample.get("answer_format") or "number"
    truth = sample.get("answer")
    low = extract.lowered(text) if fmt in _NEEDS_LOWER or isinstance(truth, str) else None  # None: the regexes scan
    if isinstance(truth, str) and truth.strip().lower() == DEFICIENT.lower():
        return _score_deficiency(text, low, fmt, _years(sample), span)
    decimals = _decimals(sample)
    if fmt == "number":
        value = _truth_value(sample, truth)
        return _score_single(text, low, value, decimals, _years(sample), f"{value:.0f}", lenient_precision, span)
    return _score_table(text, low, fmt, _truth_grid(sample, truth), decimals, lenient_precision)


_NEEDS_LOWER = frozenset({"number", "html_table"})  # answer markers, refusals and <table> are searched in text.lower()


def _refuses(text: str, low: str | None) -> bool:
    """`_REFUSAL.search(text)`, looking only where `insufficient` or `信息不足` occurs."""
    if low is None:
        return _REFUSAL.search(text) is not None
    if not text.isascii() and "信息不足" in text:
        return True
    at = low.find("insufficient")
    while at >= 0:
        if _REFUSAL.match(text, at):
            return True
        at = low.find("insufficient", at + 1)
    return False


_INTRODUCED_YEAR = re.compile(
    r"(?i)(?:\b(?:in|for|of|during|since|by|as of|fy|fiscal(?: year)?|year)\s+|截至|截止)((?:19|20)\d{2})(?![\d.,]\d)(?!\s*%)"
    r"|(?<![\d.])((?:19|20)\d{2})\s*(?:年|财年|年度)")


def _drop_introduced_years(span: str) -> str:
    """A year introduced as a period ("In 2023, ...", "for 2023", "2023年") is not a value; kept when it is
    the only number (then it may be the answer)."""
    stripped = _INTRODUCED_YEAR.sub(" ", span)
    return stripped if extract.extract_numbers(stripped) else span


def _score_single(text: str, low: str | None, truth: float, decimals: int, years: frozenset[str], own_year: str,
                  lenient: bool = False, span=extract.answer_span) -> ScoreResult:
    where = span(text, low)
    if own_year in years:
        years = years - {own_year}
    start, end, anchored = where or (0, 0, False)
    values = extract.extract_numbers(_drop_introduced_years(extract.strip_periods(text[start:end], years))) if where else []
    if not values:
        if _refuses(text, low):
            return ScoreResult(0, 0, DEFICIENT, "refused")
        return ScoreResult(0, 0, None, "no_number")
    predicted = values[0] if anchored else values[-1]
    whole = extract.parse_cell(text[start:end].strip().rstrip("."))  # the span is one figure: "(1,234)" is -1,234
    if whole is not None:  # (accounting notation read as +1234 before: helper audit of the scorers)
        predicted = whole
    ok = int(precision_key(predicted, decimals) == precision_key(truth, decimals) and (lenient or exact_at(predicted, decimals)))
    return ScoreResult(ok, ok, predicted, None if ok else "wrong_value")


def _score_table(text: str, low: str | None, fmt: str, truth: list[list[float]], decimals: int, lenient: bool = False) -> ScoreResult:
    block = extract.isolate_block(text, fmt, low)
    if block is None:
        return ScoreResult(0, 0, None, "no_block")
    if block.structure_error == "not_rows":
        if fmt != "json":  # a tuple list answered as dictionaries: Ψ finds no tuple array (Table 14)
            return ScoreResult(0, 0, None, "not_rows")
        block = extract.Block(block.text, None, "not_rows")  # Ψ(O, JSON) is the fence; Φ reads its numbers
    grid, predicted = extract.block_values(block)
    if not predicted:
        return ScoreResult(0, 0, [], "no_number")
    have = set(_match_keys(predicted, decimals, lenient)) - {None}
    need = [_keys(row, decimals) for row in truth]
    ok = int(all(k in have for row in need for k in row))
    positional = int(ok and grid is not None and _positional(grid, need, decimals, lenient))
    return ScoreResult(ok, positional, grid if grid is not None else predicted, None if ok else "missing_values")


def _positional(grid: list[list[float]], need: list[list[int | None]], decimals: int, lenient: bool = False) -> bool:
    keys = [_match_keys(row, decimals, lenient) for row in grid]
    for want in (need, None):
        if want is None:
            want = [list(col) for col in zip(*need)]  # the transpose, only when needed
        n, t = len(want), len(want[0]) if want else 0
        if not n or len(keys) < n or len(keys) > n + 1:  # at most one numeric header row
            continue
        rows = keys[-n:]
        if all(len(row) >= t and row[-t:] == w for row, w in zip(rows, want)):
            return True
    return False


def _score_deficiency(text: str, low: str | None, fmt: str, years: frozenset[str], span=extract.answer_span) -> ScoreResult:
    if not _refuses(text, low):
        return ScoreResult(0, 0, None, "no_refusal")
    where = span(text, low)
    numbers = extract.extract_numbers(extract.strip_periods(text[where[0]:where[1]], years)) if where else []
    if not numbers and fmt != "number":
        block = extract.isolate_block(text, fmt, low)
        numbers = extract.block_numbers(block) if block is not None and block.structure_error != "not_rows" else []
    if numbers:
        return ScoreResult(0, 0, numbers, "answered_deficient")
    return ScoreResult(1, 1, DEFICIENT, None)


def _years(sample: dict) -> frozenset[str]:
    periods = sample.get("target_periods") or ()
    if type(periods) is list and all(type(p) is str for p in periods):
        return _years_of(tuple(periods))
    return _years_of(tuple(str(p) for p in periods))


@functools.lru_cache(maxsize=4096)
def _years_of(periods: tuple[str, ...]) -> frozenset[str]:
    return frozenset(y for period in periods for y in _YEAR.findall(period))


def _decimals(sample: dict) -> int:
    decimals = sample.get("decimals")
    if decimals is None:
        raise InputError(f"sample {sample.get('id')!r} has no decimals", field="decimals")
    return int(decimals)


def _truth_value(sample: dict, truth: Any) -> float:
    if isinstance(truth, list):  # a 1×1 matrix written as a table answer
        flat = [v for row in truth for v in (row if isinstance(row, list) else [row])]
        truth = flat[0] if len(flat) == 1 else truth
    value = extract.parse_cell(truth)
    if value is None:
        raise InputError(f"sample {sample.get('id')!r}: answer {truth!r} is not a number", field="answer")
    return value


def _truth_grid(sample: dict, truth: Any) -> list[list[float]]:
    if not isinstance(truth, list) or not truth:
        raise InputError(f"sample {sample.get('id')!r}: table answer {truth!r} is not a list of rows", field="answer")
    rows = truth if all(map(isinstance, truth, repeat(list))) else [truth]
    grid = []
    for row in rows:  # a finite float is its own parse_cell
        values = [v if type(v) is float and v - v == 0 else extract.parse_cell(v) for v in row]
        if None in values or not values:
            raise InputError(f"sample {sample.get('id')!r}: table answer row {row!r} is not all numbers", field="answer")
        grid.append(values)
    return grid
