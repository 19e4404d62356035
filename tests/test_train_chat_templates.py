"""Our training templates render reasoning and mark exactly the assistant output for the loss."""
from __future__ import annotations

import pytest

from ledgerlm.errors import InputError
from ledgerlm.train.chat_templates import PROBE, available_templates, check_training_template, resolve_template
from ledgerlm.train.tiny_model import build_tokenizer

# special tokens of each template's model family, added to the real 128k tokenizer so masks can be checked offline
FAMILY_TOKENS = {
    "deepseek_v3_reasoning": [],
    "qwen2_5_reasoning": ["<|im_start|>", "<|im_end|>"],
    "llama3_reasoning": ["<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"],
    "smollm2_reasoning": ["<|im_start|>", "<|im_end|>"],
}


@pytest.fixture(scope="module")
def tokenizer(tokenizer_json):
    return build_tokenizer(tokenizer_json)


def test_every_shipped_template_is_covered():
    assert available_templates() == sorted(FAMILY_TOKENS)


@pytest.mark.parametrize("name", sorted(FAMILY_TOKENS))
def test_template_is_fit_for_assistant_only_loss(tokenizer, name):
    tokenizer = _with_tokens(tokenizer, FAMILY_TOKENS[name])
    template = resolve_template(name).read_text(encoding="utf-8")
    assert check_training_template(tokenizer, template) == []


def _with_tokens(tokenizer, tokens):
    import copy

    clone = copy.deepcopy(tokenizer)
    clone.add_special_tokens({"additional_special_tokens": tokens})
    return clone


def test_mask_covers_reasoning_answer_and_eos_only(tokenizer):
    out = tokenizer.apply_chat_template(PROBE, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    trained = tokenizer.decode([t for t, m in zip(out["input_ids"], out["assistant_masks"]) if m])
    assert trained == ("<think>\nPROBE-REASONING (110-100)/100\n</think>\n\n12.50%<｜end▁of▁sentence｜>"
                       "<think>\nPROBE-SECOND 110-100\n</think>\n\n10.00<｜end▁of▁sentence｜>")


def test_generation_prompt_opens_the_assistant_turn(tokenizer):
    text = tokenizer.apply_chat_template(PROBE[:2], tokenize=False, add_generation_prompt=True)
    assert text.endswith("What was revenue growth?<｜Assistant｜>")


def test_check_catches_templates_that_drop_reasoning_or_lack_markers(tokenizer):
    from trl.chat_template_utils import deepseekv3_training_chat_template, qwen2_5_training_chat_template

    assert any("reasoning_content is not rendered" in p
               for p in check_training_template(tokenizer, deepseekv3_training_chat_template))
    qwen = _with_tokens(tokenizer, FAMILY_TOKENS["qwen2_5_reasoning"])
    assert any("not rendered" in p for p in check_training_template(qwen, qwen2_5_training_chat_template))
    plain = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    assert check_training_template(tokenizer, plain) == ["no {% generation %} markers: assistant_only_loss would mask nothing"]


def test_unknown_template_names_the_choices(tmp_path):
    with pytest.raises(InputError, match="qwen2_5_reasoning"):
        resolve_template("qwen9_reasoning")
    path = tmp_path / "mine.jinja"
    path.write_text("{{ messages }}", encoding="utf-8")
    assert resolve_template(str(path)) == path.resolve()
