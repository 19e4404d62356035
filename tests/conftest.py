"""Test setup: offline, with the shared tiktoken files and the real tokenizer when present."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if (SHARED / "tiktoken").is_dir():
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(SHARED / "tiktoken"))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def tokenizer_json(tmp_path_factory) -> Path:
    """The real 128k-vocab BPE tokenizer used to build tiny random models in tests: the copy shipped in
    the package (train/tokenizers/deepseek-v3, MIT), written out as a plain tokenizer.json."""
    from ledgerlm.train.tiny_model import write_tokenizer_json

    return write_tokenizer_json(tmp_path_factory.mktemp("tokenizer") / "tokenizer.json")
