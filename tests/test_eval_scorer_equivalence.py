"""The optimised FinIndices scorer makes exactly the decisions of a straightforward reference.

    python -m pytest tests/test_eval_scorer_equivalence.py -q

`_reference_score` below is the scorer written plainly (always NFKC, one regex per step, a
function call per value, no caches or fast paths) — the rules of `scoring.py`'s docstring and
nothing else. `corpus` is a seeded random mix of realistic and malformed outputs: worked
solutions of every answer format, unit slips, unicode minus, full-width digits, HTML entities,
`<think>` blocks, `\\boxed{}`, answer markers in English and Chinese, broken and duplicated
blocks, dictionary rows, Python tuples, truncation, random fuzz fragments, bad ground truths.
Every output must give the same ScoreResult (score, positional, extracted, error_reason), or
the same error, from both.
"""
from __future__ import annotations

import html
import json
import math
import random
import re
import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # eval_fixtures
from eval_fixtures import make_rows, table_text  # noqa: E402

from ledgerlm.errors import InputError  # noqa: E402
from ledgerlm.evaluate.finindices.reference import scale_final_answer  # noqa: E402
from ledgerlm.evaluate.finindices.scoring import ScoreResult, score_response  # noqa: E402
from ledgerlm.inference.reasoning import split_reasoning  # noqa: E402

# --- the reference scorer ----------------------------------------------------------------------------

DEFICIENT = "Insufficient information"
_MINUS = str.maketrans({"\u2212": "-", "\u2012": "-", "\u2013": "-", "\ufe63": "-", "\u00a0": " ", "\u2009": " ", "\u202f": " "})
_BODY = r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+"
R_CURRENCIES = ("RMB CNY USD HKD EUR GBP JPY TWD NTD INR KRW CHF CAD AUD SGD MYR BRL ZAR MXN SEK NOK DKK NZD THB IDR RUB SAR AED "
                "PLN Rs").split()
_R_CUR = "(?i:" + "|".join(R_CURRENCIES) + ")"
# A number: prefix (a minus before a currency sign/code -> `neg`; a currency code, optional dot; or nothing touching it),
# the number itself atomic, then `post`: a letter or `.digit` touching it (a label) unless it is a currency code.
# Else a letter or dot followed by a digit run: the run is a `label`, consumed whole.
R_NUMBER = re.compile(
    r"(?:(?P<neg>(?<![A-Za-z_\d.])-\s?(?:US\$|HK\$|NT\$|[$¥￥€£]|" + _R_CUR + r"\.?)\s?(?=\.?\d))"
    r"|(?<![A-Za-z])" + _R_CUR + r"\.?(?=[-+]?\d)|(?<![A-Za-z_\d.]))"
    r"(?P<n>(?>[-+]?(?:" + _BODY + r")(?:[eE][-+]?\d+)?))"
    r"(?P<post>(?!" + _R_CUR + r"(?![A-Za-z]))[A-Za-z_\d年月日季]|\.\d)?"
    r"|(?P<label>[A-Za-z_.]\.?\d+(?:,\d{3}(?!\d))*(?:\.\d+)*)"
)


def r_number_matches(text):
    return [m for m in R_NUMBER.finditer(text) if m["n"] is not None and m["post"] is None]


def r_token(m):
    return ("-" if m["neg"] else "") + m["n"]
R_CELL = re.compile(r"\s*(\()?\s*[$¥￥€£]?\s*([-+]?(?:" + _BODY + r")(?:[eE][-+]?\d+)?)\s*(?:%|‰|万元|亿元|万|亿|元|千)?\s*(\))?\s*")
R_MARKER = re.compile(r"(?:final\s+answer|answer)\s*(?:is)?\s*\**\s*[:：]|最终答案\s*[:：]?|答案\s*[:：]", re.IGNORECASE)
R_REFUSAL = re.compile(r"insufficient\s+information|信息不足", re.IGNORECASE)


def r_normalize(text):
    text = unicodedata.normalize("NFKC", text).translate(_MINUS)
    if "&" in text:
        text = html.unescape(text).translate(_MINUS)
    return text


def r_float(token):
    try:
        value = float(token.replace(",", ""))
    except (ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def r_numbers(text):
    return [v for v in (r_float(r_token(m)) for m in r_number_matches(text)) if v is not None]


def r_cell(cell):
    if isinstance(cell, bool) or cell is None:
        return None
    if isinstance(cell, (int, float)):
        return float(cell) if math.isfinite(cell) else None
    if not isinstance(cell, str) or len(cell) > 64:
        return None
    if "_" not in cell:
        try:
            value = float(cell)
            return value if math.isfinite(value) else None
        except ValueError:
            pass
    match = R_CELL.fullmatch(r_normalize(cell))
    if not match:
        return None
    value = r_float(match.group(2))
    return -abs(value) if value is not None and match.group(1) and match.group(3) else value


def r_key(value, decimals):
    """Half away from zero at `decimals`; a float a few ulps short of a boundary is on it (relative nudge 1e-15), and a
    value of 1e14 units or more is rounded from its shortest decimal form."""
    from decimal import ROUND_HALF_UP, Decimal
    scaled = abs(value) * 10.0**decimals
    if not scaled <= 1e300:
        return None
    if scaled < 1e14:
        units = int(scaled * (1 + 1e-15) + 0.5)
    else:
        from decimal import localcontext
        with localcontext() as ctx:
            ctx.prec = 400
            units = int(abs(Decimal(repr(float(value)))).scaleb(decimals).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    return units if value >= 0 else -units


def r_exact(value, decimals):
    """The paper's ≈: the prediction's shortest decimal form has at most `decimals` non-zero decimals."""
    from decimal import Decimal
    d = Decimal(repr(float(value)))
    return d == 0 or d.normalize().as_tuple().exponent >= -decimals


def r_key_exact(value, decimals):
    return r_key(value, decimals) if r_exact(value, decimals) else None


R_YEAR_INTRO = re.compile(r"(?i)(?:\b(?:in|for|of|during|since|by|as of|fy|fiscal(?: year)?|year)\s+|截至|截止)((?:19|20)\d{2})(?![\d.,]\d)(?!\s*%)"
                          r"|(?<![\d.])((?:19|20)\d{2})\s*(?:年|财年|年度)")


def r_drop_years(span):
    stripped = R_YEAR_INTRO.sub(" ", span)
    return stripped if r_numbers(stripped) else span


def r_strip_periods(text, years):
    text = re.sub(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}", " ", text)
    if years:
        text = re.sub(r"(?<![\d.,])(?:" + "|".join(sorted(years)) + r")(?![\d.,]\d)", " ", text)
    return text


def r_answer_span(text):
    box = text.rfind("\\boxed{")
    if box >= 0:
        depth = 0
        for i in range(box + 6, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                return box + 7, i, True
    markers = list(R_MARKER.finditer(text))
    if markers:
        start = markers[-1].end()
        while start < len(text) and text[start] in " \t*\r\n":
            start += 1
        end = text.find("\n", start)
        return start, len(text) if end < 0 else end, True
    end = len(text.rstrip())
    return text.rfind("\n", 0, end) + 1, end, False


def r_loads(body):
    body = body.strip()
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        pass

    def token(m):
        if m.group(1) is not None:
            return json.dumps(m.group(1).replace("\\'", "'"))
        return m.group() if m.group().startswith('"') else {"(": "[", ")": "]", "None": "null", "True": "true", "False": "false"}.get(m.group(), "")

    py = r"'((?:[^'\\\n]|\\.)*)'|\"(?:[^\"\\\n]|\\.)*\"|[()]|\bNone\b|\bTrue\b|\bFalse\b|,(?=\s*[\])])"
    try:
        return json.loads(re.sub(py, token, body))
    except (ValueError, RecursionError):
        return None


def r_list_block(body):
    data = r_loads(body)
    if data is None:
        return body, None, "invalid"
    if not isinstance(data, list):
        return body, None, "not_rows"
    if data and all(not isinstance(x, (list, dict)) for x in data):
        data = [data]
    if not all(isinstance(row, list) for row in data):
        return body, None, "not_rows"
    return body, data, None


def r_isolate(text, fmt):
    """(block text, rows or None, structure error) of the last block of `fmt`, or None."""
    if fmt == "html_table":
        table = r"<table\b[^>]*>.*?</table\s*>"  # the table opened last when it is closed, else the last closed one
        tables = re.findall(table, text[text.lower().rfind("<table"):], re.I | re.S) or re.findall(table, text, re.I | re.S)
        if not tables:
            return None
        rows = []
        for row in re.split(r"<tr\b[^>]*>", tables[-1], flags=re.IGNORECASE)[1:]:
            cells = [re.sub(r"<[^>]*>", " ", c).strip() for c in re.split(r"<t[dh]\b[^>]*>", row, flags=re.IGNORECASE)[1:]]
            if cells:
                rows.append(cells)
        return tables[-1], rows, None
    if fmt == "json":
        fences = re.findall(r"```[ \t]*json[ \t]*\r?\n?(.*?)```", text, re.IGNORECASE | re.DOTALL)
        return r_list_block(fences[-1]) if fences else None
    for lang, body in reversed(re.findall(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?(.*?)```", text, re.DOTALL)):
        if body.lstrip()[:1] in ("[", "(") and lang.lower() in ("", "json", "python", "py", "text"):
            return r_list_block(body)
    end = text.rfind("]")
    depth = 0
    for i in range(end, -1, -1):
        depth += {"]": 1, "[": -1}.get(text[i], 0)
        if depth == 0 and text[i] == "[":
            return r_list_block(text[i : end + 1])
    return None


def r_block_values(block):
    body, rows, _ = block
    if rows is None:
        return None, r_numbers(r_normalize(re.sub(r"<[^>]*>", " ", body)))
    grid, numbers = [], []
    for row in rows:
        values = [v for v in map(r_cell, row) if v is not None]
        for cell in row:
            if r_cell(cell) is None and isinstance(cell, str):
                numbers += r_numbers(r_normalize(cell))
            elif r_cell(cell) is None and isinstance(cell, (list, dict)):
                numbers += r_numbers(r_normalize(json.dumps(cell, ensure_ascii=False)))
        if values:
            grid.append(values)
            numbers += values
    return grid, numbers


def r_positional(grid, need, decimals):
    keys = [[r_key_exact(v, decimals) for v in row] for row in grid]
    for want in (need, [list(col) for col in zip(*need)]):
        n, t = len(want), len(want[0]) if want else 0
        if n and n <= len(keys) <= n + 1 and all(len(r) >= t and r[-t:] == w for r, w in zip(keys[-n:], want)):
            return True
    return False


def _reference_score(sample, response_text):
    answer, _ = split_reasoning(response_text)
    if answer is None:
        return ScoreResult(0, 0, None, "unterminated_think")
    if not answer:
        return ScoreResult(0, 0, None, "empty_response")
    text = r_normalize(answer[-200_000:])
    fmt = sample.get("answer_format") or "number"
    truth = sample.get("answer")
    years = {y for p in sample.get("target_periods") or () for y in re.findall(r"(?<!\d)(?:19|20)\d{2}(?!\d)", str(p))}
    if isinstance(truth, str) and truth.strip().lower() == DEFICIENT.lower():
        if not R_REFUSAL.search(text):
            return ScoreResult(0, 0, None, "no_refusal")
        start, end, _ = r_answer_span(text)
        numbers = r_numbers(r_strip_periods(text[start:end], years))
        if not numbers and fmt != "number":
            block = r_isolate(text, fmt)
            numbers = r_block_values(block)[1] if block is not None and block[2] != "not_rows" else []
        return ScoreResult(0, 0, numbers, "answered_deficient") if numbers else ScoreResult(1, 1, DEFICIENT, None)
    if sample.get("decimals") is None:
        raise InputError("no decimals", field="decimals")
    decimals = int(sample["decimals"])
    if fmt == "number":
        if isinstance(truth, list):
            flat = [v for row in truth for v in (row if isinstance(row, list) else [row])]
            truth = flat[0] if len(flat) == 1 else truth
        value = r_cell(truth)
        if value is None:
            raise InputError("answer is not a number", field="answer")
        start, end, anchored = r_answer_span(text)
        values = r_numbers(r_drop_years(r_strip_periods(text[start:end], years - {f"{value:.0f}"})))
        if not values:
            return ScoreResult(0, 0, DEFICIENT, "refused") if R_REFUSAL.search(text) else ScoreResult(0, 0, None, "no_number")
        predicted = values[0] if anchored else values[-1]
        whole = r_cell(text[start:end].strip().rstrip("."))  # an answer span that is one figure, "(1,234)" included
        if whole is not None:
            predicted = whole
        ok = int(r_key(predicted, decimals) == r_key(value, decimals) and r_exact(predicted, decimals))
        return ScoreResult(ok, ok, predicted, None if ok else "wrong_value")
    if not isinstance(truth, list) or not truth:
        raise InputError("table answer is not a list of rows", field="answer")
    grid_truth = [[r_cell(v) for v in row] for row in (truth if all(isinstance(r, list) for r in truth) else [truth])]
    if any(None in row or not row for row in grid_truth):
        raise InputError("table answer row is not all numbers", field="answer")
    block = r_isolate(text, fmt)
    if block is None:
        return ScoreResult(0, 0, None, "no_block")
    if block[2] == "not_rows":
        if fmt != "json":
            return ScoreResult(0, 0, None, "not_rows")
        block = (block[0], None, "not_rows")  # json: the fence's numbers count (Eq. 2's regex Φ over Ψ's block)
    grid, predicted = r_block_values(block)
    if not predicted:
        return ScoreResult(0, 0, [], "no_number")
    need = [[r_key(v, decimals) for v in row] for row in grid_truth]
    ok = int(all(k in {r_key_exact(v, decimals) for v in predicted} - {None} for row in need for k in row))
    positional = int(ok and grid is not None and r_positional(grid, need, decimals))
    return ScoreResult(ok, positional, grid if grid is not None else predicted, None if ok else "missing_values")


# --- the seeded corpus ---------------------------------------------------------------------------------

FRAGMENTS = ["<table>", "</table>", "<tr>", "<td>", "</td>", "<th>", "</tr>", "<table><tr><td>", "<td colspan=2>", "<TD>", "<Tr class='x'>",
             "```json\n", "```", "```python\n", "[", "]", "[[", "]]", "(", ")", "{", "}", '"', "'", ",", ": ", "\n", " ",
             "<think>", "</think>", "Final answer:", "Answer：", "答案：", "最终答案", "\\boxed{", "Insufficient information", "信息不足",
             "&minus;", "&nbsp;", "&amp;", "&#65297;", "FY2023Q3YTD", "2023-06-30", "2022", "None", "null", "NaN", "Infinity", "inf",
             "1,234.50", "(1,234)", "−12.5", "１２３．４５", "12.5%", "3.2万", "4亿", "1.5e3", "-.5e-3", "1e999", "1,2,3", "0x1F", "$12",
             "¥3.5元", "RMB", "USD", "Rs.", "rmb", "ABC", "approx.", "x", "-$", "-RMB ", "[100,2500]", "1_000", "٣٤", "①", "½", "{'Revenue': 1.5}", '{"a": [1, 2]}', "True", "'it\\'s'", "\u00a0", "\u2009", "\u3000"]


def _rand_number(rng: random.Random) -> str:
    value = rng.choice([-1, 1]) * rng.uniform(0, 10 ** rng.randint(0, 9))
    style = rng.randrange(9)
    if style == 0:
        return f"{value:,.{rng.randint(0, 4)}f}"
    if style == 1:
        return f"{value:.3e}"
    if style == 2:
        return f"{value:.2f}".replace("-", "\u2212")
    if style == 3:
        return f"{abs(value):.2f}".translate(str.maketrans("0123456789.", "０１２３４５６７８９．"))
    if style == 4:
        return f"{value:.2f}" + rng.choice(["%", "万", "亿", "元", "‰"])
    if style == 5:
        return f"({abs(value):,.2f})"
    if style == 6:
        return str(int(value))
    return f"{value:.{rng.randint(0, 4)}f}"


def _mutate(rng: random.Random, text: str, sample: dict) -> str:
    kind = rng.randrange(24)
    if kind == 0:
        return text.replace("-", "\u2212")
    if kind == 1:
        return text.translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    if kind == 2:
        return f"<think>Let me compute {_rand_number(rng)} first.</think>\n{text}"
    if kind == 3:
        return text + rng.choice(["\n<think>wait", "<THINK>", "</think>"])
    if kind == 4:
        numbers = r_number_matches(text)
        if numbers:
            m = rng.choice(numbers)
            return f"{text[:m.start('n')]}\\boxed{{{m['n']}}}{text[m.end('n'):]}"
        return text + "\\boxed{" + _rand_number(rng) + rng.choice(["}", ""])
    if kind == 5:
        return text.replace("Final answer:", rng.choice(["答案：", "**Final Answer:**", "The answer is:", "最终答案 ", "answer :"]))
    if kind == 6:
        return text[: rng.randrange(len(text) + 1)]
    if kind == 7:
        return text + "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 12)))
    if kind == 8:
        at = rng.randrange(len(text) + 1)
        return text[:at] + "".join(rng.choice(FRAGMENTS + [_rand_number(rng)]) for _ in range(rng.randint(1, 6))) + text[at:]
    if kind == 9:
        return text.replace("<td>", rng.choice(["<TD>", "<td class='n'>", "<td>\n  ", "<th>", " <td> "])).replace("</tr>", rng.choice(["</tr>\n", "", "</TR>"]))
    if kind == 10:
        return text.replace("```json", rng.choice(["```python", "```", "```JSON", "``` json", "```text"]))
    if kind == 11:
        return text.replace("(", "[").replace(")", "]") if rng.random() < 0.5 else text.replace("[", "(").replace("]", ")")
    if kind == 12:
        return text + "\n" + rng.choice(["Insufficient information", "insufficient  information.", "信息不足"])
    if kind == 13:
        return re.sub(r"\d(?=\D)", lambda m: m.group() + rng.choice(["", "", "%", "万", ",", "_"]), text, count=3)
    if kind == 14:
        return text.replace("-", "&minus;").replace(" ", rng.choice([" ", "&nbsp;", "\u00a0", "\u202f"]))
    if kind == 15:
        return text + f"\n(for {rng.choice(sample.get('target_periods') or ['FY2024'])}, as of 2023-12-31, {_rand_number(rng)} in {rng.choice(['2021', '2023', '1999'])})"
    if kind == 16:  # rows answered as dictionaries
        return re.sub(r"\(('[^']*'), ", r"{\1: ", text).replace(")", "}")
    if kind == 17:
        return text.replace(",", ", ").replace("]", ",]") if rng.random() < 0.5 else text.replace("'", '"')
    if kind == 18:
        return text * rng.randint(2, 4)
    if kind == 19:
        return text.upper() if rng.random() < 0.3 else text.lower()
    if kind == 20:
        return text.replace("\n", rng.choice(["\r\n", "  \n", "\n\n"]))
    if kind == 22:  # long Chinese reasoning before the answer (past the 2,000-character marker window)
        words = ["计算", "答案", "最终答案", "答案：", "信息", "不足", "，", "。", _rand_number(rng), "answer", "\n"]
        return "".join(rng.choice(words) for _ in range(rng.randint(300, 900))) + "\n" + text
    if kind == 23:  # characters that re.IGNORECASE matches to i or s, but str.lower() does not
        return text.replace(rng.choice(["s", "i", "I"]), rng.choice(["\u017f", "\u0131", "\u0130"]))
    return re.sub(r"-?\d+\.\d+", lambda m: _rand_number(rng) if rng.random() < 0.3 else m.group(), text)


def _rand_table(rng: random.Random, fmt: str) -> str:
    n, t = rng.randint(1, 3), rng.randint(1, 4)
    rows = [[_rand_number(rng) for _ in range(t)] for _ in range(n)]
    return table_text(rows, [f"Index {i}" for i in range(n)], [f"FY{2020 + k}" for k in range(t)], fmt)


def _edge_samples(rng: random.Random) -> list[dict]:
    base = {"id": "edge", "paradigm": "single", "target_periods": ["FY2023", "FY2024Q3YTD"]}
    out = [
        {**base, "answer_format": "number", "answer": "1,234.5", "decimals": 1},
        {**base, "answer_format": "number", "answer": 2023, "decimals": 0},
        {**base, "answer_format": "number", "answer": [[1.005]], "decimals": 2},
        {**base, "answer_format": "number", "answer": 12.5, "decimals": "2"},
        {**base, "answer_format": None, "answer": -0.0, "decimals": 4},
        {**base, "answer_format": "number", "answer": 1e20, "decimals": 2},
        {**base, "answer_format": "number", "answer": "n/a", "decimals": 2},
        {**base, "answer_format": "number", "answer": 3.5, "decimals": None},
        {**base, "answer_format": "number", "answer": " insufficient INFORMATION ", "decimals": 2},
        {**base, "answer_format": "json", "answer": [1.5, "(2,000)", 3], "decimals": 1},
        {**base, "answer_format": "tuple_list", "answer": [[1.0, 2.0], [3.0, 4.0]], "decimals": 0},
        {**base, "answer_format": "html_table", "answer": [[0.125, -0.125]], "decimals": 2},
        {**base, "answer_format": "json", "answer": [], "decimals": 2},
        {**base, "answer_format": "html_table", "answer": [["x", 1.0]], "decimals": 2},
        {**base, "answer_format": "json", "answer": [[True]], "decimals": 2},
        {**base, "answer_format": "json", "answer": [[1.0], [2.0]], "decimals": 2, "target_periods": None},
    ]
    for fmt in ("html_table", "json", "tuple_list"):
        values = [[round(rng.uniform(-1e6, 1e6), 2) for _ in range(2)] for _ in range(2)]
        out.append({**base, "paradigm": "table", "answer_format": fmt, "answer": values, "decimals": 2})
    return out


def corpus(seed: int, n: int) -> list[tuple[dict, str]]:
    """`n` seeded (sample, output) pairs; about a quarter unmodified solutions and unit slips."""
    rng = random.Random(seed)
    samples = make_rows(160, seed=seed) + _edge_samples(rng)
    by_format: dict[str, list[dict]] = {}
    for s in samples:
        by_format.setdefault(s.get("answer_format") or "number", []).append(s)
    pairs = []
    for _ in range(n):
        sample = rng.choice(samples)
        fmt = sample.get("answer_format") or "number"
        donor = rng.choice(by_format[fmt] if rng.random() < 0.8 else samples)
        solution = donor.get("solution") or f"Final answer: {_rand_number(rng)}"
        pick = rng.randrange(10)
        if pick < 3:
            text = solution
        elif pick < 5:
            text = scale_final_answer(solution, donor.get("answer_format") or "number", rng.choice([1000, 10, -1]))
        elif pick < 6:
            text = "Computed:\n" + _rand_table(rng, rng.choice(["html_table", "json", "tuple_list"] + [fmt] * 3))
        elif pick < 7:
            text = "".join(rng.choice(FRAGMENTS + [_rand_number(rng)] * 8) for _ in range(rng.randint(0, 40)))
        else:
            text = solution
        for _ in range(rng.choice([0, 1, 1, 2, 3]) if pick >= 5 else 0):
            text = _mutate(rng, text, sample)
        pairs.append((sample, text))
    return pairs


def outcome(scorer, sample: dict, text: str):
    try:
        return scorer(sample, text)
    except InputError as exc:
        return ("InputError", exc.field)


def test_fast_scorer_matches_the_reference_on_a_seeded_corpus():
    pairs = corpus(seed=4, n=6000)
    mismatches = [(s.get("answer"), s.get("answer_format"), t, outcome(score_response, s, t), outcome(_reference_score, s, t))
                  for s, t in pairs if outcome(score_response, s, t) != outcome(_reference_score, s, t)]
    assert mismatches == []
    reasons = {outcome(score_response, s, t).error_reason for s, t in pairs if isinstance(outcome(score_response, s, t), ScoreResult)}
    # the corpus reaches every decision the scorer can make (a corpus that only says "no_block" proves nothing)
    assert reasons >= {None, "unterminated_think", "empty_response", "no_number", "wrong_value", "refused", "no_block", "not_rows",
                       "missing_values", "no_refusal", "answered_deficient"}
    assert sum(outcome(score_response, s, t) == ("InputError", "answer") for s, t in pairs) > 0
    assert sum(isinstance(r, ScoreResult) and r.positional for r in (outcome(score_response, s, t) for s, t in pairs)) > 100


def test_reference_reads_the_paper_examples():
    sample = {"id": "s", "answer_format": "number", "answer": 1153987.78, "decimals": 2, "target_periods": ["FY2024"]}
    assert _reference_score(sample, "Final answer: 1,153,987.78").score == 1
    assert _reference_score(sample, "Final answer: 1153987.8").error_reason == "wrong_value"
    keyed = {"id": "t", "answer_format": "tuple_list", "answer": [[1.0, 2.0]], "decimals": 0, "target_periods": []}
    assert _reference_score(keyed, "[{'Revenue': 1.0, 'Cost': 2.0}]").error_reason == "not_rows"
