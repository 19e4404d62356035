"""Issue #11: a synth row's prompt shows exactly the figures its answer is computed from, on one split basis.

    nice -n 10 python -m pytest -q tests/test_fidelity_prompt_basis.py

Expected figures are read from the filers' own companyfacts JSON (synth/data/sec/companyfacts), not from the
store under test. Classes covered: (1) the synth stores (the on-disk store cache included) never take a
per-share value or share count from a 3-month column the prompt does not show (it carries the YTD report's
name, so the row's provenance said "eps_diluted FY2020 = 0.73" beside a prompt showing 3.28); (2) a figure rescaled for a stock split is printed exactly (6 decimals) in every format;
(3) a prompt whose per-share amounts / share counts are restated for a split says so in one sentence, and
its worked solution repeats it.
"""
from __future__ import annotations

import gzip
import json
import re
from functools import lru_cache
from pathlib import Path

import pytest

from ledgerlm.synth.statements.sources import load_facts
from ledgerlm.synth.statements.store import FactStore

RAW = Path(__file__).resolve().parents[1] / "synth" / "data" / "sec" / "companyfacts"
PER_SHARE = ("eps_basic", "eps_diluted", "shares_basic", "shares_diluted")


def filed(ticker: str, tag: str, start: str, end: str, unit: str = "USD/shares") -> set[float]:
    """Every value the filer reported for `tag` over the window [start, end] (all filings)."""
    path = next(RAW.glob(f"*_{ticker}.json.gz"))
    facts = json.loads(gzip.decompress(path.read_bytes()))["facts"]["us-gaap"][tag]["units"][unit]
    return {float(f["val"]) for f in facts if f.get("start") == start and f["end"] == end}


@lru_cache(maxsize=None)
def plain_store(ticker: str, quarter_columns: bool) -> FactStore:
    facts = load_facts()
    return FactStore(facts[facts["company"] == ticker].reset_index(drop=True), quarter_columns=quarter_columns)


@pytest.fixture(scope="module")
def cached_stores(tmp_path_factory):
    """The stores a `ledgerlm synth` run and `ledgerlm fidelity` use: the on-disk store cache (built fresh)."""
    from ledgerlm.synth.finindices import storecache

    mp = pytest.MonkeyPatch()
    mp.setenv("LEDGERLM_CACHE_DIR", str(tmp_path_factory.mktemp("stores")))
    try:
        sources = [str(next(RAW.glob(f"*_{t}.json.gz"))) for t in ("AAPL", "SNOW")]
        stores = storecache.company_stores(sources)
        yield {c: stores[c] for c in stores}
    finally:
        mp.undo()


def test_filing_figures():
    assert filed("AAPL", "EarningsPerShareDiluted", "2019-09-29", "2020-09-26") == {3.28}  # FY2020
    assert filed("AAPL", "EarningsPerShareDiluted", "2020-06-28", "2020-09-26") == {0.73}  # Q4 FY2020, 3 months
    assert filed("SNOW", "EarningsPerShareBasic", "2022-02-01", "2022-07-31") == {-1.23}  # FY2023 H1
    assert filed("SNOW", "EarningsPerShareBasic", "2022-05-01", "2022-07-31") == {-0.7}  # Q2 FY2023, 3 months


@pytest.mark.parametrize("ticker,concept,quarter,report,ytd_filed", [
    ("AAPL", "eps_diluted", "FY2020Q4", "FY2020", 3.28),
    ("SNOW", "eps_basic", "FY2023Q2", "FY2023H1", -1.23),
])
def test_cached_synth_stores_take_the_period_s_own_duration(cached_stores, ticker, concept, quarter, report, ytd_filed):
    """Old behaviour: the store cache built FactStore(quarter_columns=True), so a quarter's EPS came from the 3-month
    column labelled with the YTD report's name (provenance eps_diluted FY2020 = 0.73, the prompt's FY2020 shows 3.28)."""
    store = cached_stores[ticker]
    assert store.quarter_columns is False
    assert store.reported(ticker, concept, report).value == ytd_filed  # the YTD / FY figure the report shows
    d = store.value(ticker, concept, quarter)
    assert "not additive" in d.steps[-1]  # net income / time-weighted shares, from the YTD reports, unrounded
    for f in d.inputs:  # every input is what its report shows, on its report's own duration
        assert f.value == store.reported(ticker, f.concept, f.report).value, f
    assert not any(f.concept == concept for f in d.inputs)  # never the 3-month EPS itself


def test_rescaled_per_share_figures_are_printed_exactly_in_every_format():
    """AAPL FY2013 H1 basic EPS, filed before the 7-for-1 (2014) and 4-for-1 (2020) splits, is rescaled by 28 and
    kept at 6 decimals: every statement format prints exactly the value the store computes with."""
    from ledgerlm.synth.statements.render import FORMATS, parse_rendered, render_statement

    (raw,) = filed("AAPL", "EarningsPerShareBasic", "2012-09-30", "2013-03-30")
    store = plain_store("AAPL", False)
    value = store.reported("AAPL", "eps_basic", "FY2013H1").value
    assert value == round(raw / 28, 6) and "/ 28 =" in store.reported("AAPL", "eps_basic", "FY2013H1").note
    stmt = store.report_statement("AAPL", "FY2013H1", "income")
    for fmt in FORMATS:
        parsed = parse_rendered(render_statement(stmt, fmt), fmt)
        shown = {it["concept"]: it["value"] for it in parsed["items"] if it.get("concept")}
        assert float(shown["eps_basic"]) == value, fmt


def test_split_restatement_sentence():
    from ledgerlm.synth.finindices.instructions import split_note

    nvda = plain_store("NVDA", False)
    # NVIDIA FY2024 10-K (filed 2024-02-21) reported diluted EPS 11.93; the 10-for-1 split came in June 2024
    assert 11.93 in filed("NVDA", "EarningsPerShareDiluted", "2023-01-30", "2024-01-28")
    assert nvda.reported("NVDA", "eps_diluted", "FY2024").value == pytest.approx(1.193)
    restated = nvda.split_restatement("NVDA", ["FY2024"], statements=["income"])
    assert split_note("en", restated) == ("Per-share amounts and share counts are restated for the 10-for-1 stock split "
                                          "(basis of the filing of 2024-08-28).")
    # "10拆1" can read as a 10-into-1 reverse split (seed-27182 analyst audit): "1拆10", each share split into 10
    assert "1拆10股票拆分（每1股拆为10股）" in split_note("zh", restated) and "10拆1" not in split_note("zh", restated)
    assert nvda.split_restatement("NVDA", ["FY2025"], statements=["income"]) is None  # filed on the latest basis
    assert nvda.split_restatement("NVDA", ["FY2024"], statements=["cashflow"]) is None  # shows no per-share line
    aapl = plain_store("AAPL", False)
    assert split_note("en", aapl.split_restatement("AAPL", ["FY2013H1"])) == (
        "Per-share amounts and share counts are restated for the 7-for-1 and 4-for-1 stock splits "
        "(basis of the filing of 2020-10-30).")
    assert split_note("en", plain_store("SNOW", False).split_restatement("SNOW", ["FY2023H1"])) == ""


@pytest.fixture(scope="module")
def built():
    from ledgerlm.synth.finindices.config import SynthConfig
    from ledgerlm.synth.finindices.contexts import Builder
    from ledgerlm.synth.finindices.pipeline import Stats

    builder = Builder.from_config(SynthConfig(seed=0))
    rows = [r for slot in (2, 79, 143, 301) for r in builder.slot(slot, Stats())]  # slots with share-based indices (the split sentence)
    return builder, rows


def test_built_rows_state_the_basis_and_pass_fidelity(built):
    from ledgerlm.synth.finindices import fidelity

    builder, rows = built
    report = fidelity.check_rows(rows, builder.store_for, builder.registry)
    assert report.problems == []
    said = 0
    for row in rows:
        store = builder.store_for(row["company"])
        restated = any(store.split_restatement(row["company"], [p], statements=["income", "balance", "cashflow", "equity"])
                       for p in row["context_periods"])
        user = next(m["content"] for m in row["messages"] if m["role"] == "user")
        sentence = re.search(r"Per-share amounts and share counts are restated for [^\n]*\.|每股金额和股数已按[^\n]*。", user)
        if sentence is None:
            continue
        said += 1
        assert restated and user.count(sentence.group(0)) == 1
        assert sentence.group(0) in row["solution"]
    assert said >= 2


def test_time_weighted_share_days_are_counted_from_the_dates_the_prompt_shows():
    """Quarter and TTM weighted-average shares are time-weighted by calendar days (VZ FY2009Q2 TTM diluted shares:
    2,841 M x 181 days + 2,850 M x 366 days - 2,858 M x 182 days over 365 days), and 134 rows of a `--num 10000` run
    used days the prompt never showed (headers named only the period). Every statement header now dates its window;
    each day count of a row's share-days step must be the length of a window its prompt shows for that company."""
    from datetime import date

    from ledgerlm.synth.finindices.config import SynthConfig
    from ledgerlm.synth.finindices.contexts import Builder
    from ledgerlm.synth.finindices.pipeline import Stats

    builder = Builder.from_config(SynthConfig(seed=0, indices=["eps_ttm_computed", "revenue_per_share", "eps_basic_yoy"],
                                              paradigms={"single": 1.0}, traps=False))
    header = re.compile(r"(FY\d{4}\S*) \((\d{4}-\d\d-\d\d) (?:to|至) (\d{4}-\d\d-\d\d)\)")
    json_window = re.compile(r'"start": "(\d{4}-\d\d-\d\d)",\s*"end": "(\d{4}-\d\d-\d\d)"')
    checked, languages = 0, set()
    for slot in range(400):
        for row in builder.slot(slot, Stats()):
            steps = [s for s in row["solution"].splitlines() if re.search(r"(?: x | × )\d+ (?:days|天)", s)]  # en and zh
            if not steps:
                continue
            user = next(m["content"] for m in row["messages"] if m["role"] == "user")
            windows = [(a, b) for _, a, b in header.findall(user)] + json_window.findall(user)  # JSON: the dict's dates
            shown = {(date.fromisoformat(b) - date.fromisoformat(a)).days + 1 for a, b in windows}
            for step in steps:
                days = [int(d) for d in re.findall(r"(?: x | × )(\d+) (?:days|天)", step)]
                total = int(re.search(r"\) / (\d+) (?:days|天)", step).group(1))
                assert days and set(days) <= shown, (row["id"], step, sorted(shown))
                signs = [1] + [1 if op == "+" else -1 for op in re.findall(r"(?:days|天) ([+-]) ", step)]
                assert sum(s * d for s, d in zip(signs, days)) == total, (row["id"], step)
                checked += 1
                languages.add(row["language"])
        if checked >= 6 and len(languages) == 2:
            break
    assert checked >= 6 and languages == {"en", "zh"}, (checked, languages)


def test_quarter_eps_answers_follow_from_the_prompt_alone():
    """A derived quarter EPS was rounded to the cent its own filing reports, which the prompt (year-to-date reports
    only) does not show, on the original filing's split basis (NVDA FY2023Q2 basic EPS 0.026 = filed 0.26 / 10; YoY
    -72.63 % rounded, -72.36 % unrounded: seed-4242 helper audit). Synth rows now use the unrounded division the
    prompt gives, their conventions say so, and no worked solution rounds a quarter EPS to a filed cent."""
    from ledgerlm.synth.finindices.config import SynthConfig
    from ledgerlm.synth.finindices.contexts import Builder
    from ledgerlm.synth.finindices.pipeline import Stats
    from ledgerlm.synth.statements.store import FILED_EPS_NOTE

    builder = Builder.from_config(SynthConfig(seed=1, indices=["eps_basic_yoy", "eps_diluted_yoy", "eps_basic_computed"],
                                              companies=["NVDA", "SNOW", "AAPL"], paradigms={"single": 1.0}, traps=False))
    assert round(builder.value("NVDA", "eps_basic_yoy", "FY2023Q2").value * 100, 2) == -72.36
    quarters = 0
    for slot in range(600):
        for row in builder.slot(slot, Stats()):
            assert FILED_EPS_NOTE not in row["solution"], row["id"]
            user = next(m["content"] for m in row["messages"] if m["role"] == "user")
            if row["indices"] == ["eps_basic_computed"]:  # net income to common / shares in every period (seed-777 audit)
                assert "in every period, Q1 included" in user or "各期（含第一季度）" in user, row["id"]
            else:
                assert "quarter's EPS is its net income / those shares, unrounded" in user or "不做四舍五入" in user, row["id"]
            quarters += "EPS is not additive" in row["solution"]
    assert quarters >= 5


def test_json_blocks_show_the_labels_the_other_formats_show():
    """Seed-2718 helper audit: JSON statements carried the filers' raw labels: Bank of America's weighted shares
    "(in thousands)" beside full counts, one "Net income/(loss)" for four Ford lines (net income, the parent's share,
    basic and diluted EPS), Con Edison's period-end cash as "BALANCE AT BEGINNING OF PERIOD". A JSON block's labels are
    the English table formats' row labels; its figures are unchanged."""
    import json

    from ledgerlm.synth.statements.render import parse_rendered, render_statement

    store = FactStore.from_sources()
    for company, report, statement in (("BAC", "FY2007", "income"), ("F", "FY2007", "income"), ("ED", "FY2007", "balance")):
        stmt = store.report_statement(company, report, statement)
        doc = json.loads(render_statement(stmt, "json"))
        labels = [item["label"] for item in doc["items"]]
        text_rows = parse_rendered(render_statement(stmt, "text"), "text")["items"]
        assert [i["value"] for i in doc["items"]] == [i["value"] for i in stmt["items"]]
        assert len(set(labels)) == len(labels), (company, labels)  # one label, one line
        assert not any("(in thousands)" in x or x.upper() == "BALANCE AT BEGINNING OF PERIOD" for x in labels), labels
        assert {i["concept"] for i in text_rows} <= {i["concept"] for i in doc["items"]}
    raw = [i["label"] for i in store.report_statement("F", "FY2007", "income")["items"]]
    assert raw.count("Net income/(loss)") == 4  # the filer's own labels, as the store keeps them
