"""Atomic file writes: a temp file in the target's folder, fsync, rename — a crash leaves the old file or none.

    python -c "from ledgerlm.atomic import atomic_open; f = atomic_open('out.txt'); h = f.__enter__(); h.write('x'); f.__exit__(None, None, None)"

`atomic_open(path, mode)` yields a file handle (text "w" or binary "wb"); `atomic_path(path)` yields a temp path for
writers that take a path (pandas `to_parquet` / `to_csv`). Both rename into place only when the block ends cleanly.
`check_folder(path)` (before any work) and `make_folder(path)` turn an output folder that cannot be made (it, or a
folder above it, is a file; /proc) into one InputError naming it.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ledgerlm.errors import InputError


def check_folder(path: str | Path, what: str = "output folder") -> Path:
    """`path`, when it can be a folder: InputError naming it when it, or a folder above it, is an existing file."""
    path = Path(path)
    for folder in (path, *path.parents):
        if folder.exists():
            if not folder.is_dir():
                raise InputError(f"the {what} is an existing file" if folder == path else
                                 f"the {what} cannot be made: {folder} is a file, not a folder", path=str(path))
            break
    return path


def make_folder(path: str | Path, what: str = "output folder") -> Path:
    """`path` created (with its parents) if missing; InputError naming it when it cannot be."""
    path = check_folder(path, what)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(f"cannot create the {what} ({err.strerror or err})", path=str(path)) from None
    return path


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temp path beside `path`; renamed onto `path` when the block ends without an exception, removed otherwise."""
    path = Path(path)
    make_folder(path.parent, "folder")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextmanager
def atomic_open(path: str | Path, mode: str = "w") -> Iterator[IO]:
    """A handle on a temp file beside `path` ("w": UTF-8 text, "wb": bytes); flushed, fsynced and renamed onto `path`
    when the block ends without an exception, removed otherwise."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open: mode must be 'w' or 'wb', got {mode!r}")
    with atomic_path(path) as tmp:
        with open(tmp, mode, **({"encoding": "utf-8"} if mode == "w" else {})) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
