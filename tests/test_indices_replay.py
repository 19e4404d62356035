"""compute() on the full store replays recorded sub-index evaluations (compute.py `_Evaluator._index`): every result
must equal a fresh evaluation's, trace step for step (the trace feeds the worked solutions and the provenance). A full
store also keeps each fact reading once (`_Evaluator._fact`); the reference store keeps none.

    python -m pytest tests/test_indices_replay.py -q
"""
from __future__ import annotations

import pytest

from ledgerlm.errors import LedgerError
from ledgerlm.synth.indices.compute import compute
from ledgerlm.synth.indices.registry import load_registry
from ledgerlm.synth.statements.sources import load_facts
from ledgerlm.synth.statements.store import FactStore

REGISTRY = load_registry()
CASES = [("NVDA", "FY2025"), ("NVDA", "FY2025Q3"), ("NVDA", "FY2025Q2TTM"), ("SNOW", "FY2024H1"), ("SNOW", "FY2024Q4")]


@pytest.fixture(scope="module")
def facts():
    all_facts = load_facts()
    return {c: all_facts[all_facts["company"] == c].reset_index(drop=True) for c in {c for c, _ in CASES}}


def outcome(store, company: str, index_id: str, period: str):
    """Everything a caller reads of a result (or the error's class and message)."""
    try:
        v = compute(store, company, index_id, period, registry=REGISTRY)
    except LedgerError as err:
        return type(err).__name__, str(err), getattr(err, "missing", None)
    return v.value, v.unit, v.trace, v.facts, v.reports, v.absent


class Fresh(FactStore):
    """A full store that records nothing: every sub-index is evaluated where it is read (the reference)."""

    def index_memo(self):
        return None


def test_replayed_evaluations_equal_fresh_ones(facts):
    """Every index at each case, in registry order on one full store (later indices replay what earlier ones recorded),
    against the same on a store that never records. Equal traces include the order of steps, facts and absent lines."""
    compared = 0
    for company in facts:
        store, fresh = FactStore(facts[company], quarter_columns=False), Fresh(facts[company], quarter_columns=False)
        for c, period in CASES:
            if c != company:
                continue
            for index_id in REGISTRY:
                got, want = outcome(store, company, index_id, period), outcome(fresh, company, index_id, period)
                assert got == want, f"{index_id} {company} {period}"
                compared += isinstance(want[0], float)
        memo = store.index_memo()
        (registry, recordings), = (kept for key, kept in memo.items() if key != "facts")
        assert registry is REGISTRY and sum(hasattr(rec, "trace") for rec in recordings.values()) > 50  # recorded, replayed
        # sub-indices that raise NotDerivable are recorded with what they left behind and replayed, not evaluated again
        assert sum(type(rec).__name__ == "_Failed" for rec in recordings.values()) > 5
        readings = [key for key in memo["facts"] if key[0] != "context"]
        assert readings == [(company, "consolidated")] and len(memo["facts"][company, "consolidated"]) > 50  # kept readings
        # one kept context (company key, standard, recordings, readings) per registry, company as asked and scope
        (context,) = (kept for key, kept in memo["facts"].items() if key[0] == "context")
        assert context[0] is REGISTRY and context[1][0] == company and context[1][2] is recordings
        assert context[1][3] is memo["facts"][company, "consolidated"]
        assert fresh.index_memo() is None and "_index_memo" not in fresh.__dict__
    assert compared > 200


def test_readings_are_kept_once(facts):
    """compute() keeps each fact reading in its own readings only: the full store does not remember the derivation too
    (a second copy of every read, held as long as the store)."""
    store = FactStore(facts["NVDA"], quarter_columns=False)
    for index_id in ("revenue_yoy", "equity_turnover", "gross_margin"):
        for period in ("FY2025", "FY2025Q3", "FY2025Q2TTM"):
            outcome(store, "NVDA", index_id, period)
    assert len(store.index_memo()["facts"]["NVDA", "consolidated"]) > 10
    assert store.__dict__.get("_value_memo", {}) == {}


def test_a_view_records_nothing(facts):
    """A view (a prompt's reports) derives afresh: it neither records nor reads the full store's recordings."""
    store = FactStore(facts["NVDA"], quarter_columns=False)
    shown = [r.label for r in store.reports("NVDA")][-6:]
    view = store.restrict({"NVDA": shown})
    assert view.index_memo() is None
    for index_id in ("interest_bearing_debt_yoy", "invested_capital_equity", "net_debt"):
        assert outcome(view, "NVDA", index_id, "FY2025") == outcome(Fresh(facts["NVDA"], quarter_columns=False).restrict(
            {"NVDA": shown}), "NVDA", index_id, "FY2025")
    assert store.index_memo() == {}


def test_recordings_are_kept_per_registry(facts):
    """Another registry may define an index of the same name otherwise: it never replays this registry's recordings."""
    store = FactStore(facts["NVDA"], quarter_columns=False)
    other = load_registry()
    for registry in (REGISTRY, other):
        compute(store, "NVDA", "interest_bearing_debt_yoy", "FY2025", registry=registry)
    assert [kept[0] for key, kept in store.index_memo().items() if key != "facts"] == [REGISTRY, other] and REGISTRY is not other


def test_trace_numbers_are_remembered_without_changing_them():
    """`_r` keeps each text it writes; zero is never kept (0.0 and -0.0 are one dict key but print "0" and "-0")."""
    from ledgerlm.synth.indices.compute import _r, _r_text

    values = [0.0, -0.0, 1234.5, 1234.5, 7.0, 7, -1e-7, 0.1 + 0.2, 2.5e12, -0.0, 0.0]
    assert [_r(v) for v in values] == [_r_text(v) for v in values]
    assert (_r(0.0), _r(-0.0)) == ("0", "-0") and _r(1234.5) == "1,234.50"
