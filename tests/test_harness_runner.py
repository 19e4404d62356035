"""The harness runner: resume after a crash, cache, one seed, multi-task layout, the multi-turn hook, results.json
provenance, lm-eval argument strings.

    python -m pytest -q tests/test_harness_runner.py
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ledgerlm.errors import InputError
from ledgerlm.evaluate.harness import REGISTRY, Benchmark, Metric, Request, Summary, register
from ledgerlm.evaluate.harness.args import generation_params, model_spec, parse_kv
from ledgerlm.evaluate.harness.modelinfo import model_fingerprint
from ledgerlm.evaluate.harness.runner import RunConfig, evaluate
from ledgerlm.evaluate.runfiles import read_run
from ledgerlm.inference.sampling import Completion


class Echo(Benchmark):
    """echo the instance number back (test benchmark)"""
    name = "echo"
    version = 3
    primary_metric = "match"
    higher_is_better = {"match": True}
    N = 70

    def load(self):
        return [{"id": f"e{k:03d}", "k": k} for k in range(self.N)]

    def build_request(self, instance):
        return Request(messages=[{"role": "user", "content": f"say {instance['k']}"}])

    def make_sampler(self, spec, options):
        return SAMPLERS[spec] if spec in SAMPLERS else None

    def score(self, instance, response):
        return {"id": instance["id"], "response": response.text, "score": int(response.text == str(instance["k"])),
                "backend_error": response.error}

    def summarize(self, samples, ctx):
        n = len(samples)
        return Summary(metrics={"match": Metric(sum(s["score"] for s in samples) / n, n)}, detail={"seed_seen": ctx.seed})


class Echo2(Echo):
    name = "echo2"
    N = 5


class Counting:
    """Answers `say K` with K; raises on call number `crash_on` (a killed run); counts generated prompts."""
    model_id = "counting"

    def __init__(self, crash_on: int | None = None):
        self.calls, self.prompts, self.crash_on = 0, [], crash_on

    def generate(self, batch, params, **kwargs):
        self.calls += 1
        if self.calls == self.crash_on:
            raise KeyboardInterrupt("killed")
        self.prompts += [m[-1]["content"] for m in batch]
        return [Completion(text=m[-1]["content"].removeprefix("say ")) for m in batch]


SAMPLERS: dict[str, Counting] = {}


@pytest.fixture()
def echo():
    register("echo", Echo)
    register("echo2", Echo2)
    yield
    REGISTRY.pop("echo", None)
    REGISTRY.pop("echo2", None)
    SAMPLERS.clear()


def config(out: Path, model: str, **kw) -> RunConfig:
    return RunConfig(model=model, tasks=kw.pop("tasks", ["echo"]), output_path=out, progress=False, **kw)


def test_a_killed_run_resumes_where_it_stopped(echo, tmp_path):
    out = tmp_path / "run"
    SAMPLERS["script:crash"] = Counting(crash_on=2)  # the second batch of 32 dies
    with pytest.raises(KeyboardInterrupt):
        evaluate(config(out, "script:crash", use_cache=False))
    assert not (out / "results.json").exists()  # results.json marks a finished run
    logged = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert [r["id"] for r in logged] == [f"e{k:03d}" for k in range(32)]  # the first batch was logged as it finished
    SAMPLERS["script:crash"] = again = Counting()
    results, code = evaluate(config(out, "script:crash", use_cache=False))
    assert code == 0 and len(again.prompts) == Echo.N - 32 and again.prompts[0] == "say 32"
    assert results["results"]["echo"]["match"] == 1.0 and results["time"]["resumed"] == 32
    _, samples = read_run(out)
    assert [s["id"] for s in samples] == [f"e{k:03d}" for k in range(Echo.N)]


def test_a_changed_configuration_starts_afresh_and_the_cache_answers_it(echo, tmp_path):
    out = tmp_path / "run"
    SAMPLERS["script:a"] = first = Counting()
    evaluate(config(out, "script:a", limit=10))
    assert len(first.prompts) == 10
    SAMPLERS["script:a"] = second = Counting()
    results, _ = evaluate(config(out, "script:a", limit=10, gen_kwargs={"max_gen_toks": 7}))  # other params: no resume, no cache hit
    assert len(second.prompts) == 10 and results["config"]["generation"]["max_tokens"] == 7
    SAMPLERS["script:a"] = third = Counting()
    results, _ = evaluate(config(out, "script:a", limit=10, gen_kwargs={"max_gen_toks": 7}, resume=False))
    assert third.prompts == [] and results["time"]["cached"] == 10  # every answer from OUT/cache.jsonl


def test_one_seed_reaches_generation_and_summary(echo, tmp_path):
    SAMPLERS["script:s"] = Counting()
    results, _ = evaluate(config(tmp_path / "r", "script:s", seed=1234, limit=0.1))
    assert results["config"]["generation"]["seed"] == 1234 and results["seed_seen"] == 1234
    assert results["n-samples"]["echo"] == {"original": Echo.N, "effective": 7}  # --limit 0.1: ceil(10 % of 70)


def test_several_tasks_get_one_folder_each_and_an_aggregate(echo, tmp_path):
    SAMPLERS["script:m"] = Counting()
    aggregate, code = evaluate(config(tmp_path / "multi", "script:m", tasks=["echo", "echo2"]))
    assert code == 0 and set(aggregate["results"]) == {"echo", "echo2"}
    assert aggregate["versions"] == {"echo": 3, "echo2": 3} and aggregate["results"]["echo2"]["match_n"] == 5
    on_disk = json.loads((tmp_path / "multi" / "results.json").read_text())
    assert on_disk["results"] == aggregate["results"] and on_disk["task_folders"] == {"echo": "echo", "echo2": "echo2"}
    for task, n in (("echo", Echo.N), ("echo2", 5)):
        results, samples = read_run(tmp_path / "multi" / task)
        assert results["results"][task]["n"] == n == len(samples)


class TwoTurn(Benchmark):
    """asks, then asks to confirm: the multi-turn protocol hook (test benchmark)"""
    name = "twoturn"
    multi_turn = True
    higher_is_better = {"confirmed": True}

    def load(self):
        return [{"id": f"t{k}", "k": k} for k in range(3)]

    def make_sampler(self, spec, options):
        return SAMPLERS.get(spec)

    def converse(self, instances, ctx):
        first = [[{"role": "user", "content": f"say {i['k']}"}] for i in instances]
        replies = ctx.generate(first)
        second = [m + [{"role": "assistant", "content": r.text}, {"role": "user", "content": f"say {r.text}{r.text}"}]
                  for m, r in zip(first, replies)]
        for instance, final in zip(instances, ctx.generate(second)):
            yield instance, final

    def score(self, instance, response):
        return {"id": instance["id"], "response": response.text, "score": int(response.text == str(instance["k"]) * 2)}

    def summarize(self, samples, ctx):
        return Summary(metrics={"confirmed": Metric(sum(s["score"] for s in samples) / len(samples), len(samples))})


def test_multi_turn_benchmarks_drive_their_own_conversations_through_the_cache(tmp_path):
    register("twoturn", TwoTurn)
    try:
        SAMPLERS["script:t"] = first = Counting()
        results, _ = evaluate(config(tmp_path / "t", "script:t", tasks=["twoturn"]))
        assert results["results"]["twoturn"]["confirmed"] == 1.0 and first.calls == 2 and len(first.prompts) == 6
        SAMPLERS["script:t"] = second = Counting()
        results, _ = evaluate(config(tmp_path / "t", "script:t", tasks=["twoturn"], resume=False))
        assert second.calls == 0 and results["time"]["cached"] == 6
    finally:
        REGISTRY.pop("twoturn", None)
        SAMPLERS.clear()


def test_lm_eval_argument_strings():
    assert parse_kv("pretrained=org/m,dtype=bfloat16,max_model_len=4096,gpu_memory_utilization=0.85,trust_remote_code=True") == {
        "pretrained": "org/m", "dtype": "bfloat16", "max_model_len": 4096, "gpu_memory_utilization": 0.85, "trust_remote_code": True}
    with pytest.raises(InputError, match="--gen_kwargs.*'temperature'"):
        parse_kv("temperature", "--gen_kwargs")
    params = generation_params({"max_tokens": 8192, "temperature": 0.0}, parse_kv("max_gen_toks=64,until=</s>|###,top_p=0.9"), seed=5)
    assert (params.max_tokens, params.stop, params.top_p, params.seed) == (64, ("</s>", "###"), 0.9, 5)
    with pytest.raises(InputError, match="unknown generation kwarg 'beams'"):
        generation_params({}, {"beams": 2}, seed=0)


def test_model_args_become_a_backend_spec_and_foreign_options_are_rejected():
    assert model_spec("hf", {"pretrained": "runs/m", "dtype": "float32", "peft": "runs/a"}, batch_size=4) == (
        "hf:runs/m", {"dtype": "float32", "peft": "runs/a", "batch_size": 4})
    assert model_spec("vllm", {"pretrained": "org/m", "max_model_len": 4096, "tensor_parallel_size": 2}) == (
        "vllm:org/m", {"max_model_len": 4096, "tensor_parallel_size": 2})
    assert model_spec("openai", {"model": "gpt-x", "base_url": "http://h/v1"}) == ("openai:gpt-x", {"base_url": "http://h/v1"})
    assert model_spec("oracle", {}) == ("oracle", {})
    with pytest.raises(InputError, match=r"--model openai does not take \['peft'\]"):
        model_spec("openai", {"model": "gpt-x", "peft": "a"})
    with pytest.raises(InputError, match="needs a model"):
        model_spec("hf", {"dtype": "float32"})
    with pytest.raises(InputError, match="unknown --model 'gpt'"):
        model_spec("gpt", {})


def test_model_fingerprint_hashes_config_and_weights(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text('{"model_type": "llama"}')
    (tmp_path / "m" / "model.safetensors").write_bytes(b"\x00weights" * 1000)
    info = model_fingerprint(str(tmp_path / "m"))
    assert info["config_sha256"] == hashlib.sha256(b'{"model_type": "llama"}').hexdigest()[:16]
    assert info["weights_file"] == "model.safetensors"
    assert info["weights_sha256"] == hashlib.sha256(b"\x00weights" * 1000).hexdigest()[:16]
    assert model_fingerprint("no/such-model-anywhere")["revision"] is None  # not cached: no download, no error


def test_results_json_carries_provenance(echo, tmp_path):
    SAMPLERS["script:p"] = Counting()
    results, _ = evaluate(config(tmp_path / "p", "script:p", model_args={"api_key": "sekret"}, batch_size=2, limit=4))
    assert {"results", "versions", "higher_is_better", "n-samples", "config", "library_versions", "model_info", "date"} <= set(results)
    assert set(results["library_versions"]) >= {"torch", "transformers", "vllm", "trl"}
    import subprocess

    head = subprocess.run(["git", "-C", str(Path(__file__).parent), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    assert results["git_hash"] == (head.stdout.strip() or None) and results["n-shot"] == {"echo": 0}
    assert results["total_evaluation_time_seconds"] == results["time"]["wall_s"] > 0
    cfg = results["config"]
    assert cfg["model_args"] == {"api_key": "***"} and cfg["batch_size"] == 2 and cfg["limit"] == 4 and cfg["seed"] == 0
    assert "sekret" not in (tmp_path / "p" / "results.json").read_text()
    assert results["results"]["echo"] == {"alias": "echo", "n": 4, "match": 1.0, "match_n": 4, "match_stderr": None, "match_ci": None}


@pytest.mark.parametrize("chunk_size, calls", [(None, 1), (5, 14)])
def test_a_samplers_chunk_size_sets_the_calls(echo, tmp_path, chunk_size, calls):
    """vLLM declares chunk_size None: the whole request list in one call (continuous batching)."""
    sampler = Counting()
    sampler.chunk_size = chunk_size
    SAMPLERS["script:c"] = sampler
    evaluate(config(tmp_path / "c", "script:c", use_cache=False))
    assert sampler.calls == calls and len(sampler.prompts) == Echo.N


def test_progress_without_a_terminal_is_one_line_per_batch(echo, tmp_path, capsys):
    SAMPLERS["script:l"] = Counting()
    evaluate(RunConfig(model="script:l", tasks=["echo"], output_path=tmp_path / "l", use_cache=False))
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(" (")[0] for line in lines] == ["echo", "echo", "echo"]
    assert [line.split(": ")[1].split(" ")[0] for line in lines] == ["32/70", "64/70", "70/70"]


class Flaky(Counting):
    """Every third prompt gets a transport error on the first pass."""
    model_id = "flaky"

    def __init__(self, fail: bool):
        super().__init__()
        self.fail = fail

    def generate(self, batch, params, **kwargs):
        self.prompts += [m[-1]["content"] for m in batch]
        return [Completion(text="", finish_reason="error", error="ConnectError: refused")
                if self.fail and int(m[-1]["content"].split()[1]) % 3 == 0 else Completion(text=m[-1]["content"].removeprefix("say "))
                for m in batch]


def test_rows_without_an_answer_are_asked_again_on_resume(echo, tmp_path, capsys):
    SAMPLERS["script:f"] = Flaky(fail=True)
    results, code = evaluate(config(tmp_path / "f", "script:f", limit=9, max_failed_fraction=0.5))
    assert code == 0 and results["partial"] is True and results["backend_failures"]["failed"] == 3
    assert "3 of 9 items got no answer from flaky" in capsys.readouterr().err
    SAMPLERS["script:f"] = retry = Flaky(fail=False)
    results, code = evaluate(config(tmp_path / "f", "script:f", limit=9, max_failed_fraction=0.5))
    assert retry.prompts == ["say 0", "say 3", "say 6"] and results["results"]["echo"]["match"] == 1.0 and "partial" not in results


def test_an_output_path_that_is_a_file_is_one_error(echo, tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError, match="--output_path must be a folder"):
        evaluate(config(tmp_path / "f", "script:x"))


def test_cli_flags_reach_the_run_config():
    from ledgerlm.evaluate.cli import eval_parser, run_config

    args = eval_parser().parse_args(["--model", "hf", "--model_args", "pretrained=m,dtype=bfloat16", "--tasks", "finindices,macrolens_t2",
                                     "--batch_size", "auto", "--device", "cuda:1", "--limit", "0.5", "--seed", "7",
                                     "--gen_kwargs", "temperature=0,max_gen_toks=64", "--output_path", "o", "--log_samples"])
    cfg = run_config(args)
    assert cfg.model_args == {"pretrained": "m", "dtype": "bfloat16", "device": "cuda:1"} and cfg.batch_size is None
    assert cfg.tasks == ["finindices", "macrolens_t2"] and cfg.limit == 0.5 and cfg.seed == 7 and cfg.log_samples
    assert cfg.gen_kwargs == {"temperature": 0, "max_gen_toks": 64}
    assert run_config(eval_parser().parse_args(["--model", "oracle", "--tasks", "t", "-o", "o", "--limit", "8"])).limit == 8
    with pytest.raises(SystemExit):
        eval_parser().parse_args(["--model", "hf", "--tasks", "t", "-o", "o", "--batch_size", "0"])


def test_a_weights_file_is_hashed_once_until_it_changes(tmp_path, monkeypatch):
    import ledgerlm.evaluate.harness.modelinfo as modelinfo

    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"a" * 100)
    opened = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda p, *a, **k: (opened.append(str(p)), real_open(p, *a, **k))[1])
    first = modelinfo.sha256_prefix(weights)
    assert modelinfo.sha256_prefix(weights) == first and opened.count(str(weights.resolve())) == 1
    weights.write_bytes(b"b" * 101)
    assert modelinfo.sha256_prefix(weights) == hashlib.sha256(b"b" * 101).hexdigest()[:16] != first


def test_a_larger_limit_resumes_but_changed_instances_do_not(echo, tmp_path, monkeypatch):
    SAMPLERS["script:r"] = Counting()
    evaluate(config(tmp_path / "r", "script:r", limit=10, use_cache=False))
    SAMPLERS["script:r"] = more = Counting()
    evaluate(config(tmp_path / "r", "script:r", limit=20, use_cache=False))
    assert len(more.prompts) == 10 and more.prompts[0] == "say 10"  # the first 10 came from samples.jsonl
    monkeypatch.setattr(Echo, "load", lambda self: [{"id": f"e{k:03d}", "k": k + 1} for k in range(Echo.N)])  # same ids, new content
    SAMPLERS["script:r"] = fresh = Counting()
    results, _ = evaluate(config(tmp_path / "r", "script:r", limit=20, use_cache=False))
    assert len(fresh.prompts) == 20 and fresh.prompts[0] == "say 1" and results["time"]["resumed"] == 0
