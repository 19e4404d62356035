"""Must-show anchors on datasets built by `ledgerlm synth`: the oracle scores 100%, the wrong-unit
oracle 0% on every item whose answer has a non-zero number (a 1,000x slip of 0 is still 0).
Default suite: a small dataset; `pytest -m slow`: >= 1,000 items (all formats, both paradigms, deficiency items)."""
from __future__ import annotations

import json

import pytest

from ledgerlm.evaluate.cli import eval_main
from ledgerlm.evaluate.runfiles import read_jsonl, read_run

DEFICIENT = "Insufficient information"


def synthesize(tmp_path, num: int):
    from ledgerlm.synth.finindices.cli import main as synth_main

    out = tmp_path / "data"
    assert synth_main(["--out", str(out), "--num", str(num), "--no-progress"]) == 0
    rows = [row for split in ("train", "dev", "test") for row in read_jsonl(out / f"{split}.jsonl")]
    everything = tmp_path / "all.jsonl"
    everything.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return everything, rows


def nonzero_numeric(row: dict) -> bool:
    answer = row["answer"]
    if answer == DEFICIENT:
        return False
    values = [v for r in answer for v in r] if isinstance(answer, list) else [answer]
    return any(float(v) != 0 for v in values)


def check_anchors(tmp_path, data, rows):
    for model in ("oracle", "wrong_unit"):
        assert eval_main(["--benchmark", "finindices", "--model", model, "--data", str(data), "--out", str(tmp_path / model),
                          "--n-boot", "200", "--no-cache"]) == 0
    oracle_results, oracle_samples = read_run(tmp_path / "oracle")
    assert oracle_results["n"] == len(rows)
    assert [s["id"] for s in oracle_samples if s["score"] != 1] == []
    assert [s["id"] for s in oracle_samples if s["positional"] != 1] == []
    _, wrong_samples = read_run(tmp_path / "wrong_unit")
    by_id = {r["id"]: r for r in rows}
    slipped = [s for s in wrong_samples if nonzero_numeric(by_id[s["id"]])]
    assert slipped and [s["id"] for s in slipped if s["score"] != 0] == []
    assert all(s["score"] == 1 for s in wrong_samples if by_id[s["id"]]["answer"] == DEFICIENT)
    return oracle_samples


def test_oracle_anchors_on_a_small_synthesized_dataset(tmp_path):
    data, rows = synthesize(tmp_path, 60)
    assert len(rows) >= 40
    check_anchors(tmp_path, data, rows)


@pytest.mark.slow
def test_oracle_anchors_on_1000_synthesized_items(tmp_path):
    data, rows = synthesize(tmp_path, 1200)
    assert len(rows) >= 1000
    assert {r["answer_format"] for r in rows} == {"number", "html_table", "json", "tuple_list"}
    assert {r["paradigm"] for r in rows} == {"single", "table"}
    assert any(r["answer"] == DEFICIENT for r in rows)
    check_anchors(tmp_path, data, rows)
