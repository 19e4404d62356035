"""Store cache (#14 item 5, #17 goal 3): Parquet per company, never unpickled, only read when this user
owns it; lazy stores give the same dataset as the in-memory path.

    python -m pytest tests/test_synth_storecache.py -q
"""
from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from ledgerlm.errors import InputError
from ledgerlm.synth.finindices import storecache

SRC = ["synth/data/sec/companyfacts/CIK0001640147_SNOW.json.gz", "synth/data/sec/companyfacts/CIK0001046179_TSM.json.gz"]


class Payload:
    """Unpickling this writes the marker file: the proof that a loader executed data."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "code ran"))


def _plant(path: Path, marker: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(Payload(marker)))


@pytest.fixture
def cache(tmp_path, monkeypatch, repo_root):
    monkeypatch.chdir(repo_root)
    monkeypatch.setenv("LEDGERLM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _use(stores) -> list:
    return [stores[c].reports(c)[:1] for c in sorted(stores)]


def test_planted_pickles_never_run(cache, tmp_path):
    key = storecache.cache_key(SRC)
    marker = tmp_path / "PWNED"
    _plant(cache / f"{key}.pkl", marker)  # where the pickle cache of the previous version lived
    folder = cache / f"{storecache.FORMAT}-{key}"
    folder.mkdir(parents=True, mode=0o700)
    (folder / "index.json").write_text('{"format": "' + storecache.FORMAT + '", "companies": {"SNOW": {"file": "0000000.parquet", "has_reports": true}}}')
    _plant(folder / "0000000.parquet", marker)  # a pickle where Parquet belongs, in a folder we own
    for p in (folder, *folder.iterdir()):
        os.chmod(p, 0o700 if p.is_dir() else 0o600)
    stores = storecache.company_stores(SRC)
    with pytest.raises(InputError, match="unreadable.*delete"):
        stores["SNOW"]
    assert not marker.exists()


def test_cache_others_can_write_is_refused_and_a_private_one_used(cache, tmp_path):
    first = storecache.company_stores(SRC)
    assert sorted(first) == ["SNOW", "TSM"] and isinstance(first, storecache.LazyStores)
    marker = tmp_path / "PWNED"
    _plant(first.folder / first.index["SNOW"]["file"], marker)
    os.chmod(first.folder / first.index["SNOW"]["file"], 0o666)  # writable by anyone: never read
    os.chmod(first.folder, 0o777)
    with pytest.warns(UserWarning, match="not owned by this user or is writable by others"):
        again = storecache.company_stores(SRC)
    assert again.folder != first.folder and _use(again) and not marker.exists()
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # as root, also a folder another user owns
        os.chmod(first.folder, 0o700)
        os.chown(first.folder, 65534, 65534)
        with pytest.warns(UserWarning, match="not owned"):
            assert _use(storecache.company_stores(SRC))
        assert not marker.exists()


def test_a_refused_cache_leaves_no_private_copy_behind(cache, tmp_path, repo_root):
    """The private temp cache a run builds instead of a refused one is removed when the run ends: also when the
    `ledgerlm` program leaves through `exit_early` (os._exit, no atexit handlers)."""
    import subprocess
    import sys

    storecache.company_stores(SRC)
    folder = next(cache.glob(f"{storecache.FORMAT}-*"))
    os.chmod(folder, 0o777)  # writable by others: refused
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = dict(os.environ, TMPDIR=str(tmpdir))
    run = subprocess.run([sys.executable, "-m", "ledgerlm", "synth", *(a for src in SRC for a in ("--source", src)), "--num", "4", "--no-progress",
                          "--out", str(tmp_path / "out")], env=env, cwd=repo_root, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "building a private one" in run.stderr
    assert (tmp_path / "out" / "train.jsonl").exists()
    assert not list(tmpdir.glob("ledgerlm-stores-*"))


def test_lazy_cache_equals_in_memory_stores_and_evicts(cache, monkeypatch):
    from ledgerlm.synth.finindices.config import SynthConfig
    from ledgerlm.synth.finindices.contexts import Builder
    from ledgerlm.synth.finindices.pipeline import Stats
    from ledgerlm.synth.indices.registry import load_registry
    from ledgerlm.synth.finindices.tokens import TokenCounter

    cfg = SynthConfig(sources=SRC, seed=3, num=40)
    lazy = storecache.company_stores(SRC, resident=1)  # one store in memory at a time: every switch reloads
    monkeypatch.setenv("LEDGERLM_CACHE_DIR", "off")
    eager = storecache.company_stores(SRC)
    assert isinstance(eager, dict) and not isinstance(eager, storecache.LazyStores)
    rows = []
    for stores in (lazy, eager):
        builder = Builder(stores, load_registry(), cfg, TokenCounter("o200k_base"))
        rows.append([r for s in range(20) for r in builder.slot(s, Stats())])
    assert len(rows[0]) >= 10
    assert rows[0] == rows[1]
    assert lazy.loads > 2 and len(lazy._loaded) == 1


def test_cache_key_names_a_missing_source(cache):
    with pytest.raises(InputError, match="no such file"):
        storecache.company_stores(["/nonexistent/facts.json"])


def test_company_groups_bound_the_stores_in_use(cache):
    """More companies than `company_group`: consecutive slots draw from one group, so a run loads each
    store about once (not once per slot), and every company keeps an equal share of the slots."""
    from collections import Counter

    from ledgerlm.synth.finindices.companies import CompanyGroups
    from ledgerlm.synth.finindices.config import SynthConfig
    from ledgerlm.synth.finindices.contexts import Builder
    from ledgerlm.synth.finindices.pipeline import Stats
    from ledgerlm.synth.finindices.tokens import TokenCounter
    from ledgerlm.synth.indices.registry import load_registry

    names = [f"C{i:03d}" for i in range(1000)]
    groups = CompanyGroups(names, seed=1, n_slots=50_000, size=64)
    assert len(groups.groups) == 16 and {len(g) for g in groups.groups} <= {62, 63}
    assert sorted(c for g in groups.groups for c in g) == names
    share = Counter(len(groups.pool(s)) and groups.groups.index(groups.pool(s)) for s in range(50_000))
    assert max(share.values()) - min(share.values()) <= 1
    assert CompanyGroups(names[:64], seed=1, n_slots=10, size=64).pool(7) == names[:64]  # few companies: all, as before

    lazy = storecache.company_stores(SRC, resident=1)
    builder = Builder(lazy, load_registry(), SynthConfig(sources=SRC, seed=2, num=40, company_group=1), TokenCounter("o200k_base"))
    rows = [r for s in range(20) for r in builder.slot(s, Stats())]
    assert {r["company"] for r in rows[: len(rows) // 3]} | {r["company"] for r in rows[-len(rows) // 3:]} == {"SNOW", "TSM"}
    assert all(r["company"] in builder.groups.pool(int(r["id"].split("-")[2])) for r in rows)
    # one group after the other: 2 loads, plus 2 for the split rule's look at fewer than 3 companies (resident=1)
    assert lazy.loads <= 5


def test_state_decoder_matches_tree_walk_and_names_a_damaged_file(cache):
    """The one-pass decoder (json object_hook) gives the very objects the tree walk gives; a damaged state file
    (an object that is not one tagged node, an unknown tag) is one InputError naming the company and field."""
    import gzip
    import json

    stores = storecache.company_stores(SRC)
    entry = stores.index["TSM"]
    raw = gzip.decompress((stores.folder / entry["state"]).read_bytes())
    walked, hooked = storecache._decode(json.loads(raw), storecache._codec_types()), storecache._loads(raw)
    assert hooked == walked and repr(hooked) == repr(walked) and len(walked) >= 2
    for damaged in (b'{"t": [1], "l": [2]}', b'{"Z": [1]}'):
        (stores.folder / entry["state"]).write_bytes(gzip.compress(damaged))
        with pytest.raises(InputError, match="company TSM is unreadable") as err:
            storecache.company_stores(SRC)["TSM"]
        assert "store_cache" in str(err.value)



def _tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_parallel_build_writes_the_same_bytes(tmp_path, monkeypatch, repo_root):
    """#17 at scale: companies are selected, indexed and written by `workers` processes; the cache folder is the same,
    file for file and byte for byte, as a one-process build (the gzip header carries no build time), and a second
    build is the same again."""
    monkeypatch.chdir(repo_root)
    serial = storecache.build_cache(SRC, tmp_path / "serial")
    parallel = storecache.build_cache(SRC, tmp_path / "parallel", workers=2)
    again = storecache.build_cache(SRC, tmp_path / "again")
    assert sorted(_tree(serial)) == ["0000000.parquet", "0000000.state.json.gz", "0000001.parquet",
                                     "0000001.state.json.gz", "index.json"]
    assert _tree(parallel) == _tree(serial) == _tree(again)


def _bulk_zip(path: Path, repo_root: Path) -> Path:
    """A companyfacts.zip-style archive of the embedded SNOW and TSM files (SEC's member names, JSON inside)."""
    import gzip
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        for src in SRC:
            name = Path(src).name.replace(".json.gz", ".json")
            z.writestr(name, gzip.decompress((repo_root / src).read_bytes()))
        z.writestr("README.txt", "not a member")  # skipped: no CIK in the name
    return path


def test_parallel_build_of_a_bulk_zip_and_a_file(tmp_path, monkeypatch, repo_root):
    """Each zip member and each other source file is read in a worker; the parts reach each company in source order,
    so a zip plus a file (AAPL) builds the same folder with 1 and 2 workers."""
    monkeypatch.chdir(repo_root)
    sources = [str(_bulk_zip(tmp_path / "companyfacts.zip", repo_root)), "synth/data/sec/companyfacts/CIK0000320193_AAPL.json.gz"]
    serial = storecache.build_cache(sources, tmp_path / "serial")
    parallel = storecache.build_cache(sources, tmp_path / "parallel", workers=2)
    assert _tree(parallel) == _tree(serial)
    index = json.loads((serial / "index.json").read_text())["companies"]
    assert sorted(index) == ["AAPL", "SNOW", "TSM"]


def test_damaged_zip_member_names_the_member(tmp_path, monkeypatch, repo_root):
    monkeypatch.chdir(repo_root)
    bad = tmp_path / "bad.zip"
    import gzip
    import zipfile

    with zipfile.ZipFile(bad, "w") as z:  # a good member beside it: with 2 workers the error comes from a worker
        z.writestr("CIK0001640147_SNOW.json", gzip.decompress((repo_root / SRC[0]).read_bytes()))
        z.writestr("CIK0000000001_BAD.json", b"{not json")
    for workers in (1, 2):
        with pytest.raises(InputError, match=r"bad\.zip!CIK0000000001_BAD\.json"):
            storecache.build_cache([str(bad)], tmp_path / f"out{workers}", workers=workers)
    monkeypatch.setenv("LEDGERLM_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(InputError, match="CIK0000000001_BAD"):
        storecache.company_stores([str(bad)], workers=2)
    assert list((tmp_path / "cache").iterdir()) == []  # no half-built folder left behind


def test_selected_facts_index_as_when_selected_again(repo_root, monkeypatch):
    """FactStore(selected=True) skips `select_latest` on facts that are its output already (the store cache,
    load_facts()): the indexed state equals the one that selects again, for a US-GAAP filer, an IFRS filer and an
    FSDS filer with parent-company rows."""
    monkeypatch.chdir(repo_root)
    from ledgerlm.synth.statements.sources import load_facts
    from ledgerlm.synth.statements.store import FactStore

    facts = load_facts(None)
    for company in ["SNOW", "TSM", "ED", "GE"]:
        mine = facts[facts["company"] == company].reset_index(drop=True)
        assert len(mine), company
        reselected = FactStore(mine, quarter_columns=False)
        skipped = FactStore(mine, quarter_columns=False, selected=True)
        assert storecache.store_state(skipped) == storecache.store_state(reselected), company


def test_cache_cli_refuses_zero_workers(capsys):
    with pytest.raises(SystemExit):
        storecache.main(["--workers", "0"])
    assert "--workers must be >= 1" in capsys.readouterr().err


def test_companies_selected_together_write_the_bytes_of_one_at_a_time(tmp_path, monkeypatch, repo_root):
    """#17: consecutive companies are selected by one `select_latest` call (`_build_companies`; pandas' per-call cost
    shared); every company's files are those of selecting it alone: companyfacts, an XBRL instance and a financial
    statement data set quarter (several filers, parent-company rows) in one build, batches of 1 and of 16 companies
    (and 2 workers), and batches cut by rows too."""
    monkeypatch.chdir(repo_root)
    sources = [*SRC, "synth/data/sec/xbrl/aapl-20230701_htm.xml.gz", "synth/data/sec/fsds/2010q1"]
    alone = storecache.build_cache(sources, tmp_path / "alone", batch=1)
    together = storecache.build_cache(sources, tmp_path / "together", batch=16)
    parallel = storecache.build_cache(sources, tmp_path / "parallel", workers=2, batch=4)
    index = json.loads((alone / "index.json").read_text())["companies"]
    assert len(index) >= 8 and {"SNOW", "TSM", "AAPL"} <= set(index)
    assert _tree(together) == _tree(alone) == _tree(parallel)
    assert [list(r) for r in storecache._batches([5, 1, 1, 1], 2)] == [[0, 1], [2, 3]]
    monkeypatch.setattr(storecache, "SELECT_BATCH_ROWS", 6)
    assert [list(r) for r in storecache._batches([5, 1, 1, 7, 2], 16)] == [[0, 1], [2], [3], [4]]


def _recast_rows(company: str) -> list[dict]:
    """A Ford-like FY2009: the 10-K shows profit 2,962 with a noncontrolling share of 245, the later 8-K recast shows
    profit = parent's net income and no noncontrolling line (selection adds a 0 row for it), then an unmapped fact."""
    def row(concept, tag, value, source, filed):
        return dict(company=company, company_name=company, scope="consolidated", statement="income" if concept else "",
                    concept=concept, label=tag, value=float(value), unit="USD", start="2009-01-01", end="2009-12-31",
                    fiscal_year=2009, fiscal_period="FY", form="10-K", filed=filed, source=source, tag=f"us-gaap:{tag}")
    return [row("net_income", "ProfitLoss", 2962, "k", "2010-02-25"),
            row("net_income_parent", "NetIncomeLoss", 2717, "k", "2010-02-25"),
            row("net_income_minority", "NetIncomeLossAttributableToNoncontrollingInterest", 245, "k", "2010-02-25"),
            row("net_income", "ProfitLoss", 2717, "8k", "2010-05-07"),
            row("net_income_parent", "NetIncomeLoss", 2717, "8k", "2010-05-07"),
            row("", "SomeUnmappedElement", 1, "k", "2010-02-25")]


def test_a_company_with_unmapped_rows_is_selected_alone(tmp_path):
    """Review: a row selection adds (the recast's 0 noncontrolling share) is labelled after the frame's last mapped
    row, so with other companies in the frame it sorted after this company's unmapped row, alone before it. Such a
    company is selected alone: its files are those of a batch of one."""
    import pandas as pd

    from ledgerlm.synth.statements.facts import conform, select_latest

    frames = {c: conform(pd.DataFrame(_recast_rows(c))) for c in ("AAA", "BBB")}
    mixed = select_latest(pd.concat(list(frames.values()), ignore_index=True))
    in_batch = mixed[mixed["company"] == "AAA"].reset_index(drop=True)
    alone = select_latest(frames["AAA"]).reset_index(drop=True)
    assert not in_batch.equals(alone)  # the order the fallback exists for (values equal, rows in another order)
    assert sorted(in_batch["concept"]) == sorted(alone["concept"]) and "net_income_minority" in set(alone["concept"])
    written = {}
    for batch in (1, 2):
        folder = tmp_path / f"b{batch}"
        folder.mkdir()
        companies = []
        for n, (company, frame) in enumerate(frames.items()):
            part = tmp_path / f"{company}-{batch}.parquet"
            frame.to_parquet(part, index=False)
            companies.append((n, company, [part]))
        jobs = [companies[i:i + batch] for i in range(0, len(companies), batch)]
        entries = [e for job in jobs for e in storecache._build_companies(folder, job)]
        assert [e["file"] for e in entries] == ["0000000.parquet", "0000001.parquet"]
        written[batch] = _tree(folder)
    assert written[1] == written[2]
    assert pd.read_parquet(tmp_path / "b2" / "0000000.parquet").equals(alone)
