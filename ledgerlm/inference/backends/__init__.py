"""Sampler backends behind one interface (`ledgerlm.inference.sampling.Sampler`).

    python -c "from ledgerlm.inference.backends import make_backend; print(make_backend('oracle').model_id)"

| spec            | backend                                                        | options                         |
|-----------------|----------------------------------------------------------------|---------------------------------|
| `hf:PATH_OR_ID` | transformers, chat template, batched left-padded generation   | peft, device, dtype, batch_size, trust_remote_code |
| `vllm:PATH`     | in-process vLLM engine (imported only when used)               | tensor_parallel_size, max_model_len, gpu_memory_utilization |
| `openai:MODEL`  | any OpenAI-compatible server (async, bounded concurrency)      | base_url, api_key_env, concurrency, max_retries, timeout |
| `oracle`        | answers with each item's worked `solution` (needs `items=`)    | —                               |
| `wrong_unit`    | the oracle with every final-answer number ×1000                | —                               |

Options set to None are dropped, so a CLI can pass every flag it has; an option a backend does not
take raises TypeError naming it.
"""
from __future__ import annotations

from typing import Any

from ledgerlm.errors import InputError


def make_backend(spec: str, **options: Any):
    """Build the sampler named by `spec` (see the table above)."""
    options = {k: v for k, v in options.items() if v is not None}
    kind, _, target = spec.partition(":")
    if kind == "oracle" and not target:
        from ledgerlm.inference.backends.oracle import OracleSampler

        return OracleSampler()
    if kind == "wrong_unit" and not target:
        from ledgerlm.inference.backends.oracle import OracleSampler

        return OracleSampler(scale=1000)
    if not target:
        raise InputError(f"model spec {spec!r}: expected hf:PATH, vllm:PATH, openai:MODEL, oracle or wrong_unit", field="--model")
    if kind == "hf":
        from ledgerlm.inference.backends.hf import HFSampler

        return HFSampler(target, **_only(options, HF_OPTIONS, spec))
    if kind == "vllm":
        from ledgerlm.inference.backends.vllm import VLLMSampler

        return VLLMSampler(target, **_only(options, VLLM_OPTIONS, spec))
    if kind == "openai":
        from ledgerlm.inference.backends.openai_compat import OpenAISampler

        return OpenAISampler(target, **_only(options, OPENAI_OPTIONS, spec))
    raise InputError(f"model spec {spec!r}: unknown backend {kind!r} (hf, vllm, openai, oracle, wrong_unit)", field="--model")


HF_OPTIONS = ("peft", "device", "dtype", "batch_size", "trust_remote_code")
VLLM_OPTIONS = ("tensor_parallel_size", "max_model_len", "gpu_memory_utilization", "trust_remote_code")
OPENAI_OPTIONS = ("base_url", "api_key_env", "concurrency", "max_retries", "timeout", "backoff_base", "backoff_max")
ALL_OPTIONS = frozenset(HF_OPTIONS + VLLM_OPTIONS + OPENAI_OPTIONS)


def _only(options: dict[str, Any], allowed: tuple[str, ...], spec: str) -> dict[str, Any]:
    """Keep the options this backend takes; generic CLI flags for other backends are dropped,
    anything that is no backend's option fails loudly."""
    unknown = set(options) - ALL_OPTIONS
    if unknown:
        raise TypeError(f"{spec}: unknown backend option(s) {sorted(unknown)}")
    return {k: v for k, v in options.items() if k in allowed}
