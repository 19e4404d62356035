"""On-disk cache of the per-company FactStores a synth run starts from.

    python -m ledgerlm.synth.build.storecache            # build (or reuse) the cache for the embedded data; prints its path

Parsing the embedded SEC files and indexing every company's reports takes seconds at every start;
the result depends only on the source files and on the statement-layer code, so it is pickled under
`$LEDGERLM_CACHE_DIR` (default `~/.cache/ledgerlm`) keyed by the sha256 of both. Any edit to a source
file or to `synth/statements/` gives a new key, i.e. a fresh build. `LEDGERLM_CACHE_DIR=off` disables it.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import sys
from pathlib import Path

STATEMENTS_DIR = Path(__file__).resolve().parents[1] / "statements"
FORMAT = "stores-v1"


def cache_dir() -> Path | None:
    value = os.environ.get("LEDGERLM_CACHE_DIR", "")
    if value.lower() == "off":
        return None
    return Path(value) if value else Path.home() / ".cache" / "ledgerlm"


def _files(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts) if path.is_dir() else [path]


def cache_key(sources: list[str] | None) -> str:
    """sha256 over every source file and every file of the statement layer (code and taxonomy data)."""
    from ledgerlm.synth.statements.sources import DEFAULT_DATA_DIR

    digest = hashlib.sha256(FORMAT.encode())
    targets = [Path(p) for p in sources] if sources else [DEFAULT_DATA_DIR]
    for path in [f for t in targets for f in _files(t.resolve())] + _files(STATEMENTS_DIR):
        digest.update(str(path).encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def company_stores(sources: list[str] | None) -> dict:
    """company -> FactStore over the facts of `sources` (default: the embedded data), from the cache when it holds them."""
    from ledgerlm.synth.build.contexts import company_stores as build
    from ledgerlm.synth.statements.sources import load_facts

    folder = cache_dir()
    if folder is None:
        return build(load_facts(sources or None))
    path = folder / f"{cache_key(sources)}.pkl"
    if path.is_file():
        try:
            with open(path, "rb") as f:
                return pickle.load(f)
        except Exception:  # a truncated or foreign file: rebuild it
            pass
    stores = build(load_facts(sources or None))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            pickle.dump(stores, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)  # atomic: concurrent shard jobs never read half a file
    except OSError:  # read-only home, full disk: the run goes on without a cache
        pass
    return stores


def main(argv: list[str] | None = None) -> int:
    sources = list(sys.argv[1:] if argv is None else argv) or None
    stores = company_stores(sources)
    folder = cache_dir()
    print(f"{len(stores)} companies; cache: {folder / (cache_key(sources) + '.pkl') if folder else 'off'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
