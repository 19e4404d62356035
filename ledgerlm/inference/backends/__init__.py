"""Sampler backends behind one interface (`ledgerlm.inference.sampling.Sampler`), chosen from one table.

    python -c "from ledgerlm.inference.backends import make_backend; print(make_backend('oracle').model_id)"

| name         | module / class                  | what                                                          |
|--------------|---------------------------------|---------------------------------------------------------------|
| `hf`         | `hf.HFSampler`                  | transformers, chat template, batched left-padded generation   |
| `vllm`       | `vllm.VLLMSampler`              | in-process vLLM engine (imported only when used), LoRA        |
| `openai`     | `openai_compat.OpenAISampler`   | any OpenAI-compatible server (async, bounded concurrency)     |
| `oracle`     | `oracle.OracleSampler`          | answers with each item's worked `solution` (needs `items=`)   |
| `wrong_unit` | added by `ledgerlm.evaluate.finindices.reference` | the oracle with every final-answer number ×1000    |

A new backend is one module and one `BACKENDS` row: module path, class, the options it takes
(name -> type; strings from `--model_args` are converted), whether it needs a target (the model
path / id) and how distill drives it (`protocol`: "batch" = blocking `generate` in a worker thread,
"async" = one request per conversation on `open_slots`/`request`). A layer above adds its own rows
with `register_backend` (FinIndices adds `wrong_unit`, which needs the scorer's answer grammar);
this layer never imports a benchmark.

Specs: `hf:PATH` or `hf` with `pretrained=PATH` (lm-eval's name; `model=` too), likewise for the
other backends. Options set to None are dropped, so a CLI can pass every flag it has; an option of
another backend is ignored, one that is no backend's option raises TypeError naming it.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from ledgerlm.errors import InputError
from ledgerlm.inference.backends.prompt import chat_template_option


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"not a boolean: {value!r}")


@dataclass(frozen=True)
class Backend:
    module: str  # import path of the backend module
    cls: str  # the Sampler class in it
    options: Mapping[str, Callable[[Any], Any]]  # option name -> converter (int, float, str, _bool)
    needs_target: bool = True  # hf:PATH needs PATH; oracle takes none
    fixed: Mapping[str, Any] = field(default_factory=dict)  # constructor arguments set by the row itself
    protocol: str = "batch"  # "batch" | "async" (see the module docstring)

    def load(self) -> type:
        return getattr(importlib.import_module(self.module), self.cls)


BACKENDS: dict[str, Backend] = {
    "hf": Backend("ledgerlm.inference.backends.hf", "HFSampler",
                  {"peft": str, "device": str, "dtype": str, "batch_size": int, "trust_remote_code": _bool, "revision": str,
                   "max_model_len": int, "chat_template": chat_template_option}),
    "vllm": Backend("ledgerlm.inference.backends.vllm", "VLLMSampler",
                    {"tensor_parallel_size": int, "max_model_len": int, "gpu_memory_utilization": float,
                     "trust_remote_code": _bool, "dtype": str, "peft": str, "max_lora_rank": int, "revision": str,
                     "enforce_eager": _bool, "enable_prefix_caching": _bool, "chunk_size": int,
                     "chat_template": chat_template_option}),
    "openai": Backend("ledgerlm.inference.backends.openai_compat", "OpenAISampler",
                      {"base_url": str, "api_key_env": str, "concurrency": int, "max_retries": int, "timeout": float,
                       "backoff_base": float, "backoff_max": float}, protocol="async"),
    "oracle": Backend("ledgerlm.inference.backends.oracle", "OracleSampler", {}, needs_target=False),
}
TARGET_ALIASES = ("pretrained", "model")


def register_backend(name: str, row: Backend) -> None:
    """Add a table row from a layer above (a benchmark's reference model); re-registering the same row is a no-op."""
    if BACKENDS.get(name, row) != row:
        raise ValueError(f"backend {name!r} is already registered as {BACKENDS[name]}")
    BACKENDS[name] = row  # lm-eval's --model_args names for the model path / id


def split_spec(spec: str, options: Mapping[str, Any] | None = None) -> tuple[str, Backend, str | None, dict[str, Any]]:
    """(name, table row, target, remaining options) for `spec` + options; InputError for an unknown name."""
    options = {k: v for k, v in (options or {}).items() if v is not None}
    name, _, target = spec.partition(":")
    row = BACKENDS.get(name)
    if row is None:
        raise InputError(f"model spec {spec!r}: unknown backend {name!r} ({', '.join(BACKENDS)})", field="--model")
    aliases = [a for a in TARGET_ALIASES if a in options]
    if aliases:
        if target or len(aliases) > 1:
            raise InputError(f"model spec {spec!r}: the model is given twice ({', '.join(aliases)}{' and after the colon' if target else ''})", field="--model")
        target = str(options.pop(aliases[0]))
    if row.needs_target and not target:
        raise InputError(f"model spec {spec!r}: {name} needs a model ({name}:PATH_OR_ID or pretrained=PATH_OR_ID)", field="--model")
    if not row.needs_target and target:
        raise InputError(f"model spec {spec!r}: {name} takes no model", field="--model")
    return name, row, target or None, options


def backend_options(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The options backend `name` takes, converted to their types; others' options dropped; unknown ones fail."""
    unknown = set(options) - {opt for row in BACKENDS.values() for opt in row.options}
    if unknown:
        raise TypeError(f"{name}: unknown backend option(s) {sorted(unknown)}")
    row = BACKENDS[name]
    out = {}
    for key, value in options.items():
        if key not in row.options:
            continue
        try:
            out[key] = row.options[key](value)
        except (TypeError, ValueError) as err:
            raise InputError(f"{name} option {key}={value!r}: {err}", field="--model_args") from err
    return out


def make_backend(spec: str, **options: Any):
    """Build the sampler named by `spec` (a BACKENDS row, optionally `name:TARGET`) with its options."""
    name, row, target, options = split_spec(spec, options)
    kwargs = {**backend_options(name, options), **row.fixed}
    cls = row.load()
    return cls(target, **kwargs) if row.needs_target else cls(**kwargs)


def looks_like_local_path(value: str) -> bool:
    """`value` can only be a folder, never a Hub id (`name` or `namespace/name`): it starts with / ./ ../ or ~, has more
    than one '/', or a backslash. A URL (`s3://bucket/model`, `gs://…`: vLLM's object-storage loaders) is neither."""
    if "://" in value:
        return False
    return value.startswith(("/", "./", "../", "~")) or value.count("/") > 1 or "\\" in value


def require_model_folder(path: str, field: str = "--model") -> None:
    """A model path that looks local (`looks_like_local_path`) must exist; otherwise transformers / vLLM would take a
    mistyped folder for a Hub id and retry the network (~52 s) before failing."""
    if looks_like_local_path(path) and not Path(path).expanduser().exists():
        raise InputError(f"no such model folder: {path}", field=field)


def parse_model_args(text: str | None, flag: str = "--model_args") -> dict[str, str]:
    """lm-eval's `--model_args a=1,b=x` (or any `flag` of key=value pairs) as a dict of strings (values are typed by the
    backend row); a piece without `=` or a key given twice is one error naming the flag."""
    out: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise InputError(f"{flag}: {part.strip()!r} is not key=value", field=flag)
        if key.strip() in out:
            raise InputError(f"{flag}: {key.strip()} given twice", field=flag)
        out[key.strip()] = value.strip()
    return out
