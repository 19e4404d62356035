"""Every registry index against an independent hand-written recomputation from the raw facts.

    python -m pytest tests/test_indices_values.py -q

For each index: on the embedded SEC data (AAPL FY2023, NVDA FY2026Q4, GOOGL FY2026Q1) and on a
hand-built CAS company (CASDEMO FY2024Q3 and FY2024), `compute` must equal the expression in
tests/indices_reference.py (which reads facts by date, not through FactStore or the evaluator), and
must raise NotDerivable exactly when the reference lacks a fact. Every index must get a numeric check.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from indices_fixtures import cas_demo_facts, embedded_facts  # noqa: E402
from indices_reference import REFERENCE, Missing, Raw, Ref  # noqa: E402

from ledgerlm.errors import NotDerivable  # noqa: E402
from ledgerlm.synth.indices.compute import IndexUndefined, compute  # noqa: E402
from ledgerlm.synth.indices.registry import IndexNotApplicable, load_registry  # noqa: E402
from ledgerlm.synth.statements.store import FactStore  # noqa: E402

REGISTRY = load_registry()
REAL_CASES = [("AAPL", "FY2023"), ("NVDA", "FY2026Q4"), ("GOOGL", "FY2026Q1")]
CAS_CASES = [("CASDEMO", "FY2024Q3"), ("CASDEMO", "FY2024")]


@pytest.fixture(scope="module")
def stores():
    real, cas = embedded_facts(), cas_demo_facts()
    return {"real": (FactStore(real), real), "cas": (FactStore(cas), cas)}


_RAW: dict[tuple[int, str], Raw] = {}


STANDARD = {"AAPL": "us-gaap", "NVDA": "us-gaap", "GOOGL": "us-gaap", "CASDEMO": "cas"}  # by hand, not by detection
KIND = {"FY2023": "FY", "FY2026Q4": "Q", "FY2026Q1": "Q", "FY2024Q3": "Q", "FY2024": "FY"}


def check(store, facts, company, period, index_id):
    """'value' when both paths agree on a number, 'missing' when both find it not derivable, 'not applicable'
    when the registry restricts the index to other standards or period kinds (issue 11) and compute refuses."""
    ix = REGISTRY[index_id]
    if STANDARD[company] not in ix.applies_to or KIND[period] not in ix.periods:
        with pytest.raises(IndexNotApplicable, match=index_id):
            compute(store, company, index_id, period, registry=REGISTRY)
        return "not applicable"
    if (id(facts), company) not in _RAW:
        _RAW[(id(facts), company)] = Raw(facts, company)
    ref = Ref.parse(_RAW[(id(facts), company)], period)
    try:
        expected = REFERENCE[index_id](ref)
    except Missing as why:
        with pytest.raises(NotDerivable):
            compute(store, company, index_id, period, registry=REGISTRY)
        return f"missing ({why})"
    except ZeroDivisionError:
        with pytest.raises(IndexUndefined):
            compute(store, company, index_id, period, registry=REGISTRY)
        return "undefined"
    got = compute(store, company, index_id, period, registry=REGISTRY)
    assert got.value == pytest.approx(expected, rel=1e-9, abs=1e-9), f"{index_id} {company} {period}: {got.value} != {expected}"
    return "value"


def test_every_index_has_a_reference():
    assert set(REGISTRY) == set(REFERENCE), (sorted(set(REGISTRY) - set(REFERENCE)), sorted(set(REFERENCE) - set(REGISTRY)))


@pytest.mark.parametrize("index_id", sorted(REGISTRY))
def test_index_matches_hand_computation(stores, index_id):
    outcomes = {}
    for kind, cases in (("real", REAL_CASES), ("cas", CAS_CASES)):
        store, facts = stores[kind]
        for company, period in cases:
            outcomes[(company, period)] = check(store, facts, company, period, index_id)
    assert "value" in outcomes.values(), f"{index_id}: no numeric check anywhere: {outcomes}"


def test_real_data_covers_most_indices(stores):
    """At least 150 registry indices get a numeric check on real SEC data (not only the CAS fixture)."""
    store, facts = stores["real"]
    checked = set()
    for index_id in REGISTRY:
        for company, period in REAL_CASES:
            if check(store, facts, company, period, index_id) == "value":
                checked.add(index_id)
                break
    assert len(checked) >= 150, len(checked)


def test_concept_indices_are_computable(stores):
    """Every canonical concept the data reports is an index of its own (no YAML entry needed)."""
    store, _ = stores["real"]
    for concept in ["revenue", "inventory", "eps_diluted", "operating_cash_flow", "total_assets", "shares_diluted"]:
        got = compute(store, "AAPL", concept, "FY2023", registry=REGISTRY)
        assert got.value == store.value("AAPL", concept, "FY2023").value
        assert got.result == ("per_share" if concept.startswith("eps") else "currency")
