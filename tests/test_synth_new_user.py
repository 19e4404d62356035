"""A user's own filings: one company -> period-based split (recorded), fidelity from the manifest's
sources, a card that names the files and the splits as `load_dataset` does, and --push-to-hub's folder.

    python -m pytest -q tests/test_synth_new_user.py
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgerlm import cli
from ledgerlm.errors import InputError
from ledgerlm.synth.finindices.split import fiscal_year, row_split, split_rule

REPO = Path(__file__).resolve().parents[1]
NVDA = REPO / "synth" / "data" / "sec" / "companyfacts" / "CIK0001045810_NVDA.json.gz"
AAPL = REPO / "synth" / "data" / "sec" / "companyfacts" / "CIK0000320193_AAPL.json.gz"


@pytest.fixture(scope="module")
def one_company(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "nvda"
    assert cli.main(["synth", "--source", str(NVDA), "--out", str(out), "--num", "120", "--no-progress"]) == 0
    return out


def rows(folder: Path, split: str) -> list[dict]:
    return [json.loads(line) for line in (folder / f"{split}.jsonl").read_text().splitlines()]


def test_one_company_splits_by_fiscal_year_without_overlap(one_company):
    manifest = json.loads((one_company / "manifest.json").read_text())
    rule = manifest["split_rule"]
    assert rule["rule"] == "period" and rule["train"][1] < rule["dev"][0] <= rule["dev"][1] < rule["test"][0]
    years = {}
    for split in ("train", "dev", "test"):
        got = rows(one_company, split)
        assert got, f"{split} is empty"
        years[split] = {fiscal_year(p) for r in got for p in r["target_periods"] + r["context_periods"]}
        assert all(r["split"] == split for r in got)
    assert max(years["train"]) < min(years["dev"]) and max(years["dev"]) < min(years["test"])
    card = (one_company / "README.md").read_text()
    assert "## Splits (period-based" in card
    assert "companyfacts: synth/data/sec/companyfacts/CIK0001045810_NVDA.json.gz" in card
    assert "xbrl:" not in card  # only the file it was built from


def test_split_rule_company_level_with_three_companies_and_refusal_with_too_few_years():
    assert split_rule(["A", "B", "C"], (), seed=0)["rule"] == "company"
    with pytest.raises(InputError, match="1 company .* with 2 fiscal year"):
        split_rule(["A"], {2022, 2023}, seed=0)
    rule = split_rule(["A"], range(2010, 2020), seed=0, dev_fraction=0.1, test_fraction=0.2)
    assert (rule["train"], rule["dev"], rule["test"]) == ([2010, 2016], [2017, 2017], [2018, 2019])
    assert row_split(rule, "A", ["FY2016Q3YTD", "FY2015"]) == "train"
    assert row_split(rule, "A", ["FY2017Q1", "FY2016"]) is None  # shows a train year: crosses the boundary


def test_fidelity_reads_sources_from_the_manifest(one_company, capsys):
    code = cli.main(["fidelity", str(one_company)])
    out = capsys.readouterr().out
    n = sum(len(rows(one_company, s)) for s in ("train", "dev", "test"))
    assert out.startswith(f"checked {n}, agree ") and code in (0, 1)
    assert code == 0, out


def test_fidelity_with_the_wrong_source_names_the_missing_companies(one_company, capsys):
    assert cli.main(["fidelity", str(one_company), "--source", str(AAPL)]) == 1
    assert "companies ['NVDA'] of the dataset are not in" in capsys.readouterr().err


def test_push_to_hub_folder_loads_every_split_by_the_card_names(one_company, monkeypatch):
    from ledgerlm.synth.finindices import publish

    splits = publish.load_splits(one_company)
    assert list(splits) == ["train", "validation", "test"]
    for name, stem in (("train", "train"), ("validation", "dev"), ("test", "test")):
        assert splits[name]["id"] == [r["id"] for r in rows(one_company, stem)]
    first = rows(one_company, "train")[0]
    assert splits["train"][0]["answer"] == first["answer"] and splits["train"][0]["messages"] == first["messages"]

    calls = []

    class FakeApi:  # never the network: record what would be uploaded
        def __init__(self, token=None):
            pass

        def create_repo(self, repo_id, **kw):
            calls.append(("create_repo", repo_id, kw["repo_type"]))

        def upload_file(self, path_or_fileobj, path_in_repo, repo_id, **kw):
            calls.append(("upload_file", Path(path_or_fileobj).name, path_in_repo))

    import datasets
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    monkeypatch.setattr(datasets.DatasetDict, "push_to_hub",
                        lambda self, repo_id, **kw: calls.append(("push_to_hub", repo_id, tuple(self))))
    assert publish.push(one_company, "me/nvda") == "https://huggingface.co/datasets/me/nvda"
    assert calls == [("create_repo", "me/nvda", "dataset"), ("upload_file", "README.md", "README.md"),
                     ("upload_file", "manifest.json", "manifest.json"), ("push_to_hub", "me/nvda", ("train", "validation", "test"))]


def test_kept_line_matches_the_rows_written(one_company):
    from ledgerlm.synth.finindices.cli import kept_line

    manifest = json.loads((one_company / "manifest.json").read_text())
    n = sum(len(rows(one_company, s)) for s in ("train", "dev", "test"))
    dups = manifest["drops"].get("duplicate", 0)
    assert kept_line(manifest) == f"synth: {n + dups} generated - {dups} duplicates = {n} kept (manifest.json)"



@pytest.mark.parametrize("env, reason", [({"HF_HUB_OFFLINE": "1"}, "OfflineModeIsEnabled: Cannot reach"),
                                         ({"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": "http://127.0.0.1:9", "HF_TOKEN": "hf_test"},
                                          "ConnectError: ")])
def test_push_without_the_hub_says_the_dataset_is_built_and_why_the_push_failed(one_company, env, reason):
    """New-user audit: --push-to-hub without network was a 116-line httpx traceback after the build. Now one line, exit 1,
    the dataset kept. A rerun into the same folder (resumed); the Hub is offline mode or a refused local port."""
    import os
    import subprocess
    import sys

    before = (one_company / "train.jsonl").read_bytes()
    run = subprocess.run([sys.executable, "-m", "ledgerlm.cli", "synth", "--source", str(NVDA), "--out", str(one_company),
                          "--num", "120", "--no-progress", "--push-to-hub", "me/nvda"],
                         capture_output=True, text=True, env={**os.environ, **env}, timeout=120)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ledgerlm synth: error: the dataset is built at {one_company}; push to "
                           f"https://huggingface.co/datasets/me/nvda failed: {reason}"), run.stderr
    assert (one_company / "train.jsonl").read_bytes() == before
