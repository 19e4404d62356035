"""On-disk cache of the per-company facts a synth run starts from: one Parquet file per company, loaded
lazily (a bounded number of FactStores in memory at once).

    python -m ledgerlm.synth.finindices.storecache                 # build (or reuse) the cache for the embedded data; prints its folder
    python -m ledgerlm.synth.finindices.storecache bulk/companyfacts.zip --workers 16   # members and companies in 16 processes (default: every CPU)

The cache folder `$LEDGERLM_CACHE_DIR/stores-v8-<key>/` (default `~/.cache/ledgerlm`, `ledgerlm.cachedir`; `<key>` is
the sha256 of every source file's bytes, of `synth/statements/` and of `synth/indices/registry.py`) holds
`index.json` (company → files, name, whether it has consolidated reports, and a `summary`: consolidated report
labels, concepts and accounting standard, read by the Builder's draws without loading the store), `<n>.parquet` per company: the
company's facts after `select_latest`, exactly what `FactStore` is built from, and `<n>.state.json.gz`: the
built store (calendar, fact index with its cells as column tables, accounting standard) as typed JSON. A
load decodes the state only; the facts are read when something asks for them (`CachedStore`). Built in a
private temp folder and renamed into place, so concurrent shard jobs never read a half-written cache.

Building streams the sources: a bulk `companyfacts.zip` member by member, each company's raw facts
staged as Parquet parts and reduced (`select_latest`) a few consecutive companies at a time (`_build_companies`),
so no step holds every company's facts at once. `LEDGERLM_CACHE_DIR=off` keeps everything in memory (no files).

Trust: nothing here executes data. Parquet and JSON are parsed, never unpickled; the reader checks the
column schema, and refuses (and does not use) a cache folder or file that is not owned by the current
user or that other users may write; it then builds a private cache in a fresh temp folder instead.
"""
from __future__ import annotations

import array
import base64
import functools
import hashlib
import json
import os
import shutil
import sys
import tempfile
import warnings
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:  # annotations only: functions that build or read frames import pandas (a warm synth run never does)
    import pandas as pd

from ledgerlm.cachedir import cache_dir, private, temp_folder
from ledgerlm.errors import InputError
from ledgerlm.synth.statements import companyfacts
from ledgerlm.synth.statements.facts import FACT_COLUMNS, select_latest
from ledgerlm.synth.statements.periods import ReportKey
from ledgerlm.synth.statements.sources import _cached, _expand, _signature, DEFAULT_DATA_DIR, load_facts
from ledgerlm.synth.statements.factindex import Cell, FactIndex
from ledgerlm.synth.statements.fiscal_calendar import Calendar, FiscalYear
from ledgerlm.synth.statements.store import FactStore
from ledgerlm.synth.indices.registry import accounting_standard

STATEMENTS_DIR = Path(__file__).resolve().parents[1] / "statements"
REGISTRY_FILE = Path(__file__).resolve().parents[1] / "indices" / "registry.py"  # accounting_standard: its answer is cached
FORMAT = "stores-v10"  # v4: stores built as synth stores (quarter_columns=False); v5: state = calendar + fact index (issue 13);
# v6: dicts of cells stored as column tables (issue 17); v7: a per-company summary in the index (issue 17);
# v8: a table's row count in its header, one-value columns without codes, codes packed as base64 uint16 (issue 17);
# v9: cells carry what the concept's other tags report for their window (facts.with_alternates);
# v10: the fact index keeps the balance lines it withholds (sheets.py)
DEFAULT_RESIDENT = 64  # FactStores kept in memory at once (least recently used leave first, with their memoised work)


def _files(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts) if path.is_dir() else [path]


def _file_digest(path: Path) -> bytes:
    digest = hashlib.sha256()
    with open(path, "rb") as f:  # streamed: a multi-GB bulk zip is never read into memory at once
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.digest()


def cache_key(sources: list[str] | None) -> str:
    """sha256 over every source file, every file of the statement layer (code and taxonomy data) and the code of
    the answers the state carries (`accounting_standard`)."""
    digest = hashlib.sha256(FORMAT.encode())
    targets = [Path(p) for p in sources] if sources else [DEFAULT_DATA_DIR]
    for t in targets:
        if not t.exists():
            raise InputError("no such file or folder", path=str(t), field="sources")
    for path in [f for t in targets for f in _files(t.resolve())] + _files(STATEMENTS_DIR) + [REGISTRY_FILE]:
        digest.update(str(path).encode() + b"\0" + _file_digest(path))
    return digest.hexdigest()


# -- trust -------------------------------------------------------------------------------------------
class UntrustedCache(Exception):
    """A cache folder or file this user did not write (or others can write): never read."""


# -- a built FactStore's state as typed JSON (whitelisted types only: decoding never runs data) ----------
class Unsupported(Exception):
    """A FactStore attribute of a type the codec does not know: that company's cache keeps its facts only."""


def _codec_types() -> dict:
    return {"R": ReportKey, "C": Cell, "F": FiscalYear, "K": Calendar, "X": FactIndex}


def _encode(v, types):
    import dataclasses
    import datetime as dt

    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, tuple):
        return {"t": [_encode(x, types) for x in v]}
    if isinstance(v, list):
        return {"l": [_encode(x, types) for x in v]}
    if isinstance(v, dict):
        table = _encode_table(v, types)
        if table is not None:
            return table
        return {"d": [[_encode(k, types), _encode(x, types)] for k, x in v.items()]}
    if type(v) is dt.date:
        return {"D": v.isoformat()}
    for tag, cls in types.items():
        if type(v) is cls:
            return {tag: [_encode(getattr(v, f.name), types) for f in dataclasses.fields(cls)]}
    raise Unsupported(type(v).__name__)


def _encode_table(v: dict, types) -> dict | None:
    """A dict of one codec dataclass (a fact index's cells) keyed by equal-length tuples, as columns: one per key
    position and one per field, each [kind, payload]: "v" a plain list of floats, "k" the one value of every row,
    "h" [distinct values, codes packed as base64 uint16] ("u" [distinct values, codes as a JSON list] past 65,536
    distinct values). {"Y": [value tag, key length, rows, columns]}. Decoding then builds each cell from columns in
    one `map` instead of four tagged JSON nodes per cell (a company's state: 1.17 MB of JSON decoded in 56 ms before,
    0.29 MB in 24 ms; a load per company visit over thousands of filers), and the labels, tags and sources that
    repeat across cells are read once and shared. A per-company store's company and scope columns hold one value,
    and packed codes parse ~6x faster than a JSON list of ints. None when `v` is not such a dict."""
    import dataclasses

    if not v:
        return None
    cls = type(next(iter(v.values())))
    tag = next((t for t, c in types.items() if c is cls and dataclasses.is_dataclass(c)), None)
    keys = list(v)
    if tag is None or any(type(x) is not cls for x in v.values()) or any(type(k) is not tuple for k in keys):
        return None
    width = len(keys[0])
    if width == 0 or any(len(k) != width for k in keys):
        return None
    names = [f.name for f in dataclasses.fields(cls)]
    columns = [list(c) for c in zip(*keys)] + [[getattr(x, n) for x in v.values()] for n in names]
    try:
        return {"Y": [tag, width, len(keys), [_encode_column(c, types) for c in columns]]}
    except TypeError:  # an unhashable key part or field: the plain dict encoding
        return None


def _encode_column(values: list, types) -> list:
    if all(type(x) is float for x in values):
        return ["v", values]
    distinct: dict = {}  # (type, value) -> code: 1, 1.0 and True stay apart
    codes = [distinct.setdefault((type(x), x), len(distinct)) for x in values]
    shown = [_encode(x, types) for _, x in distinct]
    if len(shown) == 1:
        return ["k", shown[0]]
    if len(shown) <= 1 << 16:
        return ["h", [shown, _pack(codes)]]
    return ["u", [shown, codes]]


def _pack(codes: list[int]) -> str:
    """Codes < 65,536 as base64 of little-endian uint16 (plain text in the JSON; `_unpack` reverses it)."""
    packed = array.array("H", codes)
    if sys.byteorder == "big":
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode("ascii")


def _unpack(text: str) -> array.array:
    """The codes `_pack` wrote; ValueError (binascii.Error) for text that is not such base64."""
    codes = array.array("H", base64.b64decode(text, validate=True))
    if sys.byteorder == "big":
        codes.byteswap()
    return codes


def _decode_table(body, types) -> dict:
    """The dict `_encode_table` wrote, from its decoded body (distinct values already rebuilt); ValueError when a
    column does not hold `rows` values."""
    tag, width, rows, columns = body
    if type(rows) is not int or rows < 0:
        raise ValueError(f"bad row count {rows!r}")
    values = []
    for kind, payload in columns:
        if kind == "v":
            values.append(payload)
        elif kind == "k":
            values.append([payload] * rows)
        elif kind == "h":
            distinct, packed = payload
            values.append([distinct[i] for i in _unpack(packed)])
        elif kind == "u":
            distinct, codes = payload
            values.append([distinct[i] for i in codes])
        else:
            raise ValueError(f"unknown column kind {kind!r}")
        if len(values[-1]) != rows:
            raise ValueError(f"a column holds {len(values[-1])} values, not {rows}")
    return dict(zip(zip(*values[:width]), map(types[tag], *values[width:])))


def _decode(v, types):
    import datetime as dt

    if not isinstance(v, dict):
        return v
    (tag, body), = v.items()
    if tag == "Y":  # distinct values ("h", "u") and a column's one value ("k") are tagged nodes; "v" holds plain floats
        value_tag, width, rows, columns = body
        columns = [[kind, [[_decode(x, types) for x in payload[0]], payload[1]] if kind in ("h", "u")
                    else _decode(payload, types) if kind == "k" else payload] for kind, payload in columns]
        return _decode_table([value_tag, width, rows, columns], types)
    if tag == "t":
        return tuple(_decode(x, types) for x in body)
    if tag == "l":
        return [_decode(x, types) for x in body]
    if tag == "d":
        return {_decode(k, types): _decode(x, types) for k, x in body}
    if tag == "D":
        return dt.date.fromisoformat(body)
    return types[tag](*(_decode(x, types) for x in body))  # KeyError for an unknown tag: a damaged file


# (fiscal year, quarters) -> ReportKey: frozen, so every store may share it. Not store.py's `_report_key` objects: with
# those the period algebra's cell lookups skipped the dataclass __eq__ (86,857 calls over the bulk stand-in's computes),
# yet a whole 1-process bulk stand-in run (--num 1000, cachegrind) took 1.4 % more instructions (20,751 M vs 20,464 M)
_REPORT_KEYS: dict[tuple, ReportKey] = {}


def _loads(data: bytes | str):
    """`_decode(json.loads(data))` in one pass: every JSON object of the codec is one tagged node, so the parser's
    object_hook (called bottom-up, children first, from C) rebuilds each value as it is read (~3x faster than
    walking the parsed tree in Python; a store load is once per company visit over thousands of filers)."""
    import datetime as dt

    types = _codec_types()
    reports = _REPORT_KEYS

    def hook(node: dict):
        (tag, body), = node.items()  # ValueError for a damaged file (an object that is not one tagged node)
        if tag == "R" and len(body) == 2 and type(body[0]) is int and type(body[1]) is int:
            key = (body[0], body[1])  # one shared ReportKey per (year, quarters): its label is built once per run, and
            hit = reports.get(key)  # cell lookups compare identical keys (dict lookups test identity first)
            if hit is None:
                hit = reports[key] = ReportKey(*key)
            return hit
        if tag == "t":
            return tuple(body)
        if tag == "l":
            return body
        if tag == "d":
            return {k: x for k, x in body}
        if tag == "D":
            return dt.date.fromisoformat(body)
        if tag == "Y":
            return _decode_table(body, types)
        return types[tag](*body)  # KeyError for an unknown tag: a damaged file

    return json.loads(data, object_hook=hook)


def store_state(store) -> bytes:
    """The built FactStore (without its facts frame) as gzipped typed JSON; Unsupported if it holds other types."""
    import gzip

    types = _codec_types()
    state = {k: v for k, v in store.__dict__.items() if k != "facts"}
    data = json.dumps(_encode(state, types), separators=(",", ":")).encode()
    if _loads(data) != state:
        raise Unsupported("state does not round-trip")
    return gzip.compress(data, compresslevel=1, mtime=0)  # no build time in the header: a rebuild writes the same bytes


class CachedStore(FactStore):
    """A FactStore loaded from the cache. Its facts frame is read from Parquet only when something asks for it: a
    synth run answers from the calendar and fact index the state holds (and the accounting standard it carries), so
    over thousands of filers no company's frame is read or kept in memory (issue 17)."""

    @property
    def facts(self) -> pd.DataFrame:
        frame = self.__dict__.get("_facts")
        if frame is None:
            frame = self.__dict__["_facts"] = self._read_facts()
        return frame

    @facts.setter
    def facts(self, frame: pd.DataFrame) -> None:
        self.__dict__["_facts"] = frame


def load_store(facts, state: bytes) -> CachedStore:
    """A FactStore from `store_state` bytes and its facts (a frame, or a function that reads it when first asked
    for), without re-indexing the facts."""
    import gzip

    store = CachedStore.__new__(CachedStore)
    store.__dict__.update(_loads(gzip.decompress(state)))
    if callable(facts):
        store._read_facts = facts
    else:
        store.facts = facts
    return store


# -- building ----------------------------------------------------------------------------------------
def _units(sources: list[str] | None) -> list[tuple[int, str, str, str | None]]:
    """What the sources are read in: (order, kind, path, zip member or None), one per companyfacts member of a bulk
    zip and one per other source file or folder, in source order."""
    targets = [Path(p) for p in sources] if sources else [DEFAULT_DATA_DIR]
    units = []
    for kind, path in [item for p in targets for item in _expand(p)]:
        if kind == "zip":
            with companyfacts.open_zip(path) as archive:
                members = companyfacts.zip_members(archive)
            units += [(len(units) + 1 + i, kind, str(path), member) for i, member in enumerate(members)]
        else:
            units.append((len(units) + 1, kind, str(path), None))
    return units


_ARCHIVES: dict[str, object] = {}  # path -> this process's open ZipFile while a cache is staged (`_stage_unit`)


def _stage_unit(stage: Path, order: int, kind: str, path: str, member: str | None) -> list[tuple[str, Path, int]]:
    """Read one unit (`_units`) and write each company's facts in it to `stage` as Parquet: [(company, part, rows)]."""
    if member is not None:
        archive = _ARCHIVES.get(path)
        if archive is None:  # opened in the process that reads it (a forked worker never shares the parent's file offset)
            archive = _ARCHIVES[path] = companyfacts.open_zip(path)
        frame = companyfacts.read_zip_member(archive, member, path)
    else:
        frame = _cached(kind, str(Path(path).resolve()), _signature(kind, Path(path)))
    out = []
    for j, (company, df) in enumerate(frame.groupby("company", sort=True) if len(frame) else []):
        part = stage / f"{order:07d}-{j:05d}.parquet"
        df.reset_index(drop=True).to_parquet(part, index=False)
        out.append((str(company), part, len(df)))
    return out


def _close_archives() -> None:
    for archive in _ARCHIVES.values():
        archive.close()
    _ARCHIVES.clear()


def _in_processes(fn, jobs: list[tuple], workers: int) -> list:
    """[fn(*job) for job in jobs], in `workers` forked processes when workers > 1 (results in job order)."""
    if workers <= 1 or len(jobs) <= 1:
        return [fn(*job) for job in jobs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=multiprocessing.get_context(method),
                             initializer=_close_archives) as pool:
        return list(pool.map(fn, *zip(*jobs), chunksize=max(1, len(jobs) // (8 * workers))))


def _company_file(n: int) -> str:
    return f"{n:07d}.parquet"


def build_cache(sources: list[str] | None, folder: Path, workers: int = 1, batch: int | None = None) -> Path:
    """Write the per-company Parquet files and index.json for `sources` into `folder` (created, private).

    Each source unit (a bulk zip's member, another source file) is read and split by company into staged parts;
    then consecutive companies (`batch` of them, default up to SELECT_BATCH, at most SELECT_BATCH_ROWS raw rows) are
    selected together from their parts (in source order) and each company's store is indexed and written on its own
    (`_build_companies`). Both steps run in `workers` forked processes when `workers` > 1 (one unit or batch at a
    time in each), and write the same files whatever the number of workers or the batch size."""
    folder.mkdir(parents=True, mode=0o700)
    stage = folder / "stage"
    stage.mkdir(mode=0o700)
    staged: dict[str, list[Path]] = {}
    rows: dict[str, int] = {}
    try:
        for parts in _in_processes(_stage_unit, [(stage, *unit) for unit in _units(sources)], workers):
            for company, part, n_rows in parts:
                staged.setdefault(company, []).append(part)
                rows[company] = rows.get(company, 0) + n_rows
    finally:
        _close_archives()
    names = sorted(staged)
    size = batch or min(SELECT_BATCH, max(1, -(-len(names) // (4 * workers))))  # >= 4 batches per worker to share out
    jobs = [(folder, [(n, names[n], staged[names[n]]) for n in run]) for run in _batches([rows[c] for c in names], size)]
    index = dict(zip(names, (entry for entries in _in_processes(_build_companies, jobs, workers) for entry in entries)))
    shutil.rmtree(stage)
    (folder / "index.json").write_text(json.dumps({"format": FORMAT, "companies": index}, indent=1, sort_keys=True) + "\n",
                                       encoding="utf-8")
    for p in [folder, *folder.iterdir()]:
        os.chmod(p, 0o700 if p.is_dir() else 0o600)
    return folder


SELECT_BATCH = 16  # companies selected at once: select_latest's cost is mostly per pandas call, not per row ...
SELECT_BATCH_ROWS = 50_000  # ... and at most this many raw rows in one batch (memory), whatever the companies


def _batches(rows: list[int], size: int) -> list[range]:
    """Consecutive runs of positions (companies in sorted order, `rows` raw rows each) of at most `size` companies
    and SELECT_BATCH_ROWS rows (a company larger than that alone)."""
    out, start, total = [], 0, 0
    for i, n in enumerate(rows):
        if i > start and (i - start >= size or total + n > SELECT_BATCH_ROWS):
            out.append(range(start, i))
            start, total = i, 0
        total += n
    if rows:
        out.append(range(start, len(rows)))
    return out


def _build_companies(folder: Path, companies: list[tuple[int, str, list[Path]]]) -> list[dict]:
    """The cache files of consecutive companies [(n, company, staged parts)]: their raw facts (each company's parts in
    source order) selected by one `select_latest` call, then each company's store on its own (`_write_company`);
    their index.json entries. Selection is per company (every key and grouping of select_latest holds the company:
    `load_facts` selects all companies at once; a company with unmapped rows is selected alone, see below), so a
    company's facts are those of selecting it alone (the bulk stand-in's 100 companies and the embedded 20 compared
    equal, frames and dtypes). pandas' per-call overhead is
    shared: select_latest over those 100 companies took 57.4 s CPU one at a time, 24.0 s in batches of 16; the whole
    cache build of their zip with 2 workers 75-80 s -> 53-57 s CPU (peak RSS 230 -> 305 MB with 50,000-row batches)."""
    import pandas as pd

    raws = {company: pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True) for _, company, parts in companies}
    # a company with unmapped rows (concept "": a canonical CSV may keep them) is selected alone: a row a step adds
    # (`_with_recast_zero_share`) is labelled after the frame's last mapped row, and so ordered among the unmapped
    # rows by the other companies' labels
    alone = {company for company, raw in raws.items() if raw["concept"].eq("").any()}
    together = [raws[company] for _, company, _ in companies if company not in alone]
    selected = select_latest(pd.concat(together, ignore_index=True)) if together else None
    positions = selected.groupby("company", sort=False).indices if together and len(selected) else {}
    entries = []
    for n, company, parts in companies:
        if company in alone:
            facts = select_latest(raws[company]).reset_index(drop=True)
        else:  # (a company every row of which left: none)
            facts = selected.iloc[positions.get(company, [])].reset_index(drop=True)
        entries.append(_write_company(folder, n, company, facts))
        for p in parts:
            p.unlink()
    return entries


def _write_company(folder: Path, n: int, company: str, facts) -> dict:
    """One company's cache files (facts as Parquet, the indexed store as typed JSON) from its selected facts; returns
    its index.json entry."""
    store = FactStore(facts, quarter_columns=False, selected=True)  # synth stores: see build_stores
    accounting_standard(store, company)  # memoised in the store, so its state carries it: a load never reads the facts
    try:  # the indexed store too (as built, before any lookup memoises): a load then skips FactStore's indexing
        state = store_state(store)
    except Unsupported:
        state = None
    entry = {"file": _company_file(n), "name": store.company_name(company), "has_reports": bool(store.reports(company)),
             "rows": len(facts), "summary": summary(store, company)}
    if state is not None:
        entry["state"] = _company_file(n).replace(".parquet", ".state.json.gz")
        (folder / entry["state"]).write_bytes(state)
    facts.to_parquet(folder / _company_file(n), index=False)
    return entry


def summary(store, company: str) -> dict:
    """The consolidated report labels (in order), concepts (sorted) and accounting standard of a company: what
    drawing a target needs before any value is computed (contexts.Builder), so a company-affine worker decides
    an attempt on a company another worker owns without loading that company's store."""
    return {"reports": [r.label for r in store.reports(company)], "concepts": list(store.concepts(company)),
            "standard": accounting_standard(store, company)}


def _read_index(folder: Path) -> dict:
    path = folder / "index.json"
    if not (private(folder) and private(path)):
        raise UntrustedCache(f"{folder} is not owned by this user or is writable by others")
    index = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(index, dict) or index.get("format") != FORMAT or not isinstance(index.get("companies"), dict):
        raise ValueError(f"not a {FORMAT} index")
    for company, entry in index["companies"].items():
        state = entry.get("state") if isinstance(entry, dict) else None
        if not (isinstance(entry, dict) and isinstance(entry.get("file"), str) and Path(entry["file"]).name == entry["file"]
                and entry["file"].endswith(".parquet") and isinstance(entry.get("has_reports"), bool)
                and (state is None or (isinstance(state, str) and Path(state).name == state and state.endswith(".state.json.gz")))):
            raise ValueError(f"bad index entry for {company!r}")
    return index["companies"]


def read_company(folder: Path, entry: dict) -> pd.DataFrame:
    """One company's facts from its Parquet file (schema checked; never executes anything)."""
    import pandas as pd

    path = folder / entry["file"]
    if not private(path):
        raise UntrustedCache(f"{path} is not owned by this user or is writable by others")
    df = pd.read_parquet(path)
    missing = [c for c in FACT_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: columns {missing} missing")
    return df


def _unreadable(folder: Path, entry: dict, company: str, err: Exception) -> InputError:
    return InputError(f"store cache file of company {company} is unreadable ({type(err).__name__}: {err}); "
                      f"delete {folder} to rebuild it", path=str(folder / entry["file"]), field="store_cache")


def _facts_of(folder: Path, entry: dict, company: str) -> pd.DataFrame:
    """`read_company`, when a loaded store first asks for its facts; a damaged file is the load's InputError."""
    try:
        return read_company(folder, entry)
    except (OSError, ValueError, KeyError, TypeError, EOFError, UntrustedCache) as err:
        raise _unreadable(folder, entry, company, err) from None


class LazyStores(Mapping):
    """company -> FactStore, read from the cache folder on first use; at most `resident` stores stay in
    memory (least recently used leave first; `on_evict(companies)` lets callers drop their own caches)."""

    def __init__(self, folder: Path, index: dict, resident: int = DEFAULT_RESIDENT):
        self.folder, self.index, self.resident = folder, index, max(1, resident)
        self._loaded: OrderedDict = OrderedDict()
        self.loads = 0  # how many times a store was built (benchmarks report it)
        self.on_evict = None

    def __getitem__(self, company: str):
        store = self._loaded.get(company)
        if store is not None:
            self._loaded.move_to_end(company)
            return store
        if company not in self.index:
            raise KeyError(company)
        entry = self.index[company]
        try:
            if entry.get("state"):
                path = self.folder / entry["state"]
                if not private(path):
                    raise UntrustedCache(f"{path} is not owned by this user or is writable by others")
                store = load_store(functools.partial(_facts_of, self.folder, entry, company), path.read_bytes())
            else:
                store = FactStore(read_company(self.folder, entry), quarter_columns=False, selected=True)
        except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, UntrustedCache) as err:  # pyarrow's errors are ValueError / OSError
            raise _unreadable(self.folder, entry, company, err) from None
        # issue 11: a synth store answers a standalone quarter's EPS / weighted shares from the YTD reports a prompt
        # shows, never from a 3-month column the prompt does not show (whatever state an older cache recorded)
        store.quarter_columns = False
        self.loads += 1
        self._loaded[company] = store
        if len(self._loaded) > self.resident:  # evict the older half at once (callers sweep their caches once)
            gone = [self._loaded.popitem(last=False)[0] for _ in range(len(self._loaded) - self.resident // 2)]
            if self.on_evict is not None:
                self.on_evict(set(gone))
        return store

    def __iter__(self):
        return iter(sorted(self.index))

    def __len__(self):
        return len(self.index)

    def __contains__(self, company) -> bool:
        return company in self.index

    def has_reports(self, company: str) -> bool:
        return self.index[company]["has_reports"]

    def summary(self, company: str) -> dict | None:
        """What `summary(store, company)` gave when the cache was built, without loading the store (None: an
        index without it)."""
        found = self.index[company].get("summary")
        return found if isinstance(found, dict) else None

    def resolve(self, query: str) -> str | None:
        """A company code from a code or exact entity name (case-insensitive), without loading stores; None if neither."""
        q = query.strip().lower()
        for company, entry in self.index.items():
            if company.lower() == q or str(entry.get("name", "")).lower() == q:
                return company
        return None


def _open(folder: Path, resident: int) -> LazyStores:
    return LazyStores(folder, _read_index(folder), resident)


def build_stores(facts: pd.DataFrame) -> dict:
    """company -> FactStore over that company's facts only (the in-memory form, no cache folder); `facts` is
    `load_facts()`'s output (selected: see FactStore's `selected`).
    Synth stores: quarter EPS / weighted shares derived from the YTD reports a prompt shows (never an unseen
    3-month column)."""
    return {str(c): FactStore(df.reset_index(drop=True), quarter_columns=False, selected=True)
            for c, df in facts.groupby("company", sort=True)}


def company_stores(sources: list[str] | None, resident: int = DEFAULT_RESIDENT, workers: int = 1) -> Mapping:
    """company -> FactStore over the facts of `sources` (default: the embedded data): a `LazyStores` over
    the cache folder (built on first use, by `workers` processes), or a plain dict when the cache is off."""
    root = cache_dir()
    if root is None:
        return build_stores(load_facts(sources or None))
    folder = root / f"{FORMAT}-{cache_key(sources)}"
    if folder.is_dir() or folder.is_symlink():
        try:
            return _open(folder, resident)
        except UntrustedCache as err:
            warnings.warn(f"ignoring the store cache: {err}; building a private one for this run", stacklevel=2)
            return _open(build_cache(sources, temp_folder("ledgerlm-stores-") / "c", workers), resident)
        except (OSError, ValueError):  # a damaged or foreign folder of ours: rebuilt below, beside it
            pass
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=root))
        try:
            build_cache(sources, tmp / "c", workers)
        except BaseException:  # a bad source (InputError), an interrupt: no half-built folder left in the cache
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        try:
            if folder.is_dir() and not folder.is_symlink():
                shutil.rmtree(folder, ignore_errors=True)  # ours but damaged
            os.replace(tmp / "c", folder)  # atomic: concurrent jobs see the old state or the whole cache
            shutil.rmtree(tmp, ignore_errors=True)
        except OSError:  # another job renamed its copy first: use that one, drop ours
            shutil.rmtree(tmp, ignore_errors=True)
        return _open(folder, resident)
    except (OSError, UntrustedCache, ValueError):  # read-only home, full disk, a planted folder: a private temp cache
        return _open(build_cache(sources, temp_folder("ledgerlm-stores-") / "c", workers), resident)


def main(argv: list[str] | None = None) -> int:
    """`python -m ledgerlm.synth.finindices.storecache [SOURCE ...] [--workers N]`: build (or find) the store cache."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m ledgerlm.synth.finindices.storecache",
                                description="build the per-company store cache of SOURCES (default: the embedded data)")
    p.add_argument("sources", nargs="*", help="companyfacts zip / files / folders (as `ledgerlm synth --source`)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                   help="processes that select, index and write companies (default: every CPU, %(default)s here)")
    args = p.parse_args(argv)
    if args.workers < 1:
        p.error(f"--workers must be >= 1, got {args.workers}")
    stores = company_stores(args.sources or None, workers=args.workers)
    where = stores.folder if isinstance(stores, LazyStores) else "off (in memory)"
    print(f"{len(stores)} companies; cache: {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
