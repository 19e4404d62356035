"""The tiktoken start-up cache (`tokens.tiktoken_encoding`): the parsed BPE ranks are written once to the
ledgerlm cache folder as plain arrays (never pickle) and later processes build the same encoder from them without
parsing the BPE file; a file others can write is never read.

    python -m pytest tests/test_synth_tokens_cache.py -q
"""
from __future__ import annotations

import pytest

from ledgerlm.synth.finindices.tokens import TokenCounter, tiktoken_encoding

SAMPLES = ["Revenue 130,497,000,000\n| 净利润 | 363,106,200 |", "  {\"value\": 7370000000.0},\n", "<|endoftext|> x", "é\u0301 ²5"]


def test_cached_ranks_give_the_same_encoder_without_parsing_the_bpe_file(tmp_path, monkeypatch):
    import tiktoken
    import tiktoken_ext.openai_public as public

    monkeypatch.setenv("LEDGERLM_CACHE_DIR", str(tmp_path))
    reference = tiktoken.get_encoding("o200k_base")
    first = tiktoken_encoding("o200k_base")  # builds the cache file
    files = list(tmp_path.glob("tiktoken-o200k_base-*.ranks"))
    assert len(files) == 1

    def no_parsing(*args, **kwargs):
        raise AssertionError("the BPE file was parsed although its ranks are cached")

    monkeypatch.setattr(public, "load_tiktoken_bpe", no_parsing)
    cached = tiktoken_encoding("o200k_base")
    for enc in (first, cached):
        assert [enc.encode_ordinary(s) for s in SAMPLES] == [reference.encode_ordinary(s) for s in SAMPLES]
        assert enc.encode("<|endoftext|>", allowed_special="all") == reference.encode("<|endoftext|>", allowed_special="all")
        assert enc.n_vocab == reference.n_vocab and enc._pat_str == reference._pat_str
        assert enc._mergeable_ranks == reference._mergeable_ranks and enc._special_tokens == reference._special_tokens
    assert TokenCounter("o200k_base").family == "nl"  # the counter uses the cached encoder too

    files[0].chmod(0o666)  # writable by others: not read (rebuilt by parsing: the patch must fire)
    with pytest.raises(AssertionError, match="parsed"):
        tiktoken_encoding("o200k_base")
    files[0].chmod(0o600)
    files[0].write_bytes(files[0].read_bytes()[:-10])  # a damaged file is rebuilt too
    with pytest.raises(AssertionError, match="parsed"):
        tiktoken_encoding("o200k_base")


def test_cache_off_or_unknown_names_use_tiktoken_as_is(tmp_path, monkeypatch):
    monkeypatch.setenv("LEDGERLM_CACHE_DIR", "off")
    assert tiktoken_encoding("cl100k_base").name == "cl100k_base"
    assert not list(tmp_path.iterdir())
    monkeypatch.setenv("LEDGERLM_CACHE_DIR", str(tmp_path))
    with pytest.raises(ValueError):
        tiktoken_encoding("no_such_encoding")
    assert not list(tmp_path.iterdir())
