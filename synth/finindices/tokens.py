"""Token counting with a named tokenizer: a tiktoken encoding (`o200k_base`, `cl100k_base`) or a
Hugging Face tokenizer (a `tokenizer.json` file or a local folder).

    python -c "from ledgerlm.synth.finindices.tokens import TokenCounter; print(TokenCounter('o200k_base').count_messages([{'role':'user','content':'hi'}]))"
    python -m pytest tests/test_synth_tokens_exact.py -q      # the exactness tests

The cap is applied to the final prompt (every message's content, counted without special tokens):
the FinIndices paper drops contexts over 32,768 tokens.

Counting below the tokenizer floor (`count_prompt`): a prompt is assembled from rendered report
blocks that repeat across samples, so each block is counted once (memoised) and the prompt's count is
the sum of its pieces' counts, cut only where the tokenizer's pre-tokenization provably splits. A report block
comes with its statement renderings (`Block`): one not seen yet is counted from the renderings' memoised counts
and the separators between them (in --num 10000, 13.8 M of the 32.1 M first-seen block characters were renderings
already counted in another block: characters cut into lines 39.1 M -> 25.3 M). A rendering seen for the first
time and the text between blocks are cut at every such boundary (`CUTS`, in practice
each line) and each line is memoised too; a line not seen yet is cut again around its figures
(`FIGURES`) and each piece is memoised: a row label with its table markup, a figure or a template
sentence that recurs in any block or prompt is encoded once per run. Default config, --num 10000, the
recorded `count_prompt` calls replayed (o200k_base): 2.35 M characters encoded in 124 k calls, instead of
17.7 M in 244 k with lines only and 41.7 M with whole blocks, of 120 M in the prompts; `count_prompt`
CPU in that run 6.5 / 7.9 s with lines only, 5.2 / 4.5 s with figures (two interleaved runs of each, timed
around each call, so no profiler overhead: cProfile's per-call cost inverts the comparison). With blocks counted
from their renderings and lines as zeros ("Digits as zeros" below), the 9,334 recorded calls of --num 10000
replayed (/tmp scripts, each a fresh counter over the same calls, interleaved): 5.12-5.42 s at 08d023b against
3.38-3.39 s with both, and 3.45-3.54 s with the two-generation memo against 3.42-3.67 s without (same total count).
With tiktoken 0.14 (encodes 2.2x faster) the same replay (o200k_base, interleaved, load 5-6, same total 42,172,230):
1.18-1.42 s at 6d3645a, 0.68-0.79 s with "Lines as bytes", "Words" and the checks of (2) on misses only below; the
100-company --distinct-figures --num 20000 run's 19,148 calls 5.01 -> 1.96 s, the 5-company --num 20000 run's 2.00
-> 1.19 s (the rest is the line pass over first-seen renderings: `findall` and a dict look-up per line, ~40 %).

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
  Lines that start with spaces or tabs (JSON): a cut after the newline, before `[ \t]+` and a
  non-space character, is a boundary too: the whitespace run holds no newline, so the newline's
  pre-token (`\s*[\r\n]+` backtracks to the last newline, `punct+[\r\n]*` stops at the space) ends
  there in the text and alone, and nothing after the cut looks back.
* Figures (family "nl", within one line: no `\r`, a `\n` only at its end). A figure is an ASCII
  number `[0-9]([0-9,.]*[0-9])?`; every cut below has an ASCII character on each side (a non-ASCII
  neighbour such as "²" or "١" may be a digit, \p{N}, that joins the run: no cut there).
  - After a figure, before an ASCII non-digit: no pattern puts a digit in the same pre-token as the
    character after it (letters' optional leading character excludes \p{N}; punctuation and
    whitespace patterns exclude digits), digit runs are chunked `\p{N}{1,3}` / `\p{N}` from their
    start, so the text alone ends in the same chunks and the rest starts where it did.
  - Before a figure, after ASCII punctuation or a letter: the punctuation run (`punct+[\r\n/]*`) and
    the letter run stop at a digit (a contraction `'s` needs a letter), with or without the figure.
  - 'nl' (digits matched by the main regex: tiktoken, Qwen2, Llama-3): before the space in front of a
    figure, whatever precedes it. In the text the space is a pre-token alone (` ?punct`, letters'
    leading character and `\s+(?!\S)` do not take it: a digit follows) and a whitespace run before it
    ends one character earlier (`\s+(?!\S)` gives its last character back); the prefix alone ends in
    that same shorter run (`\s+(?!\S)` / `\s++$` at the end of text: the line has no newline before
    the cut, else cl100k's `\s++$` would join "\n " into one). Cutting at the digit after several
    spaces is not exact there (the prefix would keep the whole run): tests show a different count.
  - 'nl-digits' (a Split `\p{N}{1,3}` / `\p{N}` before the main regex: DeepSeek-V3): right before
    a figure after any ASCII non-digit: the Split already cuts there, and each piece is handled
    alone afterwards. Here the cut before the space would be wrong: in the text the space run ends
    at the digit split and stays one pre-token (tests show a different count).
  - DeepSeek's regex without a digit split first lets a digit lead letters ("5abc"): no figure cuts.
    An HF added token (split out of the text first) holding a possible cut (`<|..._0021|>`): lines
    holding its first two characters are encoded whole.
* Digits as zeros (a line not memoised, figure families only): the count of a text is the count of the same text
  with each ASCII digit written as 0 when (1) every string of 1-3 ASCII digits is one token (checked when the counter
  is made: 1,110 encodes; Qwen2's single-digit split fails it) and (2) no ASCII digit is next to a non-ASCII character
  (`_digits_apart`; nor in a line that may hold an added token, `_figure_guard`). The analysed regexes treat all
  ASCII digits alike (`\\p{N}`, never `\\s`, `\\p{L}`, punctuation or `\\r\\n`), so the pre-token boundaries do not
  move; only the digit patterns take a digit (`\\p{N}{1,3}`, DeepSeek's digit Split before its main regex), so by (2)
  each pre-token holding an ASCII digit is 1-3 ASCII digits, one token before and after by (1); every other pre-token
  is unchanged. So a table row shown at another period or scale, or a sentence naming another year, is one look-up
  (88 % of the 315 k lines first seen in --num 10000) instead of a FIGURES split and its pieces' look-ups.
* Lines as bytes (a block or statement rendering counted for the first time, where "Digits as zeros" holds for the
  whole text): its UTF-8 bytes with each ASCII digit as 0 are cut into lines and around figures by the same regexes
  over bytes, and each piece is looked up as those bytes: one encode, one translate and one regex pass over the text
  instead of a str line cut, then an encode and a translate per new line (first-seen rendering lines are mostly new as
  text: 251 k of 435 k in --num 10000, but 88 % known as zeros). Condition (2) over a whole text: an ASCII digit
  may touch a non-ASCII character that is not \\p{N} (a CJK ideograph, fullwidth punctuation: "2008财年（FY2008）"):
  only a \\p{N} character can join a digit run, so each run holding an ASCII digit is still ASCII digits alone
  (`_digits_apart_text`: a character that Python's Unicode database calls N*, C* or does not know keeps the text on
  the str path). It is checked on the lines not found in the memo only: whether (2) holds is a property of a text's
  zeros (digits and non-ASCII characters stay in place) and every bytes key is the zeros of a text it holds for. Cuts over bytes: after a newline, before a byte that is not ASCII whitespace or `/` and that does
  not start a non-ASCII whitespace character (all of them start with c2, e1, e2 or e3): each such cut is one of
  `_NL_LINES` at the same character (`_NL_LINES_BYTES`; some of its cuts, before such characters, are not made).
  FIGURES only look at ASCII characters, so over bytes they cut at the same places. The text between blocks keeps
  the str path (most of its lines are known as text, and a short one is memoised whole: a separator).
* Words (tiktoken's o200k_base / cl100k_base; a piece of a line not in the memo, `_WORD_MIN` characters or more):
  a cut before a space that follows a character that is not whitespace. No alternative of the two regexes holds a
  space after such a character (letter and digit runs hold no space, ` ?punct+` takes a space only first and then
  `[\r\n/]`, the whitespace alternatives need the character before to be whitespace), so every pre-token ends at or
  before the space, which starts the next one; the prefix alone ends in the same pre-tokens (the only look-ahead,
  `\s+(?!\S)` / `\s++$`, is over whitespace, which ends before that character) and nothing looks behind. Over
  bytes the character before is a printable ASCII character or a CJK ideograph (lead byte e4-e9). A cut before a
  space after whitespace (a tab) is not exact: tests show a different count. A question that names another company or
  index, a padded table label, encode only their new words.
* Family "gpt2" (HF ByteLevel with its built-in GPT-2 regex): whitespace runs give back their last
  character to the next word (`\\s+(?!\\S)`), so "\\n\\n" before a word splits as "\\n" | "\\n". A
  cut right after one newline that follows a non-space character, before a non-space character or
  before a single newline that precedes one, is a boundary with the same pre-tokens on both sides.
* Anything else (SentencePiece / Metaspace, normalizers other than NFC, added tokens that hold a
  newline or strip spaces, unknown regexes, a cut whose neighbours break the rule): the whole
  message is encoded. `tests/test_synth_tokens_exact.py` checks equality on adversarial strings and
  on generated prompts; `pipeline.token_cap_step` re-encodes 2 % of prompts and every prompt
  within 1 % of the cap in full at run time and stops the run on any difference.

Start-up: `tiktoken_encoding` keeps the parsed BPE ranks of tiktoken's encodings in the ledgerlm cache
folder (plain arrays, never pickle: ~0.1-0.2 s to load instead of ~0.4-1 s to parse the base64 file, per process).
Then `tiktoken.Encoding(...)` builds its Rust tables: ~0.25 s CPU, once per run (`--num-proc` workers fork after it).

Where `count_prompt`'s time goes (issue 17; valgrind instruction counts, which stay exact on a busy machine, over
the first 20,000 `_count_segments` calls of --num 10000: 6.31 G): `re` passes ~30 % (line cuts over each new text,
FIGURES over each new line: ~35 ns a character in `re`'s scan whatever the pattern), tiktoken ~21 %, the interpreter
~12 %. Tried and not kept: look-ups in C (`map`, `list.index` for the misses) 7.17 G; a memo of paragraphs (cut after
blank lines) 6.49 G; figures cut into digit groups 6.31 G (tiktoken -0.8 G, Python +0.8 G); figure cuts on lines that
end in blank lines 6.38 G; one FIGURES split over all new lines of a text 6.59 G; whole texts between blocks memoised
+0.1 %; memo stores inlined 6.23 G (-1.2 %). At tiktoken 0.14 with lines as bytes (replayed --num 10000 calls, CPU
seconds, interleaved): `bytes.splitlines` where a `re.search` finds no kept newline, else `findall`, 0.77-0.90 against
0.73-0.83 without; look-ups in C again (`map`, `compress` over the misses) 0.85 against 0.81-0.86 with the loop (no gain); the text
between blocks as bytes too: the tails after the last block 0.14-0.15 against 0.13-0.14 s as str (their lines are known as
text). Start-up: `TokenCounter('o200k_base')` 0.165 s CPU = ranks read 0.075 + `tiktoken.Encoding` (Rust tables) 0.13;
the 1,110-encode digit check costs 1 ms. The run-time check (`pipeline.token_cap_step`, 2 % of rows encoded in full)
is ~4 % of a --num 10000 run's samples (py-spy), more than a third of what `count_prompt` now costs.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import unicodedata
from pathlib import Path
from typing import NamedTuple

from ledgerlm.atomic import atomic_open
from ledgerlm.cachedir import cache_dir, private
from ledgerlm.errors import InputError

DEFAULT_TOKENIZER = "o200k_base"
DEFAULT_MAX_TOKENS = 32768  # FinIndices context cap, tokens

# pre-tokenizer regexes analysed above (copied from tiktoken 0.14 / the tokenizer.json files)
TIKTOKEN_NL = {
    "o200k_base": r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+""",
    "cl100k_base": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
}
HF_NL_PATTERNS = {  # -> whether the regex matches digits itself, never as a letter pre-token's leading character
    # DeepSeek-V3 (train/tokenizers/deepseek-v3): a digit may lead letters ("5abc"): figures only after a digit Split
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+": False,
    # Qwen2 / Qwen2.5 / Qwen3
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+": True,
    # Llama-3
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+": True,
}
# isolating splits that never match whitespace (digit runs, CJK runs): cuts next to a newline never fall inside them
HF_DIGIT_SPLITS = {"\\p{N}{1,3}", "\\p{N}"}
HF_NEUTRAL_PATTERNS = HF_DIGIT_SPLITS | {"[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"}
# every provable line cut of the module docstring in one regex per family (Python's `\s` is `str.isspace`, a superset of
# the tokenizers' `\s`, as in `_cut_ok`):
# 'nl': after a newline, before a character that is neither whitespace nor `/` (so the newline run has ended), or before
#       spaces / tabs that end at a non-space character (indented lines: JSON);
# 'gpt2': after one newline that follows a non-space character, before a non-space character or a newline + non-space
CUTS = {"nl": re.compile(r"(?<=\n)(?=[^\s/]|[ \t]+[^\s])"), "gpt2": re.compile(r"(?<=[^\s]\n)(?=[^\s]|\n[^\s])")}
_INDENT = re.compile(r"[ \t]+[^\s]")
# figures cut off a line (one line: no `\r`, a `\n` only at its end; module docstring, "Figures"): an ASCII number
# (digits, `,` `.` inside) that ends before an ASCII non-digit or at the end, starting
# 'nl' (digits matched by the main regex: tiktoken, Qwen2, Llama-3): at the space before it, or right after ASCII
#       punctuation / a letter;
# 'nl-digits' (digits isolated by a Split before the main regex: DeepSeek-V3): right after any ASCII non-digit.
# (each pattern starts with a character class so that `re` skips ahead to a space or digit; the captured figure is a piece)
_FIGURE_REST = r"(?:[0-9,.]*[0-9])?(?=[\x00-\x2f\x3a-\x7f]|\Z)"
FIGURES = {"nl": re.compile(rf"([ 0-9](?:(?<= )[0-9]|(?<=[!-/:-~][0-9])){_FIGURE_REST})"),
           "nl-digits": re.compile(rf"([0-9](?<=[\x00-\x2f\x3a-\x7f][0-9]){_FIGURE_REST})")}
# CUTS['nl'] as pieces (`findall`: a run of non-newlines is one step for `re`, the lookaround runs at newlines only;
# the same pieces as `CUTS['nl'].split`, plus an empty one at the end)
_NL_LINES = re.compile(r"[^\n]*(?:\n(?![^\s/]|[ \t]+[^\s])[^\n]*)*\n?")
# an added token (HF) that could hold a figure cut (a digit next to an ASCII non-digit, or a space) or a digit that
# "digits as zeros" would rewrite (any ASCII digit)
_ADDED_FIGURE_CUT = re.compile(r"[0-9 ]")
# "Digits as zeros" (module docstring): each ASCII digit as 0; every byte of a non-ASCII character as 0x80 (`_digits_apart`)
_ZERO_DIGITS = bytes.maketrans(b"0123456789", b"0" * 10)
_ZERO_DIGITS_MARK_NON_ASCII = bytes.maketrans(bytes(range(48, 58)) + bytes(range(128, 256)), b"0" * 10 + b"\x80" * 128)
# "Lines as bytes" (module docstring): `_NL_LINES` and FIGURES over a text's UTF-8 bytes with its digits as zeros. A
# line cut needs the character after the newline not to be whitespace: a byte 0x80-0xff allows one when it is the
# lead byte of a character that is never whitespace (every non-ASCII `str.isspace` character starts with c2, e1, e2
# or e3; 80-bf never starts one), so each cut here is a cut of `_NL_LINES` at the same character (some of its cuts
# are not made: exact). One character class each (no alternation inside the look-ahead): a cheaper pass.
_B_NONSPACE = rb"[^\s\x1c-\x1f\x80-\xc2\xe1-\xe3]"
_NL_LINES_BYTES = re.compile(rb"[^\n]*(?:\n(?![^\s/\x1c-\x1f\x80-\xc2\xe1-\xe3]|[ \t]+" + _B_NONSPACE + rb")[^\n]*)*\n?")
# a newline that `_NL_LINES_BYTES` does not cut after, but at the end of a text (`_zero_lines`: where a text has none,
# its pieces are its lines); the look-ahead of `_NL_LINES_BYTES` as one character class, then the indented case
_KEPT_NL_BYTES = re.compile(rb"\n(?=[\s/\x1c-\x1f\x80-\xc2\xe1-\xe3])(?![ \t]+" + _B_NONSPACE + rb")")
FIGURES_BYTES = {k: re.compile(v.pattern.encode()) for k, v in FIGURES.items()}
# "Words" (module docstring; tiktoken's o200k_base / cl100k_base): before a space that follows a character that is not
# whitespace (over bytes: a printable ASCII character or a CJK ideograph U+4000-U+9FFF, lead byte e4-e9)
_WORDS = re.compile(r"(?= )(?<=\S)")
_WORDS_BYTES = re.compile(rb"(?= )(?:(?<=[!-~])|(?<=[\xe4-\xe9][\x80-\xbf][\x80-\xbf]))")
_WORD_MIN = 24  # shorter new pieces are encoded whole
_MEMO_CHARS = 64_000_000  # block and line texts one memo generation may keep alive (~64-256 MB; two generations: `_remember`)


def _hf_family(tok) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(line family, figure family, guard) when the tokenizers.Tokenizer's pipeline is one analysed in the module
    docstring: line family 'nl' / 'gpt2' / None (None: every message encoded whole), figure family a key of FIGURES
    or None, guard: `_hf_figures`."""
    try:
        spec = json.loads(tok.to_str())
    except Exception:  # noqa: BLE001 - an unusual tokenizer: fall back to full encodes
        return None, None, ()
    norm = spec.get("normalizer")
    norms = norm.get("normalizers", []) if norm and norm.get("type") == "Sequence" else [norm] if norm else []
    if any(n.get("type") != "NFC" for n in norms):
        return None, None, ()
    added = spec.get("added_tokens", [])
    for token in added:
        if "\n" in token.get("content", "") or "\r" in token.get("content", "") or token.get("lstrip") or token.get("rstrip") or token.get("single_word"):
            return None, None, ()
    pre = spec.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
    if not steps or steps[-1].get("type") != "ByteLevel" or steps[-1].get("add_prefix_space"):
        return None, None, ()
    if steps[-1].get("use_regex", True):
        return ("gpt2" if len(steps) == 1 else None), None, ()
    splits = steps[:-1]
    if not splits or any(s.get("type") != "Split" or s.get("behavior") != "Isolated" or s.get("invert") for s in splits):
        return None, None, ()
    patterns = [s.get("pattern", {}).get("Regex") for s in splits]
    if any(p not in HF_NL_PATTERNS and p not in HF_NEUTRAL_PATTERNS for p in patterns):
        return None, None, ()
    mains = [i for i, p in enumerate(patterns) if p in HF_NL_PATTERNS]
    if not mains:
        return None, None, ()
    return ("nl",) + _hf_figures(patterns, mains, added)


def _hf_figures(patterns: list[str], mains: list[int], added: list[dict]) -> tuple[str | None, tuple[str, ...]]:
    """(the FIGURES rules that hold for an 'nl' Split sequence (module docstring, "Figures") or None, guard): the
    tokenizer splits its added tokens out of any text first, so a line holding the first two characters of an added
    token that a figure cut could fall inside, or that holds a digit (DeepSeek's `<|place_holder_mm_span_0021|>`), is
    encoded whole and never counted as zeros."""
    risky = {t.get("content", "")[:2] for t in added if _ADDED_FIGURE_CUT.search(t.get("content", ""))}
    if len(mains) != 1 or len(risky) > 8:
        return None, ()
    guard = tuple(sorted(risky))
    if any(p in HF_DIGIT_SPLITS for p in patterns[:mains[0]]):
        return "nl-digits", guard
    if any(p in HF_DIGIT_SPLITS for p in patterns) or not HF_NL_PATTERNS[patterns[mains[0]]]:
        return None, ()  # a digit split after the main regex, or a main regex whose letters may start with a digit
    return "nl", guard


_RANKS_FORMAT = 2  # `_write_ranks`'s layout: part of the cache key, so a file of another layout is never read


def tiktoken_encoding(name: str):
    """`tiktoken.get_encoding(name)`, with the constructor's result (the parsed BPE ranks: ~1 s CPU to parse from
    base64 per process) kept in the ledgerlm cache folder (`$LEDGERLM_CACHE_DIR`, default ~/.cache/ledgerlm;
    `off`: no file) as plain data, never pickle: a JSON header (name, regex, special tokens) and the ranks as
    arrays (`_write_ranks`). Only tiktoken's own encodings are cached; the key is the encoding name, tiktoken's
    version and the sha256 of the module that defines it (which pins the BPE file's sha256), so an upgrade makes
    a new file. A file that another user owns or others can write is not read (as for the store cache). A
    missing or unreadable cache runs tiktoken's constructor as usual (reading TIKTOKEN_CACHE_DIR or downloading)."""
    import tiktoken
    import tiktoken.registry

    tiktoken.registry.list_encoding_names()  # loads the constructors of the installed tiktoken_ext plugins
    constructor = tiktoken.registry.ENCODING_CONSTRUCTORS.get(name)
    folder = cache_dir()
    if constructor is None or folder is None or not constructor.__module__.startswith("tiktoken_ext.openai_public"):
        return tiktoken.get_encoding(name)
    source = Path(sys.modules[constructor.__module__].__file__).read_bytes()
    key = hashlib.sha256(f"{name}\0{tiktoken.__version__}\0{_RANKS_FORMAT}\0".encode() + source).hexdigest()[:24]
    path = folder / f"tiktoken-{name}-{key}.ranks"
    try:
        if not (private(folder) and private(path)):
            raise OSError("not private")
        spec = _read_ranks(path)
    except Exception:  # noqa: BLE001 - absent, partial, unreadable or not ours: rebuild it
        spec = constructor()
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            with atomic_open(path, "wb") as f:
                _write_ranks(spec, f)
            os.chmod(path, 0o600)
        except OSError:  # a read-only cache folder: still counts, only slower to start
            pass
    return tiktoken.Encoding(**spec)


def _write_ranks(spec: dict, f) -> None:
    """Header line (JSON: every field but the ranks, plus the ranks' count and `groups`, [[length, count], ...]),
    then the ranks (uint32) and the tokens' bytes, concatenated, both ordered by (token length, rank): the tokens of
    one length are a fixed-stride run, which `_read_ranks` cuts with one struct call (half the CPU of a slice per
    token; ~0.035 s of every start-up for o200k_base)."""
    from array import array
    from itertools import groupby

    ranks = spec["mergeable_ranks"]
    tokens = sorted(ranks, key=lambda t: (len(t), ranks[t]))
    groups = [[length, sum(1 for _ in run)] for length, run in groupby(map(len, tokens))]
    header = {k: v for k, v in spec.items() if k != "mergeable_ranks"} | {"n_ranks": len(tokens), "groups": groups}
    f.write(json.dumps(header).encode() + b"\n")
    f.write(array("I", map(ranks.__getitem__, tokens)).tobytes())
    f.write(b"".join(tokens))


def _read_ranks(path: Path) -> dict:
    """The spec `_write_ranks` wrote (ValueError on a file that does not add up)."""
    import struct
    from array import array

    data = path.read_bytes()
    end = data.index(b"\n")
    spec = json.loads(data[:end])
    n, groups = spec.pop("n_ranks"), spec.pop("groups")
    ranks = array("I")
    pos = end + 1
    ranks.frombytes(data[pos:pos + 4 * n])
    pos += 4 * n
    if len(ranks) != n or sum(k for _, k in groups) != n or pos + sum(length * k for length, k in groups) != len(data):
        raise ValueError(f"{path}: damaged ranks file")
    tokens: list = []
    for length, k in groups:
        tokens += struct.unpack_from(f"{int(length)}s" * k, data, pos)
        pos += length * k
    spec["mergeable_ranks"] = dict(zip(tokens, ranks))
    return spec


class Block(NamedTuple):
    """A block of a prompt (`text`) given with the substrings it is made of (`parts`, in order; the text between
    them is a separator): `count_prompt` counts a block it has not seen from its parts' memoised counts (a report
    block holds statement renderings that other blocks show too)."""

    text: str
    parts: tuple[str, ...]


def _key_chars(key) -> int:
    """The characters a memo key keeps alive: a text, or (text, newlines after it), or ("msg", text)."""
    if type(key) is tuple:
        return len(key[0]) + (key[1] if type(key[1]) is int else len(key[1]))
    return len(key)


def _digits_apart(raw: bytes) -> bool:
    """No ASCII digit of the UTF-8 text `raw` is next to a non-ASCII character (whose bytes are all >= 0x80), so
    every run of \\p{N} characters that holds an ASCII digit is made of ASCII digits only."""
    marked = raw.translate(_ZERO_DIGITS_MARK_NON_ASCII)
    return b"0\x80" not in marked and b"\x800" not in marked


# an ASCII digit with a non-ASCII character on either side (`_digits_apart_text`)
# (the character before it, after it; the one before is captured only with a non-ASCII one after it when both are)
_DIGIT_BY_NON_ASCII = re.compile(r"[0-9](?:(?<=([^\x00-\x7f])[0-9])([^\x00-\x7f])?|([^\x00-\x7f]))")
_NOT_A_DIGIT: dict[str, bool] = {}  # non-ASCII character -> known to Python's Unicode database and not \p{N}


def _digits_apart_text(text: str, raw: bytes) -> bool:
    """No ASCII digit of `text` (`raw`: its UTF-8 bytes) is next to a character that may be \\p{N}: a non-ASCII
    character whose category is N* or that Python's Unicode database does not know yet (a tokenizer's newer tables
    may call it a digit). A CJK ideograph or fullwidth punctuation beside a year ("2008财年（FY2008）") is no digit,
    so every run of \\p{N} characters that holds an ASCII digit is made of ASCII digits only."""
    if _digits_apart(raw):
        return True
    for neighbours in set(_DIGIT_BY_NON_ASCII.findall(text)):
        for ch in neighbours:
            if ch:
                ok = _NOT_A_DIGIT.get(ch)
                if ok is None:
                    ok = _NOT_A_DIGIT[ch] = unicodedata.category(ch)[0] not in "NC"
                if not ok:
                    return False
    return True


def _zero_lines(zeros: bytes) -> list[bytes]:
    """The pieces of `_NL_LINES_BYTES.findall(zeros)` but its empty last one (whose count is 0), mostly without the
    regex: `findall` makes a match object per line. The newlines that end the text (after a block) go with the last
    piece: each of them is kept but the last character, and nothing before them looks further into them than their
    first character, a newline either way. Before them (`body`) the pieces are the regex's up to the last newline it
    keeps inside a piece (`_KEPT_NL_BYTES`: none in most renderings, the blank lines under a markdown table's title),
    then the lines of `bytes.splitlines` (which cuts at `\\n`, `\\r` and `\\r\\n` only: a text holding `\\r` takes the
    regex). Measured in TokenCounter._count_zero_lines."""
    body = zeros.rstrip(b"\n")
    if not body or b"\r" in body:
        return _NL_LINES_BYTES.findall(zeros)[:-1]
    kept = None
    for kept in _KEPT_NL_BYTES.finditer(body):
        pass
    if kept is None:
        lines = body.splitlines(True)
    else:
        end = body.find(b"\n", kept.end()) + 1  # the next newline is a cut
        if not end:
            return _NL_LINES_BYTES.findall(zeros)[:-1]
        lines = _NL_LINES_BYTES.findall(body, 0, end)[:-1] + body[end:].splitlines(True)
    if len(body) < len(zeros):
        lines[-1] += zeros[len(body):]
    return lines


def _find(text: str, block: str, pos: int) -> int:
    """`text.find(block, pos)`, faster for a long block: `str.find` preprocesses the whole needle (thousands of
    characters) on each call, so this finds the block's first 64 characters and compares the rest in place."""
    head = block[:64]
    s = text.find(head, pos)
    while s >= 0 and not text.startswith(block, s):
        s = text.find(head, s + 1)
    return s


class TokenCounter:
    """`count(text)`, `count_messages(messages)` and `count_prompt(messages, blocks)` for one named
    tokenizer; `name` goes into each row and the manifest."""

    min_split_len = 256  # shorter messages are encoded whole (tests set 0 to exercise every cut)

    def __init__(self, name: str = DEFAULT_TOKENIZER):
        self.name = name
        self.family: str | None = None  # 'nl' | 'gpt2' | None (None: every message encoded whole)
        self.figures: str | None = None  # a key of FIGURES: lines are also cut around figures (None: lines only)
        self._figure_guard: tuple[str, ...] = ()  # a line holding one of these is encoded whole (`_hf_figures`)
        self._memo: dict = {}  # this generation's counts by text (`_remember`)
        self._old: dict = {}  # the previous generation's
        self._memo_chars = 0
        path = Path(name)
        if path.suffix == ".json" and path.is_file():
            from tokenizers import Tokenizer

            try:
                tok = Tokenizer.from_file(str(path))
            except Exception as err:  # noqa: BLE001 - tokenizers raises a bare Exception for a file it cannot read
                why = (str(err).strip().splitlines() or [type(err).__name__])[0][:160]
                raise InputError(f"not a readable tokenizer.json ({why})", path=str(path), field="tokenizer") from None
            self._encode = lambda text: tok.encode(text, add_special_tokens=False).ids
            self.family, self.figures, self._figure_guard = _hf_family(tok)
        elif path.is_dir():
            from transformers import AutoTokenizer

            try:
                tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            except Exception as err:  # noqa: BLE001 - transformers raises OSError/ValueError/KeyError/... for a folder it cannot use
                why = (str(err).strip().splitlines() or [""])[0][:160].rstrip(" :")
                raise InputError(f"tokenizer folder {path} holds no tokenizer transformers can load (a tokenizer.json, or a "
                                 f"tokenizer_config.json with its vocabulary files; {type(err).__name__}: {why})", field="tokenizer") from None
            self._encode = lambda text: tok(text, add_special_tokens=False)["input_ids"]
            backend = getattr(tok, "backend_tokenizer", None)
            self.family, self.figures, self._figure_guard = _hf_family(backend) if backend is not None else (None, None, ())
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
            self.family, self.figures, self._figure_guard = _hf_family(backend) if backend is not None else (None, None, ())
        else:
            try:
                enc = tiktoken_encoding(name)
            except ValueError as err:
                raise InputError(f"unknown tiktoken encoding {name!r} ({err})", field="tokenizer") from None
            except OSError as err:  # requests' ConnectionError is an OSError: the BPE file is not cached
                raise InputError(f"tiktoken encoding {name!r} is not cached and cannot be downloaded ({type(err).__name__}); "
                                 "set TIKTOKEN_CACHE_DIR to a folder holding it, or pass --tokenizer PATH/tokenizer.json",
                                 field="tokenizer") from None
            self._encode = enc.encode_ordinary
            self.family = self.figures = "nl" if TIKTOKEN_NL.get(name) == enc._pat_str else None
        self._figure_split = FIGURES[self.figures].split if self.figures else None
        self._zeros = self.figures is not None and self._digit_chunks_are_tokens()
        self._lines = _NL_LINES.findall if self.family == "nl" else CUTS[self.family].split if self.family else None
        # "Lines as bytes": a text's lines counted from its UTF-8 bytes with digits as zeros ('nl' with zeros only)
        self._zero_figure_split = FIGURES_BYTES[self.figures].split if self._zeros and self.family == "nl" else None
        # "Words": a new piece of a line is cut before each space that follows a printable ASCII character
        words = self.family == "nl" and name in TIKTOKEN_NL
        self._words, self._words_bytes = (_WORDS.split, _WORDS_BYTES.split) if words else (None, None)

    def count(self, text: str) -> int:
        return len(self._encode(text))

    def _digit_chunks_are_tokens(self) -> bool:
        """Is every string of 1-3 ASCII digits one token? (module docstring, "Digits as zeros"; 1,110 encodes)"""
        return all(self.count(f"{i:0{width}d}") == 1 for width in (1, 2, 3) for i in range(10 ** width))

    def count_messages(self, messages: list[dict]) -> int:
        """Every message's content encoded in full (the reference `count_prompt` must equal)."""
        return sum(self.count(m["content"]) for m in messages)

    # -- below the floor ---------------------------------------------------------------------------
    def _memo_count(self, key, text: str) -> int:
        n = self._memo.get(key)
        if n is None and self._old:
            n = self._recall(key)
        return self._remember(key, self.count(text), len(text)) if n is None else n

    @property
    def _cuts(self) -> re.Pattern:
        return CUTS[self.family]

    def count_prompt(self, messages: list[dict], blocks: list = ()) -> int:
        """Exactly `count_messages(messages)`, with each of `blocks` (substrings of a message, in order: a str or a
        `Block`) counted once per run where the cuts around it are provable boundaries (see the module docstring)."""
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

    def _count_with_blocks(self, text: str, blocks: list) -> int:
        """`count(text)` with each block (a str, or a `Block` given with its parts) counted from the memo where the
        cuts around it are provable; a `Block` not memoised yet is counted from its parts' memoised counts (a
        statement rendering shown before in another block, another statement set or another scope) and the text
        between them (the separators), so only renderings seen for the first time are cut into lines."""
        n, pos, start, total = len(text), 0, 0, 0
        nl = self.family == "nl"
        for block in blocks:
            parts = None
            if type(block) is Block:
                block, parts = block
            s = _find(text, block, pos) if block else -1
            if s < 0:
                continue
            e = pos = s + len(block)
            if nl:  # `_cut_ok` before the block and `_cut_after` it, inlined: after the newlines that follow it
                end = e
                while end < n and text[end] == "\n":
                    end += 1
                if end < n and (end == e or not self._nl_cut_ok(text, end)) or s and not self._nl_cut_ok(text, s):
                    continue
            else:
                end = self._cut_after(text, s, e)
                if end is None or not self._cut_ok(text, s):
                    continue
            if s > start:
                total += self._count_segments(text[start:s])
            key = (block, end - e)
            hit = self._memo.get(key)
            if hit is None and self._old:
                hit = self._recall(key)
            if hit is None:
                piece = text[s:end]  # its cuts are provable in `text` too: the same characters around each
                hit = self._remember(key, self._count_with_blocks(piece, parts) if parts else self._count_new_text(piece), end - s)
            total += hit
            start = end
        if start < n:
            total += self._count_segments(text[start:])
        return total

    def _remember(self, key, n: int, chars: int) -> int:
        """Memoise `n` for `key` (`chars`: the characters the key keeps alive). Two generations keep memory bounded
        over thousands of filers without forgetting what every company's prompts share: once this generation holds
        `_MEMO_CHARS` characters of keys it becomes the previous one (the one before is let go) and a new one
        starts; a key missing from the new one that the previous one holds moves into it when looked up (`_recall`:
        row labels, table markup, templates), and the rest (the blocks and lines of companies no longer drawn) goes
        at the next change. (One dict cleared when full re-encoded every line after each clear: three clears in
        20,000 samples over 100 companies. The generations are plain dicts and `_recall` runs on misses only: a dict
        subclass with `__missing__`, or with methods, made count_prompt 15-25 % slower: CPython specialises look-ups
        on exact dicts only.)"""
        if self._memo_chars > _MEMO_CHARS:
            self._old, self._memo, self._memo_chars = self._memo, {}, 0
        self._memo[key] = n
        self._memo_chars += chars
        return n

    def _recall(self, key):
        """The count the previous generation holds for `key` (moved into this one), or None (`_remember`)."""
        n = self._old.get(key)
        return n if n is None else self._remember(key, n, _key_chars(key))

    def _count_segments(self, text: str) -> int:
        """`count(text)` as the sum of its lines' counts, each line memoised: `text` is cut at every provable
        boundary (`_cut_ok`, found by the family's regex in one pass), so a line that repeats anywhere in any
        prompt of the run (a row label, a template sentence) is encoded once. For the text between blocks: a short
        one (a separator, the text before the first block: a few hundred kinds in a run) is memoised whole."""
        memo = self._memo
        if len(text) <= 256:
            n = memo.get(text)
            if n is None:
                n = self._recall(text) if self._old else None
                if n is None:
                    n = self._remember(text, self._count_str_lines(text), len(text))
            return n
        return self._count_str_lines(text)

    def _count_str_lines(self, text: str) -> int:
        """`_count_segments` without the whole-text memo."""
        return self._sum_memoised(self._lines(text), self._count_new_line)

    def _sum_memoised(self, keys, count_new) -> int:
        """The sum of the memoised counts of `keys` (lines, pieces of a line, words), a key not in the memo counted by
        `count_new(key)` and memoised. The look-ups stay inline in this loop: it is the hot path."""
        total, memo = 0, self._memo
        for key in keys:
            n = memo.get(key)
            if n is None and self._old:
                n = self._recall(key)
            total += self._remember(key, count_new(key), len(key)) if n is None else n
        return total

    def _count_new_text(self, text: str) -> int:
        """`_count_segments` for a block or statement rendering seen for the first time, whose lines are mostly new
        as text but not as "digits as zeros" (a table at another period or scale): the lines of its UTF-8 bytes
        with digits as zeros are looked up (module docstring, "Lines as bytes")."""
        if self._zero_figure_split is not None and not (self._figure_guard and any(h in text for h in self._figure_guard)):
            n = self._count_zero_lines(text.encode().translate(_ZERO_DIGITS))
            if n is not None:
                return n
        return self._count_str_lines(text)

    def _count_new_line(self, line: str) -> int:
        """`count(line)` for a line not memoised: where "Digits as zeros" holds (module docstring), the count of the
        line with each ASCII digit written as 0 (memoised under those bytes: a table row at another period or scale,
        the same sentence about another year; counted from its pieces as zeros), else `_count_line`."""
        if not self._zeros:
            return self._count_line(line)
        raw = line.encode()
        key = raw.translate(_ZERO_DIGITS)
        if key == raw or not (line.isascii() or _digits_apart_text(line, raw)):
            return self._count_line(line)  # no digit but 0 (nothing to share), or a digit next to a non-ASCII character
        if self._figure_guard and any(head in line for head in self._figure_guard):
            return self._count_line(line)  # maybe an added token that holds a digit
        n = self._memo.get(key)
        if n is None and self._old:
            n = self._recall(key)
        return self._remember(key, self._count_zero_line(key), len(key)) if n is None else n  # its pieces as zeros too

    def _count_zero_lines(self, zeros: bytes) -> int | None:
        """`count(text)` from `zeros`, the UTF-8 bytes of `text` with each ASCII digit written as 0 (module docstring,
        "Lines as bytes"): the sum of its lines' memoised counts; None when a line breaks "Digits as zeros" (2). Only
        a line not in the memo is checked: (2) holds for a text exactly when it holds for its zeros (the digits and
        the non-ASCII characters stay where they are), and every bytes key in the memo is the zeros of a text (2)
        holds for (a line or a piece of one), so a line found there satisfies (2) too. The lines are cut by
        `_zero_lines` (`splitlines` after a search for kept newlines) rather than `_NL_LINES_BYTES.findall`: over the
        8,578 texts first seen in the first 2,000 `count_prompt` calls of the 100-company --distinct-figures --num
        20000 run (362 k lines; over the whole run 98.9 % of its 2.8 M such lines are found in the memo), cachegrind
        counted 790 M instructions for `findall` and 563 M for `_zero_lines`; those 2,000 calls replayed with a fresh
        counter, 3.16 G -> 2.89 G."""
        total, memo = 0, self._memo
        lines = _zero_lines(zeros)
        for line in lines:
            n = memo.get(line)
            if n is None:
                n = self._recall(line) if self._old else None
                if n is None:
                    if not (_digits_apart(line) or _digits_apart_text(line.decode(), line)):
                        return None  # a digit beside a non-ASCII \p{N} (or unknown) character: the text is counted as str
                    n = self._remember(line, self._count_zero_line(line), len(line))
            total += n
        return total

    def _count_zero_line(self, line: bytes) -> int:
        """`count(line.decode())` for a line of `_count_zero_lines` not seen yet, as the sum of its pieces' counts
        where FIGURES cuts it (a row label with its markup, a figure as zeros), as `_count_line` does."""
        if self._zero_figure_split is None or b"\r" in line or line.find(b"\n", 0, len(line) - 1) >= 0:
            return self.count(line.decode())  # several lines held together (cuts not provable between them): whole
        return self._sum_memoised(self._zero_figure_split(line), self._count_new_piece)

    def _count_new_piece(self, piece):
        """`count` of a piece of a line (str, or bytes: zeros) not memoised: where "Words" holds, the sum of its
        words' memoised counts (a sentence that names another company or index shares its other words)."""
        is_bytes = type(piece) is bytes
        split = self._words_bytes if is_bytes else self._words
        words = split(piece) if split is not None and len(piece) >= _WORD_MIN else ()
        if len(words) < 2:
            return self.count(piece.decode() if is_bytes else piece)
        return self._sum_memoised(words, (lambda word: self.count(word.decode())) if is_bytes else self.count)

    def _count_line(self, line: str) -> int:
        """`count(line)` for a line not seen yet, as the sum of its pieces' counts where FIGURES cuts it: the text
        around a figure (a row label and the table's markup) and the figure itself are memoised apart, so a new
        line of a table (the same labels at another period, scale or format) encodes only its new figures."""
        if self._figure_split is None or "\r" in line or line.find("\n", 0, len(line) - 1) >= 0:
            return self.count(line)  # several lines held together (cuts not provable between them): whole
        if self._figure_guard and any(head in line for head in self._figure_guard):
            return self.count(line)  # maybe an added token that a cut would break
        return self._sum_memoised(self._figure_split(line), self._count_new_piece)

    def _cut_ok(self, text: str, p: int) -> bool:
        """Is p (0 < p < len) a provable pre-token boundary (both sides encoded alone give the same pre-tokens)?"""
        if p == 0:
            return True
        if p >= len(text) or text[p - 1] != "\n":
            return p >= len(text)
        nxt = text[p]
        if self.family == "nl":  # a non-space other than `/`, or spaces / tabs up to a non-space (CUTS['nl'])
            return nxt != "/" if not nxt.isspace() else _INDENT.match(text, p) is not None
        # gpt2: a single newline after a non-space character, before a word or before "\n" + word
        if p < 2 or text[p - 2].isspace():
            return False
        if nxt == "\n":
            return p + 1 < len(text) and not text[p + 1].isspace()
        return not nxt.isspace()

    @staticmethod
    def _nl_cut_ok(text: str, p: int) -> bool:
        """`_cut_ok` for family 'nl' at 0 < p < len(text)."""
        if text[p - 1] != "\n":
            return False
        nxt = text[p]
        return nxt != "/" if not nxt.isspace() else _INDENT.match(text, p) is not None

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
