"""The ledgerlm cache folder and the trust rule for what is read from it.

    python -c "from ledgerlm.cachedir import cache_dir; print(cache_dir())"

`$LEDGERLM_CACHE_DIR` (default `~/.cache/ledgerlm`; `off`: no cache files at all). A cache file is read only when
`private(path)`: owned by this user, not writable by group or others and not a symbolic link, so nobody else can
plant what a later run would load (the store cache and the tiktoken ranks cache both check it).
Where the cache folder is refused or cannot be written, a run builds what it needs in `temp_folder()`, which the
process that made it removes when it exits (also when `ledgerlm.cli.exit_early` leaves without running atexit).
"""
from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
from pathlib import Path

_TEMP: list[tuple[int, str]] = []  # (pid that made it, path) of this run's temp folders


def cache_dir() -> Path | None:
    """The cache folder, or None when `LEDGERLM_CACHE_DIR=off`."""
    value = os.environ.get("LEDGERLM_CACHE_DIR", "")
    if value.lower() == "off":
        return None
    return Path(value) if value else Path.home() / ".cache" / "ledgerlm"


def private(path: Path) -> bool:
    """Owned by this user and not writable by group or others (what a cache we wrote looks like); never a link."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISLNK(st.st_mode):
        return False
    return (not hasattr(os, "getuid") or st.st_uid == os.getuid()) and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def temp_folder(prefix: str) -> Path:
    """A new private temp folder (mode 0700) for this run only, removed by `remove_temp_folders` when the process that
    made it exits; forked workers that inherit it leave it alone."""
    path = tempfile.mkdtemp(prefix=prefix)
    if not _TEMP:
        atexit.register(remove_temp_folders)
    _TEMP.append((os.getpid(), path))
    return Path(path)


def remove_temp_folders() -> None:
    """Remove the temp folders this process made (`temp_folder`); idempotent."""
    pid = os.getpid()
    while _TEMP:
        made_by, path = _TEMP.pop()
        if made_by == pid:
            shutil.rmtree(path, ignore_errors=True)
