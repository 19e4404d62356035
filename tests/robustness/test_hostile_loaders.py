"""Bad data in every loader (#14.6, #14.7): one-line errors naming file, company, period and field.

    python -m pytest tests/robustness/test_hostile_loaders.py -q

Replays the issue's cases on small hand-written files: NaN / Inf / 1e999 / 4000- and 5000-digit
values, `true` as a value, negative shares, a period that starts after it ends, unknown units,
companyfacts with cik as string/null/list, a taxonomy as a list, units as an integer, deep nesting;
canonical CSV with the same bad values; HTML tables with rowspan/colspan (real table semantics) and
a colspan of 5,000,000; a statement mixing EUR revenue with USD costs (a `validate` finding).
Then a hypothesis fuzz mutates a valid companyfacts document: a frame or one InputError, nothing else.
"""
from __future__ import annotations

import copy
import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledgerlm.errors import InputError
from ledgerlm.synth.statements import canonical_io, tables
from ledgerlm.synth.statements.companyfacts import load_companyfacts, parse_companyfacts
from ledgerlm.synth.statements.facts import FACT_COLUMNS
from ledgerlm.synth.statements.sanity import currency_mixups


def fact(val, start="2023-01-01", end="2023-12-31", **extra):
    return {"start": start, "end": end, "val": val, "accn": "0000000001-24-000001", "fy": 2023, "fp": "FY",
            "form": "10-K", "filed": "2024-02-01", **extra}


def doc(revenue=None, shares=None, cik=1, unit="USD"):
    return {"cik": cik, "entityName": "Acme Corp", "facts": {"us-gaap": {
        "Revenues": {"label": "Revenues", "units": {unit: [revenue or fact(1000.0)]}},
        "WeightedAverageNumberOfDilutedSharesOutstanding": {"label": "Shares", "units": {"shares": [shares or fact(50.0)]}}}}}


def load_text(tmp_path, text: str):
    path = tmp_path / "CIK0000000001_ACME.json"
    path.write_text(text, encoding="utf-8")
    return load_companyfacts(path), path


def error_of(tmp_path, text: str) -> InputError:
    with pytest.raises(InputError) as err:
        load_text(tmp_path, text)
    message = str(err.value)
    assert "\n" not in message and str(tmp_path / "CIK0000000001_ACME.json") in message, message
    return err.value


def test_a_valid_document_loads(tmp_path):
    df, _ = load_text(tmp_path, json.dumps(doc()))
    assert sorted(df["concept"]) == ["revenue", "shares_diluted"] and set(df["company"]) == {"ACME"}


VALUE_CASES = {  # name: (json text, words the message must hold)
    "NaN": ('NaN', ["nan", "ACME", "2023-01-01..2023-12-31", "revenue"]),
    "Infinity": ('Infinity', ["inf", "ACME", "revenue"]),
    "1e999": ('1e999', ["inf", "ACME", "revenue"]),
    "4000 digits": ("9" * 4000, ["4000-digit", "Revenues"]),
    "5000 digits": ("9" * 5000, ["invalid JSON", "digits"]),
    "true": ("true", ["JSON number", "Revenues", "bool"]),
    "a string": ('"12"', ["JSON number", "Revenues"]),
}


@pytest.mark.parametrize("name", list(VALUE_CASES))
def test_bad_values_in_companyfacts(tmp_path, name):
    literal, words = VALUE_CASES[name]
    text = json.dumps(doc(revenue=fact(123.0))).replace("123.0", literal)
    message = str(error_of(tmp_path, text))
    for word in words:
        assert word.lower() in message.lower(), (word, message)


def test_negative_shares_start_after_end_unknown_unit(tmp_path):
    m = str(error_of(tmp_path, json.dumps(doc(shares=fact(-5.0)))))
    assert "negative share count" in m and "ACME" in m and "shares_diluted" in m and "2023-01-01..2023-12-31" in m
    m = str(error_of(tmp_path, json.dumps(doc(revenue=fact(1.0, start="2024-01-01", end="2023-12-31")))))
    assert "starts 2024-01-01 after it ends 2023-12-31" in m and "revenue" in m and "ACME" in m
    m = str(error_of(tmp_path, json.dumps(doc(unit="XYZ"))))
    assert "unknown unit 'XYZ'" in m and "revenue" in m
    m = str(error_of(tmp_path, json.dumps(doc(revenue=fact(1.0, end="2023-02-30")))))
    assert "not calendar dates" in m


SHAPE_CASES = {
    "cik a string": lambda d: {**d, "cik": "abc"},
    "cik null": lambda d: {**d, "cik": None},
    "cik a list": lambda d: {**d, "cik": [1]},
    "cik true": lambda d: {**d, "cik": True},
    "taxonomy a list": lambda d: {**d, "facts": {"us-gaap": [1, 2]}},
    "units an integer": lambda d: {**d, "facts": {"us-gaap": {"Revenues": {"units": 5}}}},
    "facts of a unit an integer": lambda d: {**d, "facts": {"us-gaap": {"Revenues": {"units": {"USD": 5}}}}},
    "a fact a string": lambda d: {**d, "facts": {"us-gaap": {"Revenues": {"units": {"USD": ["x"]}}}}},
    "end a number": lambda d: {**d, "facts": {"us-gaap": {"Revenues": {"units": {"USD": [fact(1.0, end=20231231)]}}}}},
    "fy text": lambda d: {**d, "facts": {"us-gaap": {"Revenues": {"units": {"USD": [fact(1.0, fy="2023")]}}}}},
    "not an object": lambda d: [d],
}


@pytest.mark.parametrize("name", list(SHAPE_CASES))
def test_malformed_companyfacts_shapes(tmp_path, name):
    error_of(tmp_path, json.dumps(SHAPE_CASES[name](doc())))


def test_deep_nesting(tmp_path):
    m = str(error_of(tmp_path, '{"cik": 1, "facts": ' + "[" * 100_000 + "]" * 100_000 + "}"))
    assert "nested too deeply" in m


def _csv(tmp_path, **changes) -> str:
    row = {"company": "ACME", "company_name": "Acme", "scope": "consolidated", "statement": "income", "concept": "revenue",
           "label": "Revenue", "value": "100", "unit": "USD", "start": "2023-01-01", "end": "2023-12-31", "fiscal_year": "2023",
           "fiscal_period": "FY", "form": "10-K", "filed": "2024-02-01", "source": "x", "tag": "us-gaap:Revenues", **changes}
    path = tmp_path / "facts.csv"
    pd.DataFrame([row])[FACT_COLUMNS].to_csv(path, index=False)
    with pytest.raises(InputError) as err:
        canonical_io.read_canonical(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    return str(err.value)


def test_canonical_csv_values(tmp_path):
    for value in ("inf", "-inf", "1e999", "nan", "true"):
        assert "value" in _csv(tmp_path, value=value)
    assert "negative share count" in _csv(tmp_path, concept="shares_diluted", unit="shares", value="-3", start="")
    assert "after it ends" in _csv(tmp_path, start="2024-06-01")
    assert "unknown unit 'EURO'" in _csv(tmp_path, unit="EURO")


HTML = """<table><caption>Income statement (ACME), in millions</caption>
<thead><tr><th rowspan=2>Item</th><th colspan=2>Year ended</th></tr>
<tr><th>December 31, 2023</th><th>December 31, 2022</th></tr></thead>
<tbody><tr><td>Revenue</td><td>100</td><td>90</td></tr>
<tr><td>Cost of revenue</td><td rowspan=2>50</td><td>40</td></tr>
<tr><td>Gross profit</td><td>45</td></tr></tbody></table>"""


def test_html_rowspan_and_colspan_follow_the_table_model():
    df = tables.load_tables_text(HTML, "t.html")
    got = {(r.concept, r.end): r.value for r in df.itertuples()}
    assert got == {("revenue", "2023-12-31"): 100e6, ("revenue", "2022-12-31"): 90e6, ("cost_of_revenue", "2023-12-31"): 50e6,
                   ("cost_of_revenue", "2022-12-31"): 40e6, ("gross_profit", "2022-12-31"): 45e6}  # 45 is 2022: 50 spans its 2023 cell


def test_html_pandas_agrees_on_the_grid():
    """pandas.read_html (the reference table model) puts every value in the same column."""
    from io import StringIO

    grid = pd.read_html(StringIO(HTML))[0]
    assert list(grid.iloc[2].astype(str)) == ["Gross profit", "50", "45"]  # pandas repeats the spanned 50; we leave it empty


@pytest.mark.parametrize("attr", ['colspan="5000000"', 'rowspan="999999999"', 'colspan="99999999999999999999"'])
def test_html_huge_spans_are_one_line_errors(attr):
    with pytest.raises(InputError) as err:
        tables.load_tables_text(HTML.replace("<td>45</td>", f"<td {attr}>45</td>"), "t.html")
    assert "t.html" in str(err.value) and "exceeds the HTML limit" in str(err.value) and "\n" not in str(err.value)


def test_mixed_currency_statement_is_a_validate_finding(tmp_path):
    eur = parse_companyfacts(doc(unit="EUR"), "x.json", ticker="ACME")
    usd = parse_companyfacts({"cik": 1, "facts": {"us-gaap": {"CostOfRevenue": {"units": {"USD": [fact(400.0)]}},
                                                              "NetIncomeLoss": {"units": {"USD": [fact(90.0)]}}}}}, "y.json", ticker="ACME")
    findings = currency_mixups(pd.concat([eur, usd], ignore_index=True))
    assert [f["concept"] for f in findings] == ["revenue"] and "only in EUR" in findings[0]["problem"]
    from ledgerlm.synth.statements.validate import validate_facts

    report = validate_facts(pd.concat([eur, usd], ignore_index=True))
    assert any("mixed currencies" in u["problem"] for u in report["companies"][0]["checks"]["units"])
    assert not report["companies"][0]["ok"]


json_leaf = st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats() | st.text(max_size=12)
json_any = st.recursive(json_leaf, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3), max_leaves=10)
PATHS = [("cik",), ("facts",), ("facts", "us-gaap"), ("facts", "us-gaap", "Revenues"), ("facts", "us-gaap", "Revenues", "units"),
         ("facts", "us-gaap", "Revenues", "units", "USD"), ("facts", "us-gaap", "Revenues", "units", "USD", 0),
         ("facts", "us-gaap", "Revenues", "units", "USD", 0, "val"), ("facts", "us-gaap", "Revenues", "units", "USD", 0, "end"),
         ("facts", "us-gaap", "Revenues", "units", "USD", 0, "start"), ("facts", "us-gaap", "Revenues", "units", "USD", 0, "fy")]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PATHS), json_any)
def test_fuzz_companyfacts_mutations(path, value):
    d = copy.deepcopy(doc())
    target = d
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    try:
        df = parse_companyfacts(json.loads(json.dumps(d)), "fuzz.json", ticker="ACME")
    except InputError as err:
        assert "\n" not in str(err) and "fuzz.json" in str(err)
    else:
        assert df["value"].map(lambda v: abs(v) < 1e21).all()


def test_compute_never_prints_nan(tmp_path, capsys):
    """The issue: a NaN revenue made `compute` print `"answer": NaN` with exit 0. Now the load fails, one line."""
    from ledgerlm.cli import main as ledgerlm_main

    path = tmp_path / "CIK0000000001_ACME.json"
    path.write_text(json.dumps(doc(revenue=fact(123.0))).replace("123.0", "NaN"), encoding="utf-8")
    code = ledgerlm_main(["compute", "--company", "ACME", "--index", "revenue", "--period", "FY2023", "--source", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 1 and "NaN" not in out and out.strip() == ""
    assert len(err.strip().splitlines()) == 1 and str(path) in err and "not a finite number" in err


def test_latex_multicolumn_bomb_is_a_one_line_error():
    tex = ("\\begin{table}\\caption{Income statement (ACME)}\\begin{tabular}{lrr}\nItem & FY2023 & FY2022 \\\\\n"
           "Revenue & \\multicolumn{5000000}{c}{100} \\\\\n\\end{tabular}\\end{table}")
    with pytest.raises(InputError) as err:
        tables.load_tables_text(tex, "t.tex", fmt="latex")
    assert "t.tex" in str(err.value) and err.value.field == "multicolumn" and "\n" not in str(err.value)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(PATHS), json_any)
def test_fuzz_companyfacts_many(path, value):
    """The fuzz above with 2000 examples (`pytest -m slow`)."""
    test_fuzz_companyfacts_mutations.hypothesis.inner_test(path, value)
