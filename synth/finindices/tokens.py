"""Token counting with a named tokenizer: a tiktoken encoding (`o200k_base`, `cl100k_base`) or a
Hugging Face tokenizer (a `tokenizer.json` file or a local folder).

    python -c "from ledgerlm.synth.finindices.tokens import TokenCounter; print(TokenCounter('o200k_base').count_messages([{'role':'user','content':'hi'}]))"
    python -m pytest tests/test_synth_tokens_exact.py -q      # the exactness tests

The cap is applied to the final prompt (every message's content, counted without special tokens):
the FinIndices paper drops contexts over 32,768 tokens.

Counting below the tokenizer floor (`count_prompt`): a prompt is assembled from rendered report
blocks that repeat across samples, so each block is counted once (memoised) and the prompt's count is
the sum of its pieces' counts, cut only where the tokenizer's pre-tokenization provably splits. A block
seen for the first time and the text between blocks are cut at every such boundary (`CUTS`, in practice
each line) and each line is memoised too: a row label, figure or template sentence that recurs in any
block or prompt is encoded once per run (default config, --num 10000: 20.1 M characters encoded, the 2 %
full re-encodes included, instead of 41.7 M with whole blocks, of 120 M in the prompts).

* BPE counts are a sum over pre-tokens, so cutting a text at position p is exact when the
  pre-tokens of `text[:p]` and of `text[p:]`, each encoded alone, are those of `text` (p is a
  pre-token boundary in all three).
* Family "nl" (tiktoken o200k_base / cl100k_base; HF byte-level BPE whose split regex is one of
  DeepSeek-V3 / Qwen2 / Llama-3 patterns, after digit / CJK isolating splits): a pre-token holding a
  newline is whitespace or punctuation followed by newlines (`\\s*[\\r\\n]+`, `punct+[\\r\\n]*`,
  o200k also absorbs `/`); letter pre-tokens may take one leading character but never `\\r`/`\\n`,
  and no pattern looks behind. So a cut right after a run of newlines, before a character that is
  neither whitespace nor `/`, is a boundary, and the pre-token ending there ends there alone too
  (greedy runs stop at the same place; at end of text `\\s++$` / `\\s+(?!\\S)` take the same run).
* Family "gpt2" (HF ByteLevel with its built-in GPT-2 regex): whitespace runs give back their last
  character to the next word (`\\s+(?!\\S)`), so "\\n\\n" before a word splits as "\\n" | "\\n". A
  cut right after one newline that follows a non-space character, before a non-space character or
  before a single newline that precedes one, is a boundary with the same pre-tokens on both sides.
* Anything else (SentencePiece / Metaspace, normalizers other than NFC, added tokens that hold a
  newline or strip spaces, unknown regexes, a cut whose neighbours break the rule): the whole
  message is encoded. `tests/test_synth_tokens_exact.py` checks equality on adversarial strings and
  on generated prompts; `pipeline.token_cap_step` re-encodes 2 % of prompts and every prompt
  within 1 % of the cap in full at run time and stops the run on any difference.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ledgerlm.errors import InputError

DEFAULT_TOKENIZER = "o200k_base"
DEFAULT_MAX_TOKENS = 32768  # FinIndices context cap, tokens

# pre-tokenizer regexes analysed above (copied from tiktoken 0.14 / the tokenizer.json files)
TIKTOKEN_NL = {
    "o200k_base": r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    "cl100k_base": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
}
HF_NL_PATTERNS = {
    # DeepSeek-V3 (train/tokenizers/deepseek-v3)
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
    # Qwen2 / Qwen2.5 / Qwen3
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    # Llama-3
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
}
# isolating splits that never match whitespace (digit runs, CJK runs): cuts next to a newline never fall inside them
HF_NEUTRAL_PATTERNS = {"\\p{N}{1,3}", "\\p{N}", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"}
# every provable cut of the module docstring in one regex per family (Python's `\s` is `str.isspace`, as in `_cut_ok`):
# 'nl': after a newline, before a character that is neither whitespace nor `/` (so the newline run has ended);
# 'gpt2': after one newline that follows a non-space character, before a non-space character or a newline + non-space
CUTS = {"nl": re.compile(r"(?<=\n)(?=[^\s/])"), "gpt2": re.compile(r"(?<=[^\s]\n)(?=[^\s]|\n[^\s])")}
_MEMO_CHARS = 64_000_000  # block and line texts the memo may keep alive (~64-256 MB); then it starts afresh


def _hf_family(tok) -> str | None:
    """'nl' / 'gpt2' when the tokenizers.Tokenizer's pipeline is one analysed in the module docstring, else None."""
    try:
        spec = json.loads(tok.to_str())
    except Exception:  # noqa: BLE001 - an unusual tokenizer: fall back to full encodes
        return None
    norm = spec.get("normalizer")
    norms = norm.get("normalizers", []) if norm and norm.get("type") == "Sequence" else [norm] if norm else []
    if any(n.get("type") != "NFC" for n in norms):
        return None
    for added in spec.get("added_tokens", []):
        if "\n" in added.get("content", "") or "\r" in added.get("content", "") or added.get("lstrip") or added.get("rstrip") or added.get("single_word"):
            return None
    pre = spec.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
    if not steps or steps[-1].get("type") != "ByteLevel" or steps[-1].get("add_prefix_space"):
        return None
    if steps[-1].get("use_regex", True):
        return "gpt2" if len(steps) == 1 else None
    splits = steps[:-1]
    if not splits or any(s.get("type") != "Split" or s.get("behavior") != "Isolated" or s.get("invert") for s in splits):
        return None
    patterns = [s.get("pattern", {}).get("Regex") for s in splits]
    if any(p not in HF_NL_PATTERNS and p not in HF_NEUTRAL_PATTERNS for p in patterns):
        return None
    return "nl" if any(p in HF_NL_PATTERNS for p in patterns) else None


class TokenCounter:
    """`count(text)`, `count_messages(messages)` and `count_prompt(messages, blocks)` for one named
    tokenizer; `name` goes into each row and the manifest."""

    min_split_len = 256  # shorter messages are encoded whole (tests set 0 to exercise every cut)

    def __init__(self, name: str = DEFAULT_TOKENIZER):
        self.name = name
        self.family: str | None = None  # 'nl' | 'gpt2' | None (None: every message encoded whole)
        self._memo: dict = {}
        self._memo_chars = 0
        path = Path(name)
        if path.suffix == ".json" and path.is_file():
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(path))
            self._encode = lambda text: tok.encode(text, add_special_tokens=False).ids
            self.family = _hf_family(tok)
        elif path.is_dir():
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            self._encode = lambda text: tok(text, add_special_tokens=False)["input_ids"]
            backend = getattr(tok, "backend_tokenizer", None)
            self.family = _hf_family(backend) if backend is not None else None
        elif name.endswith(".json") or path.is_absolute() or name.startswith("."):
            raise InputError(f"tokenizer {name!r} not found: give a tiktoken encoding name, a tokenizer.json or a local folder", field="tokenizer")
        elif "/" in name:  # a Hugging Face model id (the model being trained), from the local HF cache
            from transformers import AutoTokenizer

            try:
                tok = AutoTokenizer.from_pretrained(name, local_files_only=True)
            except (OSError, ValueError) as err:
                raise InputError(f"tokenizer of model {name!r} is not in the local Hugging Face cache ({type(err).__name__}); "
                                 f"download it first (hf download {name} --include 'tokenizer*') or give a folder / tokenizer.json",
                                 field="tokenizer") from None
            self._encode = lambda text: tok(text, add_special_tokens=False)["input_ids"]
            backend = getattr(tok, "backend_tokenizer", None)
            self.family = _hf_family(backend) if backend is not None else None
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
            self.family = "nl" if TIKTOKEN_NL.get(name) == enc._pat_str else None

    def count(self, text: str) -> int:
        return len(self._encode(text))

    def count_messages(self, messages: list[dict]) -> int:
        """Every message's content encoded in full (the reference `count_prompt` must equal)."""
        return sum(self.count(m["content"]) for m in messages)

    # -- below the floor ---------------------------------------------------------------------------
    def _memo_count(self, key, text: str) -> int:
        n = self._memo.get(key)
        return self._remember(key, self.count(text), len(text)) if n is None else n

    @property
    def _cuts(self) -> re.Pattern:
        return CUTS[self.family]

    def count_prompt(self, messages: list[dict], blocks: list[str] = ()) -> int:
        """Exactly `count_messages(messages)`, with each of `blocks` (substrings of a message, in order)
        counted once per run where the cuts around it are provable boundaries (see the module docstring)."""
        if self.family is None:
            return self.count_messages(messages)
        total = 0
        for m in messages:
            text = m["content"]
            if not blocks or len(text) < self.min_split_len:
                total += self._memo_count(("msg", text), text) if len(text) < 4096 else self.count(text)
                continue
            total += self._count_with_blocks(text, blocks)
        return total

    def _count_with_blocks(self, text: str, blocks: list[str]) -> int:
        n, pos, start, total = len(text), 0, 0, 0
        for block in blocks:
            s = text.find(block, pos) if block else -1
            if s < 0:
                continue
            e = s + len(block)
            pos = e
            end = self._cut_after(text, s, e)
            if end is None or not self._cut_ok(text, s):
                continue
            if s > start:
                total += self._count_segments(text[start:s])
            key = (block, end - e)
            hit = self._memo.get(key)
            if hit is None:
                hit = self._remember(key, self._count_segments(text[s:end]), end - s)
            total += hit
            start = end
        if start < n:
            total += self._count_segments(text[start:])
        return total

    def _remember(self, key, n: int, chars: int) -> int:
        if self._memo_chars > _MEMO_CHARS:
            self._memo.clear()
            self._memo_chars = 0
        self._memo[key] = n
        self._memo_chars += chars
        return n

    def _count_segments(self, text: str) -> int:
        """`count(text)` as the sum of its lines' counts, each line memoised: `text` is cut at every provable
        boundary (`_cut_ok`, found by the family's regex in one pass), so a line that repeats anywhere in any
        prompt of the run (a row label, a figure, a template sentence) is encoded once."""
        total, memo = 0, self._memo
        for seg in self._cuts.split(text):
            n = memo.get(seg)
            total += self._remember(seg, self.count(seg), len(seg)) if n is None else n
        return total

    def _cut_ok(self, text: str, p: int) -> bool:
        """Is p (0 < p < len) a provable pre-token boundary (both sides encoded alone give the same pre-tokens)?"""
        if p == 0:
            return True
        if p >= len(text) or text[p - 1] != "\n":
            return p >= len(text)
        nxt = text[p]
        if self.family == "nl":
            return not nxt.isspace() and nxt != "/"
        # gpt2: a single newline after a non-space character, before a word or before "\n" + word
        if p < 2 or text[p - 2].isspace():
            return False
        if nxt == "\n":
            return p + 1 < len(text) and not text[p + 1].isspace()
        return not nxt.isspace()

    def _cut_after(self, text: str, s: int, e: int) -> int | None:
        """Where the piece starting with the block at [s, e) ends: after the newlines that follow it
        ('nl': the whole run; 'gpt2': one newline), if that cut is provable; None otherwise."""
        if e >= len(text):
            return e
        if self.family == "nl":
            j = e
            while j < len(text) and text[j] == "\n":
                j += 1
        else:
            j = e + 1 if text[e] == "\n" else e
        return j if j > e and self._cut_ok(text, j) else None
