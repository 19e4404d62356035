"""Shared helpers of the hostile-input suite (issue #14).

    python -m pytest tests/robustness -q            # default run (~30 s)
    python -m pytest tests/robustness -q -m slow    # bigger variants
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))  # eval_fixtures, openai_stub_server


def one_line(text: str) -> str:
    """The message must be exactly one line and no traceback."""
    text = str(text).strip()
    assert "\n" not in text and "Traceback" not in text, text
    return text


@pytest.fixture
def assert_one_line():
    return one_line
