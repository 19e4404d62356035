"""`ledgerlm synth --push-to-hub REPO`: publish a built dataset with its card through `datasets`.

    ledgerlm synth --out runs/finindices --push-to-hub me/finindices-sec      # needs HF_TOKEN / `hf auth login`

`load_splits(DIR)` is exactly what gets uploaded: `datasets.load_dataset(DIR)` reads the dataset card's
`configs` (train.jsonl -> train, dev.jsonl -> validation, test.jsonl -> test). `push` first uploads the
card (README.md) and manifest.json, then calls `DatasetDict.push_to_hub`, which writes the splits as
Parquet and merges its `configs` / `dataset_info` into that card, so the Hub page shows our card.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from ledgerlm.errors import InputError, LedgerError

CARD_SPLITS = ("train", "validation", "test")  # the names the card gives train/dev/test.jsonl (card.SPLIT_NAMES)


def load_splits(folder: str | Path):
    """The DatasetDict that `push` uploads: `datasets.load_dataset(folder)` through the card's configs."""
    import datasets

    folder = Path(folder)
    for name in ("README.md", "train.jsonl", "dev.jsonl", "test.jsonl"):
        if not (folder / name).is_file():
            raise InputError(f"no {name}: not a finished `ledgerlm synth` dataset folder", path=str(folder))
    bars = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()  # reading local files: no "Generating train split" bars around a push's one-line error
    try:
        # a private, throw-away cache: datasets keys its cache by folder *name* and card, so a cached build of an
        # earlier folder with the same name would be uploaded instead of these files
        with tempfile.TemporaryDirectory(prefix="ledgerlm-publish-") as cache:
            splits = datasets.load_dataset(str(folder), cache_dir=cache, keep_in_memory=True)
    except Exception as err:  # datasets raises many types (DatasetGenerationError, ValueError, ...)
        raise InputError(f"datasets.load_dataset cannot read it: {type(err).__name__}: {str(err).splitlines()[0][:300]}",
                         path=str(folder)) from None
    finally:
        if bars:
            datasets.enable_progress_bars()
    if tuple(splits) != CARD_SPLITS:
        raise InputError(f"the card's configs give splits {list(splits)}, expected {list(CARD_SPLITS)}", path=str(folder / "README.md"))
    return splits


def push(folder: str | Path, repo_id: str, *, private: bool = False, token: str | None = None) -> str:
    """Upload card + manifest, then the splits with `DatasetDict.push_to_hub`; returns the dataset URL."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HTTPError  # the Hub client's transport errors (httpx2's ConnectError, ...)

    folder = Path(folder)
    splits = load_splits(folder)
    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        for name in ("README.md", "manifest.json"):
            api.upload_file(path_or_fileobj=str(folder / name), path_in_repo=name, repo_id=repo_id, repo_type="dataset",
                            commit_message=f"ledgerlm synth: {name}")
        splits.push_to_hub(repo_id, private=private, token=token, commit_message="ledgerlm synth: train/validation/test")
    except (OSError, ValueError, HTTPError) as err:  # Hub HTTP errors and HF_HUB_OFFLINE are OSErrors; a bad repo id a ValueError
        reason = (str(err).strip().splitlines() or [""])[0][:300]
        raise LedgerError(f"the dataset is built at {folder}; push to https://huggingface.co/datasets/{repo_id} failed: "
                          f"{type(err).__name__}: {reason}") from None
    return f"https://huggingface.co/datasets/{repo_id}"
