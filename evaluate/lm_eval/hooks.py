"""lm-evaluation-harness hooks for FinIndices: dataset rows <-> lm-eval docs, and `process_results`.

    python -c "from ledgerlm.evaluate.lm_eval.hooks import process_results as p; \
print(p({'id': 'x', 'answer_format': 'number', 'answer_json': '12.5', 'decimals': 2, 'target_periods': []}, ['Final answer: 12.50']))"

An exported task folder (`ledgerlm export-lm-eval`) holds a `utils.py` whose `process_results(doc, results)`
calls `process_results` here with the task's `answer_extraction` and `metrics`, so lm-eval scores a
generation exactly as `ledgerlm eval` does (ledgerlm.evaluate.finindices.scoring.score_response). This
module needs only ledgerlm, not lm-eval.

Doc fields (one JSON line each; every value has one type across rows, as the `json` dataset loader needs):
  id, system (the system message, "" when none; lm-eval's `description`), user (the last user message;
  `doc_to_text`), answer_json (the answer as JSON: a number, a list of rows or "Insufficient information"),
  answer_text (the same as text; `doc_to_target`), answer_format, decimals, target_periods, paradigm, axis, hint.
Run lm-eval with `--apply_chat_template`: the messages then reach the model as ledgerlm sends them (system +
user). Without it lm-eval writes the system text directly before the user text, with no separator.
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

from ledgerlm.errors import InputError
from ledgerlm.evaluate.finindices.scoring import score_response
from ledgerlm.evaluate.tasks.metrics import FININDICES


def to_doc(row: dict[str, Any], *, file: str | None = None) -> dict[str, Any]:
    """One lm-eval doc for a contract-4 FinIndices row (one system message at most, then one user message)."""
    messages = row.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InputError(f"row {row.get('id')!r} has no messages", path=file, field="messages")
    roles = [m.get("role") if isinstance(m, dict) else None for m in messages]
    if roles not in (["user"], ["system", "user"]) or not all(isinstance(m.get("content"), str) for m in messages):
        raise InputError(f"row {row.get('id')!r}: lm-eval takes one optional system message and one user message "
                         f"with text content, got roles {roles}", path=file, field="messages")
    answer = row.get("answer")
    return {
        "id": str(row["id"]),
        "system": messages[0]["content"] if roles[0] == "system" else "",
        "user": messages[-1]["content"],
        "answer_json": json.dumps(answer, ensure_ascii=False),
        "answer_text": answer if isinstance(answer, str) else json.dumps(answer),
        "answer_format": row.get("answer_format") or "number",
        "decimals": int(row["decimals"]),
        "target_periods": [str(p) for p in row.get("target_periods") or []],
        "paradigm": str(row.get("paradigm") or ""),
        "axis": str(row.get("axis") or ""),
        "hint": bool(row.get("hint")),
    }


def to_row(doc: dict[str, Any]) -> dict[str, Any]:
    """The scorer's view of an lm-eval doc (what `score_response` reads)."""
    return {"id": doc["id"], "answer_format": doc["answer_format"], "answer": json.loads(doc["answer_json"]),
            "decimals": doc["decimals"], "target_periods": list(doc.get("target_periods") or [])}


def process_results(doc: dict[str, Any], results: Sequence[str], *, extraction: str = "final_answer",
                    metrics: Iterable[str] = ("accuracy",), lenient_precision: bool = False) -> dict[str, float]:
    """lm-eval's per-document hook: {metric: value} for the first generation in `results` (lm-eval averages them)."""
    response = results[0] if results else ""
    result = score_response(to_row(doc), response, lenient_precision=lenient_precision, extraction=extraction)
    record = {"score": result.score, "positional": result.positional, "error_reason": result.error_reason, "finish_reason": None}
    return {name: FININDICES[name].per_sample(record) for name in metrics}
