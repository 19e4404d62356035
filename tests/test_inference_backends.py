"""The backend table: a new backend is one module + one row; specs in both forms (`hf:PATH` and lm-eval's
`hf` + `pretrained=PATH`); `--model_args` strings typed by the row; distill teachers built from the same table.

    python -m pytest tests/test_inference_backends.py -q
"""
from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import types

import pytest

from ledgerlm.errors import InputError
from ledgerlm.inference import backends
from ledgerlm.inference.backends import BACKENDS, Backend, make_backend, parse_model_args
from ledgerlm.inference.cache import CompletionCache, generate_cached
from ledgerlm.inference.sampling import Completion, GenerationParams, make_sampler
from ledgerlm.synth.distill import teachers


class EchoSampler:
    """A backend written for this test only: echoes the last message, prefixed by `greeting`."""

    def __init__(self, target, *, greeting: str = "hi", repeat: int = 1, loud: bool = False):
        self.model_id = f"echo:{target}"
        self.greeting, self.repeat, self.loud = greeting, repeat, loud

    def generate(self, batch, params, **kwargs):
        out = []
        for messages in batch:
            text = f"{self.greeting} " + " ".join([messages[-1]["content"]] * self.repeat)
            out.append(Completion(text=text.upper() if self.loud else text))
        return out


@pytest.fixture()
def echo_row(monkeypatch):
    module = types.ModuleType("ledgerlm_test_echo_backend")
    module.EchoSampler = EchoSampler
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(BACKENDS, "echo", Backend(module.__name__, "EchoSampler", {"greeting": str, "repeat": int, "loud": backends._bool}))
    return module


def test_a_new_backend_is_one_module_and_one_row(echo_row, tmp_path):
    sampler = make_sampler("echo:box", greeting="yo", repeat="2", loud="true")  # strings, as --model_args gives them
    assert (sampler.model_id, sampler.repeat, sampler.loud) == ("echo:box", 2, True)
    same = make_sampler("echo", pretrained="box", **parse_model_args("greeting=yo,repeat=2,loud=1"))
    assert vars(same) == vars(sampler)
    batch = [[{"role": "user", "content": c}] for c in ("a", "b")]
    with CompletionCache(tmp_path / "c.jsonl") as cache:
        out, stats = generate_cached(sampler, batch, GenerationParams(), cache=cache)
    assert [c.text for c in out] == ["YO A A", "YO B B"] and stats["generated"] == 2
    teacher = teachers.make_teacher("echo:box", concurrency=2, greeting="yo", base_url="http://ignored")  # other rows' options dropped
    assert isinstance(teacher, teachers.BatchTeacher) and teacher.model_id == "echo:box"


def test_rows_choose_the_distill_protocol():
    import ledgerlm.evaluate.finindices.reference as reference  # adds FinIndices' wrong_unit row

    assert {name: row.protocol for name, row in BACKENDS.items()} == {
        "hf": "batch", "vllm": "batch", "openai": "async", "oracle": "batch", "wrong_unit": "batch"}
    assert BACKENDS["wrong_unit"].module == reference.__name__ and make_backend("wrong_unit").model_id == "wrong_unit_x1000"
    reference_again = Backend(reference.__name__, "WrongUnitSampler", {}, needs_target=False)
    backends.register_backend("wrong_unit", reference_again)  # the same row again: a no-op
    with pytest.raises(ValueError, match="already registered"):
        backends.register_backend("wrong_unit", Backend("elsewhere", "X", {}))
    teacher = teachers.make_teacher("openai", model="m", base_url="http://127.0.0.1:9/v1", concurrency=2)
    assert isinstance(teacher, teachers.OpenAITeacher) and teacher.sampler.model == "m"
    asyncio.run(teacher.aclose())
    assert isinstance(teachers.make_teacher("oracle"), teachers.BatchTeacher)


def test_the_inference_layer_alone_has_no_benchmark_rows():
    code = "import ledgerlm.inference.backends as b, sys; print(sorted(b.BACKENDS), any(m.startswith('ledgerlm.evaluate') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "['hf', 'openai', 'oracle', 'vllm'] False"


def test_options_are_typed_by_the_row():
    sampler = make_backend("openai", model="m", base_url="http://h/v1", concurrency="3", timeout="2.5", max_retries="0", backoff_max="9")
    assert (sampler.concurrency, sampler.timeout, sampler.retry.max_retries, sampler.retry.cap) == (3, 2.5, 0, 9.0)
    assert sampler.model_id == "openai:m@http://h/v1"
    with pytest.raises(InputError, match="concurrency='many'"):
        make_backend("openai:m", concurrency="many")
    with pytest.raises(TypeError, match="colour"):
        make_backend("openai:m", colour="blue")
    assert make_backend("oracle", peft="x", base_url="y").model_id == "oracle"  # other rows' options are dropped


@pytest.mark.parametrize("spec, options, message", [
    ("foo:bar", {}, "unknown backend 'foo'"),
    ("hf", {}, "hf needs a model"),
    ("hf:a", {"pretrained": "b"}, "given twice"),
    ("openai", {"pretrained": "a", "model": "b"}, "given twice"),
    ("oracle:x", {}, "takes no model"),
])
def test_bad_specs_are_one_clear_error(spec, options, message):
    with pytest.raises(InputError, match=message):
        make_backend(spec, **options)


def test_parse_model_args():
    assert parse_model_args("pretrained=Qwen/Qwen3-8B, dtype=bfloat16,peft=runs/a=b") == {
        "pretrained": "Qwen/Qwen3-8B", "dtype": "bfloat16", "peft": "runs/a=b"}
    assert parse_model_args("") == {} and parse_model_args(None) == {}
    with pytest.raises(InputError, match="not key=value"):
        parse_model_args("pretrained")
    with pytest.raises(InputError, match="twice"):
        parse_model_args("dtype=a,dtype=b")


@pytest.mark.parametrize("value, local", [("Qwen/Qwen3-0.6B", False), ("gpt2", False), ("runs/tiny-model", False),
                                          ("./no/such", True), ("../m", True), ("/abs/m", True), ("~/m", True),
                                          ("runs/a/b", True), ("runs\\m", True), ("s3://bucket/org/model", False)])
def test_what_counts_as_a_local_model_path(value, local, tmp_path):
    """A value that cannot be a Hub id must be an existing folder: `no such model folder` at once, not Hub retries."""
    assert backends.looks_like_local_path(value) is local
    if local:
        with pytest.raises(InputError, match=f"no such model folder: {re.escape(value)}"):
            backends.require_model_folder(value)
    backends.require_model_folder(str(tmp_path))  # an existing folder passes
