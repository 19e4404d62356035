"""`ledgerlm export-lm-eval` (fast, no lm-eval needed): the task YAML parses with lm-eval's keys and the
folder's utils.process_results scores the oracle solution 1 and a wrong-unit answer 0.

    python -m pytest -q tests/test_lm_eval_export.py
"""
from __future__ import annotations

import importlib.util
import json
import random

import pytest
import yaml

from eval_fixtures import fmt, make_row, table_text
from ledgerlm import cli
from ledgerlm.errors import InputError
from ledgerlm.evaluate.lm_eval.export import export
from ledgerlm.evaluate.tasks import load_task


class _Loader(yaml.SafeLoader):
    """PyYAML with lm-eval's `!function module.name` tag (lm-eval resolves it; here it is kept as text)."""


_Loader.add_constructor("!function", lambda loader, node: ("!function", loader.construct_scalar(node)))


def _dataset(tmp_path, n=16):
    rng = random.Random(7)
    rows = [make_row(rng, i, answer_format=fmt, hint=i % 2 == 0, deficient=i % 5 == 4)
            for i, fmt in enumerate(["number", "html_table", "json", "tuple_list"] * (n // 4))]
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder, {r["id"]: r for r in rows}


def _wrong_unit(row):
    """The right figures in the wrong unit (x1000), written the way the item asks."""
    d = row["decimals"]
    if row["answer_format"] == "number":
        return f"Final answer: {fmt(row['answer'] * 1000, d)}"
    grid = [[fmt(v * 1000, d) for v in r] for r in row["answer"]]
    return table_text(grid, [f"index {k}" for k in range(len(grid))], row["target_periods"], row["answer_format"])


def _utils(folder):
    spec = importlib.util.spec_from_file_location("exported_utils", folder / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_exported_task_parses_and_scores_oracle_1_wrong_unit_0(tmp_path):
    data, rows = _dataset(tmp_path)
    path = export(data, tmp_path / "tasks", "finindices")
    config = yaml.load(path.read_text(), Loader=_Loader)
    assert config["task"] == "finindices" and config["output_type"] == "generate_until"
    assert config["process_results"] == ("!function", "utils.process_results")
    assert config["dataset_path"] == "json" and config["test_split"] == "test"
    spec = load_task("finindices")
    assert config["generation_kwargs"] == {"until": [], "do_sample": False, "temperature": 0.0, "max_gen_toks": spec.generation_kwargs.max_gen_toks}
    assert config["metric_list"] == [{"metric": m.name, "aggregation": "mean", "higher_is_better": m.higher_is_better}
                                     for m in spec.metrics if m.name not in ("backend_error_rate", "truncated_rate")]
    assert config["metadata"]["version"] == spec.version
    docs = [json.loads(line) for line in open(config["dataset_kwargs"]["data_files"]["test"])]
    assert [d["id"] for d in docs] == list(rows)
    utils = _utils(path.parent)
    scored_wrong = 0
    for doc in docs:
        row = rows[doc["id"]]
        assert doc["user"] == row["messages"][-1]["content"] and doc["system"] == row["messages"][0]["content"]
        oracle = utils.process_results(doc, [row["solution"]])
        assert oracle == {"accuracy": 1.0, "positional_accuracy": 1.0, "parse_failure_rate": 0.0, "format_failure_rate": 0.0}, doc["id"]
        if row["answer"] != "Insufficient information":  # a deficiency item has no number to rescale
            wrong = utils.process_results(doc, [_wrong_unit(row)])
            assert wrong["accuracy"] == 0.0, doc["id"]
            scored_wrong += 1
    assert scored_wrong >= 10


def test_export_follows_the_task_yaml(tmp_path):
    data, rows = _dataset(tmp_path)
    path = export(data, tmp_path / "t", "finindices_hint_table", limit=3)
    docs = [json.loads(line) for line in open(path.with_suffix(".jsonl"))]
    assert len(docs) == 3 and all(d["hint"] and d["paradigm"] == "table" for d in docs)
    custom = tmp_path / "strict.yaml"
    base = yaml.safe_load(load_task("finindices").path.read_text())
    custom.write_text(yaml.safe_dump({**base, "task": "fi_strict", "answer_extraction": "strict",
                                      "generation_kwargs": {"max_gen_toks": 64, "temperature": 0.7, "top_p": 0.9, "stop": ["</s>"]}}))
    path = export(data, tmp_path / "s", str(custom))
    config = yaml.load(path.read_text(), Loader=_Loader)
    assert config["generation_kwargs"] == {"until": ["</s>"], "do_sample": True, "temperature": 0.7, "max_gen_toks": 64, "top_p": 0.9}
    doc = next(json.loads(line) for line in open(path.with_suffix(".jsonl")) if json.loads(line)["answer_format"] == "number")
    unmarked = f"The value is {rows[doc['id']]['answer']}"
    assert _utils(path.parent).process_results(doc, [unmarked])["accuracy"] == 0.0  # strict: an unmarked number is no answer
    assert _utils(tmp_path / "t").process_results(doc, [unmarked])["accuracy"] == 1.0  # final_answer: the last line's last number


def test_cli_and_bad_input_is_one_error_line(tmp_path, capsys):
    data, _ = _dataset(tmp_path, n=4)
    assert cli.main(["export-lm-eval", "--data", str(data), "--out", str(tmp_path / "ok")]) == 0
    assert "--include_path" in capsys.readouterr().out
    bad = tmp_path / "bad"
    bad.mkdir()
    row = make_row(random.Random(1), 0, answer_format="number", hint=True, deficient=False)
    row["messages"].append({"role": "assistant", "content": "x"})
    (bad / "test.jsonl").write_text(json.dumps(row) + "\n")
    assert cli.main(["export-lm-eval", "--data", str(bad), "--out", str(tmp_path / "no")]) == 1
    err = capsys.readouterr().err.strip()
    assert "fx-00000" in err and "messages" in err and "\n" not in err
    assert not (tmp_path / "no").exists()  # nothing written
    with pytest.raises(InputError, match="only FinIndices"):
        export(data, tmp_path / "m", "macrolens_t1")


def test_the_official_release_sample_exports(tmp_path):
    """The paper's release format (tests/data/finindices_release, read by the adapter) exports too: one doc per hint variant."""
    from pathlib import Path

    release = Path(__file__).parent / "data" / "finindices_release" / "test.jsonl"
    path = export(release, tmp_path / "rel", "finindices_nohint")
    docs = [json.loads(line) for line in open(path.with_suffix(".jsonl"), encoding="utf-8")]
    assert len(docs) == 5 and all(d["id"].endswith(":nohint") and d["system"] == "" and "提示" not in d["user"] for d in docs)
    utils = _utils(path.parent)
    numbers = [d for d in docs if d["answer_format"] == "number"]
    assert numbers and all(utils.process_results(d, [f"Final answer: {json.loads(d['answer_json'])}"])["accuracy"] == 1.0 for d in numbers)
    assert all(utils.process_results(d, ["Final answer: 7777777"])["accuracy"] == 0.0 for d in numbers)
