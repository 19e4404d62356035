"""Issue 17 goal 1: the serial start-up of `ledgerlm synth` (paid before the workers fork) imports no pandas, numpy,
pyarrow or lxml when the store cache is warm: stores are restored from their JSON state (storecache.load_store),
DataFrames are only built by the cache build, Parquet facts, macrolens, Ray and publishing. Nor pydantic: a config
whose values already have their annotated types is built without it (config._exactly_typed).

    python -m pytest -q tests/test_synth_startup.py

A fresh interpreter runs a small synth over one company with a warm cache and reports which heavy modules it
imported; then (the control that shows the check can fail) it reads that company's facts frame, which must
import pandas.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ledgerlm.errors import InputError
from ledgerlm.synth.finindices import config, storecache

SOURCE = "synth/data/sec/companyfacts/CIK0001046179_TSM.json.gz"  # the smallest embedded filer
HEAVY = ("pandas", "numpy", "pyarrow", "lxml", "scipy", "ray", "datasets", "pydantic")

CHILD = r"""
import json, sys
from ledgerlm.synth.finindices import cli, storecache

heavy = %r
restored = []
load_store = storecache.load_store
storecache.load_store = lambda *a: restored.append(1) or load_store(*a)
cli.main(["--source", %r, "--out", %r, "--num", "20", "--no-progress"])
after_run = [m for m in heavy if m in sys.modules]
stores = storecache.company_stores([%r])
stores[next(iter(stores))].facts  # the control: reading a facts frame imports pandas
print(json.dumps({"restored": len(restored), "after_run": after_run, "after_facts": [m for m in heavy if m in sys.modules]}))
"""


def test_warm_synth_run_imports_no_dataframe_library(tmp_path, monkeypatch, repo_root):
    monkeypatch.chdir(repo_root)
    monkeypatch.setenv("LEDGERLM_CACHE_DIR", str(tmp_path / "cache"))
    storecache.company_stores([SOURCE])  # warm the cache (this builds with pandas, in the test process)
    code = CHILD % (HEAVY, SOURCE, str(tmp_path / "out"), SOURCE)
    proc = subprocess.run([sys.executable, "-c", code], env=dict(os.environ), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["restored"] >= 1  # the run restored a store from the warm cache (not an in-memory build)
    assert report["after_run"] == []
    assert "pandas" in report["after_facts"]  # the check sees a DataFrame library once one is imported
    assert (tmp_path / "out" / "train.jsonl").is_file()


@pytest.mark.parametrize("name", ["default", "lookup", "ratio"])
def test_shipped_configs_are_the_same_with_or_without_pydantic(name, repo_root, monkeypatch):
    path = str(Path(repo_root) / "configs" / "synth" / f"{name}.yaml")
    fast = config.load_config(path, num=100, seed=3, sources=["synth/data/sec"])
    monkeypatch.setattr(config, "_exactly_typed", lambda name, value: False)  # every value through pydantic
    assert config.load_config(path, num=100, seed=3, sources=["synth/data/sec"]) == fast


def test_values_not_exactly_typed_still_go_through_pydantic():
    assert config._exactly_typed("p_parent", 0.5) and not config._exactly_typed("p_parent", 1)
    assert repr(config.load_config(None, p_parent=1).p_parent) == "1.0"  # pydantic's lax int -> float
    assert not config._exactly_typed("decimals", [1, "2"]) and not config._exactly_typed("no_such_field", 1)
    with pytest.raises(InputError, match="valid list"):
        config.load_config(None, sources="synth/data")  # a str is not a list[str]
    with pytest.raises(InputError, match="expected a int"):
        config.load_config(None, num=True)
