"""samples.jsonl is written through the contracts module (EvalRecord + dumps, `append_jsonl`: one write + flush per batch),
resume reads it back as contract-6 rows, and `--apply_chat_template` reaches the run configuration.

    python -m pytest -q tests/test_harness_samples_log.py
"""
from __future__ import annotations

import io
import json

import pytest

from ledgerlm.contracts import EvalRecord, append_jsonl, read_jsonl
from ledgerlm.errors import InputError
from ledgerlm.evaluate.harness import REGISTRY, Benchmark, Metric, Request, Summary, register
from ledgerlm.evaluate.harness.runner import RunConfig, evaluate
from ledgerlm.evaluate.runfiles import redact_text
from ledgerlm.inference.sampling import Completion

ROW = {"id": "a", "prompt": None, "response": "x", "reasoning": None, "answer_text": "x", "extracted": 1, "score": 1,
       "error_reason": None, "paradigm": "single"}


class Handle(io.StringIO):
    def __init__(self):
        super().__init__()
        self.writes = self.flushes = 0

    def write(self, text):
        self.writes += 1
        return super().write(text)

    def flush(self):
        self.flushes += 1


def test_append_jsonl_validates_the_whole_batch_then_writes_it_once():
    log = Handle()
    rows = [ROW, ROW | {"id": "b", "response": "see https://user:secret@host/x", "score": 0.5}]
    assert append_jsonl(log, rows, EvalRecord, where="run/samples.jsonl", transform=redact_text) == 2
    assert (log.writes, log.flushes) == (1, 1)
    lines = log.getvalue().splitlines()
    assert [json.loads(line) for line in lines][0] == ROW  # the benchmark's own keys travel in `extra`, same order
    assert "secret" not in lines[1] and json.loads(lines[1])["response"] == "see https://***@host/x"
    with pytest.raises(InputError, match=r"run/samples.jsonl \(id 'c'\).*field 'score'"):
        append_jsonl(log, [ROW | {"id": "ok"}, ROW | {"id": "c", "score": "high"}], EvalRecord, where="run/samples.jsonl")
    assert log.writes == 1 and len(log.getvalue().splitlines()) == 2  # an invalid batch writes nothing
    with pytest.raises(InputError, match="lacks field"):
        append_jsonl(log, [{"id": "d", "score": 1}], EvalRecord)


class Say(Benchmark):
    """answer K to `say K` (test benchmark); instance `bad` scores with a non-number"""
    name = "say_log"
    version = 1
    primary_metric = "match"
    higher_is_better = {"match": True}
    N = 40
    BAD: set[str] = set()

    def load(self):
        return [{"id": f"s{k:02d}", "k": k} for k in range(self.N)]

    def build_request(self, instance):
        return Request(messages=[{"role": "user", "content": f"say {instance['k']}"}])

    def make_sampler(self, spec, options):
        return SAMPLERS.get(spec)

    def score(self, instance, response):
        score = "high" if instance["id"] in self.BAD else int(response.text == str(instance["k"]))
        return {"id": instance["id"], "response": response.text + " https://u:pw@h/", "score": score, "backend_error": response.error}

    def summarize(self, samples, ctx):
        return Summary(metrics={"match": Metric(sum(s["score"] for s in samples) / len(samples), len(samples))})


class Script:
    model_id = "script"
    chunk_size = 8  # five batches of 8

    def __init__(self, crash_on=None):
        self.calls, self.asked, self.crash_on = 0, [], crash_on

    def generate(self, batch, params, **kwargs):
        self.calls += 1
        if self.calls == self.crash_on:
            raise KeyboardInterrupt("killed")
        self.asked += [m[-1]["content"] for m in batch]
        return [Completion(text=m[-1]["content"].removeprefix("say ")) for m in batch]


SAMPLERS: dict[str, Script] = {}


@pytest.fixture()
def say():
    register("say_log", Say)
    yield
    REGISTRY.pop("say_log", None)
    SAMPLERS.clear()
    Say.BAD = set()


def cfg(out, **kw):
    return RunConfig(model="script:s", tasks=["say_log"], output_path=out, progress=False, use_cache=False, **kw)


def test_a_killed_run_leaves_contract_rows_and_resume_redoes_rows_that_are_not(say, tmp_path):
    out = tmp_path / "run"
    SAMPLERS["script:s"] = Script(crash_on=3)
    with pytest.raises(KeyboardInterrupt):
        evaluate(cfg(out))
    logged = read_jsonl(out / "samples.jsonl", EvalRecord)  # every appended line is a valid contract-6 row
    assert [r.id for r in logged] == [f"s{k:02d}" for k in range(16)]
    assert all("pw" not in r.response for r in logged)  # URL credentials redacted as the rows are appended
    lines = (out / "samples.jsonl").read_text().splitlines()
    lines[3] = json.dumps(json.loads(lines[3]) | {"score": "x"})  # not a contract row any more
    (out / "samples.jsonl").write_text("\n".join(lines) + '\n{"id": "s16", "sco')  # and a torn last line
    SAMPLERS["script:s"] = again = Script()
    results, code = evaluate(cfg(out))
    assert code == 0 and results["time"]["resumed"] == 15
    assert again.asked == ["say 3"] + [f"say {k}" for k in range(16, 40)]
    assert [r.id for r in read_jsonl(out / "samples.jsonl", EvalRecord)] == [f"s{k:02d}" for k in range(40)]


def test_a_row_the_contract_rejects_is_one_error_naming_it(say, tmp_path):
    Say.BAD = {"s10"}
    SAMPLERS["script:s"] = Script()
    with pytest.raises(InputError, match=r"say_log: .*samples.jsonl \(id 's10'\).*field 'score'.*not a number"):
        evaluate(cfg(tmp_path / "r"))
    assert [r.id for r in read_jsonl(tmp_path / "r" / "samples.jsonl", EvalRecord)] == [f"s{k:02d}" for k in range(8)]


@pytest.mark.parametrize("argv, value", [([], True), (["--apply_chat_template"], True), (["--apply_chat_template", "false"], False),
                                         (["--apply-chat-template", "0"], False), (["--apply_chat_template", "tool_use"], "tool_use")])
def test_apply_chat_template_flag_reaches_results_json(say, tmp_path, argv, value):
    from ledgerlm.evaluate.cli import eval_parser, run_config

    config = run_config(eval_parser().parse_args(["--model", "script:s", "--tasks", "say_log", "-o", str(tmp_path / "r"),
                                                  "--no_progress", "--no_cache", "--limit", "3", *argv]))
    SAMPLERS["script:s"] = Script()
    results, _ = evaluate(config)  # a reference model renders no prompt: the value is recorded, nothing else changes
    assert results["config"]["apply_chat_template"] == value
    assert json.loads((tmp_path / "r" / "results.json").read_text())["config"]["apply_chat_template"] == value
