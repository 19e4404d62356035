"""Training rows (DESIGN contract 5) from local JSONL / Parquet / a dataset folder / the Hub.

    python -m ledgerlm.train.data runs/data --split train

A contract-5 row is `{"messages": [system?, user, assistant{content, reasoning_content?}, ...]}`.
Synthesized samples (contract 4: `messages` without an assistant turn, plus `solution`) are
accepted too and become contract-5 rows whose assistant turn is the worked solution — the
no-teacher SFT data of the synthesis engine. Every row is validated; a bad one names its file,
line and field.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ledgerlm.contracts import Sample, TrainingRow, iter_jsonl
from ledgerlm.errors import InputError

SUFFIXES = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}


def sample_to_training_row(sample: dict[str, Any]) -> dict[str, Any]:
    """Contract 4 -> contract 5: append the worked solution as the assistant turn."""
    messages = [dict(m) for m in sample["messages"]]
    if not any(m.get("role") == "assistant" for m in messages):
        messages.append({"role": "assistant", "content": sample["solution"]})
    return {"messages": [_clean_message(m) for m in messages]}


def _clean_message(message: dict[str, Any]) -> dict[str, Any]:
    out = {"role": message["role"], "content": message.get("content") or ""}
    if message["role"] == "assistant":
        out["reasoning_content"] = message.get("reasoning_content") or ""
    return out


def validate_row(row: dict[str, Any], where: str) -> dict[str, Any]:
    """The row as contract 5 (messages only), or InputError naming `where` and the field: a row with an
    assistant turn is a `TrainingRow` (provenance keys allowed), one without is a contract-4 `Sample`
    whose worked `solution` becomes the assistant turn."""
    messages = row.get("messages") if isinstance(row, dict) else None
    if not isinstance(messages, list) or not messages:
        raise InputError("row has no 'messages' list", path=where, field="messages")
    if any(isinstance(m, dict) and m.get("role") == "assistant" for m in messages):
        return sample_to_training_row(TrainingRow.from_dict(row, where).to_dict())
    if not row.get("solution"):
        raise InputError("no assistant turn and no 'solution' to train on", path=where, field="messages")
    return sample_to_training_row(Sample.from_dict(row, where).to_dict())


def _files_for(source: Path, split: str) -> list[Path]:
    if source.is_file():
        return [source]
    found = [p for suffix in SUFFIXES for p in sorted(source.glob(f"{split}*{suffix}"))]
    if not found:
        raise InputError(f"no {split}*.jsonl / {split}*.parquet file in the folder", path=str(source))
    return found


def _plain(value: Any) -> Any:
    """A Parquet cell as plain JSON values (numpy arrays and structs -> lists and dicts)."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def read_rows(source: str | Path, split: str = "train") -> list[dict[str, Any]]:
    """Validated contract-5 rows from a .jsonl/.parquet file or a dataset folder (`{split}.jsonl`)."""
    import pandas as pd

    rows = []
    for path in _files_for(Path(source), split):
        if path.suffix == ".parquet":
            raw = pd.read_parquet(path).to_dict(orient="records")
            rows += [validate_row(_plain(r), f"{path} row {i}") for i, r in enumerate(raw)]
            continue
        rows += iter_jsonl(path, validate_row)
    if not rows:
        raise InputError("no training rows", path=str(source))
    return rows


def read_samples(source: str | Path, split: str = "dev") -> list[dict[str, Any]]:
    """Synthesized FinIndices samples (contract 4, validated as `Sample`) as dicts, for eval during training."""
    samples = []
    for path in _files_for(Path(source), split):
        if path.suffix == ".parquet":
            raise InputError("eval samples must be JSONL (contract 4)", path=str(path))
        samples += [sample.to_dict() for sample in iter_jsonl(path, Sample)]
    return samples


def load_training_dataset(name_or_path: str, split: str = "train", config: str | None = None):
    """A `datasets.Dataset` with one `messages` column, from a local path or a Hub dataset id."""
    from datasets import Dataset, load_dataset

    if Path(name_or_path).exists():
        return Dataset.from_list(read_rows(name_or_path, split))
    hub = load_dataset(name_or_path, name=config, split=split)
    rows = [validate_row(r, f"{name_or_path}[{split}] row {i}") for i, r in enumerate(hub)]
    return Dataset.from_list(rows)


def drop_overlong(dataset, tokenizer, chat_template: str | None, max_length: int | None, batch_size: int = 256):
    """(dataset without rows longer than `max_length` tokens, number dropped).

    Counted with the model's own tokenizer and training template, as SFTTrainer will see them: TRL
    truncates a longer row at `max_length`, which cuts off its final answer and end-of-turn token (the
    synth cap is counted in prompt tokens of whatever `--tokenizer` it was given, without the solution).
    Rows whose rendered text has fewer characters than `max_length` minus 64 cannot be longer and are
    not tokenized."""
    if not max_length:
        return dataset, 0
    texts = [tokenizer.apply_chat_template(row["messages"], chat_template=chat_template, tokenize=False) for row in dataset]
    suspects = [i for i, t in enumerate(texts) if len(t) >= max_length - 64]
    over = set()
    for start in range(0, len(suspects), batch_size):
        chunk = suspects[start:start + batch_size]
        ids = tokenizer([texts[i] for i in chunk], add_special_tokens=False)["input_ids"]
        over |= {i for i, row_ids in zip(chunk, ids) if len(row_ids) > max_length}
    if not over:
        return dataset, 0
    return dataset.select([i for i in range(len(dataset)) if i not in over]), len(over)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Validate training rows and print counts.")
    parser.add_argument("source", help="file, dataset folder or Hub id")
    parser.add_argument("--split", default="train")
    args = parser.parse_args(argv)
    dataset = load_training_dataset(args.source, args.split)
    with_reasoning = sum(any(m.get("reasoning_content") for m in r["messages"]) for r in dataset)
    print(f"{len(dataset)} rows ({with_reasoning} with reasoning_content) from {args.source} [{args.split}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
