"""Small contract-5 training rows and contract-4 dev samples for the train tests (real 10-K figures, USD millions).

AAPL FY2023 10-K: revenue 383,285 (FY2022 394,328), gross margin 169,148, current assets 143,566,
current liabilities 145,308. NVDA FY2024 10-K: revenue 60,922 (FY2023 26,974), net income 29,760.
"""
from __future__ import annotations

import json
from pathlib import Path

SYSTEM = "You are a financial analyst. Answer exactly in the unit and precision asked."

_QA = [  # (question, reasoning, answer, paradigm, hint, decimals)
    ("Apple Inc. (AAPL) income statement, FY2023: Net sales 383,285; FY2022: Net sales 394,328 (USD millions).\n"
     "What is AAPL's FY2023 revenue growth year over year, in percent, 2 decimals?",
     "Revenue growth = (current revenue - prior revenue) / prior revenue.\n(383,285 - 394,328) / 394,328 = -11,043 / 394,328 = -0.028005.\nIn percent: -2.80.",
     "-2.80", "single", True, 2),
    ("NVIDIA Corp (NVDA) income statement, FY2024: Revenue 60,922; FY2023: Revenue 26,974 (USD millions).\n"
     "Compute NVDA's FY2024 revenue YoY growth in percent to 2 decimals.",
     "(60,922 - 26,974) / 26,974 = 33,948 / 26,974 = 1.258545, i.e. 125.85%.",
     "125.85", "single", False, 2),
    ("AAPL FY2023: Net sales 383,285; Gross margin 169,148 (USD millions). Gross margin ratio, percent, 2 decimals?",
     "Gross margin ratio = gross profit / revenue = 169,148 / 383,285 = 0.441311 -> 44.13%.",
     "44.13", "single", True, 2),
    ("AAPL balance sheet at 2023-09-30: Total current assets 143,566; Total current liabilities 145,308 (USD millions).\n"
     "What is the current ratio (times, 2 decimals)?",
     "Current ratio = current assets / current liabilities = 143,566 / 145,308 = 0.98801 -> 0.99.",
     "0.99", "single", False, 2),
    ("NVDA FY2024: Revenue 60,922; Net income 29,760 (USD millions). Net profit margin in percent, 2 decimals?",
     "Net margin = net income / revenue = 29,760 / 60,922 = 0.488494 -> 48.85%.",
     "48.85", "single", True, 2),
    ("AAPL FY2023 income statement only (no balance sheet shown). What is AAPL's FY2023 return on average equity?",
     "ROE needs average shareholders' equity, which needs the FY2022 and FY2023 balance sheets; neither is shown.",
     "Insufficient information", "single", False, 2),
    ("Give a table of AAPL revenue growth (percent, 2 decimals) and gross margin ratio (percent, 2 decimals) for FY2023 "
     "as a tuple list [(index, FY2023)]. FY2023 net sales 383,285; FY2022 394,328; FY2023 gross margin 169,148.",
     "Growth: (383,285 - 394,328) / 394,328 = -2.80%. Gross margin: 169,148 / 383,285 = 44.13%.",
     "[('revenue_yoy', -2.80), ('gross_margin', 44.13)]", "table", True, 2),
    ("NVDA FY2024 table, tuple list [(index, FY2024)], percent 2 decimals: revenue YoY and net margin. "
     "Revenue FY2024 60,922, FY2023 26,974; net income FY2024 29,760.",
     "YoY: 33,948 / 26,974 = 125.85%. Net margin: 29,760 / 60,922 = 48.85%.",
     "[('revenue_yoy', 125.85), ('net_margin', 48.85)]", "table", False, 2),
]


def training_rows() -> list[dict]:
    """Contract 5: system, user, assistant{content, reasoning_content}."""
    return [{"messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": q},
                          {"role": "assistant", "content": f"The answer is {a}.", "reasoning_content": r}]}
            for q, r, a, *_ in _QA]


def dev_samples() -> list[dict]:
    """Contract 4 (the fields the scorer and the eval callback read)."""
    out = []
    for i, (q, r, a, paradigm, hint, decimals) in enumerate(_QA):
        answer = a if a == "Insufficient information" or paradigm == "table" else float(a)
        if paradigm == "table":
            answer = [[float(x.split(", ")[1].rstrip(")"))] for x in a.strip("[]").split("), (")]
        out.append({"id": f"dev-{i}", "split": "dev", "paradigm": paradigm, "hint": hint, "axis": "domain",
                    "answer_format": "number" if paradigm == "single" else "tuple_list", "decimals": decimals,
                    "unit": "percent", "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": q}],
                    "answer": answer, "solution": f"{r}\nThe answer is {a}."})
    return out


def write_dataset(folder: Path, repeat: int = 4) -> Path:
    """A dataset folder: train.jsonl (contract 5, rows repeated) and dev.jsonl (contract 4)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "train.jsonl", "w", encoding="utf-8") as handle:
        for row in training_rows() * repeat:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    with open(folder / "dev.jsonl", "w", encoding="utf-8") as handle:
        for sample in dev_samples():
            handle.write(json.dumps(sample, ensure_ascii=False) + "\n")
    return folder
