"""Independent recomputation (tests/independent/) of synthesized items from the raw companyfacts JSON.

    python -m pytest tests/test_audit_independent.py -q            # recomputer self-checks + a 100-item synth sample
    python -m pytest tests/test_audit_independent.py -q -m slow    # the default 2,000-sample run, every item

Hand figures below are from the filings themselves (NVIDIA 10-K FY2024: revenue 60,922 M vs 26,974 M; 10-Q
FY2025Q1: diluted EPS 5.98 vs 0.82, restated 0.60 after the 10-for-1 split; 10-K FY2017: convertible short-term debt 796 M + long-term debt 1,983 M).
"""
from __future__ import annotations

import ast
import datetime as dt
import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "independent"
sys.path.insert(0, str(HERE))

import recompute  # noqa: E402
from engine import Engine, evaluate  # noqa: E402
from rawfacts import Company  # noqa: E402


@pytest.fixture(scope="module")
def nvda() -> Company:
    return Company("NVDA")


def test_recomputation_shares_no_code_with_the_store():
    for path in HERE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.startswith(("ledgerlm", "synth", "evaluate", "train")) for n in names), (path.name, names)


def test_calendar_and_split_history(nvda):
    assert nvda.fy_end(2025) == dt.date(2025, 1, 26) and nvda.fy_end(2017) == dt.date(2017, 1, 29)
    assert [k for _, k in nvda.split_events] == [4, 10]  # 4-for-1 (2021), 10-for-1 (2024)
    assert [k for _, k in Company("AAPL").split_events] == [7, 4]


def test_eps_on_one_basis(nvda):
    latest = Engine(nvda)
    as_filed = Engine(nvda, pick="as_filed")
    assert evaluate("eps_diluted", as_filed, "FY2025Q1") == pytest.approx(5.98)
    assert evaluate("eps_diluted", latest, "FY2025Q1") == pytest.approx(0.60)  # restated in the FY2026Q1 10-Q
    # YoY on one basis: as filed 5.98 / 0.82 - 1; on the restated basis 0.60 / 0.082 - 1 (the restated cents round apart)
    assert evaluate("eps_diluted_yoy", as_filed, "FY2025Q1") == pytest.approx(5.98 / 0.82 - 1)
    assert evaluate("eps_diluted_yoy", latest, "FY2025Q1") == pytest.approx(0.60 / 0.082 - 1)


def test_shares_in_thousands_are_rescaled(nvda):
    """NVIDIA FY2009 weighted shares were tagged in thousands: net income / shares must give the filed -0.05."""
    eng = Engine(nvda, pick="as_filed")
    assert evaluate("eps_diluted_computed", eng, "FY2009") == pytest.approx(-0.0548, abs=1e-3)
    assert any("thousands" in u.get("note", "") for u in eng.used)


def _item(index, period, answer, unit="percent", decimals=1, company="NVDA", shown=("FY2016", "FY2017", "FY2023", "FY2024")):
    return {"id": "t", "company": company, "paradigm": "single", "indices": [index], "target_periods": [period],
            "unit": unit, "decimals": decimals, "answer": answer, "traps": [], "context_periods": list(shown)}


def test_recompute_passes_right_answers_and_flags_planted_wrong_ones(nvda):
    companies = {"NVDA": nvda}
    right = [_item("revenue_yoy", "FY2024", 125.9), _item("eps_diluted_yoy", "FY2025Q1", 629.3),
             _item("financial_debt", "FY2017", 2779.0, unit="millions", decimals=0)]
    for item in right:
        assert recompute.check_item(item, companies)["status"] == "pass", item
    wrong = [_item("revenue_yoy", "FY2024", 126.9), _item("eps_diluted_yoy", "FY2025Q1", -26.8),
             _item("financial_debt", "FY2017", 796.0, unit="millions", decimals=0)]
    for item in wrong:
        assert recompute.check_item(item, companies)["status"] == "mismatch", item
    unknown = _item("no_such_index", "FY2024", 1.0)
    assert recompute.check_item(unknown, companies)["status"] == "not_covered"
    # the right number is not enough: the prompt must show the reports it needs (FY2023 for the prior year)
    assert recompute.check_item(_item("revenue_yoy", "FY2024", 125.9, shown=("FY2024",)), companies)["status"] == "mismatch"
    # a deficiency item is right only when a needed report is missing from the prompt
    assert recompute.check_item(_item("revenue_yoy", "FY2024", recompute.INSUFFICIENT, shown=("FY2024",)), companies)["status"] == "pass"
    assert recompute.check_item(_item("revenue_yoy", "FY2024", recompute.INSUFFICIENT), companies)["status"] == "mismatch"


def _synth(out: Path, num: int) -> Path:
    from ledgerlm.synth.finindices import cli

    assert cli.main(["--out", str(out), "--num", str(num), "--no-progress"]) == 0
    return out


def _check(data: Path) -> dict:
    summary = recompute.run(recompute.load_items(data))
    print(recompute.render(summary, examples=5))
    return summary


def _perturbed(item: dict) -> dict:
    """The same item with its first numeric answer cell moved by 2 % (at least 3 units of the last decimal)."""
    out = json.loads(json.dumps(item))
    step = 3 * 10 ** -int(item["decimals"])
    if out["paradigm"] == "single":
        out["answer"] = round(out["answer"] + max(abs(out["answer"]) * 0.02, step), int(item["decimals"]))
    else:
        row = out["answer"][0]
        row[0] = round(row[0] + max(abs(row[0]) * 0.02, step), int(item["decimals"]))
    return out


def test_fast_sample_of_a_synth_run_has_no_mismatch(tmp_path):
    data = _synth(tmp_path / "d", 100)
    summary = _check(data)
    assert summary["status"]["pass"] > 0
    assert summary["status"]["mismatch"] == 0, recompute.render(summary, examples=3)
    # the check can fail: every passing item, with one answer cell moved by 2 %, must become a mismatch
    items = recompute.load_items(data)
    companies = {t: Company(t) for t in {i["company"] for i in items} if t in recompute.companyfacts_tickers() | recompute.fsds_tickers()}
    passing = [i for i in items if i["company"] in companies and i["answer"] != "Insufficient information"
               and recompute.check_item(i, companies)["status"] == "pass"]  # deficiency items have no number to move
    assert passing
    assert all(recompute.check_item(_perturbed(i), companies)["status"] == "mismatch" for i in passing)


@pytest.mark.slow
def test_default_run_has_no_mismatch(tmp_path):
    summary = _check(_synth(tmp_path / "d", 2000))
    assert summary["status"]["mismatch"] == 0
