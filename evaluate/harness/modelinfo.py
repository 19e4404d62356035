"""Provenance for results.json: library versions and the model's revision/hash.

    python -c "from ledgerlm.evaluate.harness.modelinfo import library_versions; print(library_versions())"

`model_fingerprint(path)`: for a local model folder, sha256 prefixes of config.json and of the weights
(`model.safetensors` / `pytorch_model.bin`, or the shard index of a sharded checkpoint, plus a PEFT
adapter's `adapter_model.safetensors`); for a Hub id, the revision (commit hash) of the locally cached
snapshot. Nothing is downloaded; an unreadable model gives None fields, never an error.
"""
from __future__ import annotations

import functools
import hashlib
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

LIBRARIES = ("torch", "transformers", "vllm", "trl", "peft", "datasets")
WEIGHTS = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json", "pytorch_model.bin.index.json",
           "adapter_model.safetensors", "adapter_model.bin")
PREFIX = 16  # hex characters kept of each sha256


def library_versions() -> dict[str, str | None]:
    """Installed versions of the libraries that change results (None when absent), plus ledgerlm and python."""
    out: dict[str, str | None] = {}
    for name in ("ledgerlm", *LIBRARIES):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    out["python"] = platform.python_version()
    return out


@functools.lru_cache(maxsize=1)
def git_hash() -> str | None:
    """Short commit of the ledgerlm source tree when it is a git checkout (lm-eval's `git_hash`), else None."""
    try:
        done = subprocess.run(["git", "-C", str(Path(__file__).resolve().parent), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def sha256_prefix(path: Path, chunk: int = 1 << 22) -> str:
    """First PREFIX hex characters of the file's sha256 (memoised per path, size and mtime: a multi-task run
    hashes a large weights file once)."""
    stat = Path(path).stat()
    return _sha256_prefix(str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns, chunk)


@functools.lru_cache(maxsize=64)
def _sha256_prefix(path: str, _size: int, _mtime_ns: int, chunk: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()[:PREFIX]


def _folder_fingerprint(folder: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if (folder / "config.json").is_file():
        out["config_sha256"] = sha256_prefix(folder / "config.json")
    for name in WEIGHTS:
        if (folder / name).is_file():
            out["weights_file"], out["weights_sha256"] = name, sha256_prefix(folder / name)
            break
    for name in (folder / "adapter_config.json",):
        if name.is_file():
            out["adapter_config_sha256"] = sha256_prefix(name)
    return out


def _hub_revision(repo_id: str) -> str | None:
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(repo_id, local_files_only=True)).name
    except Exception:  # not cached, not a repo id, hub not installed: no revision to report
        return None


def model_fingerprint(path_or_id: str | None, peft: str | None = None) -> dict[str, Any]:
    """{"path", "revision"?, "config_sha256"?, "weights_file"?, "weights_sha256"?, "peft": {...}?}."""
    if not path_or_id:
        return {}
    out: dict[str, Any] = {"path": path_or_id}
    folder = Path(path_or_id)
    if folder.is_dir():
        out.update(_folder_fingerprint(folder))
    elif folder.is_file():  # a single GGUF or weights file
        out["weights_file"], out["weights_sha256"] = folder.name, sha256_prefix(folder)
    elif path_or_id.count("/") == 1:
        out["revision"] = _hub_revision(path_or_id)
    if peft:
        out["peft"] = model_fingerprint(peft)
    return out
