"""The distillation manifest: acceptance per paradigm x axis x hint, rejects by reason, tokens, cost.

    python -c "import json; print(json.load(open('runs/distill/manifest.json'))['acceptance'])"

Acceptance rate of a group = verified teacher samples / teacher samples; `solved` = items with at
least one verified sample. Tokens count every teacher sample behind the output (cached or not);
cost is given only when prices (USD per million tokens) are. Nothing here depends on timing, so the
manifest of a resumed run equals an uninterrupted one's.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

VERIFIED_REASONS = ("near_duplicate", "not_selected")  # rejects that nonetheless passed the scorer


def build_manifest(items: list[dict], rows: list[dict], rejects: list[dict], *, config: dict[str, Any],
                   data_path: str, price_in: float | None = None, price_out: float | None = None) -> dict[str, Any]:
    teacher_rows = [r for r in rows if r["source"] == "teacher"]
    teacher_rejects = [r for r in rejects if r["source"] == "teacher"]
    samples = teacher_rows + teacher_rejects
    groups: dict[str, dict[str, Any]] = defaultdict(lambda: {"items": 0, "solved": 0, "samples": 0, "verified": 0, "rows": 0})
    verified_ids = {r["id"] for r in teacher_rows} | {r["id"] for r in teacher_rejects if r["reason"] in VERIFIED_REASONS}
    solved_items = {r["item_id"] for r in samples if r["id"] in verified_ids}
    for item in items:
        group = groups[_group(item)]
        group["items"] += 1
        group["solved"] += item["id"] in solved_items
    for sample in samples:
        group = groups[_group(sample)]
        group["samples"] += 1
        group["verified"] += sample["id"] in verified_ids
    for row in rows:
        groups[_group(row)]["rows"] += 1
    for group in groups.values():
        group["acceptance_rate"] = round(group["verified"] / group["samples"], 4) if group["samples"] else None
    prompt_tokens = sum(s["tokens"]["prompt"] for s in samples)
    completion_tokens = sum(s["tokens"]["completion"] for s in samples)
    verified = sum(g["verified"] for g in groups.values())
    manifest = {
        "data": data_path,
        "config": config,
        "counts": {
            "items": len(items),
            "samples": len(samples),
            "verified": verified,
            "acceptance_rate": round(verified / len(samples), 4) if samples else None,
            "rows": len(rows),
            "rows_teacher": len(teacher_rows),
            "rows_solution": len(rows) - len(teacher_rows),
            "items_solved": len(solved_items),
        },
        "rejects": dict(sorted(Counter(r["reason"] for r in rejects).items())),
        "acceptance": {name: groups[name] for name in sorted(groups)},
        "tokens": {"prompt": prompt_tokens, "completion": completion_tokens},
    }
    if price_in is not None or price_out is not None:
        cost = prompt_tokens / 1e6 * (price_in or 0.0) + completion_tokens / 1e6 * (price_out or 0.0)
        manifest["cost_usd"] = {"price_in_per_m": price_in, "price_out_per_m": price_out, "total": round(cost, 6)}
    return manifest


def _group(row: dict[str, Any]) -> str:
    return f"{row['paradigm']}|{row['axis']}|{'hint' if row['hint'] else 'no_hint'}"
