"""Store cache v6 (#17 goal 3, per-company cold cost over many filers): cells stored as column tables, facts read
only when asked for, the accounting standard carried in the state.

    python -m pytest tests/test_synth_storecache_columns.py -q
"""
from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest

from ledgerlm.errors import InputError
from ledgerlm.synth.finindices import storecache
from ledgerlm.synth.indices.registry import accounting_standard
from ledgerlm.synth.statements.factindex import Cell
from ledgerlm.synth.statements.periods import ReportKey
from ledgerlm.synth.statements.store import FactStore

SRC = ["synth/data/sec/companyfacts/CIK0001640147_SNOW.json.gz"]


@pytest.fixture
def stores(tmp_path, monkeypatch, repo_root):
    monkeypatch.chdir(repo_root)
    monkeypatch.setenv("LEDGERLM_CACHE_DIR", str(tmp_path / "cache"))
    return storecache.company_stores(SRC)


def _cell(value, unit="USD", label="Revenue") -> Cell:
    return Cell(value, unit, "acc-1", label, "2024-03-01", "income", "us-gaap:Revenues")


def test_cells_are_one_column_table_with_shared_strings_and_exact_types():
    """A dict of cells becomes one "Y" node; decoding gives equal cells in the same order, the repeated strings as
    one object, and keeps 1, 1.0 and True apart (distinct values are keyed by type too)."""
    types = storecache._codec_types()
    cells = {("X", "consolidated", "revenue", ReportKey(2024, q)): _cell(float(q) * 10, label="Revenue") for q in (1, 2, 3, 4)}
    cells[("X", "consolidated", "odd", ReportKey(2024, 4))] = _cell(1.0, unit=1)
    cells[("X", "consolidated", "odder", ReportKey(2024, 4))] = _cell(1.0, unit=True)
    cells[("X", "consolidated", "oddest", ReportKey(2024, 4))] = _cell(1.0, unit=1.0)
    encoded = storecache._encode(cells, types)
    assert list(encoded) == ["Y"]
    data = json.dumps(encoded)
    decoded = storecache._loads(data)
    assert decoded == cells and list(decoded) == list(cells)
    assert [type(c.unit) for c in decoded.values()][-3:] == [int, bool, float]
    assert len({id(c.label) for c in decoded.values()}) == 1
    assert storecache._decode(json.loads(data), types) == cells


def test_a_dict_of_other_values_keeps_the_plain_encoding():
    types = storecache._codec_types()
    for v in ({"a": _cell(1.0)}, {("a",): 1.0}, {("a", 1): _cell(1.0), ("b",): _cell(2.0)}):
        assert list(storecache._encode(v, types)) == ["d"]
        assert storecache._loads(json.dumps(storecache._encode(v, types))) == v


def test_state_file_holds_cell_tables_and_the_accounting_standard(stores):
    raw = json.loads(gzip.decompress((stores.folder / stores.index["SNOW"]["state"]).read_bytes()))
    state = dict(raw["d"])
    index_fields = state["index"]["X"]
    assert [list(f) for f in index_fields[:2]] == [["Y"], ["Y"]]  # cells, quarter_reported
    assert dict(state["_standards"]["d"]) == {"SNOW": "us-gaap"}


def test_a_loaded_store_reads_its_facts_only_when_asked(stores, monkeypatch):
    reads = []
    real = storecache.read_company
    monkeypatch.setattr(storecache, "read_company", lambda folder, entry: reads.append(entry["file"]) or real(folder, entry))
    store = stores["SNOW"]
    assert store.reports("SNOW") and accounting_standard(store, "SNOW") == "us-gaap"
    assert store.value("SNOW", "revenue", "FY2024").value > 0
    assert reads == []
    facts = store.facts
    assert reads == [stores.index["SNOW"]["file"]] and store.facts is facts
    assert facts.equals(pd.read_parquet(stores.folder / stores.index["SNOW"]["file"]))
    fresh = FactStore(facts, quarter_columns=False)  # the standard read from the facts is the one the state carries
    assert accounting_standard(fresh, "SNOW") == "us-gaap"
    view = store.restrict({"SNOW": store.reports("SNOW")[:1]})
    assert view.facts is facts and reads == [stores.index["SNOW"]["file"]]


def test_a_damaged_facts_file_is_an_input_error_when_first_read(stores):
    store = stores["SNOW"]
    (stores.folder / stores.index["SNOW"]["file"]).write_bytes(b"not parquet")
    with pytest.raises(InputError, match="company SNOW is unreadable") as err:
        store.facts
    assert "store_cache" in str(err.value)
