"""Run folders (DESIGN contract 6): `results.json` + `samples.jsonl`, written atomically, read back.

    python -c "from ledgerlm.evaluate.runfiles import read_run; r, s = read_run('runs/oracle'); print(r['metrics']['accuracy'])"

Each file is written to a temporary sibling and renamed into place (`os.replace`), so a reader
never sees half a file and a killed run leaves the previous files intact. Every sample row carries
at least: id, prompt, response (raw), reasoning, answer_text (reasoning stripped), extracted,
score (0/1), error_reason.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable

from ledgerlm.atomic import atomic_open
from ledgerlm.contracts import EvalRecord, dumps, read_jsonl  # read_jsonl: the one JSONL reader, re-exported here
from ledgerlm.errors import InputError

_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@\"']+@")
_URL_SECRET = re.compile(r"(?i)([?&][^=&\s\"']*(?:key|token|secret|password|auth|sig)[^=&\s\"']*=)[^&\s\"']+")


def redact_text(text: str) -> str:
    """Credentials of every URL in `text` (user:password@, secret-looking query values) replaced by ***."""
    if "://" not in text:
        return text
    return _URL_SECRET.sub(r"\1***", _URL_USERINFO.sub(r"\1***@", text))

RESULTS, SAMPLES = "results.json", "samples.jsonl"
SAMPLE_FIELDS = EvalRecord.field_names()  # contract 6: id, prompt, response, reasoning, answer_text, extracted, score, error_reason


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """`text` with lone surrogates (a model's `"\\ud800"` escape; not encodable as UTF-8) replaced by U+FFFD."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write `text` to `path` via a temp file in the same folder and an atomic rename (lone surrogates
    become U+FFFD instead of failing half-way; credentials in URLs are redacted)."""
    text = redact_text(clean_text(text))
    with atomic_open(path) as handle:
        handle.write(text)


def write_run(out_dir: str | Path, results: dict[str, Any], samples: Iterable[dict[str, Any]]) -> Path:
    """Write samples.jsonl then results.json (results last: its presence marks a complete run)."""
    out = Path(out_dir)
    rows = list(samples)
    lines = [dumps(EvalRecord.from_dict(row, f"{out / SAMPLES} row {i} (id {row.get('id')!r})")) + "\n"  # contract 6, typed:
             for i, row in enumerate(rows, 1)]  # a bad row names its field; serialized by the contracts module
    atomic_write_text(out / SAMPLES, "".join(lines))
    atomic_write_text(out / RESULTS, json.dumps(results, ensure_ascii=False, indent=2) + "\n")
    return out


def read_run(run_dir: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(results, samples) of a run folder."""
    run = Path(run_dir)
    if not (run / RESULTS).is_file() or not (run / SAMPLES).is_file():
        raise InputError(f"not a finished run (needs {RESULTS} and {SAMPLES})", path=str(run))
    with open(run / RESULTS, encoding="utf-8") as handle:
        results = json.load(handle)
    return results, [record.to_dict() for record in read_jsonl(run / SAMPLES, EvalRecord)]
