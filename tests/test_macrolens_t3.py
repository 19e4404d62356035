"""`ledgerlm synth --task macrolens-t3` on the embedded SEC data: exact targets, point-in-time inputs, company splits."""
import gzip
import json
from pathlib import Path

import pytest

from ledgerlm.cli import main as ledgerlm
from ledgerlm.synth.macrolens_t3 import COMPANYFACTS_DIR, FIELDS, FLOW_FIELDS, build_rows, load_all_filings


@pytest.fixture(scope="module")
def rows():
    rows, drops = build_rows(load_all_filings())
    assert rows
    return rows


@pytest.fixture(scope="module")
def raw_json():
    out = {}
    for p in COMPANYFACTS_DIR.glob("*.json.gz"):
        out[p.name.split("_")[1].split(".")[0]] = json.load(gzip.open(p))
    return out


def test_targets_match_the_filings_exactly(rows, raw_json):
    checked = 0
    for r in rows:
        doc = raw_json[r["company"]]
        for f, prov in r["provenance"]["target"].items():
            taxonomy, name = prov["tag"].split(":")
            entries = [e for units in doc["facts"][taxonomy][name]["units"].values() for e in units]
            match = [e for e in entries if e["accn"] == prov["source"] and e["end"] == r["target_period_end"]
                     and ("start" in e) == (f in FLOW_FIELDS)]
            assert any(float(e["val"]) == r["answer"][f] for e in match), (r["id"], f)
            assert prov["filed"] == r["target_filed"]
            checked += 1
    assert checked > 500


def test_no_input_fact_filed_on_or_after_target_filing_date(rows):
    for r in rows:
        assert r["provenance"]["inputs"]
        assert all(i["filed"] < r["target_filed"] for i in r["provenance"]["inputs"]), r["id"]
        user = r["messages"][1]["content"]
        for i in r["provenance"]["inputs"]:
            assert f"{i['value']:,.0f}" in user


def test_rows_are_chat_sft_rows_with_json_answers_and_company_splits(rows):
    for r in rows:
        assert [m["role"] for m in r["messages"]] == ["system", "user", "assistant"]
        assert json.loads(r["messages"][2]["content"]) == r["answer"] and list(r["answer"]) == list(FIELDS)
    train = {r["company"] for r in rows if r["split"] == "train"}
    test = {r["company"] for r in rows if r["split"] == "test"}
    assert train and test and not train & test


def test_cli_writes_dataset(tmp_path):
    assert ledgerlm(["synth", "--task", "macrolens-t3", "--out", str(tmp_path), "--annual-only"]) == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    n = sum(1 for _ in open(tmp_path / "train.jsonl")) + sum(1 for _ in open(tmp_path / "test.jsonl"))
    assert n == sum(manifest["counts"].values()) > 0
    assert all(json.loads(l)["target_period"].count("Q") == 0 for l in open(tmp_path / "train.jsonl"))
