"""EPSBench look-ahead leak (#14.4) and `epsbench calc` on hostile schemas (#14.7).

    python -m pytest tests/robustness/test_hostile_epsbench.py -q

The point-in-time gate must hold against every path trick a model can put in a tool argument:
`../` traversal into the target-quarter filing, absolute paths, symlinks planted in a readable
filing (to a blocked filing or to any file on disk), a symlinked filing folder. Each is refused
with an error to the model, logged, and recorded in `requests_blocked`.
"""
from __future__ import annotations

import json
import logging
import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledgerlm.cli import main as ledgerlm_main
from ledgerlm.errors import InputError
from ledgerlm.evaluate.epsbench.calculator import calculate, schema_from_dict
from ledgerlm.evaluate.epsbench.release import load_release
from ledgerlm.evaluate.epsbench.tools import Toolbox

RELEASE = load_release()
GOOGL = RELEASE.instance("GOOGL_2026Q1")  # target 2026Q1, cutoff 2026-04-28
OPEN, TARGET = "GOOGL_10-K_2026-02-05_Q4_2025", "GOOGL_10-Q_2026-04-30_Q1_2026"
SECRET = "TARGET QUARTER revenues 109,896"


@pytest.fixture()
def box(tmp_path):
    reports = tmp_path / "docs" / "filings" / "GOOGL" / "financial_report"
    for folder, text in [(OPEN, "Revenues 113,828."), (TARGET, SECRET)]:
        (reports / folder).mkdir(parents=True)
        (reports / folder / "income.md").write_text(text)
    (tmp_path / "elsewhere.md").write_text("PRIVATE FILE " + SECRET)
    return Toolbox(RELEASE.schema(GOOGL.id), GOOGL, tmp_path / "docs", "full"), reports, tmp_path


def _read(toolbox, filing, section):
    return toolbox.call("read_filing", {"filing": filing, "section": section})


def test_the_readable_filing_still_reads(box):
    toolbox, _, _ = box
    assert _read(toolbox, "2025Q4", "income")["content"] == "Revenues 113,828."


@pytest.mark.parametrize("section", [f"../{TARGET}/income", f"..\\{TARGET}\\income", "../../../../elsewhere", "..", ".",
                                     "a/../../" + TARGET + "/income", f"{TARGET}/income", "income\x00", "~/elsewhere"])
def test_traversal_is_refused_and_logged(box, caplog, section):
    toolbox, _, _ = box
    with caplog.at_level(logging.WARNING, logger="ledgerlm.evaluate.epsbench.tools"):
        result = _read(toolbox, "2025Q4", section)
    assert "error" in result and SECRET not in json.dumps(result), result
    assert toolbox.docs.requests_blocked and "refused tool path" in caplog.text


def test_absolute_paths_are_refused(box):
    toolbox, _, tmp = box
    for section in (str(tmp / "elsewhere"), str(tmp / "docs" / "filings" / "GOOGL" / "financial_report" / TARGET / "income")):
        result = _read(toolbox, "2025Q4", section)
        assert "outside the document store" in result["error"] and SECRET not in json.dumps(result)
    result = _read(toolbox, str(tmp / "docs" / "filings" / "GOOGL" / "financial_report" / TARGET), "income")
    assert "error" in result and SECRET not in json.dumps(result)


def test_symlinked_section_to_a_blocked_filing_or_any_file_is_refused(box):
    toolbox, reports, tmp = box
    os.symlink(reports / TARGET / "income.md", reports / OPEN / "leak.md")
    os.symlink(tmp / "elsewhere.md", reports / OPEN / "disk.md")
    for section in ("leak", "disk"):
        result = _read(toolbox, "2025Q4", section)
        assert "outside the document store" in result["error"] and SECRET not in json.dumps(result), result
    assert len(toolbox.docs.requests_blocked) == 2


def test_symlinked_filing_folder_is_not_a_filing(box):
    toolbox, reports, _ = box
    os.symlink(reports / TARGET, reports / "GOOGL_10-Q_2025-11-01_Q3_2025")  # looks like an early, readable filing
    listed = toolbox.call("list_filings", {})
    assert [f["filing"] for f in listed["filings"]] == [OPEN]
    result = _read(toolbox, "GOOGL_10-Q_2025-11-01_Q3_2025", "income")
    assert "error" in result and SECRET not in json.dumps(result)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(filing=st.one_of(st.just("2025Q4"), st.just(OPEN), st.text(max_size=40)),
       section=st.one_of(st.text(max_size=40), st.lists(st.sampled_from(["..", ".", TARGET, "income", "/", "\\", "~"]), max_size=6).map("/".join)))
def test_fuzz_tool_paths_never_leak(box, filing, section):
    toolbox, _, _ = box
    result = _read(toolbox, filing, section)
    assert SECRET not in json.dumps(result)


# ---------------------------------------------------------------- epsbench calc on hostile schemas
BASE = {"ticker": "ACME", "target_fq": "2026Q1", "variables_baseline": {"rev": 100.0, "cost": 60.0, "shares": 10.0},
        "formulas": {"eps": "(rev - cost) / shares"}, "prediction_schema": {"g": {"type": "yoy", "variable": "rev"}}}
HOSTILE = {
    "not an object": [],
    "baseline a list": {**BASE, "variables_baseline": [1, 2]},
    "formulas a string": {**BASE, "formulas": "eps = 1"},
    "formula a list": {**BASE, "formulas": {"eps": ["rev"]}},
    "driver a string": {**BASE, "prediction_schema": {"g": "yoy"}},
    "driver without variable": {**BASE, "prediction_schema": {"g": {"type": "yoy"}}},
    "bps without anchor": {**BASE, "prediction_schema": {"b": {"type": "bps", "variable": "cost"}}},
    "constituents a string": {**BASE, "prediction_schema": {"g": {"type": "yoy", "constituents": "rev"}}},
    "baseline true": {**BASE, "variables_baseline": {**BASE["variables_baseline"], "rev": True}},
    "baseline 1e999": {**BASE, "variables_baseline": {**BASE["variables_baseline"], "rev": 1e999}},
    "overflow to inf": {**BASE, "variables_baseline": {"rev": 1e308, "cost": -1e308, "shares": 0.1}},
    "nan from inf-inf": {**BASE, "variables_baseline": {"rev": 1e308, "cost": 1e308, "shares": 1.0},
                          "formulas": {"big": "rev * 10", "eps": "big - big"}},
    "deep nesting": {**BASE, "formulas": {"eps": "(" * 3000 + "rev" + ")" * 3000}},
    "static rule a number": {**BASE, "static_rules": {"cost": 5}},
    "division by zero": {**BASE, "variables_baseline": {"rev": 1.0, "cost": 0.0, "shares": 0.0}},
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_calc_cli_one_line_error_never_infinity(tmp_path, capsys, name):
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(HOSTILE[name]), encoding="utf-8")  # json.dumps writes 1e999 as Infinity
    code = ledgerlm_main(["epsbench", "calc", "--schema", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 1 and out == "", (name, out)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ledgerlm epsbench: error: file ") and "Traceback" not in err, err


def test_calc_cli_prints_strict_json(tmp_path, capsys):
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(BASE), encoding="utf-8")
    assert ledgerlm_main(["epsbench", "calc", "--schema", str(path), "--json", "--drivers", '{"g": 0.1}']) == 0
    doc = json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert doc["eps"] == pytest.approx((110 - 60) / 10)


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.sampled_from(["rev", "cost", "shares"]), st.floats(allow_nan=True, allow_infinity=True), min_size=3),
       st.floats(allow_nan=True, allow_infinity=True))
def test_fuzz_calc_values_are_finite_or_one_error(baseline, growth):
    try:
        nodes = calculate(schema_from_dict({**BASE, "variables_baseline": baseline}), {"g": growth})
    except InputError as err:
        assert "\n" not in str(err)
    else:
        assert all(math.isfinite(v) for v in nodes.values())
