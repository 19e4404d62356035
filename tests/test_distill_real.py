"""Distillation of a real `ledgerlm synth` dataset (embedded SEC filings) through the HTTP teacher path:
the teacher solves some items; only verified trajectories become training rows, and they load as contract 5."""
from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # distill_fixtures, with or without tests/__init__.py
from distill_fixtures import read_jsonl, stub_server  # noqa: E402

from ledgerlm.evaluate.finindices.scoring import score_response  # noqa: E402
from ledgerlm.synth.distill.cli import main  # noqa: E402


@pytest.fixture(scope="module")
def real_dataset(tmp_path_factory):
    from ledgerlm.synth.finindices import cli as synth_cli

    root = tmp_path_factory.mktemp("synth")
    config = root / "small.yaml"
    config.write_text("# ledgerlm synth --config small.yaml --out OUT\nnum: 40\nseed: 5\nshard_size: 8\n")
    assert synth_cli.main(["--config", str(config), "--out", str(root / "data"), "--no-progress"]) == 0
    return root / "data"


def solves(item_id: str) -> bool:
    return hashlib.sha256(item_id.encode()).digest()[0] % 2 == 0


def test_real_synth_items_only_verified_trajectories_become_rows(tmp_path, real_dataset):
    items = read_jsonl(real_dataset / "train.jsonl")
    assert len(items) >= 20
    by_prompt = {json.dumps(item["messages"], sort_keys=True): item for item in items}
    assert len(by_prompt) == len(items)

    def respond(body):
        item = by_prompt[json.dumps(body["messages"], sort_keys=True)]
        steps, _, final = item["solution"].strip().rpartition("\n\n")
        if solves(item["id"]):
            return {"content": f"<think>{steps}</think>\n{final}"}
        return {"content": f"<think>{steps}</think>\nFinal answer:\n1234567.891"}

    out = tmp_path / "out"
    with stub_server(responder=respond) as server:
        assert main(["--data", str(real_dataset), "--teacher", "openai:stub", "--base-url", server.url, "--out", str(out),
                     "--samples-per-item", "1", "--concurrency", "4", "--no-progress"]) == 0
    rows = read_jsonl(out / "train.jsonl")
    rejects = read_jsonl(out / "rejects.jsonl")
    assert {r["item_id"] for r in rows} == {i["id"] for i in items if solves(i["id"])}
    assert {r["item_id"] for r in rejects} == {i["id"] for i in items if not solves(i["id"])}
    assert {r["reason"] for r in rejects} <= {"wrong_value", "wrong_format"}
    items_by_id = {i["id"]: i for i in items}
    for row in rows:  # re-scored independently: the kept answer is right on its own
        item = items_by_id[row["item_id"]]
        assistant = row["messages"][-1]
        assert score_response(item, assistant["content"]).score == 1
        assert assistant["reasoning_content"] and "<think>" not in assistant["content"]
        assert row["messages"][:-1] == [{"role": m["role"], "content": m["content"]} for m in item["messages"]]
        assert (row["paradigm"], row["axis"], row["hint"]) == (item["paradigm"], item["axis"], item["hint"])

    manifest = json.loads((out / "manifest.json").read_text())
    for name, group in manifest["acceptance"].items():
        members = [i for i in items if f"{i['paradigm']}|{i['axis']}|{'hint' if i['hint'] else 'no_hint'}" == name]
        assert group["samples"] == len(members) and group["verified"] == sum(solves(i["id"]) for i in members)

    from ledgerlm.train.data import read_rows

    training = read_rows(out, "train")
    assert len(training) == len(rows) and all(r["messages"][-1]["role"] == "assistant" for r in training)
    assert os.path.getsize(out / "cache.jsonl") > 0
