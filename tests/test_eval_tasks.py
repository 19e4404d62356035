"""Task YAMLs drive behaviour: every key is read, a changed key changes a score, a breakdown or GenerationParams.

    python -m pytest -q tests/test_eval_tasks.py
"""
from __future__ import annotations

import argparse

import pytest
import yaml

from ledgerlm.errors import InputError
from ledgerlm.evaluate.epsbench.scoring import SCORER_VERSION as EPS_VERSION
from ledgerlm.evaluate.finindices.bench import generation_params, score_record, select_rows, summarize
from ledgerlm.evaluate.finindices.scoring import SCORER_VERSION
from ledgerlm.evaluate.macrolens.metrics import PRIMARY
from ledgerlm.evaluate.macrolens.scoring import SCORER_VERSION as MACRO_VERSION
from ledgerlm.evaluate.tasks import KEYS, TASKS_DIR, list_tasks, load_task
from ledgerlm.inference.sampling import Completion

SINGLE = {"id": "s1", "answer_format": "number", "answer": 12.5, "decimals": 2, "paradigm": "single", "axis": "domain", "hint": True,
          "messages": [{"role": "user", "content": "Ratio? Two decimals."}]}
# The marked answer is 12.50; a note after it ends with another number.
MARKED = "Working...\nFinal answer: 12.50\nNote: based on 4 quarters"
UNMARKED = "The ratio works out to 12.50"


def _task(tmp_path, name="t", **changes):
    """A copy of the base FinIndices task with some keys changed, as a YAML file."""
    base = yaml.safe_load((TASKS_DIR / "finindices" / "finindices.yaml").read_text())
    base.update(task=name, **changes)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(base))
    return load_task(path)


@pytest.mark.parametrize("path", sorted(TASKS_DIR.glob("*/*.yaml")), ids=lambda p: p.stem)
def test_every_task_loads_and_matches_its_scorer(path):
    spec = load_task(path.stem)
    assert spec.task == path.stem and spec.benchmark == path.parent.name
    assert spec.version == {"finindices": SCORER_VERSION, "macrolens": MACRO_VERSION, "epsbench": EPS_VERSION}[spec.benchmark]
    assert spec.metrics and all(isinstance(m.higher_is_better, bool) for m in spec.metrics)
    if spec.benchmark == "macrolens":  # the paper's primary metric comes first
        assert spec.primary_metric == PRIMARY[spec.select["task"]]
    if spec.benchmark == "finindices":
        assert spec.answer_extraction == "final_answer" and spec.group_by == ("paradigm", "axis", "hint")
        assert spec.generation_kwargs.max_gen_toks == 8192


def test_all_three_benchmarks_have_yaml_tasks():
    names = {(t.benchmark, t.task) for t in list_tasks()}
    assert {("macrolens", f"macrolens_t{i}") for i in range(1, 8)} <= names
    assert ("epsbench", "epsbench") in names and ("finindices", "finindices") in names


def test_answer_extraction_changes_the_score(tmp_path):
    default, strict, last = (_task(tmp_path, n, answer_extraction=e) for n, e in
                             (("a", "final_answer"), ("b", "strict"), ("c", "last_number")))
    assert default.score(SINGLE, MARKED).score == 1
    assert last.score(SINGLE, MARKED).score == 0 and last.score(SINGLE, MARKED).extracted == 4.0
    assert default.score(SINGLE, UNMARKED).score == 1
    assert strict.score(SINGLE, UNMARKED).score == 0 and strict.score(SINGLE, UNMARKED).error_reason == "no_number"
    # the same choice reaches the samples.jsonl record the FinIndices benchmark writes
    assert score_record(SINGLE, Completion(text=MARKED), task=default)["score"] == 1
    assert score_record(SINGLE, Completion(text=MARKED), task=last)["score"] == 0


def test_metrics_list_decides_what_is_computed(tmp_path):
    records = [score_record(SINGLE, Completion(text=t), task=load_task("finindices")) for t in (MARKED, "no idea", "Final answer: 3")]
    spec = _task(tmp_path, metrics=["accuracy", "parse_failure_rate"])
    got = spec.compute_metrics(records)
    assert set(got) == {"accuracy", "parse_failure_rate"}
    assert got["accuracy"] == {"value": pytest.approx(1 / 3), "n": 3}
    assert got["parse_failure_rate"]["value"] == pytest.approx(1 / 3)  # "no idea" has no number
    assert spec.higher_is_better == {"accuracy": True, "parse_failure_rate": False}
    assert set(_task(tmp_path, "d", metrics=["positional_accuracy"]).compute_metrics(records)) == {"positional_accuracy"}


def test_group_by_changes_the_breakdown_rows(tmp_path):
    rows = [dict(SINGLE, id=f"x{i}", axis=axis, hint=hint) for i, (axis, hint) in enumerate(
        [("domain", True), ("domain", False), ("temporal", True), ("temporal", False)])]
    texts = [MARKED, "Final answer: 1", MARKED, MARKED]
    records = [score_record(r, Completion(text=t), task=load_task("finindices")) for r, t in zip(rows, texts)]
    by_hint = _task(tmp_path, "h", group_by=["hint"]).breakdown(records)
    assert by_hint == [{"hint": False, "n": 2, "value": 0.5}, {"hint": True, "n": 2, "value": 1.0}]
    by_axis = _task(tmp_path, "x", group_by=["axis"]).breakdown(records)
    assert by_axis == [{"axis": "domain", "n": 2, "value": 0.5}, {"axis": "temporal", "n": 2, "value": 1.0}]
    # the benchmark's results.json breaks scores down by the task's group_by
    results = summarize(records, model="m", config={}, n_boot=50, timing={}, group_by=["axis"])
    assert [{k: g[k] for k in ("axis", "n")} for g in results["metrics"]["by_group"]] == [{"axis": "domain", "n": 2}, {"axis": "temporal", "n": 2}]


def test_generation_kwargs_reach_generation_params(tmp_path):
    from ledgerlm.evaluate.finindices.benchmark import FinIndices
    from ledgerlm.evaluate.harness.args import generation_params as run_params

    spec = _task(tmp_path, generation_kwargs={"max_gen_toks": 77, "temperature": 0.6, "top_p": 0.9, "stop": ["</answer>"]})
    no_cli = argparse.Namespace(max_tokens=None, temperature=None, top_p=None, seed=None)
    params = generation_params(spec, no_cli)
    assert (params.max_tokens, params.temperature, params.top_p, params.stop) == (77, 0.6, 0.9, ("</answer>",))
    cli = argparse.Namespace(max_tokens=10, temperature=None, top_p=None, seed=1)
    assert (generation_params(spec, cli).max_tokens, generation_params(spec, cli).seed, generation_params(spec, cli).temperature) == (10, 1, 0.6)
    # through the one runner: the task's generation_kwargs are the defaults, --gen_kwargs and --seed go over them
    defaults = FinIndices(str(spec.path), data="unused").generation_defaults()
    run = run_params(defaults, {"max_gen_toks": 12}, 7)
    assert (run.max_tokens, run.temperature, run.top_p, run.stop, run.seed) == (12, 0.6, 0.9, ("</answer>",), 7)
    assert run_params(FinIndices("finindices", data="unused").generation_defaults(), {}, 0).max_tokens == 8192


def test_select_picks_rows_and_cli_hint_overrides():
    rows = [{"paradigm": p, "hint": h} for p in ("single", "table") for h in (True, False)]
    assert select_rows(rows, load_task("finindices_nohint_table"), None, None) == [{"paradigm": "table", "hint": False}]
    assert len(select_rows(rows, load_task("finindices_hint"), None, None)) == 2
    assert select_rows(rows, load_task("finindices"), "nohint", 1) == [{"paradigm": "single", "hint": False}]
    task = load_task("finindices_hint_single")
    assert select_rows(rows, task, "both", None) == [{"paradigm": "single", "hint": True}, {"paradigm": "single", "hint": False}]


@pytest.mark.parametrize("change, key", [
    ({"temprature": 0.5}, "temprature"),
    ({"answer_extraction": "regex_magic"}, "answer_extraction"),
    ({"metrics": ["accuracy", "f1"]}, "metrics"),
    ({"metrics": [{"metric": "accuracy", "higher_is_better": False}]}, "metrics"),
    ({"generation_kwargs": {"max_gen_toks": 0}}, "generation_kwargs.max_gen_toks"),
    ({"generation_kwargs": {"top_k": 5}}, "generation_kwargs.top_k"),
    ({"generation_kwargs": {"temperature": "hot"}}, "generation_kwargs.temperature"),
    ({"generation_kwargs": {"seed": 3}}, "generation_kwargs.seed"),
    ({"group_by": "paradigm"}, "group_by"),
    ({"version": "3"}, "version"),
    ({"select": {"hint": [True]}}, "select"),
])
def test_bad_keys_and_values_are_one_error_naming_file_and_key(tmp_path, change, key):
    base = yaml.safe_load((TASKS_DIR / "finindices" / "finindices.yaml").read_text())
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({**base, **change}))
    with pytest.raises(InputError) as err:
        load_task(path)
    assert str(path) in str(err.value) and repr(key) in str(err.value) and "\n" not in str(err.value)


def test_macrolens_task_rejects_extractor_and_unknown_metric(tmp_path):
    base = yaml.safe_load((TASKS_DIR / "macrolens" / "macrolens_t2.yaml").read_text())
    for change, words in (({"answer_extraction": "strict"}, "no selectable"), ({"metrics": ["mse"]}, "unknown metric 'mse'"),
                          ({"select": {"task": "T9"}}, "T1..T7")):
        path = tmp_path / "m.yaml"
        path.write_text(yaml.safe_dump({**base, **change}))
        with pytest.raises(InputError, match=words):
            load_task(path)


def test_a_metric_without_known_direction_must_state_it(tmp_path):
    base = yaml.safe_load((TASKS_DIR / "epsbench" / "epsbench.yaml").read_text())
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump({**base, "metrics": ["pde_median", "coverage"]}))
    with pytest.raises(InputError, match="coverage has no known direction"):
        load_task(path)
    path.write_text(yaml.safe_dump({**base, "metrics": ["pde_median", {"metric": "coverage", "higher_is_better": True}]}))
    assert load_task(path).higher_is_better == {"pde_median": False, "coverage": True}


def test_includes_cycles_and_unknown_names(tmp_path):
    (tmp_path / "a.yaml").write_text("include: b.yaml\ntask: a\n")
    (tmp_path / "b.yaml").write_text("include: a.yaml\ntask: b\n")
    with pytest.raises(InputError, match="cycle"):
        load_task(tmp_path / "a.yaml")
    with pytest.raises(InputError, match="finindices_hint_single"):
        load_task("no_such_task")
    (tmp_path / "c.yaml").write_text("[1, 2\n")
    with pytest.raises(InputError, match="not valid YAML"):
        load_task(tmp_path / "c.yaml")
    assert "generation" not in KEYS  # renamed generation_kwargs (lm-eval's name); the old key is an error now


def test_the_runner_reports_the_task_yaml_metrics_directions_and_groups(tmp_path):
    """Through the one runner (`ledgerlm eval`): results.json holds exactly the YAML's metrics, its directions and group_by."""
    import json
    import random

    from eval_fixtures import make_row
    from ledgerlm.evaluate.harness.runner import RunConfig, evaluate

    rng = random.Random(3)
    rows = [make_row(rng, i, answer_format=f, hint=True, deficient=False) for i, f in enumerate(["number", "json"] * 3)]
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = yaml.safe_load((TASKS_DIR / "finindices" / "finindices.yaml").read_text())
    base.update(task="fi_small", metrics=["accuracy", "parse_failure_rate"], group_by=["answer_format"])
    (tmp_path / "fi_small.yaml").write_text(yaml.safe_dump(base))
    results, code = evaluate(RunConfig(model="oracle", tasks=[str(tmp_path / "fi_small.yaml")], output_path=tmp_path / "out",
                                       data=str(tmp_path / "data"), progress=False, bootstrap_iters=50))
    assert code == 0 and results["higher_is_better"]["fi_small"] == {"accuracy": True, "parse_failure_rate": False}
    got = results["results"]["fi_small"]
    assert got["accuracy"] == 1.0 and "parse_failure_rate" in got and "positional_accuracy" not in got
    assert sorted(g["answer_format"] for g in results["metrics"]["by_group"]) == ["json", "number"]


def test_macrolens_and_epsbench_read_their_yaml(tmp_path, monkeypatch):
    from ledgerlm.evaluate.epsbench import benchmark as eps
    from ledgerlm.evaluate.macrolens import benchmark as ml

    t1, t2 = ml.MacroLens("macrolens_t1"), ml.MacroLens("macrolens_t2")
    assert (t1.paper_task, t2.paper_task, t2.version) == ("T1", "T2", load_task("macrolens_t2").version)  # select.task, version
    assert t2.generation_defaults()["max_tokens"] == load_task("macrolens_t2").generation_kwargs.max_gen_toks == 512
    assert t1.generation_defaults()["max_tokens"] == 12 * t1.cfg.H() + 64  # max_gen_toks: null -> the horizon rule
    assert eps.EPSBench("epsbench").generation_defaults()["max_tokens"] == 2048
    assert eps.EPSBench("epsbench").higher_is_better == load_task("epsbench").higher_is_better
    for module, name, folder in ((ml, "macrolens_t4", "macrolens"), (eps, "epsbench", "epsbench")):
        base = yaml.safe_load((TASKS_DIR / folder / f"{name}.yaml").read_text())
        base["generation_kwargs"] = {"max_gen_toks": 99, "temperature": 0.5, "top_p": 0.8, "stop": ["END"]}
        changed = tmp_path / f"{name}.yaml"
        changed.write_text(yaml.safe_dump(base))
        monkeypatch.setattr(module, "load_task", lambda task, path=changed: load_task(path))
        bench = ml.MacroLens(name) if module is ml else eps.EPSBench(name)
        got = bench.generation_defaults()
        assert (got["max_tokens"], got["temperature"], got["top_p"], tuple(got["stop"])) == (99, 0.5, 0.8, ("END",)), name
    base = yaml.safe_load((TASKS_DIR / "macrolens" / "macrolens_t4.yaml").read_text())
    (tmp_path / "t4.yaml").write_text(yaml.safe_dump({**base, "select": {"task": "T2"}, "metrics": ["medape"]}))
    monkeypatch.setattr(ml, "load_task", lambda task: load_task(tmp_path / "t4.yaml"))
    assert ml.MacroLens("macrolens_t4").paper_task == "T2"  # the YAML's select decides the paper task


@pytest.mark.slow
def test_macrolens_reports_the_yaml_metrics_through_the_runner(tmp_path, monkeypatch):
    """MacroLens T4 on the offline fixture (baseline:naive): results.json holds the YAML's metrics only, and its group_by."""
    from ledgerlm.evaluate.harness.runner import RunConfig, evaluate
    from ledgerlm.evaluate.macrolens import benchmark as ml

    base = yaml.safe_load((TASKS_DIR / "macrolens" / "macrolens_t4.yaml").read_text())
    base["metrics"] = [{"metric": "da", "higher_is_better": True}, "mae"]
    base["group_by"] = ["task"]
    changed = tmp_path / "macrolens_t4.yaml"
    changed.write_text(yaml.safe_dump(base))
    monkeypatch.setattr(ml, "load_task", lambda task: load_task(changed))
    results, code = evaluate(RunConfig(model="baseline:naive", tasks=["macrolens_t4"], output_path=tmp_path / "out",
                                       task_args={"budget": 8, "b_min": 50, "b_max": 50}, progress=False, bootstrap_iters=50))
    got = results["results"]["macrolens_t4"]
    assert code == 0 and "da" in got and "mae" in got and "parse_pct" not in got and "n_nonresponse" not in got
    assert results["higher_is_better"]["macrolens_t4"] == {"da": True, "mae": False}
    assert results["group_by"] == ["task"]  # what `ledgerlm compare/report` group the samples by
