"""Hostile inputs of audit s21c (synth side): each one clear error, or the right facts — never a shifted period.

    python -m pytest tests/robustness/test_hostile_synth_s22.py -q

Covers: companyfacts/CSV `fy` beyond Int64 (#3); SEC `$` cells under a header without colspan (#1);
footnote markers on labels (#2); FSDS num.txt with a bad ddate (#4) or a first row with extra fields (#5);
an empty company (#6); compute --decimals/--as-of, synth num_proc 0, fiscal_period Q5 (#7); a folder that is
no tokenizer (#8); half an FSDS folder and sources without an annual report (#9). Fixtures are written here.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from ledgerlm.errors import InputError
from ledgerlm.synth.statements import canonical_io, fsds, sources, tables
from ledgerlm.synth.statements.companyfacts import parse_companyfacts
from ledgerlm.synth.statements.facts import FACT_COLUMNS, conform

from .conftest import one_line


def _error(call, *args, **kwargs) -> InputError:
    with pytest.raises(InputError) as err:
        call(*args, **kwargs)
    one_line(str(err.value))
    return err.value


# ---------------------------------------------------------------- #3 fy beyond Int64
def _companyfacts(fy) -> dict:
    fact = {"start": "2023-01-01", "end": "2023-12-31", "val": 1000.0, "accn": "0000000001-24-000001", "fy": fy,
            "fp": "FY", "form": "10-K", "filed": "2024-02-01"}
    return {"cik": 1, "entityName": "Acme Corp", "facts": {"us-gaap": {"Revenues": {"label": "Revenues", "units": {"USD": [fact]}}}}}


@pytest.mark.parametrize("fy", [2**63, 2**64 + 5, -(2**63) - 1, 0, 123456])
def test_companyfacts_fy_out_of_range_is_one_error(fy):
    err = _error(parse_companyfacts, json.loads(json.dumps(_companyfacts(fy))), "cf.json", ticker="ACME")
    assert "cf.json" in str(err) and "fy" in str(err) and "not a year" in str(err) and "Revenues" in str(err)


def test_companyfacts_plain_fy_still_loads():
    df = parse_companyfacts(_companyfacts(2023), "cf.json", ticker="ACME")
    assert list(df["fiscal_year"]) == [2023]


def test_conform_never_overflows_on_a_huge_year():
    df = conform({"value": [1.0, 2.0, 3.0], "fiscal_year": [2**63, "99999999999999999999", 2023]})
    assert df["fiscal_year"].isna().tolist() == [True, True, False] and str(df["fiscal_year"].dtype) == "Int64"


# ---------------------------------------------------------------- canonical CSV helpers
def _row(**over) -> dict:
    row = {"company": "ACME", "company_name": "Acme Corp", "scope": "consolidated", "statement": "income", "concept": "revenue",
           "label": "Revenue", "value": "1000", "unit": "USD", "start": "2023-01-01", "end": "2023-12-31", "fiscal_year": "2023",
           "fiscal_period": "FY", "form": "10-K", "filed": "2024-02-01", "source": "0000000001-24-000001", "tag": "us-gaap:Revenues"}
    row.update(over)
    return row


def _csv(tmp_path, rows: list[dict], name: str = "facts.csv"):
    path = tmp_path / name
    pd.DataFrame(rows, columns=FACT_COLUMNS).to_csv(path, index=False)
    return path


def test_csv_fiscal_year_beyond_int64_is_one_error(tmp_path):
    path = _csv(tmp_path, [_row(), _row(fiscal_year=str(2**63))])
    err = _error(canonical_io.read_canonical, path)
    assert str(path) in str(err) and err.field == "fiscal_year" and "row 2" in str(err)


# ---------------------------------------------------------------- #1 SEC `$` cells, header without colspan
HEAD = "<p>(in millions)</p><table data-company='ACME' data-statement='income'><tr><th></th>{}</tr>{}</table>"
YEARS = "<th>Year ended December 31, 2023</th><th>Year ended December 31, 2022</th>"


def _cells(*cells) -> str:
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _by_year(df) -> dict:
    return {(c, e[:4]): v for c, e, v in zip(df["concept"], df["end"], df["value"])}


def test_dollar_cells_without_colspan_keep_each_year():
    html = HEAD.format(YEARS, _cells("Revenue", "$", "1,234", "$", "1,000") + _cells("Net income", "", "200", "", "(50", ")"))
    df = tables.load_tables_text(html, "sec.html")
    assert _by_year(df) == {("revenue", "2023"): 1234e6, ("revenue", "2022"): 1000e6,
                            ("net_income", "2023"): 200e6, ("net_income", "2022"): -50e6}


def test_dollar_cells_under_spanned_header_unchanged():
    head = "<th colspan=2>Year ended December 31, 2023</th><th colspan=2>Year ended December 31, 2022</th>"
    df = tables.load_tables_text(HEAD.format(head, _cells("Revenue", "$", "1,234", "$", "1,000")), "sec.html")
    assert _by_year(df) == {("revenue", "2023"): 1234e6, ("revenue", "2022"): 1000e6}


@pytest.mark.parametrize("cells", [("Revenue", "$", "1,234"),                      # the 2023 value would land in 2022
                                   ("Revenue", "1,234", "1,000", "999"),           # a third value under no header
                                   ("Revenue", "$", "1,234", "$", "1,000", "7")])
def test_ambiguous_rows_are_refused_naming_row_and_file(cells):
    err = _error(tables.load_tables_text, HEAD.format(YEARS, _cells(*cells)), "sec.html")
    assert "sec.html" in str(err) and "'Revenue'" in str(err) and "ambiguous" in str(err)


# ---------------------------------------------------------------- #2 footnote markers on labels
@pytest.mark.parametrize("label", ["Revenue (1)", "Revenue(a)", "Revenue<sup>(1)</sup>", "Revenue<sup>1</sup>", "Revenue*", "Revenue †"])
def test_footnote_marker_on_a_label_keeps_the_row(label):
    df = tables.load_tables_text(HEAD.format(YEARS, _cells(label, "1,234", "1,000")), "t.html")
    assert _by_year(df) == {("revenue", "2023"): 1234e6, ("revenue", "2022"): 1000e6}


def test_unknown_label_is_still_dropped():
    df = tables.load_tables_text(HEAD.format(YEARS, _cells("Revenue", "1", "2") + _cells("Widgets shipped (1)", "5", "6")), "t.html")
    assert set(df["concept"]) == {"revenue"}


# ---------------------------------------------------------------- FSDS #4 #5 #9
SUB = "adsh\tcik\tname\tform\tfy\tfp\tfiled\n0000000001-24-000001\t1\tACME CORP\t10-K\t2023\tFY\t20240201\n"
NUM_HEAD = "adsh\ttag\tversion\tddate\tqtrs\tuom\tvalue\n"


def _fsds(tmp_path, num_rows: list[str], sub: str = SUB):
    folder = tmp_path / "2024q1"
    folder.mkdir()
    (folder / "sub.txt").write_text(sub, encoding="utf-8")
    (folder / "num.txt").write_text(NUM_HEAD + "".join(r + "\n" for r in num_rows), encoding="utf-8")
    return folder


GOOD = "0000000001-24-000001\tRevenues\tus-gaap/2023\t20231231\t4\tUSD\t1000"


def test_fsds_fixture_loads(tmp_path):
    df = fsds.load_fsds(_fsds(tmp_path, [GOOD]))
    assert list(df["value"]) == [1000.0] and list(df["start"]) == ["2023-01-01"]


@pytest.mark.parametrize("ddate", ["20091399", "2009093", "2009-09-30", "abcdefgh"])
def test_fsds_bad_ddate_names_file_accession_and_field(tmp_path, ddate):
    folder = _fsds(tmp_path, [GOOD, GOOD.replace("20231231", ddate)])
    err = _error(fsds.load_fsds, folder)
    assert str(folder / "num.txt") in str(err) and "0000000001-24-000001" in str(err) and err.field == "ddate"


def test_fsds_bad_filed_date_names_sub_txt(tmp_path):
    folder = _fsds(tmp_path, [GOOD], sub=SUB.replace("20240201", "20241301"))
    err = _error(fsds.load_fsds, folder)
    assert str(folder / "sub.txt") in str(err) and err.field == "filed"


def test_fsds_first_row_with_extra_fields_is_an_error_naming_the_line(tmp_path):
    folder = _fsds(tmp_path, [GOOD + "\textra\tx\ty", GOOD])
    err = _error(fsds.load_fsds, folder)
    assert str(folder / "num.txt") in str(err) and "line 2" in str(err)


def test_csv_first_row_with_extra_fields_is_an_error(tmp_path):
    path = tmp_path / "facts.csv"
    good = ",".join(_row().values())
    path.write_text(",".join(FACT_COLUMNS) + "\n" + good + ",extra\n" + good + "\n", encoding="utf-8")
    err = _error(canonical_io.read_canonical, path)
    assert str(path) in str(err) and "row 1" in str(err)


def test_fsds_folder_without_num_txt_is_named(tmp_path):
    folder = tmp_path / "2024q1"
    folder.mkdir()
    (folder / "sub.txt").write_text(SUB, encoding="utf-8")
    err = _error(sources.load_raw_facts, [str(folder)])
    assert str(folder) in str(err) and "num.txt" in str(err)


# ---------------------------------------------------------------- #6 empty company, #7 fiscal_period Q5
@pytest.mark.parametrize("company", ["", "   "])
def test_csv_empty_company_is_an_error(tmp_path, company):
    path = _csv(tmp_path, [_row(), _row(company=company)])
    err = _error(canonical_io.read_canonical, path)
    assert str(path) in str(err) and err.field == "company" and "row 2" in str(err)


def test_parquet_null_company_is_an_error(tmp_path):
    path = tmp_path / "facts.parquet"
    df = pd.DataFrame([_row(), _row()], columns=FACT_COLUMNS)
    df["company"] = None
    df.to_parquet(path, index=False)
    err = _error(canonical_io.read_canonical, path)
    assert str(path) in str(err) and err.field == "company" and "row 1" in str(err)


@pytest.mark.parametrize("fp,ok", [("Q5", False), ("Q0", False), ("FY2023", False), ("Q4", True), ("fy", True), ("", True), ("H2", True)])
def test_csv_fiscal_period(tmp_path, fp, ok):
    path = _csv(tmp_path, [_row(fiscal_period=fp)])
    if ok:
        assert len(canonical_io.read_canonical(path)) == 1
    else:
        err = _error(canonical_io.read_canonical, path)
        assert str(path) in str(err) and err.field == "fiscal_period" and repr(fp) in str(err)


# ---------------------------------------------------------------- #7 compute flags, synth num_proc
def test_format_answer_too_many_decimals_is_an_input_error():
    from ledgerlm.synth.indices.compute import format_answer

    err = _error(format_answer, 26_974_000_000.0, "currency", "units", 20)
    assert err.field == "decimals"
    assert str(format_answer(26_974_000_000.0, "currency", "units", 2)) == "26974000000.00"


@pytest.mark.parametrize("as_of", ["2023-13-01", "2023-02-30", "20230101", "yesterday"])
def test_store_refuses_a_bad_as_of_date(tmp_path, as_of):
    from ledgerlm.synth.statements.store import FactStore

    err = _error(FactStore.from_sources, [str(_csv(tmp_path, [_row()]))], as_of=as_of, company="ACME")
    assert err.field == "as_of" and as_of in str(err)


def test_store_as_of_before_every_filing_says_so(tmp_path):
    from ledgerlm.synth.statements.store import FactStore

    path = str(_csv(tmp_path, [_row()]))
    err = _error(FactStore.from_sources, [path], as_of="1990-01-01", company="ACME")
    assert err.field == "as_of" and "ACME" in str(err) and "1990-01-01" in str(err) and "2024-02-01" in str(err)
    assert "known:" not in str(err)
    err = _error(FactStore.from_sources, [path], as_of="1990-01-01", company="0000000001")  # a query placed by CIK
    assert err.field == "as_of" and "1990-01-01" in str(err)


def test_compute_cli_decimals_and_as_of_are_one_line(tmp_path, capsys):
    from ledgerlm.cli import main as ledgerlm_main

    path = str(_csv(tmp_path, [_row()]))
    base = ["compute", "--company", "ACME", "--index", "revenue", "--period", "FY2023", "--source", path]
    for extra in (["--decimals", "30"], ["--as-of", "2023-13-01"], ["--as-of", "1990-01-01"]):
        assert ledgerlm_main(base + extra) == 1
        out, err = capsys.readouterr()
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_synth_num_proc_zero_is_refused():
    from ledgerlm.synth.finindices.config import load_config

    err = _error(load_config, None, num_proc=0)
    assert err.field == "num_proc"


# ---------------------------------------------------------------- #8 tokenizer folder
def test_tokenizer_folder_that_is_no_tokenizer(tmp_path):
    pytest.importorskip("transformers")
    from ledgerlm.synth.finindices.tokens import TokenCounter

    folder = tmp_path / "not_a_tokenizer"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello", encoding="utf-8")
    err = _error(TokenCounter, str(folder))
    assert str(folder) in str(err) and err.field == "tokenizer"


def test_tokenizer_json_that_is_broken(tmp_path):
    pytest.importorskip("tokenizers")
    from ledgerlm.synth.finindices.tokens import TokenCounter

    path = tmp_path / "tokenizer.json"
    path.write_text("{broken", encoding="utf-8")
    err = _error(TokenCounter, str(path))
    assert str(path) in str(err) and err.field == "tokenizer"


# ---------------------------------------------------------------- #9 sources without an annual report
def test_synth_on_quarterly_facts_only_names_source_company_and_cause(tmp_path, capsys):
    from ledgerlm.cli import main as ledgerlm_main

    q1 = _row(start="2023-01-01", end="2023-03-31", fiscal_period="Q1", form="10-Q", filed="2023-05-01")
    path = _csv(tmp_path, [q1])
    out = tmp_path / "out"
    assert ledgerlm_main(["synth", "--source", str(path), "--out", str(out), "--num", "5", "--no-progress"]) == 1
    err = capsys.readouterr().err
    line = one_line(err)
    assert str(path) in line and "ACME" in line and "annual" in line
    assert not out.exists()


# --- output folders and a dataset's manifest (hostile-input audit s21, items 10 and 13) ---------------------------

def test_synth_out_under_a_file_or_in_proc_is_one_error(tmp_path, capsys):
    from ledgerlm.cli import main as ledgerlm_main

    afile = tmp_path / "afile"
    afile.write_text("x")
    assert ledgerlm_main(["synth", "--out", str(afile / "sub"), "--num", "5"]) != 0
    err = capsys.readouterr().err
    assert "is a file, not a folder" in err and "Traceback" not in err
    if Path("/proc/self").exists():
        assert ledgerlm_main(["synth", "--out", "/proc/ledgerlm-x", "--num", "5"]) != 0
        err = capsys.readouterr().err
        assert "cannot create folders in /proc" in err and "Traceback" not in err
        assert not Path("/proc/ledgerlm-x.work").exists()


def test_fidelity_manifest_sources_not_a_list_is_named(tmp_path):
    import json

    from ledgerlm.errors import InputError
    from ledgerlm.synth.finindices.fidelity import manifest_sources

    (tmp_path / "manifest.json").write_text(json.dumps({"config": {"sources": 12345}}))
    with pytest.raises(InputError, match="config.sources is '12345', not a list of paths"):
        manifest_sources(tmp_path)
    (tmp_path / "manifest.json").write_bytes(b'{"config": {"sources": ["\xff"]}}')
    with pytest.raises(InputError, match="no readable config"):
        manifest_sources(tmp_path)


# --- second new-user/hostile audit (s22): EDGAR layouts, signs, output folders -----------------------------------

_EDGAR = ('<html><body><p>NVIDIA Corporation (NVDA)</p><p>Consolidated Statements of Income</p><p>(In millions)</p><table>'
          '<tr><td></td><td colspan="11">Year Ended</td></tr><tr><td></td><td colspan="3">Jan 26, 2025</td><td></td>'
          '<td colspan="3">Jan 28, 2024</td><td></td><td colspan="3">Jan 29, 2023</td></tr>'
          '<tr><td>Revenue</td><td>$</td><td>130,497</td><td></td><td></td><td>$</td><td>60,922</td><td></td><td></td><td>$</td><td>26,974</td><td></td></tr>'
          '<tr><td>Other income (expense), net</td><td></td><td>(189</td><td>)</td><td></td><td></td><td>237</td><td></td><td></td><td></td><td>(48</td><td>)</td></tr>'
          '</table></body></html>')


def test_edgar_colspan_layout_reads_a_negative_split_over_two_cells(tmp_path):
    """Workiva/EDGAR: each date spans '$', the number and ')'; a negative is '(189' and ')' (was: not a number)."""
    path = tmp_path / "edgar.html"
    path.write_text(_EDGAR)
    df = tables.load_table_file(path)
    other = df[df["concept"] == "nonoperating_income"].sort_values("end")
    assert other["value"].tolist() == [-48e6, 237e6, -189e6]
    assert df[df["concept"] == "revenue"].sort_values("end")["value"].tolist() == [26_974e6, 60_922e6, 130_497e6]


def test_sec_layout_row_with_blank_years_is_placed_by_the_table_or_refused(tmp_path):
    """A '$'-cell table whose 'R&D' row has its one value in the first year's number column and blanks after it was
    read column by column and filed 353 under the middle year: the table's layout holds for every row."""
    head = "<tr><th></th><th>2024</th><th>2023</th><th>2022</th></tr>"
    rev = "<tr><td>Revenue</td><td>$</td><td>1,000</td><td>$</td><td>900</td><td>$</td><td>800</td></tr>"
    rnd = "<tr><td>Research and development</td><td></td><td>353</td><td></td><td></td><td></td><td></td></tr>"
    path = tmp_path / "blank.html"
    path.write_text(f"<p>ACME Corp (ACME) Consolidated Statements of Operations (in millions)</p><table>{head}{rev}{rnd}</table>")
    with pytest.raises(InputError, match="Research and development.*ambiguous"):
        tables.load_table_file(path)
    ok = "<tr><td>Research and development</td><td></td><td>353</td><td></td><td>300</td><td></td><td>250</td></tr>"
    path.write_text(f"<p>ACME Corp (ACME) Consolidated Statements of Operations (in millions)</p><table>{head}{rev}{ok}</table>")
    df = tables.load_table_file(path)
    assert df[df["concept"] == "rd_expense"].sort_values("end")["value"].tolist() == [250e6, 300e6, 353e6]


def test_income_in_parentheses_before_expense_is_an_expense_signed_line(tmp_path):
    """'Other (income) expense, net' 10 is an expense of 10: other income -10 (was +10, the label read as 'Other income
    (expense), net')."""
    path = tmp_path / "sign.html"
    path.write_text("<p>ACME Corp (ACME) Consolidated Statements of Operations (in millions)</p><table><tr><th></th><th>2024</th>"
                    "<th>2023</th></tr><tr><td>Other (income) expense, net</td><td>10</td><td>(4)</td></tr>"
                    "<tr><td>Other income (expense), net</td><td>7</td><td>(2)</td></tr></table>")
    df = tables.load_table_file(path).sort_values("end")
    flipped = df[df["label"].str.startswith("Other (income)")]["value"].tolist()
    plain = df[df["label"].str.startswith("Other income (")]["value"].tolist()
    assert flipped == [4e6, -10e6] and plain == [-2e6, 7e6]


def test_tables_cli_prints_one_line(tmp_path, capsys):
    path = tmp_path / "bad.html"
    path.write_text("<p>ACME Corp (ACME) Consolidated Statements of Operations (in millions)</p><table><tr><th></th>"
                    "<th>2024</th></tr><tr><td>Revenue</td><td>12x</td></tr></table>")
    assert tables.main([str(path)]) == 1
    err = capsys.readouterr().err
    assert "bad.html" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_synth_out_root_dangling_link_long_name_and_drop_work_of_a_published_work_dir(tmp_path, capsys):
    from ledgerlm.cli import main as ledgerlm_main
    from ledgerlm.synth.finindices.cli import drop_work

    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for out, says in (("/", "root"), (str(tmp_path / "dangling"), "link to nothing"), (str(tmp_path / ("x" * 300)), "255")):
        assert ledgerlm_main(["synth", "--out", out, "--num", "5"]) != 0
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err, err
    assert not (tmp_path / "dangling.work").exists()
    published = tmp_path / "d.work"  # a dataset someone published with --out d.work
    published.mkdir()
    (published / "manifest.json").write_text("{}")
    assert drop_work(tmp_path / "d", []) == [] and (published / "manifest.json").is_file()


@pytest.mark.parametrize("label", ["Revenue (Note 3)", "Revenue (ii)", "Revenue [1]", "Revenue ¹",
                                   'Revenue<span style="vertical-align: super">1</span>', "Net (loss) income"])
def test_more_footnote_markers_and_net_loss_income_keep_the_row(tmp_path, label):
    path = tmp_path / "fn.html"
    path.write_text(f"<p>ACME Corp (ACME) Consolidated Statements of Operations (in millions)</p><table><tr><th></th><th>2024</th>"
                    f"</tr><tr><td>{label}</td><td>1,234</td></tr></table>")
    df = tables.load_table_file(path)
    assert df["concept"].tolist() == ["net_income" if "Net" in label else "revenue"] and df["value"].tolist() == [1234e6]
