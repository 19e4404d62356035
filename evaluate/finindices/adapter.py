"""Read FinIndices items: our synthesized datasets (DESIGN contract 4) or the official release.

    python -c "from ledgerlm.evaluate.finindices.adapter import load_rows; print(len(load_rows('runs/data', split='test')))"
    ledgerlm eval --benchmark finindices --data finindices_test.jsonl --no-hint ...   # the 640-row release test set

Sources: a dataset folder (`<dir>/<split>.jsonl`), one `.jsonl` file, or the Hub id
`Findata/Finindice` (via `datasets.load_dataset`, only when online; a local path always wins).

The official release (Chinese; test split 640 rows, paper §2.1) is known here only from the paper's
appendix examples (A.4-A.6: "User Instruction", "Ground Truth" as a number, a <table>, or a ```json
list of string cells; "Insufficient information"). Its field mapping is ONE table, `OFFICIAL_FIELDS`:
for each contract-4 field, the release column names tried in order (first non-empty wins). A user
whose copy names columns differently corrects it with `--field-map FILE.json` ({"prompt": ["问题"]}),
which is merged in front of the defaults.

| contract-4 field  | release columns tried                                   | rule                                          |
|-------------------|---------------------------------------------------------|-----------------------------------------------|
| id                | id, uid, qid, question_id, idx, index                   | else official-<split>-<row>                   |
| prompt            | prompt, question, query, input, instruction, 问题       | the user message (without the hint)           |
| prompt_with_hint  | prompt_with_hint, question_with_hint, prompt_hint       | a ready with-hint prompt, when the release has one |
| hint_text         | hint_text, formula, formula_hint, 公式, 提示             | appended to the prompt for the with-hint variant |
| hint              | hint, with_hint, has_hint, use_hint                     | a boolean flag when a row is one variant only |
| system            | system, system_prompt                                   | optional system message                       |
| answer            | answer, ground_truth, gt, label, output, target, 答案   | number / <table> / ```json / Insufficient ... |
| paradigm          | paradigm, task_type, query_type, type, task             | single_indice / table_indice                  |
| axis              | axis, capability, capability_axis, category, dimension  | Tables 11-12's capability axis                |
| answer_format     | answer_format, output_format, format                    | else inferred from the answer                 |
| decimals          | decimals, precision                                     | else from the prompt ("two decimal places", "保留两位小数"), else the answer's decimals when any, else 2 - an integer answer ("100") never sets 0 |
| company           | company, stock_code, company_name, code                 |                                               |
| split             | split                                                   | else the requested split                      |

Hint variants: a row with `hint_text` (or `prompt_with_hint`) yields two items, `<id>:hint` and
`<id>:nohint` (hint True / False), selectable with --hint / --no-hint / --both. Table ground truths
keep only value cells: header rows (<th> cells, or a first row of period labels such as 2023, 2023Y,
2024Q1, 2023年) and a first column of period or index labels are not answer cells.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ledgerlm.contracts import Sample
from ledgerlm.errors import InputError
from ledgerlm.evaluate.finindices import extract
from ledgerlm.evaluate.finindices.scoring import DEFICIENT
from ledgerlm.evaluate.runfiles import read_jsonl

HUB_ID = "Findata/Finindice"
REQUIRED = ("id", "paradigm", "answer_format", "messages", "answer", "decimals")

# contract-4 field <- official release columns (first present wins). The single home of the mapping (see the docstring).
OFFICIAL_FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("id", "uid", "qid", "question_id", "idx", "index"),
    "prompt": ("prompt", "question", "query", "input", "instruction", "问题"),  # becomes messages=[{"role": "user", ...}]
    "prompt_with_hint": ("prompt_with_hint", "question_with_hint", "prompt_hint"),
    "hint_text": ("hint_text", "formula", "formula_hint", "公式", "提示"),
    "system": ("system", "system_prompt"),
    "answer": ("answer", "ground_truth", "gt", "label", "output", "target", "答案"),
    "paradigm": ("paradigm", "task_type", "query_type", "type", "task"),  # "single_indice" / "table_indice"
    "axis": ("axis", "capability", "capability_axis", "category", "dimension"),
    "hint": ("hint", "with_hint", "has_hint", "use_hint"),
    "answer_format": ("answer_format", "output_format", "format"),
    "decimals": ("decimals", "precision"),
    "company": ("company", "stock_code", "company_name", "code"),
    "split": ("split",),
}


def load_rows(source: str | Path, *, split: str = "test", field_map: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
    """Contract-4 rows from a dataset folder, a JSONL file, or the Hub release (official rows: every hint variant)."""
    path = Path(source)
    if path.is_dir():
        file = path / f"{split}.jsonl"
        if not file.is_file():
            raise InputError(f"no {split}.jsonl in the dataset folder (has: {sorted(p.name for p in path.glob('*.jsonl'))})", path=str(path))
        raw = read_jsonl(file)
    elif path.is_file():
        file, raw = path, read_jsonl(path)
    elif str(source).removeprefix("hub:") == HUB_ID:
        file, raw = Path(HUB_ID), _load_hub(split)
    else:
        raise InputError("no such dataset folder or file", path=str(source))
    fields = merged_fields(field_map)
    out = []
    for n, row in enumerate(raw):  # our rows are contract 4 (typed: ledgerlm.contracts.Sample); the release's are mapped
        out += [Sample.from_dict(row, f"{file} row {n + 1}").to_dict()] if "messages" in row else \
            official_variants(row, n, split, file=file, fields=fields)
    return [_checked(row, file) for row in out]


def merged_fields(field_map: dict[str, list[str]] | None) -> dict[str, tuple[str, ...]]:
    """OFFICIAL_FIELDS with a user's corrections (their column names tried first)."""
    fields = dict(OFFICIAL_FIELDS)
    for key, names in (field_map or {}).items():
        if key not in fields:
            raise InputError(f"--field-map names {key!r}, which is not one of {sorted(fields)}", field="field-map")
        fields[key] = tuple(names if isinstance(names, list) else [names]) + fields[key]
    return fields


def load_field_map(path: str | Path | None) -> dict[str, list[str]] | None:
    if path is None:
        return None
    import json

    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise InputError(f"cannot read the field map ({err})", path=str(path)) from None
    if not isinstance(value, dict):
        raise InputError("the field map must be a JSON object: contract-4 field -> list of release column names", path=str(path))
    return value


def _load_hub(split: str) -> list[dict[str, Any]]:
    from datasets import load_dataset

    try:
        return list(load_dataset(HUB_ID, split=split))
    except (OSError, ConnectionError, ValueError) as err:
        raise InputError(f"cannot load {HUB_ID} split {split!r} from the Hub ({err}); download it and pass the local JSONL", field="--data") from err


def _checked(row: dict[str, Any], file: Path) -> dict[str, Any]:
    missing = [f for f in REQUIRED if row.get(f) is None]
    if missing:
        raise InputError(f"row {row.get('id')!r} lacks {missing}", path=str(file))
    return row


def _first(row: dict[str, Any], field: str, fields: dict[str, tuple[str, ...]] | None = None) -> Any:
    for name in (fields or OFFICIAL_FIELDS)[field]:
        if row.get(name) not in (None, ""):
            return row[name]
    return None


def official_variants(row: dict[str, Any], n: int, split: str, *, file: str | Path | None = None,
                      fields: dict[str, tuple[str, ...]] | None = None) -> list[dict[str, Any]]:
    """One release row -> its contract-4 items: a with-hint and a without-hint item when the row carries the
    hint (`hint_text` or `prompt_with_hint`), else the row as given (its `hint` flag, if any)."""
    base = from_official(row, n, split, file=file, fields=fields)
    hint_text, with_hint = _first(row, "hint_text", fields), _first(row, "prompt_with_hint", fields)
    if hint_text is None and with_hint is None:
        return [base]
    prompt = base["messages"][-1]["content"]
    hinted = str(with_hint) if with_hint is not None else f"{prompt}\n{hint_text}"
    variants = []
    for tag, hint, text in (("hint", True, hinted), ("nohint", False, prompt)):
        messages = base["messages"][:-1] + [{"role": "user", "content": text}]
        variants.append({**base, "id": f"{base['id']}:{tag}", "hint": hint, "messages": messages})
    return variants


def from_official(row: dict[str, Any], n: int, split: str, *, file: str | Path | None = None,
                  fields: dict[str, tuple[str, ...]] | None = None) -> dict[str, Any]:
    """One official-release record as a contract-4 row (see OFFICIAL_FIELDS); errors name `file`."""
    fields = fields or OFFICIAL_FIELDS
    prompt = _first(row, "prompt", fields)
    if not isinstance(prompt, str):
        raise InputError(f"official row {n}: no prompt (a string) among {fields['prompt']}", path=file and str(file), field="prompt")
    raw_answer = str(_first(row, "answer", fields) or "")
    fmt = _first(row, "answer_format", fields) or _infer_format(raw_answer)
    fmt = {"html": "html_table", "table": "html_table", "tuple": "tuple_list", "number": "number"}.get(str(fmt).lower(), str(fmt).lower())
    paradigm = str(_first(row, "paradigm", fields) or ("single" if fmt == "number" else "table")).lower()
    answer, answer_places = _official_answer(raw_answer, fmt, n, file)
    system = _first(row, "system", fields)
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    hint = _first(row, "hint", fields)
    given = _first(row, "decimals", fields)
    asked = decimals_asked(prompt)
    decimals = int(given) if given is not None else asked if asked is not None else (answer_places or DEFAULT_DECIMALS)
    return {
        "id": str(_first(row, "id", fields) if _first(row, "id", fields) is not None else f"official-{split}-{n}"),
        "split": _first(row, "split", fields) or split,
        "paradigm": "table" if "table" in paradigm else "single",
        "axis": _first(row, "axis", fields) or "unknown",
        "hint": None if hint is None else str(hint).lower() in ("1", "true", "yes", "with_hint", "hint"),
        "company": _first(row, "company", fields),
        "target_periods": [], "indices": [], "context_periods": [], "traps": [], "context_formats": [],
        "answer_format": fmt,
        "unit": None,
        "decimals": decimals,
        "messages": messages,
        "answer": answer,
        "solution": None,
        "provenance": {"source": HUB_ID, "row": n, "decimals_from": "release" if given is not None else "prompt" if asked is not None
                       else "answer" if answer_places else "default"},
    }


DEFAULT_DECIMALS = 2  # the paper's most common instruction; used only when neither the prompt nor the answer says
_CN_DIGITS = {"零": 0, "一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6}
_EN_DIGITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_ASKED = [
    re.compile(r"(?i)\b(\d|zero|one|two|three|four|five|six)\s+decimal(?:\s+place)?s?\b"),
    re.compile(r"(?i)\bdecimals?\s*[:=]\s*(\d)\b"),
    re.compile(r"保留\s*(\d|[零一两二三四五六])\s*位小数"),
    re.compile(r"小数点后\s*(\d|[零一两二三四五六])\s*位"),
]
_INTEGER_ASKED = re.compile(r"(?i)\bnearest (?:whole number|integer)\b|保留整数|取整")


def decimals_asked(prompt: str) -> int | None:
    """The precision the instruction asks for: 'rounded to two decimal places', 'Round to 1 decimal', '保留两位小数'."""
    for pattern in _ASKED:
        found = pattern.findall(prompt)
        if found:
            token = found[-1].lower()
            return int(token) if token.isdigit() else _EN_DIGITS.get(token, _CN_DIGITS.get(token))
    return 0 if _INTEGER_ASKED.search(prompt) else None


def _infer_format(answer: str) -> str:
    lower = answer.lower()
    if "<table" in lower:
        return "html_table"
    if "```json" in lower:
        return "json"
    return "tuple_list" if answer.lstrip().startswith(("[", "(")) else "number"


def _official_answer(raw: str, fmt: str, n: int, file: str | Path | None = None) -> tuple[Any, int]:
    """(contract-4 answer, the largest number of decimals written in it; 0 when all are integers)."""
    if "insufficient" in raw.lower() or "信息不足" in raw:
        return DEFICIENT, 0
    text = extract.normalize(raw)
    if fmt == "number":
        tokens = extract.number_tokens(text)
        if not tokens:
            raise InputError(f"official row {n}: answer {raw[:60]!r} has no number", path=file and str(file), field="answer")
        return float(tokens[-1].replace(",", "")), _places(tokens[-1])
    rows = _html_rows(text) if fmt == "html_table" else None
    if rows is None:
        block = extract.isolate_block(text, fmt)
        rows = [[c if isinstance(c, str) else json_cell(c) for c in r] for r in block.rows] if block is not None and block.rows else []
    grid, places = truth_grid(rows)
    if not grid:
        raise InputError(f"official row {n}: {fmt} answer {raw[:60]!r} has no numeric rows", path=file and str(file), field="answer")
    return grid, places


def json_cell(value: Any) -> str:
    return "" if value is None or isinstance(value, (list, dict, bool)) else repr(value) if isinstance(value, float) else str(value)


def _html_rows(text: str) -> list[list[str]] | None:
    """Rows of the last <table> as cell texts, a row of only <th> cells marked with a leading None (lxml)."""
    import lxml.html

    start = text.lower().rfind("<table")
    if start < 0:
        return None
    try:
        table = lxml.html.fragment_fromstring(text[start:], create_parent="div").xpath(".//table")[-1]
    except (ValueError, IndexError, lxml.etree.ParserError):
        return None
    rows = []
    for tr in table.xpath(".//tr"):
        cells = tr.xpath("./td|./th")
        texts = [" ".join(c.text_content().split()) for c in cells]
        rows.append([None] + texts if cells and all(c.tag == "th" for c in cells) else texts)
    return rows


_PERIOD = re.compile(r"(?i)^(?:fy\s*)?(?:19|20)\d{2}\s*(?:年度?|财年)?\s*(?:y|a|q[1-4]|h[12]|ttm|ytd|[一二三四]季度|半年度|年报|中报|e)?$")


def _is_label(cell: str | None) -> bool:
    """Not an answer cell: empty, text, or a period label (2023, 2023Y, 2024Q1, 2023年)."""
    return cell is None or extract.parse_cell(cell) is None or bool(_PERIOD.match(cell.strip()))


def truth_grid(rows: list[list[str | None]]) -> tuple[list[list[float]], int]:
    """(value grid, most decimals written) of a ground-truth table: header rows (all <th>, or a first row
    whose cells are all labels/periods) and a first column of labels/periods are not answer cells."""
    rows = [r for r in rows if r and r[0] is not None]  # drop <th>-only rows (marked None)
    if rows and all(_is_label(c) for c in rows[0]):
        rows = rows[1:]
    if rows and all(len(r) > 1 and _is_label(r[0]) for r in rows):
        rows = [r[1:] for r in rows]
    grid, places = [], 0
    for row in rows:
        values = [v for v in map(extract.parse_cell, row) if v is not None]
        if values:
            grid.append(values)
            places = max([places] + [_places(c.strip().rstrip("%")) for c in row if c and extract.parse_cell(c) is not None])
    return grid, places


def _places(token: str) -> int:
    return len(token.split(".", 1)[1]) if "." in token and "e" not in token.lower() else 0
