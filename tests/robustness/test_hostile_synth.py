"""Configs, partial state, stale resume and the smaller items (#14.5, #14.7, #14.8, #14.9).

    python -m pytest tests/robustness/test_hostile_synth.py -q

- synth configs are schema-checked (pydantic over the SynthConfig dataclass) before any work:
  the issue's `sources: "synth/data"`, `decimals: 3`, zero weights, axes as a list,
  `p_deficiency: "high"` and `synth --source /nonexistent` are one-line errors; a hypothesis fuzz
  of config values gives a config or one InputError, nothing else;
- a synth run that fails before any shard finishes leaves nothing, and the corrected rerun works;
- the resume fingerprint changes when a source file's CONTENTS change (same path);
- `fetch sec --max-per-second` is clamped to (0, 10]; `distill --split ../x` is refused;
  a gzip bomb source stops at the decompressed-size cap; a planted pickle in the store cache never runs.
"""
from __future__ import annotations

import gzip
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledgerlm.errors import InputError
from ledgerlm.synth.finindices import dataset, shards
from ledgerlm.synth.finindices.config import SynthConfig, load_config
from ledgerlm.synth.finindices.pipeline import Stats

REPO = Path(__file__).resolve().parents[2]
CONFIG_CASES = {
    'sources: "synth/data"': ("sources", "valid list"),
    "decimals: 3": ("decimals", "valid list"),
    "paradigms: {single: 0, table: 0}": ("paradigms", "not all zero"),
    "axes: [domain, caliber]": ("axes", "valid dictionary"),
    'p_deficiency: "high"': ("p_deficiency", "valid number"),
    "p_parent: 1.5": ("p_parent", "probability"),
    "num: true": ("num", "expected a int"),
    "num: 2.5": ("num", "valid integer"),
    "sources: [/nonexistent/facts]": ("sources", "does not exist"),
    "table_periods: [9, 4]": ("table_periods", "min <= max"),
    "decimals: [1, x]": ("decimals.1", "valid integer"),
}


@pytest.mark.parametrize("text", list(CONFIG_CASES))
def test_bad_synth_configs_are_one_line_errors(tmp_path, text):
    field, words = CONFIG_CASES[text]
    path = tmp_path / "c.yaml"
    path.write_text(text + "\n")
    with pytest.raises(InputError) as err:
        load_config(str(path))
    assert err.value.field == field and words in str(err.value) and str(path) in str(err.value) and "\n" not in str(err.value)


def test_synth_source_nonexistent_cli(tmp_path):
    run = subprocess.run([sys.executable, "-m", "ledgerlm.cli", "synth", "--source", "/nonexistent", "--out", str(tmp_path / "o"),
                          "--num", "4", "--no-progress"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.strip().count("\n") == 0 and "/nonexistent" in run.stderr
    assert not (tmp_path / "o").exists() and not (tmp_path / "o.work").exists()


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(-2, 2), st.text(max_size=6),
                   st.lists(st.one_of(st.integers(-2, 9), st.text(max_size=4)), max_size=3),
                   st.dictionaries(st.text(max_size=6), st.one_of(st.floats(-1, 2), st.text(max_size=3)), max_size=3))
FIELDS = ["num", "seed", "shard_size", "decimals", "axes", "paradigms", "formats", "p_deficiency", "p_parent", "sources",
          "hint_variants", "languages", "table_periods", "max_tokens", "dev_fraction", "company_group", "units"]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(FIELDS), VALUES, min_size=1, max_size=3))
def test_fuzz_config_values(tmp_path, values):
    path = tmp_path / "fuzz.yaml"
    path.write_text(yaml.safe_dump(values))
    try:
        cfg = load_config(str(path))
    except InputError as err:
        assert "\n" not in str(err)
    else:
        assert isinstance(cfg.decimals, list) and isinstance(cfg.axes, dict) and 0 <= cfg.p_deficiency <= 1


# ---------------------------------------------------------------- partial state and resume
FP = {"seed": 1, "num": 8, "shard_size": 2, "hint_variants": ["hint"], "tokenizer": "fake", "max_tokens": 10}


def row(slot: int) -> dict:
    return {"id": f"s{slot}", "split": "train", "paradigm": "single", "axis": "domain", "hint": True, "company": "A",
            "target_periods": [f"FY{2000 + slot}"], "indices": [f"x{slot}"], "traps": [], "context_formats": ["json"], "answer_format": "number",
            "unit": "units", "decimals": 2, "messages": [{"role": "user", "content": f"q{slot}"}], "answer": float(slot),
            "n_tokens": 1, "language": "en"}


def broken(slot: int, stats: Stats) -> list[dict]:
    raise IndexError("a bad config value surfaced late")


def working(slot: int, stats: Stats) -> list[dict]:
    stats.kept += 1
    return [row(slot)]


def test_failed_synth_leaves_nothing_and_a_corrected_rerun_works(tmp_path):
    out = tmp_path / "data"
    with pytest.raises(IndexError):
        dataset.generate(out, FP, broken, num_slots=8, shard_size=2, progress=False)
    assert not dataset.work_dir(out).exists() and not out.exists()
    fixed = {**FP, "p_deficiency": 0.1}  # the corrected config: a different fingerprint
    assert dataset.generate(out, fixed, working, num_slots=8, shard_size=2, progress=False) == 4
    assert dataset.merge(out, [out])["counts"]["total"] == 8


def test_leftover_run_json_without_finished_shards_is_replaced(tmp_path):
    work = tmp_path / "data.work"
    shards.check_run_file(work, FP)  # a start that was SIGKILLed before its first shard
    (work / "shards" / "shard-00000.jsonl.tmp").write_text("half")
    shards.check_run_file(work, {**FP, "seed": 2})  # the corrected rerun: accepted, the leftover cleared
    assert not (work / "shards" / "shard-00000.jsonl.tmp").exists()
    shards.run_shard(work, 0, 8, 2, working)
    with pytest.raises(InputError, match="different config"):  # finished shards are protected
        shards.check_run_file(work, {**FP, "seed": 3})


def test_fingerprint_hashes_source_contents(tmp_path):
    src = tmp_path / "CIK0001640147_SNOW.json.gz"
    shutil.copy(REPO / "synth/data/sec/companyfacts/CIK0001640147_SNOW.json.gz", src)
    before = SynthConfig(sources=[str(src)]).fingerprint()
    data = gzip.decompress(src.read_bytes()).replace(b'"val":', b'"val": ', 1)  # same facts, different bytes
    src.write_bytes(gzip.compress(data))
    after = SynthConfig(sources=[str(src)]).fingerprint()
    assert before["sources"] == after["sources"] and before["sources_sha256"] != after["sources_sha256"]


# ---------------------------------------------------------------- smaller items
def test_fetch_rate_is_clamped():
    from ledgerlm.synth.statements.fetch import SecClient, clamp_rate

    assert clamp_rate(50) == 10.0 and clamp_rate(0.5) == 0.5
    for bad in (0, -1, float("nan"), float("-inf")):
        with pytest.raises(InputError, match="max-per-second"):
            clamp_rate(bad)
    assert SecClient("ua test@example.com", None, max_per_second=1000).min_interval == pytest.approx(0.1)
    run = subprocess.run([sys.executable, "-m", "ledgerlm.cli", "fetch", "sec", "--tickers", "AAPL", "--out", "/tmp/never",
                          "--user-agent", "a b@c.d", "--max-per-second", "-1"], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert run.returncode == 1 and "max-per-second" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize("split", ["../x", "/tmp/x", "a/b", "..", ".hidden", ""])
def test_distill_split_is_confined(tmp_path, split):
    from ledgerlm.synth.distill.cli import main

    with pytest.raises(InputError, match="split"):
        main(["--data", str(tmp_path), "--split", split, "--teacher", "oracle", "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists() and not (tmp_path / "x.jsonl").exists()


def test_gzip_bomb_source_stops_at_the_cap(tmp_path):
    from ledgerlm.synth.statements.sources import load_facts

    bomb = tmp_path / "CIK0000000001_BOMB.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (80 << 20), 9))  # 80 MiB of blanks in ~80 KB: past the 64 MiB ratio cap
    with pytest.raises(InputError, match="gzip bomb"):
        load_facts([str(bomb)])


class _Payload:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "code ran"))


def test_planted_pickle_in_the_store_cache_never_runs(tmp_path, monkeypatch):
    """#14.5 (landed by #17: Parquet per company, owner-checked): a pickle planted where the old cache lived,
    or in a world-writable folder at the predictable name, is never loaded."""
    from ledgerlm.synth.finindices import storecache

    monkeypatch.chdir(REPO)
    monkeypatch.setenv("LEDGERLM_CACHE_DIR", str(tmp_path / "cache"))
    src = ["synth/data/sec/companyfacts/CIK0001640147_SNOW.json.gz"]
    key, marker = storecache.cache_key(src), tmp_path / "PWNED"
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / f"{key}.pkl").write_bytes(pickle.dumps(_Payload(marker)))
    folder = tmp_path / "cache" / f"{storecache.FORMAT}-{key}"
    folder.mkdir()
    (folder / "index.json").write_text('{"format": "' + storecache.FORMAT + '", "companies": {"SNOW": {"file": "0.parquet", "has_reports": true}}}')
    (folder / "0.parquet").write_bytes(pickle.dumps(_Payload(marker)))
    os.chmod(folder, 0o777)  # others may write it: untrusted
    with pytest.warns(UserWarning, match="ignoring the store cache"):
        stores = storecache.company_stores(src)
    assert "SNOW" in stores and stores["SNOW"].reports("SNOW") and not marker.exists()
