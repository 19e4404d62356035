"""Read FinIndices items: our synthesized datasets (DESIGN contract 4) or the official release.

    python -c "from ledgerlm.evaluate.finindices.adapter import load_rows; print(len(load_rows('runs/data', split='test')))"

Sources: a dataset folder (`<dir>/<split>.jsonl`), one `.jsonl` file, or the Hub id
`Findata/Finindice` (via `datasets.load_dataset`, only when online; a local path always wins).

The official release's field mapping lives in ONE place, `OFFICIAL_FIELDS` below: for each
contract-4 field, the release column names tried in order (the first present wins). Official
answers are strings — a number, `<table>…</table>`, a ```json list, a tuple list, or `Insufficient
information to calculate the final value` — and are converted into contract-4 answers (a number,
a list of rows, or `Insufficient information`) with the same parsers the scorer uses;
`answer_format` and `decimals` are inferred from the answer text when the release does not give them.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ledgerlm.errors import InputError
from ledgerlm.evaluate.finindices import extract
from ledgerlm.evaluate.finindices.scoring import DEFICIENT
from ledgerlm.evaluate.runfiles import read_jsonl

HUB_ID = "Findata/Finindice"
REQUIRED = ("id", "paradigm", "answer_format", "messages", "answer", "decimals")

# contract-4 field <- official release columns (first present wins). The single home of the mapping.
OFFICIAL_FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("id", "uid", "qid", "question_id", "idx", "index"),
    "prompt": ("prompt", "question", "query", "input", "instruction"),  # becomes messages=[{"role": "user", ...}]
    "system": ("system", "system_prompt"),
    "answer": ("answer", "ground_truth", "gt", "label", "output", "target"),
    "paradigm": ("paradigm", "task_type", "query_type", "type", "task"),  # "single_indice" / "table_indice"
    "axis": ("axis", "capability", "capability_axis", "category", "dimension"),
    "hint": ("hint", "with_hint", "has_hint", "use_hint"),
    "answer_format": ("answer_format", "output_format", "format"),
    "decimals": ("decimals", "precision"),
    "company": ("company", "stock_code", "company_name", "code"),
    "split": ("split",),
}


def load_rows(source: str | Path, *, split: str = "test") -> list[dict[str, Any]]:
    """Contract-4 rows from a dataset folder, a JSONL file, or the Hub release."""
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
    return [_checked(row if "messages" in row else from_official(row, n, split, file=file), file) for n, row in enumerate(raw)]


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


def _first(row: dict[str, Any], field: str) -> Any:
    for name in OFFICIAL_FIELDS[field]:
        if row.get(name) not in (None, ""):
            return row[name]
    return None


def from_official(row: dict[str, Any], n: int, split: str, *, file: str | Path | None = None) -> dict[str, Any]:
    """One official-release record as a contract-4 row (see OFFICIAL_FIELDS); errors name `file`."""
    prompt = _first(row, "prompt")
    if not isinstance(prompt, str):
        raise InputError(f"official row {n}: no prompt (a string) among {OFFICIAL_FIELDS['prompt']}", path=file and str(file), field="prompt")
    raw_answer = str(_first(row, "answer") or "")
    fmt = _first(row, "answer_format") or _infer_format(raw_answer)
    fmt = {"html": "html_table", "table": "html_table", "tuple": "tuple_list", "number": "number"}.get(str(fmt).lower(), str(fmt).lower())
    paradigm = str(_first(row, "paradigm") or ("single" if fmt == "number" else "table")).lower()
    answer, decimals = _official_answer(raw_answer, fmt, n, file)
    system = _first(row, "system")
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    hint = _first(row, "hint")
    return {
        "id": str(_first(row, "id") if _first(row, "id") is not None else f"official-{split}-{n}"),
        "split": _first(row, "split") or split,
        "paradigm": "table" if "table" in paradigm else "single",
        "axis": _first(row, "axis") or "unknown",
        "hint": None if hint is None else str(hint).lower() in ("1", "true", "yes", "with_hint", "hint"),
        "company": _first(row, "company"),
        "target_periods": [], "indices": [], "context_periods": [], "traps": [], "context_formats": [],
        "answer_format": fmt,
        "unit": None,
        "decimals": int(_first(row, "decimals")) if _first(row, "decimals") is not None else decimals,
        "messages": messages,
        "answer": answer,
        "solution": None,
        "provenance": {"source": HUB_ID, "row": n},
    }


def _infer_format(answer: str) -> str:
    lower = answer.lower()
    if "<table" in lower:
        return "html_table"
    if "```json" in lower:
        return "json"
    return "tuple_list" if answer.lstrip().startswith(("[", "(")) else "number"


def _official_answer(raw: str, fmt: str, n: int, file: str | Path | None = None) -> tuple[Any, int]:
    if "insufficient" in raw.lower() or "信息不足" in raw:
        return DEFICIENT, 2
    text = extract.normalize(raw)
    if fmt == "number":
        tokens = re.findall(extract._NUMBER, text)
        if not tokens:
            raise InputError(f"official row {n}: answer {raw[:60]!r} has no number", path=file and str(file), field="answer")
        return float(tokens[-1].replace(",", "")), _places(tokens[-1])
    block = extract.isolate_block(text, fmt)
    grid = extract.numeric_grid(block) if block is not None and block.rows else []
    if not grid:
        raise InputError(f"official row {n}: {fmt} answer {raw[:60]!r} has no numeric rows", path=file and str(file), field="answer")
    places = [_places(t) for t in re.findall(extract._NUMBER, block.text)] or [2]
    return grid, max(places)


def _places(token: str) -> int:
    return len(token.split(".", 1)[1]) if "." in token and "e" not in token.lower() else 0
