"""lm-eval-style argument strings: `--model_args k=v,k=v`, `--gen_kwargs`, `--task_args`; model spec building.

    python -c "from ledgerlm.evaluate.harness.args import parse_kv; print(parse_kv('pretrained=m,dtype=bfloat16,max_model_len=4096'))"

Values are typed like lm-evaluation-harness's `simple_parse_args_string`: true/false -> bool, integers,
floats, everything else a string. `--gen_kwargs` names follow lm-eval (`max_gen_toks`, `until`,
`do_sample`, `temperature`, `top_p`, `seed`) and map onto `GenerationParams`.
"""
from __future__ import annotations

from dataclasses import fields
from typing import Any

from ledgerlm.errors import InputError
from ledgerlm.inference import backends
from ledgerlm.inference.sampling import GenerationParams

MODEL_KINDS = ("hf", "vllm", "openai", "oracle", "wrong_unit")
GEN_ALIASES = {"max_gen_toks": "max_tokens", "max_new_tokens": "max_tokens", "until": "stop"}


def _typed(value: str) -> Any:
    low = value.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def parse_kv(text: str | None, flag: str = "--model_args") -> dict[str, Any]:
    """'a=1,b=x' -> {'a': 1, 'b': 'x'} (the backends' `parse_model_args`, values typed); a piece without '=' or a key
    given twice is one clear error naming the flag."""
    return {key: _typed(value) for key, value in backends.parse_model_args(text, flag).items()}


def generation_params(defaults: dict[str, Any], gen_kwargs: dict[str, Any], seed: int) -> GenerationParams:
    """Task defaults, then --gen_kwargs (lm-eval names accepted), seed from --seed unless gen_kwargs sets it."""
    known = {f.name for f in fields(GenerationParams)}
    merged = {k: v for k, v in defaults.items() if k in known}
    merged["seed"] = seed
    for key, value in gen_kwargs.items():
        if key == "do_sample":
            if value is False:
                merged["temperature"] = 0.0
            continue
        name = GEN_ALIASES.get(key, key)
        if name not in known:
            raise InputError(f"unknown generation kwarg {key!r} (known: {sorted(known | set(GEN_ALIASES) | {'do_sample'})})",
                             field="--gen_kwargs")
        merged[name] = value
    if isinstance(merged.get("stop"), str):
        merged["stop"] = tuple(s for s in merged["stop"].split("|") if s)
    elif merged.get("stop") is not None:
        merged["stop"] = tuple(merged["stop"])
    try:
        return GenerationParams(**merged)
    except TypeError as err:
        raise InputError(str(err), field="--gen_kwargs") from err


def model_spec(model: str, model_args: dict[str, Any], batch_size: int | None = None) -> tuple[str, dict[str, Any]]:
    """(`make_sampler` spec, backend options) from `--model KIND --model_args ...`.

    hf/vllm take `pretrained=PATH_OR_ID`; openai takes `model=NAME` (or `pretrained=`); oracle and
    wrong_unit take nothing; `hf:PATH`-style specs work too. The backend table is the inference layer's
    (`ledgerlm.inference.backends.BACKENDS`). Options this backend does not take are one error naming
    them (never silently dropped). A spec of no backend (`baseline:naive`) is passed through as is, for
    a benchmark's own reference models (`Benchmark.make_sampler`).
    """
    args = {k: v for k, v in model_args.items() if v is not None}
    kind = model.partition(":")[0]
    table = getattr(backends, "BACKENDS", {})
    if kind not in table:
        if ":" in model:
            return model, args
        raise InputError(f"unknown --model {model!r}; one of {', '.join(table) or ', '.join(MODEL_KINDS)} (or a spec such as hf:PATH)",
                         field="--model")
    name, row, target, options = backends.split_spec(model, args)
    if batch_size is not None and "batch_size" in row.options and "batch_size" not in options:
        options["batch_size"] = batch_size
    bad = sorted(set(options) - set(row.options))
    if bad:
        raise InputError(f"--model {name} does not take {bad} (it takes: {', '.join(row.options) or 'no options'})", field="--model_args")
    return (f"{name}:{target}" if target else name), options


def backend_options(kind: str) -> tuple[str, ...] | None:
    """The option names backend `kind` takes (the inference layer's BACKENDS table); None for a spec of no backend."""
    row = getattr(backends, "BACKENDS", {}).get(kind)
    return None if row is None else tuple(row.options)
