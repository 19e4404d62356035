"""Fidelity audit (synth/statements/audit.py, `ledgerlm validate --audit`) on the embedded real filings.

    python -m pytest tests/test_audit.py -q            # fast subset: NVIDIA + the FSDS filers, planted errors, scale slips
    python -m pytest tests/test_audit.py -q -m slow    # every embedded company

A finding is explained only by a row of tests/data/audit_exceptions.csv (a filer inconsistency, with the
filing figures); any other finding fails the suite.
"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from ledgerlm.synth.statements.audit import Audit, balance_sheet_debt_of, load_exceptions, render, split_findings
from ledgerlm.synth.statements.sources import load_facts
from ledgerlm.synth.statements.validate import check_scale

REPO = Path(__file__).resolve().parents[1]
SEC = REPO / "synth" / "data" / "sec"
NVDA = SEC / "companyfacts" / "CIK0001045810_NVDA.json.gz"
EXCEPTIONS = REPO / "tests" / "data" / "audit_exceptions.csv"


@pytest.fixture(scope="module")
def nvda_facts() -> pd.DataFrame:
    return load_facts([str(NVDA)], latest_only=False)


@pytest.fixture(scope="module")
def fast_facts(nvda_facts) -> pd.DataFrame:
    return pd.concat([nvda_facts, load_facts([str(SEC / "fsds")], latest_only=False)], ignore_index=True)


def _unexplained(report: dict) -> list[dict]:
    _explained, new = split_findings(report, load_exceptions(EXCEPTIONS))
    return new


def test_audit_fast_subset_has_no_unexplained_findings(fast_facts):
    report = Audit(fast_facts).run()
    checked = {k[0] for k in report["counts"]}
    assert {"eps_reported", "eps_computed", "quarter_3m", "ttm_4q", "debt", "balance"} <= checked
    new = _unexplained(report)
    assert not new, render(report, load_exceptions(EXCEPTIONS), limit=40)


@pytest.mark.slow
def test_audit_every_embedded_company_has_no_unexplained_findings():
    facts = load_facts(None, latest_only=False)
    report = Audit(facts).run()
    print(render(report, load_exceptions(EXCEPTIONS), limit=100))
    assert not _unexplained(report)


def test_validate_reports_nvidia_weighted_shares_in_thousands(nvda_facts):
    """NVIDIA tagged FY2008-09 weighted shares in thousands: -54.81 computed vs -0.05 reported (issue #11 class 6, #16)."""
    slips = check_scale(nvda_facts)
    fy2009 = [s for s in slips if s["window"] == "2008-01-28..2009-01-25" and s["concept"] == "shares_diluted"]
    assert fy2009, slips[:3]
    assert "-54.81" in fy2009[0]["problem"] and "-0.05" in fy2009[0]["problem"]
    assert all("2008" <= s["window"][-10:] <= "2011-12-31" for s in slips)  # only the filings of that era


def test_balance_sheet_debt_reads_the_filers_lines():
    # NVIDIA FY2017 balance sheet: convertible short-term debt 796 M + long-term debt 1,983 M (10-K, 2017-03-01)
    lines = {"us-gaap:ConvertibleDebtCurrent": 796e6, "us-gaap:LongTermDebt": 1983e6, "us-gaap:Assets": 9841e6}
    assert balance_sheet_debt_of(lines) == pytest.approx(2779e6)
    # Apple FY2019: commercial paper 5,980 + term debt current 10,260 + non-current 91,807 (10-K, 2019-10-31)
    lines = {"us-gaap:CommercialPaper": 5980e6, "us-gaap:LongTermDebtCurrent": 10260e6, "us-gaap:LongTermDebtNoncurrent": 91807e6}
    assert balance_sheet_debt_of(lines) == pytest.approx(108047e6)
    # a current total replaces its parts; a balance sheet without debt lines has no reference
    assert balance_sheet_debt_of({"us-gaap:DebtCurrent": 999e6, "us-gaap:LongTermDebtNoncurrent": 5964e6}) == pytest.approx(6963e6)
    assert balance_sheet_debt_of({"us-gaap:Assets": 1.0}) is None


def _planted(facts: pd.DataFrame, mask, **changes) -> pd.DataFrame:
    out = facts.copy()
    for col, fn in changes.items():
        out.loc[mask(out), col] = out.loc[mask(out), col].map(fn) if callable(fn) else fn
    return out


def test_audit_catches_planted_errors(nvda_facts, monkeypatch):
    """Each check must be able to fail: plant one wrong figure per check and expect a finding naming it."""
    f = nvda_facts
    # 1. weighted diluted shares of FY2020 +10 % in every filing: computed EPS no longer matches the filed 6.63
    bad = _planted(f, lambda d: (d["concept"] == "shares_diluted") & (d["end"].astype(str) == "2020-01-26")
                   & (d["start"].astype(str) == "2019-01-28"), value=lambda v: v * 1.1)
    found = Audit(bad).run(["NVDA"], checks=("eps_computed",))["findings"]
    assert any(x["period"] == "FY2020" and x["concept"] == "eps_diluted" for x in found), found[:3]
    # 2. H1 FY2024 revenue +1 % everywhere: the YTD derivation of Q2 disagrees with the filed 3-month 13,507 M. The
    # store answers the filed quarter (a synth store refuses it): tallied apart, no finding
    bad = _planted(f, lambda d: (d["concept"] == "revenue") & (d["end"].astype(str) == "2023-07-30")
                   & (d["start"].astype(str) == "2023-01-30"), value=lambda v: v * 1.01)
    result = Audit(bad).run(["NVDA"], checks=("quarter_3m",))
    assert not any(x["period"] == "FY2024Q2" for x in result["findings"]), result["findings"][:3]
    assert result["counts"][("quarter_3m", "ok (filer's YTD contradict its quarter)")] >= 1
    # a store that answers the derivation regardless (the rule off, as before the seed-9191 audit): a finding
    import ledgerlm.synth.statements.store as store_module

    monkeypatch.setattr(store_module, "_flow_slack", lambda *values: float("inf"))
    found = Audit(bad).run(["NVDA"], checks=("quarter_3m",))["findings"]
    assert any(x["period"] == "FY2024Q2" and x["concept"] == "revenue" for x in found), found[:3]
    monkeypatch.undo()
    # 2b. FY2015 revenue +50 M in every filing: TTM FY2016Q2 (H1 FY2016 + FY2015 - H1 FY2015) misses the four filed quarters
    bad = _planted(f, lambda d: (d["concept"] == "revenue") & (d["end"].astype(str) == "2015-01-25")
                   & (d["start"].astype(str) == "2014-01-27"), value=lambda v: v + 50_000_000)
    found = Audit(bad).run(["NVDA"], checks=("ttm_4q",))["findings"]
    assert any(x["period"] == "FY2016Q2TTM" and x["concept"] == "revenue" for x in found), found[:3]
    # 3. the long-term debt lines mapped to a non-debt concept: financial debt drops them, the balance sheet still shows them
    bad = _planted(f, lambda d: d["tag"].isin(["us-gaap:LongTermDebtNoncurrent", "us-gaap:LongTermDebt"]) & (d["end"].astype(str) == "2024-01-28"),
                   concept="other_noncurrent_liabilities")
    found = Audit(bad).run(["NVDA"], checks=("debt",))["findings"]
    assert any(x["period"] == "FY2024" and x["concept"] == "financial_debt" for x in found), found[:3]


def test_exceptions_file_rows_have_reasons_and_figures():
    with open(EXCEPTIONS, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == ["check", "company", "period", "concept", "reported", "computed", "reason"]
        for row in reader:
            assert row["reason"].strip() and row["reported"].strip(), row


def test_validate_audit_bad_data_is_one_line_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ledgerlm.cli", "validate", "--audit", "--company", "SNOW", "--source",
                           str(SEC / "companyfacts" / "CIK0001640147_SNOW.json.gz"), "--data", str(tmp_path / "nope")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "nope" in proc.stderr and "Traceback" not in proc.stderr


def test_dataset_sanity_lists_zero_rounded_cells_and_huge_yoy(tmp_path):
    from ledgerlm.synth.statements.audit import dataset_sanity

    rows = [
        {"id": "a", "paradigm": "table", "indices": ["fcff", "revenue_yoy"], "target_periods": ["FY2024Q3"], "unit": "billions",
         "decimals": 1, "answer": [[0.0], [6.1]], "value_unrounded": [[-29054700.0], [6.1]]},
        {"id": "b", "paradigm": "single", "indices": ["revenue_yoy"], "target_periods": ["FY2024"], "unit": "percent",
         "decimals": 1, "answer": 125.9, "value_unrounded": 1.2585},
    ]
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    found = dataset_sanity(tmp_path)
    assert [f["id"] for f in found] == ["a", "a"]
    assert "answer 0" in found[0]["what"] and "610%" in found[1]["what"]
