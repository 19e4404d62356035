"""ledgerlm.atomic: a write that fails leaves the old file (or none) and no temp file; a clean one replaces it.

    python -m pytest -q tests/test_atomic.py
"""
from __future__ import annotations

import pytest

from ledgerlm.atomic import atomic_open, atomic_path


@pytest.mark.parametrize("mode, old, new", [("w", "old\n", "new\n"), ("wb", b"old", b"new")])
def test_clean_write_replaces_and_failed_write_keeps_the_old_file(tmp_path, mode, old, new):
    path = tmp_path / "sub" / "f.txt"
    with atomic_open(path, mode) as handle:
        handle.write(old)
    with pytest.raises(RuntimeError):
        with atomic_open(path, mode) as handle:
            handle.write(new)
            raise RuntimeError("disk full half-way")
    assert (path.read_text() if mode == "w" else path.read_bytes()) == old
    with atomic_open(path, mode) as handle:
        handle.write(new)
    assert (path.read_text() if mode == "w" else path.read_bytes()) == new
    assert sorted(p.name for p in path.parent.iterdir()) == ["f.txt"]  # no temp file left behind


def test_failed_first_write_leaves_nothing(tmp_path):
    path = tmp_path / "out.parquet"
    with pytest.raises(ValueError):
        with atomic_path(path) as tmp:
            tmp.write_bytes(b"half")
            raise ValueError("writer failed")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="mode"):
        with atomic_open(path, "a"):
            pass
