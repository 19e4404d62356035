"""Training rows (contract 5): loading, contract-4 conversion and errors that name file, line and field."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from ledgerlm.errors import InputError
from ledgerlm.train.data import load_training_dataset, read_rows, read_samples, sample_to_training_row
sys.path.insert(0, str(Path(__file__).resolve().parent))  # with or without tests/__init__.py
from train_rows import dev_samples, training_rows, write_dataset  # noqa: E402


def test_dataset_folder_loads_contract5_rows_with_reasoning(tmp_path):
    write_dataset(tmp_path, repeat=2)
    dataset = load_training_dataset(str(tmp_path), "train")
    assert dataset.column_names == ["messages"]
    assert len(dataset) == 2 * len(training_rows())
    assistant = dataset[0]["messages"][-1]
    assert assistant["role"] == "assistant"
    assert assistant["reasoning_content"].startswith("Revenue growth = ")
    assert assistant["content"] == "The answer is -2.80."


def test_contract4_sample_becomes_training_row_with_worked_solution():
    sample = dev_samples()[1]
    row = sample_to_training_row(sample)
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
    assert row["messages"][-1]["content"] == sample["solution"]
    assert "125.85" in row["messages"][-1]["content"]


def test_parquet_and_jsonl_give_the_same_rows(tmp_path):
    rows = training_rows()
    pd.DataFrame(rows).to_parquet(tmp_path / "train.parquet")
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert read_rows(tmp_path / "train.parquet") == read_rows(tmp_path / "rows.jsonl")


@pytest.mark.parametrize(
    "row, field",
    [
        ({"messages": [{"role": "user", "content": "Revenue?"}]}, "messages"),
        ({"messages": [{"role": "analyst", "content": "x"}, {"role": "assistant", "content": "1"}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": 1.5}]}, "messages[1].content"),
        ({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "1", "reasoning_content": ["a"]}]},
         "messages[1].reasoning_content"),
    ],
)
def test_bad_rows_name_file_line_and_field(tmp_path, row, field):
    path = tmp_path / "train.jsonl"
    path.write_text(json.dumps(training_rows()[0]) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_rows(path)
    assert f"{path} line 2" in str(err.value) and repr(field) in str(err.value)


def test_broken_json_line_and_missing_split_are_named(tmp_path):
    (tmp_path / "train.jsonl").write_text('{"messages": [\n', encoding="utf-8")
    with pytest.raises(InputError, match="line 1 is not JSON"):
        read_rows(tmp_path / "train.jsonl")
    with pytest.raises(InputError, match="no dev"):
        read_rows(tmp_path, "dev")


def test_eval_samples_need_answers(tmp_path):
    write_dataset(tmp_path)
    samples = read_samples(tmp_path, "dev")
    assert {s["paradigm"] for s in samples} == {"single", "table"}
    (tmp_path / "bad.jsonl").write_text(json.dumps({"messages": []}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="'answer'"):
        read_samples(tmp_path / "bad.jsonl")
