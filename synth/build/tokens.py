"""Token counting with a named tokenizer: a tiktoken encoding (`o200k_base`, `cl100k_base`) or a
Hugging Face tokenizer (a `tokenizer.json` file or a local folder).

    python -c "from ledgerlm.synth.build.tokens import TokenCounter; print(TokenCounter('o200k_base').count_messages([{'role':'user','content':'hi'}]))"

The cap is applied to the final prompt (every message's content, counted without special tokens):
the FinIndices paper drops contexts over 32,768 tokens.
"""
from __future__ import annotations

import os
from pathlib import Path

from ledgerlm.errors import InputError

DEFAULT_TOKENIZER = "o200k_base"
DEFAULT_MAX_TOKENS = 32768  # FinIndices context cap, tokens


class TokenCounter:
    """`count(text)` and `count_messages(messages)` for one named tokenizer; `name` goes into each row."""

    def __init__(self, name: str = DEFAULT_TOKENIZER):
        self.name = name
        path = Path(name)
        if path.suffix == ".json" and path.is_file():
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(path))
            self._encode = lambda text: tok.encode(text, add_special_tokens=False).ids
        elif path.is_dir():
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            self._encode = lambda text: tok(text, add_special_tokens=False)["input_ids"]
        elif os.sep in name or name.endswith(".json"):
            raise InputError(f"tokenizer {name!r} not found: give a tiktoken encoding name, a tokenizer.json or a local folder", field="tokenizer")
        else:
            import tiktoken

            try:
                enc = tiktoken.get_encoding(name)
            except ValueError as err:
                raise InputError(f"unknown tiktoken encoding {name!r} ({err})", field="tokenizer") from None
            except OSError as err:  # requests' ConnectionError is an OSError: the BPE file is not cached
                raise InputError(f"tiktoken encoding {name!r} is not cached and cannot be downloaded ({type(err).__name__}); "
                                 "set TIKTOKEN_CACHE_DIR to a folder holding it, or pass --tokenizer PATH/tokenizer.json",
                                 field="tokenizer") from None
            self._encode = enc.encode_ordinary

    def count(self, text: str) -> int:
        return len(self._encode(text))

    def count_messages(self, messages: list[dict]) -> int:
        return sum(self.count(m["content"]) for m in messages)
