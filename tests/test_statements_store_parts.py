"""FactStore split (issue 13): calendar (fiscal_calendar.py), fact index (factindex.py), views (views.py), period
algebra (store.py, composing them).

    nice -n 10 python -m pytest -q tests/test_statements_store_parts.py

Checks that derived caches cannot go stale in a view (they are cached properties of the object they are derived from,
and a view drops the store's own), that the parts round-trip through the synth store cache, and that the calendar
and index modules do not reach back into the store.
"""
from __future__ import annotations

import ast
from functools import cached_property, lru_cache
from pathlib import Path

import pytest

from ledgerlm.synth.statements.factindex import FactIndex
from ledgerlm.synth.statements.fiscal_calendar import Calendar
from ledgerlm.synth.statements.sources import load_facts
from ledgerlm.synth.statements.store import FactStore
from ledgerlm.synth.statements.taxonomy import concept_info
from ledgerlm.synth.statements.taxonomy import concepts as taxonomy_concepts
from ledgerlm.synth.statements.views import StoreViews

STATEMENTS = Path(__file__).resolve().parents[1] / "synth" / "statements"


@lru_cache(maxsize=1)
def snow() -> FactStore:
    facts = load_facts()
    return FactStore(facts[facts["company"] == "SNOW"].reset_index(drop=True))


def test_store_composes_calendar_and_index():
    s = snow()
    assert isinstance(s.calendar, Calendar) and isinstance(s.index, FactIndex)
    assert s.companies() == ["SNOW"] == s.calendar.companies()
    fy = s.fiscal_years("SNOW")
    # Snowflake's fiscal year ends on 31 January: FY2023 = 2022-02-01 .. 2023-01-31
    assert next(y for y in fy if y.label == 2023).start.isoformat() == "2022-02-01"
    assert s.period_end("SNOW", "FY2023").isoformat() == "2023-01-31"
    assert s.calendar.report_days("SNOW", s.reports("SNOW")[-1]) > 0


def test_a_view_never_inherits_a_derived_cache_of_its_parent():
    s = snow()
    full_concepts = s.concepts("SNOW")
    s.value("SNOW", "revenue", "FY2023Q2")  # fills the store's value memo
    s.report_statement("SNOW", "FY2023", "income")  # fills the index's statement order
    assert "_value_memo" in s.__dict__ and s.index.statement_order
    shown = {("consolidated", "revenue", "FY2023H1"): 1.0, ("consolidated", "revenue", "FY2023Q1"): 0.25}
    view = s.with_reported_values("SNOW", shown)
    assert "_value_memo" not in view.__dict__ and view.index is not s.index
    assert view.concepts("SNOW") == ["revenue"] and len(full_concepts) > 10
    assert view.value("SNOW", "revenue", "FY2023Q2").value == 0.75  # the view's values, not the parent's memo
    assert [i["concept"] for i in view.report_statement("SNOW", "FY2023H1", "income")["items"]] == ["revenue"]
    # a restricted view shares the index (same cells, other visibility) but not the store's memo
    r = s.restrict({"SNOW": ["FY2023H1"]})
    assert r.index is s.index and "_value_memo" not in r.__dict__
    assert r.reports("SNOW") == [next(k for k in s.reports("SNOW") if k.label == "FY2023H1")]


def test_a_new_cached_property_is_dropped_by_views_without_being_listed():
    class Counting(FactStore):
        @cached_property
        def seen(self) -> dict:
            return {"reports": len(self.reports("SNOW"))}

    s = snow()
    c = Counting.__new__(Counting)
    c.__dict__.update({k: v for k, v in s.__dict__.items() if k != "_value_memo"})
    assert c.seen["reports"] > 20
    view = c.restrict({"SNOW": ["FY2023H1"]})
    assert "seen" not in view.__dict__ and view.seen == {"reports": 1}


def test_parts_round_trip_through_the_store_cache_codec():
    from ledgerlm.synth.finindices.storecache import load_store, store_state

    facts = load_facts()
    facts = facts[facts["company"] == "SNOW"].reset_index(drop=True)
    built = FactStore(facts, quarter_columns=False)
    loaded = load_store(facts, store_state(built))
    assert loaded.calendar == built.calendar and loaded.index == built.index
    for period in ("FY2023Q2", "FY2024Q3", "FY2025"):
        for concept in ("revenue", "eps_basic", "shares_diluted"):
            a, b = built.value("SNOW", concept, period), loaded.value("SNOW", concept, period)
            assert (a.value, a.steps) == (b.value, b.steps)
    built.concepts("SNOW")  # a cached lookup is a property of the instance, never a field the cache writes
    assert "by_company" not in [f for f in FactIndex.__dataclass_fields__]


@pytest.mark.parametrize("module", ["fiscal_calendar.py", "factindex.py", "views.py"])
def test_calendar_index_and_views_do_not_import_the_store_and_import_at_module_top(module):
    tree = ast.parse((STATEMENTS / module).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "ledgerlm.synth.statements.store" not in imported
    nested = [n for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for n in ast.walk(f)
              if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not nested


def test_views_live_in_views_py_and_the_store_keeps_its_public_api():
    """The view methods are defined once, in views.StoreViews; FactStore defines the period algebra and inherits the
    views, so `store.restrict(...)`, `store.statement(...)` etc. keep working for every caller."""
    views = {"_view", "restrict", "with_reported_values", "_visible", "statement", "report_statement"}
    assert views <= set(vars(StoreViews)) and not views & set(vars(FactStore))
    assert issubclass(FactStore, StoreViews)
    algebra = {"value", "reported", "kind_of", "share_basis", "split_restatement", "_value_memo"}
    assert algebra <= set(vars(FactStore)) and not algebra & set(vars(StoreViews))
    s = snow()
    stmt = s.statement("SNOW", "FY2023Q2", "income")
    revenue = next(i for i in stmt["items"] if i["concept"] == "revenue")
    assert revenue["value"] == s.value("SNOW", "revenue", "FY2023Q2").value
    assert type(s.restrict({"SNOW": ["FY2023H1"]})) is FactStore


def test_the_period_algebra_reads_a_cell_once_and_keeps_its_errors_as_copies():
    """A balance is one period's end and the next one's beginning: both read the one remembered cell (the same FactRef,
    the same value text); a line the report does not show raises a new, equal error at every read (the remembered one
    never carries a traceback), and a fresh store derives the same."""
    s, fresh = snow(), FactStore(snow().facts)
    end = s.value("SNOW", "total_assets", "FY2023")
    begin = s.value("SNOW", "total_assets", "FY2024", basis="begin")
    assert begin.inputs[0] is end.inputs[0] and begin.value == end.value
    assert begin.steps[0].split(" = ")[1] == end.steps[0].split(" = ")[1]  # the value as the step writes it
    assert fresh.value("SNOW", "total_assets", "FY2024", basis="begin") == begin
    missing = [c for c in taxonomy_concepts() if concept_info(c).statement == "balance" and c not in s.concepts("SNOW")]
    errors = []
    for period, basis in (("FY2023", "end"), ("FY2023", "end"), ("FY2024", "begin")):  # the FY2023 balance sheet each time
        with pytest.raises(Exception) as info:
            s.value("SNOW", missing[0], period, basis=basis)
        errors.append(info.value)
    assert type(errors[0]).__name__ == "NotDerivable" and errors[0].missing == []
    assert errors[0] is not errors[1] and str(errors[0]) == str(errors[1]) == str(errors[2])
    assert all(err.__traceback__ is None for err in s._reported_memo.values() if isinstance(err, Exception))
