"""Bad input: one clear InputError naming the file and the field; no pandas traceback; nothing half-written."""
from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

from ledgerlm.errors import InputError
from ledgerlm.synth.statements import canonical_io, sources, tables, xbrl
from ledgerlm.synth.statements.companyfacts import load_companyfacts

SEC = sources.DEFAULT_DATA_DIR


def _one_line_error(tmp_path, path, field):
    """The loader raises InputError(path, field); the command prints one line and no traceback."""
    with pytest.raises(InputError) as err:
        sources.load_facts([str(path)])
    assert err.value.path == str(path) and err.value.field == field
    assert str(path) in str(err.value) and repr(field) in str(err.value)
    before = sorted(p.name for p in tmp_path.iterdir())
    out = tmp_path / "out.csv"
    run = subprocess.run([sys.executable, "-m", "ledgerlm.synth.statements.sources", str(path)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr and "pandas" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and str(path) in run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before and not out.exists()
    return err.value


def test_truncated_gzip(tmp_path):
    data = (SEC / "companyfacts" / "CIK0001640147_SNOW.json.gz").read_bytes()
    bad = tmp_path / "CIK0001640147_SNOW.json.gz"
    bad.write_bytes(data[: len(data) // 2])
    _one_line_error(tmp_path, bad, "gzip")


def test_companyfacts_without_units(tmp_path):
    doc = json.loads(gzip.decompress((SEC / "companyfacts" / "CIK0001640147_SNOW.json.gz").read_bytes()))
    del doc["facts"]["us-gaap"]["RevenueFromContractWithCustomerExcludingAssessedTax"]["units"]
    bad = tmp_path / "CIK0001640147_SNOW.json"
    bad.write_text(json.dumps(doc))
    _one_line_error(tmp_path, bad, "facts.us-gaap.RevenueFromContractWithCustomerExcludingAssessedTax.units")


def test_xbrl_unknown_context(tmp_path):
    text = gzip.decompress((SEC / "xbrl" / "aapl-20230701_htm.xml.gz").read_bytes()).decode()
    assert 'contextRef="c-1"' in text
    bad = tmp_path / "aapl-bad_htm.xml"
    bad.write_text(text.replace('<context id="c-1">', '<context id="c-1-renamed">', 1))
    err = _one_line_error(tmp_path, bad, "contextRef")
    assert "'c-1'" in str(err)


def test_csv_with_text_in_value(tmp_path):
    df = sources.load_facts([str(SEC / "fsds" / "2009q3")]).head(20)
    text = df.astype({"value": object})
    text.loc[text.index[4], "value"] = "twelve million"
    bad = tmp_path / "bad.csv"
    text.to_csv(bad, index=False)
    err = _one_line_error(tmp_path, bad, "value")
    assert "twelve million" in str(err)
    # writing an invalid frame leaves no file behind
    broken = df.astype({"value": object})
    broken.loc[broken.index[0], "value"] = "oops"
    with pytest.raises(InputError):
        canonical_io.write_canonical(broken, tmp_path / "never.csv")
    assert not (tmp_path / "never.csv").exists() and not list(tmp_path.glob(".never*"))


def test_html_table_without_period_header(tmp_path):
    bad = tmp_path / "no_period.html"
    bad.write_text("<table><caption>合并资产负债表 单位：元</caption><tr><td>项目</td><td>本期</td></tr>"
                   "<tr><td>货币资金</td><td>1,000.00</td></tr></table>", encoding="utf-8")
    _one_line_error(tmp_path, bad, "header")


def test_xbrl_wrong_root_and_bad_number(tmp_path):
    bad = tmp_path / "x_htm.xml"
    bad.write_text("<html/>")
    with pytest.raises(InputError, match="not an XBRL instance"):
        xbrl.load_xbrl(bad)
    with pytest.raises(InputError):
        tables.load_tables_text("<p>no table here</p>", "empty.html")
    with pytest.raises(InputError, match="no such file"):
        sources.load_facts([str(tmp_path / "missing.json")])
    with pytest.raises(InputError):
        load_companyfacts(tmp_path / "missing.json")
