"""Contract-4 FinIndices rows for the evaluator tests, built by hand (inline, small) and by a
seeded generator that covers every answer format, both paradigms, hint/no-hint and deficiency
items. Solutions end with the final answer written the way a correct model would write it,
mirroring synth/finindices/answers.py (html: header row + one row per index; json: one list per index;
tuple_list: one `('label', v1, v2)` tuple per index).
"""
from __future__ import annotations

import json
import random

AXES = ("domain", "caliber", "temporal+caliber", "temporal+domain")
FORMATS = ("number", "html_table", "json", "tuple_list")
LABELS = ("Return on equity", "Owner's equity (TTM)", "Gross margin", "Cash conversion cycle", "Net debt")
DEFICIENT = "Insufficient information"


def fmt(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}"


def table_text(rows: list[list[str]], labels: list[str], periods: list[str], answer_format: str) -> str:
    if answer_format == "html_table":
        head = "<tr><th>Index</th>" + "".join(f"<th>{p}</th>" for p in periods) + "</tr>"
        body = "".join(f"<tr><td>{l}</td>" + "".join(f"<td>{v}</td>" for v in row) + "</tr>" for l, row in zip(labels, rows))
        return f"<table>{head}{body}</table>"
    if answer_format == "json":
        return "```json\n[" + ", ".join("[" + ", ".join(row) + "]" for row in rows) + "]\n```"
    return "[" + ", ".join("(" + ", ".join([repr(l)] + row) + ")" for l, row in zip(labels, rows)) + "]"


def make_row(rng: random.Random, n: int, *, answer_format: str, hint: bool, deficient: bool) -> dict:
    decimals = rng.choice([1, 2, 3])
    paradigm = "single" if answer_format == "number" else "table"
    n_idx, n_per = (1, 1) if paradigm == "single" else (rng.randint(1, 3), rng.randint(1, 4))
    periods = [f"FY{2020 + k}" if k % 2 else f"FY{2020 + k}Q3YTD" for k in range(n_per)]
    labels = list(rng.sample(LABELS, n_idx))
    values = [[rng.choice([-1, 1]) * rng.uniform(0.5, 10 ** rng.randint(1, 7)) for _ in periods] for _ in labels]
    text_rows = [[fmt(v, decimals) for v in row] for row in values]
    steps = "\n".join(f"Step {k + 1}: {l} for {p} = {a:,.6f} / 1,000 -> {t}" for k, (l, p, a, t) in
                      enumerate((l, p, v * 1000, t) for l, row, trow in zip(labels, values, text_rows) for p, v, t in zip(periods, row, trow)))
    if deficient:
        answer = DEFICIENT
        solution = f"The FY{2019 + n_per}Q3YTD report is not in the context, so the standalone quarter cannot be derived.\nFinal answer: {DEFICIENT}"
    elif paradigm == "single":
        answer = float(text_rows[0][0])
        solution = f"{steps}\nRounded half away from zero to {decimals} decimals.\nFinal answer: {text_rows[0][0]}"
    else:
        answer = [[float(t) for t in row] for row in text_rows]
        solution = f"{steps}\n\n{table_text(text_rows, labels, periods, answer_format)}"
    return {
        "id": f"fx-{n:05d}", "split": "test", "paradigm": paradigm, "axis": rng.choice(AXES), "hint": hint,
        "company": rng.choice(["AAPL", "NVDA", "TSM"]), "target_periods": periods, "indices": [l.lower().replace(" ", "_") for l in labels],
        "context_periods": periods, "traps": [{"kind": "deficiency", "detail": "missing Q3"}] if deficient else [],
        "context_formats": ["text"] * n_per, "answer_format": answer_format, "unit": "thousands", "decimals": decimals,
        "messages": [{"role": "system", "content": "You are a financial analyst."},
                     {"role": "user", "content": f"Compute {', '.join(labels)} for {', '.join(periods)} ({answer_format}, {decimals} decimals). #{n}"}],
        "answer": answer, "solution": solution, "n_tokens": 100 + n, "tokenizer": "o200k_base",
        "provenance": [{"concept": "revenue", "period": periods[0], "value": 1.0, "source": "fixture"}],
    }


def make_rows(count: int, seed: int = 0) -> list[dict]:
    """`count` rows cycling through formats × hint, every 7th a deficiency item."""
    rng = random.Random(seed)
    return [make_row(rng, n, answer_format=FORMATS[n % 4], hint=bool((n // 4) % 2), deficient=n % 7 == 3) for n in range(count)]


def write_dataset(folder, rows: list[dict], split: str = "test") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def build_tiny_model(tokenizer_json, out_dir, *, seed: int = 0, hidden: int = 64, layers: int = 2):
    """A random-initialised 2-layer Llama with the real tokenizer and a simple chat template, saved to `out_dir`."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(tokenizer_json), bos_token="<｜begin▁of▁sentence｜>",
                                        eos_token="<｜end▁of▁sentence｜>", pad_token="<｜▁pad▁｜>")
    tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
                         tie_word_embeddings=True)
    model = LlamaForCausalLM(config)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir
