"""End to end: baselines and a tiny random hf model through the harness runner (`ledgerlm eval --tasks macrolens_tN`,
and the pre-harness `--benchmark macrolens` flags) and `ledgerlm score --benchmark macrolens`."""
import json

import pytest

from ledgerlm.cli import main as ledgerlm
from ledgerlm.evaluate.macrolens.fixture import cached_fixture_dir
from ledgerlm.evaluate.runfiles import read_run

TASKS = "T1,T2,T3,T4,T5,T6,T7"


def _task_runs(run):
    """{paper task: (results, samples)} of a multi-task run folder (one subfolder per task)."""
    return {res["config"]["paper_task"]: (res, samples) for res, samples in
            (read_run(p.parent) for p in sorted(run.glob("macrolens_t*/results.json")))}


def test_naive_baselines_end_to_end_and_offline_rescore(tmp_path, capsys):
    run = tmp_path / "naive"
    rc = ledgerlm(["eval", "--benchmark", "macrolens", "--tasks", TASKS, "--ladder", "A..E", "--model", "baseline:naive",
                   "--data", str(cached_fixture_dir()), "--out", str(run), "--budget", "T1=12,T4=12,T7=40", "--horizon", "5",
                   "--t3-instances", "test", "--b-min", "100", "--b-max", "100"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "Context ladder" in out and "T2    medape" in out
    runs = _task_runs(run)
    assert set(runs) == set(TASKS.split(","))
    aggregate = json.loads((run / "results.json").read_text())  # the runner's lm-eval-style aggregate over the 7 tasks
    assert set(aggregate["results"]) == {f"macrolens_{t.lower()}" for t in TASKS.split(",")}
    t1_results, _ = runs["T1"]
    assert set(t1_results["tasks"]["T1"]) == set("ABCDE") and set(runs["T3"][0]["tasks"]["T3"]) == {"-"}
    t1 = t1_results["tasks"]["T1"]["E"]
    assert t1["counts"]["parse_pct"] == 100.0 and t1["metrics"]["mse"]["B"] == 100
    assert {"sector", "cap_quartile", "filing_tercile"} <= set(t1["strata"])
    assert "category" in runs["T4"][0]["tasks"]["T4"]["E"]["strata"]
    # persistence has DA 0 on every horizon point that moved (sign(c - c) = 0)
    assert t1["metrics"]["da"]["value"] == 0.0
    # lm-eval results: each metric with n and its cluster-bootstrap CI; direction from metrics.LOWER_IS_BETTER
    flat = aggregate["results"]["macrolens_t1"]
    assert flat["mse_E"] == t1["metrics"]["mse"]["value"] and flat["mse_E_n"] == 12
    assert flat["mse_E_ci"] == [t1["metrics"]["mse"]["ci_low"], t1["metrics"]["mse"]["ci_high"]]
    assert aggregate["higher_is_better"]["macrolens_t1"]["mse_E"] is False and aggregate["higher_is_better"]["macrolens_t1"]["da_E"] is True
    # T3 sector median over real filings: balance accuracy computed on parsed triples; targets are real
    t3 = runs["T3"][0]["tasks"]["T3"]["-"]
    assert t3["counts"]["parse_pct"] == 100.0 and 0 <= t3["metrics"]["balance_accuracy"]["value"] <= 100
    for _, samples in runs.values():
        assert all(s["score"] is not None and s["error_reason"] is None for s in samples)
    # offline re-scoring of the saved samples gives the same numbers
    rc = ledgerlm(["score", "--benchmark", "macrolens", "--predictions", str(run / "macrolens_t2" / "samples.jsonl"),
                   "--out", str(tmp_path / "re"), "--b-min", "100", "--b-max", "100"])
    assert rc == 0
    again, _ = read_run(tmp_path / "re")
    assert again["metrics"] == runs["T2"][0]["metrics"]


def test_single_method_baseline_rejects_uncovered_task(tmp_path, capsys):
    rc = ledgerlm(["eval", "--benchmark", "macrolens", "--tasks", "T2", "--model", "baseline:persistence",
                   "--data", str(cached_fixture_dir()), "--out", str(tmp_path / "x")])
    assert rc == 1 and "does not cover T2" in capsys.readouterr().err


def test_rejected_model_leaves_no_folder_and_harness_flags_run_one_task(tmp_path, capsys):
    out = tmp_path / "rejected"
    rc = ledgerlm(["eval", "--model", "baseline:persistence", "--tasks", "macrolens_t2", "--output_path", str(out)])
    assert rc == 1 and "does not cover T2" in capsys.readouterr().err
    assert not out.exists()  # validated before anything is written
    kept = tmp_path / "kept"
    rc = ledgerlm(["eval", "--model", "baseline:persistence", "--tasks", "macrolens_t1", "--output_path", str(kept),
                   "--task_args", "budget=2,horizon=3,b_min=20,b_max=20", "--no_progress"])
    assert rc == 0, capsys.readouterr().err
    results, samples = read_run(kept)  # one task: results.json in the output folder itself
    assert results["config"]["release"] == "fixture" and results["config"]["paper_seed"] == 42 and len(samples) == 2
    assert results["results"]["macrolens_t1"]["mse_n"] == 2 and results["primary_metric"] == {"macrolens_t1": "mse"}
    rc = ledgerlm(["eval", "--model", "baseline:naive", "--tasks", "macrolens", "--output_path", str(tmp_path / "all")])
    assert rc != 0 and "macrolens_t1" in capsys.readouterr().err  # the task names to use


def _tiny_model(path, tokenizer_json):
    transformers = pytest.importorskip("transformers")
    tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(tokenizer_json), eos_token="<｜end▁of▁sentence｜>",
                                               bos_token="<｜begin▁of▁sentence｜>")
    tok.chat_template = ("{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
                         "{% if add_generation_prompt %}<|assistant|>{% endif %}")
    cfg = transformers.LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                   num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=8192,
                                   eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id)
    import torch

    torch.manual_seed(0)
    transformers.LlamaForCausalLM(cfg).save_pretrained(path)
    tok.save_pretrained(path)


def test_tiny_random_hf_model_runs_all_tasks_with_parse_rate(tmp_path, tokenizer_json):
    _tiny_model(tmp_path / "tiny", tokenizer_json)
    run = tmp_path / "hf"
    rc = ledgerlm(["eval", "--benchmark", "macrolens", "--tasks", TASKS, "--ladder", "A,E", "--model", f"hf:{tmp_path / 'tiny'}",
                   "--data", str(cached_fixture_dir()), "--out", str(run), "--budget", "all=2", "--horizon", "3",
                   "--max-tokens", "6", "--b-min", "100", "--b-max", "100", "--batch-size", "4"])
    assert rc == 0
    runs = _task_runs(run)
    assert set(runs) == set(TASKS.split(","))
    for results, samples in runs.values():
        for levels in results["tasks"].values():
            for s in levels.values():
                assert 0.0 <= s["counts"]["parse_pct"] <= 100.0
        assert all(isinstance(s["response"], str) for s in samples)
        json.dumps(results)  # serialisable


@pytest.mark.parametrize("extra, field_or_path", [(["--data", "/no/such/folder"], "/no/such/folder"),
                                                  (["--data", str(cached_fixture_dir()), "--budget", "T1=abc"], "--budget")])
def test_bad_data_or_budget_is_a_one_line_input_error(tmp_path, capsys, extra, field_or_path):
    rc = ledgerlm(["eval", "--benchmark", "macrolens", "--tasks", "T1", "--model", "baseline:naive", "--out", str(tmp_path / "r"), *extra])
    err = capsys.readouterr().err.strip()
    assert rc != 0 and err.startswith("ledgerlm eval: error:") and field_or_path in err and "\n" not in err
    assert not (tmp_path / "r" / "results.json").exists()


def test_t1_unparsed_is_a_zero_forecast_and_every_metric_is_stratified():
    """The paper's zero convention for non-responses applies to T1 too (not the persistence forecast)."""
    from ledgerlm.evaluate.macrolens.scoring import score_rows

    rows = [{"id": f"T1/{k}", "task": "T1", "level": "E", "target": [10.0, 12.0], "meta": {"horizon": 2, "last_close": 9.0},
             "cluster": f"c{k}", "strata": {"sector": "S" if k < 2 else "R"}, "response": "no idea" if k == 0 else "[10, 12]"}
            for k in range(4)]
    summary = score_rows(rows, b_min=50, b_max=50)
    assert rows[0]["extracted"] == [0.0, 0.0] and "zero" in rows[0]["error_reason"]
    assert rows[0]["score"] == pytest.approx((10.0 ** 2 + 12.0 ** 2) / 2)  # not (10-9)^2, (12-9)^2 of persistence
    strata = summary["T1"]["E"]["strata"]["sector"]
    assert set(strata["S"]) >= {"mse", "mae", "da", "mase", "smape", "parse_pct"}
    assert strata["S"]["parse_pct"] == pytest.approx(50.0) and strata["R"]["mse"]["value"] == pytest.approx(0.0)



def test_the_cached_fixture_folder_is_removed_when_the_process_exits():
    """Every test process writes the fixture once into a temp folder: it is one of the folders `cachedir` removes when
    the process that made it exits (tests/test_synth_storecache.py runs that removal end to end; a fresh process
    writing the fixture takes ~25 s, so this checks the registration in-process)."""
    import os

    from ledgerlm import cachedir

    path = cached_fixture_dir()
    assert any(path.iterdir()) and (os.getpid(), str(path)) in cachedir._TEMP
