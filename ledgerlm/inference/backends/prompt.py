"""How hf/vllm turn chat messages into the prompt string: the model's chat template (default), a named one, or plain text.

    python -c "from ledgerlm.inference.backends.prompt import plain_text; print(plain_text([{'role':'system','content':'S'},{'role':'user','content':'U'}]))"

`chat_template` (backend option; `ledgerlm eval --apply_chat_template [true|false|NAME]`, lm-eval's flag):
- True (ledgerlm's default: tasks are chat conversations): `tokenizer.apply_chat_template(..., add_generation_prompt=True)`.
- NAME: that template of a tokenizer with several named ones (lm-eval's `--apply_chat_template NAME`); an unknown name is an error.
- False: lm-eval without a chat template: the messages' text joined by a blank line (system + "\\n\\n" + user), no special tokens.
  Tool definitions and tool turns need a template: they are one error.
"""
from __future__ import annotations

from typing import Any

from ledgerlm.errors import InputError

TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def chat_template_option(value: Any) -> bool | str:
    """`chat_template=` as given on the command line: true/false words -> bool, anything else -> a template name."""
    if isinstance(value, bool):
        return value
    text = str(value).strip()
    if not text:
        raise ValueError("empty chat template name")
    return True if text.lower() in TRUE else False if text.lower() in FALSE else text


def plain_text(messages: list[dict], tools: list[dict] | None = None) -> str:
    """The messages without a chat template: each message's text, separated by a blank line."""
    if tools:
        raise InputError("tool definitions need a chat template; drop --apply_chat_template false for this task", field="--apply_chat_template")
    parts = []
    for i, message in enumerate(messages):
        if message.get("role") == "tool" or message.get("tool_calls"):
            raise InputError("tool turns need a chat template; drop --apply_chat_template false for this task",
                             field=f"messages[{i}]")
        parts.append(message.get("content") or "")
    return "\n\n".join(parts)


def render(tokenizer: Any, messages: list[dict], tools: list[dict] | None, chat_template: bool | str) -> str:
    """The prompt string the model sees under `chat_template` (see the module docstring)."""
    if chat_template is False:
        return plain_text(messages, tools)
    name = template_name(tokenizer, chat_template)
    named = {"chat_template": name} if name else {}  # only when asked: the default call is the tokenizer's own, unchanged
    return tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=False, **named)


def template_name(tokenizer: Any, chat_template: bool | str) -> str | None:
    """The named template to pass to transformers (None: the tokenizer's default); an unknown name is one InputError
    (transformers would take it as a Jinja template). Backends call it once at load time."""
    if not isinstance(chat_template, str):
        return None
    named = tokenizer.chat_template if isinstance(tokenizer.chat_template, dict) else {}
    if chat_template not in named:
        raise InputError(f"the tokenizer has no chat template named {chat_template!r} "
                         f"(named templates: {', '.join(sorted(named)) or 'none'})", field="--apply_chat_template")
    return chat_template
