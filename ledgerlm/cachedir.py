"""The ledgerlm cache folder and the trust rule for what is read from it.

    python -c "from ledgerlm.cachedir import cache_dir; print(cache_dir())"

`$LEDGERLM_CACHE_DIR` (default `~/.cache/ledgerlm`; `off`: no cache files at all). A cache file is read only when
`private(path)`: owned by this user, not writable by group or others and not a symbolic link, so nobody else can
plant what a later run would load (the store cache and the tiktoken ranks cache both check it).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path


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
