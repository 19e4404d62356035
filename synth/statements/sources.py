"""Load canonical facts from any mix of sources; the embedded SEC data by default.

    python -m ledgerlm.synth.statements.sources                 # all embedded data
    python -m ledgerlm.synth.statements.sources my.csv fsds/2009q3 --as-of 2010-03-01

Dispatch by file type: companyfacts `.json[.gz]`, bulk `companyfacts.zip`, XBRL instances
`*.xml[.gz]`, canonical `.csv/.tsv[.gz]/.parquet`, statement tables `.html/.htm/.tex[.gz]`;
a folder holding sub.txt + num.txt is one FSDS quarter; other folders are walked (files whose
names start with '_' or '.', README/notes, `company_tickers.json` and loose .txt are skipped
when walking). Then `select_latest` keeps one value per company/scope/concept/period/unit
(`as_of` = point-in-time view). Parsed sources are cached in-process, keyed by path and mtime.
"""
from __future__ import annotations

import argparse
import sys
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: functions that build or read frames import pandas (a warm synth run never does)
    import pandas as pd

from ledgerlm.errors import InputError, LedgerError
from ledgerlm.synth.statements import canonical_io, companyfacts, fsds, tables, xbrl
from ledgerlm.synth.statements.facts import empty_facts, select_latest

DEFAULT_DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "sec"
SKIP_NAMES = {"company_tickers.json", "readme.md"}
TABLE_SUFFIXES = (".html", ".htm", ".html.gz", ".htm.gz", ".tex", ".tex.gz")


def _kind(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(".zip"):
        return "zip"
    if name.endswith((".json", ".json.gz")):
        return "companyfacts"
    if name.endswith((".xml", ".xml.gz", ".xbrl", ".xbrl.gz")):
        return "xbrl"
    if canonical_io.is_canonical_file(name):
        return "canonical"
    if name.endswith(TABLE_SUFFIXES):
        return "table"
    return None


def _expand(path: Path) -> list[tuple[str, Path]]:
    """(kind, path) for one user-given path; folders are walked."""
    if not path.exists():
        raise InputError("no such file or folder", path=str(path))
    if path.is_file():
        kind = _kind(path)
        if kind is None:
            raise InputError("unknown source type (expected companyfacts .json[.gz], .zip, XBRL .xml[.gz], .csv/.parquet, .html/.tex, or an FSDS folder)", path=str(path), field="suffix")
        return [(kind, path)]
    if fsds.is_fsds_folder(path):
        return [("fsds", path)]
    sub, num = fsds.find_file(path, "sub"), fsds.find_file(path, "num")
    if (sub is None) != (num is None):  # half an FSDS quarter is an error, not a folder with no facts
        raise InputError(f"an FSDS folder needs sub.txt and num.txt (plain or .gz); this one has no {'num' if num is None else 'sub'}.txt",
                         path=str(path), field="num.txt" if num is None else "sub.txt")
    found = []
    for child in sorted(path.iterdir()):
        if child.name.startswith(("_", ".")) or child.name.lower() in SKIP_NAMES:
            continue
        if child.is_dir() or _kind(child) is not None:
            found += _expand(child)
    return found


def _signature(kind: str, path: Path) -> tuple:
    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    if kind == "fsds":  # tag.txt may sit one level up
        files += [p for p in (path.parent / "tag.txt", path.parent / "tag.txt.gz") if p.is_file()]
    return tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files)


def _load_one(kind: str, path: Path) -> pd.DataFrame:
    import pandas as pd

    if kind == "companyfacts":
        return companyfacts.load_companyfacts(path)
    if kind == "zip":
        frames = list(companyfacts.iter_companyfacts_zip(path))
        return pd.concat(frames, ignore_index=True) if frames else empty_facts()
    if kind == "xbrl":
        return xbrl.load_xbrl(path)
    if kind == "canonical":
        return canonical_io.read_canonical(path)
    if kind == "fsds":
        return fsds.load_fsds(path)
    return tables.load_table_file(path)


@lru_cache(maxsize=64)
def _cached(kind: str, path: str, signature: tuple) -> pd.DataFrame:
    return _load_one(kind, Path(path))


def load_raw_facts(paths: list[str] | None = None) -> pd.DataFrame:
    """All facts of the given sources (default: the embedded data), every filing's value kept."""
    import pandas as pd

    targets = [Path(p) for p in paths] if paths else [DEFAULT_DATA_DIR]
    expanded = [item for p in targets for item in _expand(p)]
    frames = [_cached(kind, str(p.resolve()), _signature(kind, p)) for kind, p in expanded]
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else empty_facts()


def _state(paths: list[str] | None) -> tuple:
    targets = [Path(p) for p in paths] if paths else [DEFAULT_DATA_DIR]
    return tuple((kind, str(p.resolve()), _signature(kind, p)) for t in targets for kind, p in _expand(t))


@lru_cache(maxsize=16)
def _selected(state: tuple, as_of: str | None) -> pd.DataFrame:
    import pandas as pd

    frames = [_cached(kind, path, sig) for kind, path, sig in state]
    frames = [f for f in frames if len(f)]
    return select_latest(pd.concat(frames, ignore_index=True) if frames else empty_facts(), as_of)


def load_facts(paths: list[str] | None = None, *, as_of: str | None = None, latest_only: bool = True) -> pd.DataFrame:
    """Canonical facts (contract 1) from `paths` (default: embedded SEC data under DEFAULT_DATA_DIR).

    latest_only: one value per company/scope/concept/start/end/unit (see facts.select_latest);
    as_of ('YYYY-MM-DD'): only values filed on or before that date.
    """
    if latest_only:  # selection (split basis, slips, same-line rule) costs seconds: remembered per source state
        return _selected(_state(paths), as_of).copy()
    raw = load_raw_facts(paths)
    if as_of:
        return raw[(raw["filed"] != "") & (raw["filed"] <= str(as_of))].reset_index(drop=True)
    return raw.copy()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ledgerlm.synth.statements.sources", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="sources (default: embedded SEC data)")
    parser.add_argument("--as-of", help="point-in-time view: only values filed on or before YYYY-MM-DD")
    args = parser.parse_args(argv)
    try:
        df = load_facts(args.paths or None, as_of=args.as_of)
    except LedgerError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    summary = df.groupby(["company", "scope"]).size().rename("facts").reset_index()
    print(summary.to_string(index=False))
    print(f"{len(df)} facts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
