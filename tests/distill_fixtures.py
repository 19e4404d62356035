"""Contract-4 items for the distillation tests, from real 10-K figures (USD millions), plus scripted teacher replies.

AAPL FY2023 10-K: net sales 383,285 (FY2022 394,328), gross margin 169,148, current assets 143,566,
current liabilities 145,308. NVDA FY2024 10-K: revenue 60,922 (FY2023 26,974), net income 29,760.
Each item's user message carries `[item ID]` so a scripted server can tell which item it is asked.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

DEFICIENT = "Insufficient information"
FORMATS = ("number", "html_table", "json", "tuple_list")
AXES = ("domain", "caliber", "temporal+caliber", "temporal+domain")
# (label, formula text, value) — computed from the figures above
INDICES = [
    ("AAPL revenue growth FY2023 (%)", "(383,285 - 394,328) / 394,328 x 100", (383285 - 394328) / 394328 * 100),
    ("AAPL gross margin FY2023 (%)", "169,148 / 383,285 x 100", 169148 / 383285 * 100),
    ("AAPL current ratio FY2023 (times)", "143,566 / 145,308", 143566 / 145308),
    ("NVDA revenue growth FY2024 (%)", "(60,922 - 26,974) / 26,974 x 100", (60922 - 26974) / 26974 * 100),
    ("NVDA net margin FY2024 (%)", "29,760 / 60,922 x 100", 29760 / 60922 * 100),
]
ITEM_TAG = re.compile(r"\[item ([^\]]+)\]")


def make_items(count: int, split: str = "train") -> list[dict]:
    """`count` items cycling through answer formats and axes; hint alternates in pairs; every 7th is deficient."""
    items = []
    for n in range(count):
        fmt = FORMATS[n % 4]
        decimals = 1 + n % 3
        deficient = n % 7 == 6
        picks = [INDICES[(n + j) % len(INDICES)] for j in range(1 if fmt == "number" else 2)]
        labels = [p[0] for p in picks]
        if deficient:
            answer = DEFICIENT
        elif fmt == "number":
            answer = float(f"{picks[0][2]:.{decimals}f}")
        else:
            answer = [[float(f"{p[2]:.{decimals}f}")] for p in picks]
        item = {
            "id": f"d-{n:03d}", "split": split, "paradigm": "single" if fmt == "number" else "table",
            "axis": AXES[n % 4 if n % 8 < 4 else (n + 1) % 4], "hint": bool((n // 2) % 2), "company": "AAPL",
            "target_periods": ["FY2023"], "indices": labels, "context_periods": ["FY2023", "FY2022"],
            "traps": [{"kind": "deficiency", "detail": "FY2022 report withheld"}] if deficient else [],
            "context_formats": ["text", "text"], "answer_format": fmt, "unit": "percent", "decimals": decimals,
            "messages": [
                {"role": "system", "content": "You are a careful financial analyst."},
                {"role": "user", "content": f"[item d-{n:03d}] Compute {', '.join(labels)} to {decimals} decimals"
                                            + (f" as {fmt}." if fmt != "number" else ".")
                                            + (f" Formula: {'; '.join(p[1] for p in picks)}." if (n // 2) % 2 else "")},
            ],
            "answer": answer,
            "n_tokens": 60 + n, "tokenizer": "o200k_base",
            "provenance": [{"concept": "revenue", "period": "FY2023", "value": 383285e6, "source": "0000320193-23-000106"}],
        }
        item["solution"] = "Worked solution from the computation trace.\n" + answer_text(item)
        items.append(item)
    return items


def answer_text(item: dict, *, offset: float = 0.0) -> str:
    """The final answer as a correct model writes it (`offset` shifts every value: a wrong answer)."""
    d = item["decimals"]
    if item["answer"] == DEFICIENT:
        return f"Final answer: {DEFICIENT}" if not offset else "Final answer: 12.5"
    if item["answer_format"] == "number":
        return f"Final answer: {item['answer'] + offset:.{d}f}"
    rows = [[f"{v + offset:.{d}f}" for v in row] for row in item["answer"]]
    labels = item["indices"]
    if item["answer_format"] == "html_table":
        body = "".join(f"<tr><td>{l}</td>" + "".join(f"<td>{v}</td>" for v in r) + "</tr>" for l, r in zip(labels, rows))
        return f"<table><tr><th>Index</th><th>FY2023</th></tr>{body}</table>"
    if item["answer_format"] == "json":
        return "```json\n" + json.dumps([[float(v) for v in r] for r in rows]) + "\n```"
    return "[" + ", ".join("(" + ", ".join([repr(l)] + r) + ")" for l, r in zip(labels, rows)) + "]"


def malformed_text(item: dict) -> str:
    """An answer in the wrong shape: prose for a table (wrong format), no number for a single item (no answer)."""
    if item["answer_format"] == "number":
        return "The figures suggest a healthy business; I would not put a number on it."
    values = ", ".join(f"{v:.{item['decimals']}f}" for row in item["answer"] if isinstance(row, list) for v in row)
    return f"The values are {values or '1.0'} (given in prose, not in the requested {item['answer_format']})."


def item_of(body: dict, items_by_id: dict[str, dict]) -> dict:
    """The item a chat request is about (from its `[item ID]` tag)."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return items_by_id[ITEM_TAG.search(user).group(1)]


def write_dataset(folder: Path, items: list[dict], split: str = "train") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{split}.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return folder


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def stub_server(**kwargs):
    """A tests/openai_stub_server.StubServer (its handler turns Nagle's algorithm off itself)."""
    from openai_stub_server import StubServer

    return StubServer(**kwargs)
