"""Training chat templates: reasoning rendered, `{% generation %}` markers for assistant-only loss.

    python -m ledgerlm.train.chat_templates runs/tiny-model --template deepseek_v3_reasoning

Our templates live in `train/templates/*.jinja` (one per token format whose own template lacks
markers or drops `reasoning_content`):

| template | for | why not the model's own / TRL's |
|---|---|---|
| deepseek_v3_reasoning | DeepSeek-V3/R1 token format; the tiny test models | original drops reasoning; TRL's training copy too |
| qwen2_5_reasoning | Qwen2.5 (-Instruct) 0.5B-72B | no markers; TRL's qwen2_5_training drops reasoning |
| smollm2_reasoning | SmolLM2-Instruct 135M-1.7B | no markers, no reasoning field; same text as qwen2_5_reasoning but SmolLM2's default system prompt |
| llama3_reasoning | Llama-3.x-Instruct 8B/70B | no markers, no reasoning field |

Qwen3 needs none of ours: TRL swaps in its `qwen3_training.jinja`, which renders `reasoning_content`.
`check_training_template` proves a template is fit for contract-5 rows before any GPU time is spent.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ledgerlm.errors import InputError

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"

PROBE = [  # a contract-5 conversation whose parts are easy to find in the rendered text
    {"role": "system", "content": "You are a careful financial analyst."},
    {"role": "user", "content": "What was revenue growth?"},
    {"role": "assistant", "content": "12.50%", "reasoning_content": "PROBE-REASONING (110-100)/100"},
    {"role": "user", "content": "And in millions?"},
    {"role": "assistant", "content": "10.00", "reasoning_content": "PROBE-SECOND 110-100"},
]


def available_templates() -> list[str]:
    return sorted(p.stem for p in TEMPLATES_DIR.glob("*.jinja"))


def resolve_template(name_or_path: str) -> Path:
    """A template name in train/templates (`qwen2_5_reasoning`) or a path to a .jinja file."""
    path = Path(name_or_path)
    if path.suffix in (".jinja", ".j2") and path.is_file():
        return path.resolve()
    candidate = TEMPLATES_DIR / f"{path.stem}.jinja"
    if candidate.is_file() and path.parent == Path("."):
        return candidate
    raise InputError(
        f"unknown chat template {name_or_path!r}: not a .jinja file and not one of {available_templates()}",
        path=str(name_or_path),
        field="chat_template",
    )


def check_training_template(tokenizer, chat_template: str | None = None) -> list[str]:
    """Problems that would make assistant-only SFT on contract-5 rows silently wrong ([] = fit).

    Checks: `{% generation %}` markers exist; `reasoning_content` is rendered; the assistant mask
    covers the reasoning and the answer of every assistant turn, including its end-of-turn token.
    """
    from trl.chat_template_utils import has_generation_markers, is_chat_template_stop_token_trained

    template = chat_template or tokenizer.chat_template
    if not template:
        return ["the tokenizer has no chat template (set --chat_template)"]
    problems = []
    if not has_generation_markers(template):
        problems.append("no {% generation %} markers: assistant_only_loss would mask nothing")
        return problems
    text = tokenizer.apply_chat_template(PROBE, chat_template=template, tokenize=False)
    if "PROBE-REASONING" not in text or "PROBE-SECOND" not in text:
        problems.append("reasoning_content is not rendered: the model would never see its reasoning")
    out = tokenizer.apply_chat_template(
        PROBE, chat_template=template, tokenize=True, return_dict=True, return_assistant_tokens_mask=True
    )
    trained = tokenizer.decode([t for t, m in zip(out["input_ids"], out["assistant_masks"]) if m])
    for needle in ("PROBE-REASONING", "12.50%", "PROBE-SECOND", "10.00"):
        if needle in text and needle not in trained:
            problems.append(f"{needle!r} is rendered but outside the assistant mask")
    if "What was revenue growth?" in trained:
        problems.append("the user turn is inside the assistant mask")
    if not is_chat_template_stop_token_trained(tokenizer, chat_template=template):
        problems.append("the end-of-turn token is outside the assistant mask: the model would not learn to stop")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check a tokenizer + training chat template on a probe conversation.")
    parser.add_argument("tokenizer", help="model folder or Hub id with a tokenizer")
    parser.add_argument("--template", help=f"one of {available_templates()} or a .jinja path (default: the tokenizer's)")
    args = parser.parse_args(argv)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    template = resolve_template(args.template).read_text(encoding="utf-8") if args.template else None
    problems = check_training_template(tokenizer, template)
    print("\n".join(problems) if problems else "ok: markers, reasoning rendered, end-of-turn trained")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
