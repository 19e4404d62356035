"""EPSBench agent end to end: point-in-time tools, a scripted OpenAI-compatible server, a tiny hf model."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgerlm.evaluate.cli import eval_main
from ledgerlm.evaluate.epsbench.agent import extract_final_json
from ledgerlm.evaluate.epsbench.calculator import calculate
from ledgerlm.evaluate.epsbench.release import load_release
from ledgerlm.evaluate.epsbench.tools import Toolbox

RELEASE = load_release()
GOOGL = RELEASE.instance("GOOGL_2026Q1")  # cutoff 2026-04-28, news from 2026-02-04
DRIVERS = dict(revenues_yoy=0.19, cogs_margin_delta_bps=80, rd_yoy=0.22, sales_marketing_yoy=0.10,
               general_admin_yoy=0.14, other_income_net_abs=4000, tax_rate=0.167832, shares_abs=12125)


@pytest.fixture()
def docs(tmp_path: Path) -> Path:
    """A document folder laid out like the release's, with documents on both sides of the cutoff."""
    root = tmp_path / "docs"
    reports = root / "filings" / "GOOGL" / "financial_report"
    for folder, text in [("GOOGL_10-K_2026-02-05_Q4_2025", "Revenues 113,828; cost of revenues 48,000."),
                         ("GOOGL_10-K-A_2026-05-02_Q4_2025", "AMENDED after the cutoff."),
                         ("GOOGL_10-Q_2026-04-30_Q1_2026", "TARGET QUARTER revenues 109,896.")]:
        (reports / folder).mkdir(parents=True)
        (reports / folder / "Income_Statement.md").write_text(text)
    calls = root / "filings" / "GOOGL" / "earnings_call_transcript"
    calls.mkdir(parents=True)
    (calls / "2026-02-04_GOOGL_Q4_2025_Earnings_Call_Transcript.txt").write_text("Cloud revenue grew 48%. " * 50)
    (calls / "2026-04-29_GOOGL_Q1_2026_Earnings_Call_Transcript.txt").write_text("FUTURE call: EPS 5.11")
    (root / "news").mkdir()
    (root / "news" / "GOOGL.jsonl").write_text("\n".join(json.dumps(r) for r in [
        {"date": "2026-03-10", "title": "Alphabet cloud demand strong", "text": "Analysts see cloud revenue up."},
        {"date": "2026-04-30", "title": "Alphabet beats: cloud revenue soars", "text": "EPS 5.11 reported."},
        {"date": "2026-01-10", "title": "Old cloud story", "text": "Before the window."},
    ]) + "\n")
    return root


def test_point_in_time_gate(docs: Path):
    box = Toolbox(RELEASE.schema(GOOGL.id), GOOGL, docs, "full")
    listed = box.call("list_filings", {})
    assert [f["filing"] for f in listed["filings"]] == ["GOOGL_10-K_2026-02-05_Q4_2025"] and listed["withheld_after_cutoff_or_target"] == 2
    assert "Revenues 113,828" in box.call("read_filing", {"filing": "2025Q4", "section": "Income_Statement"})["content"]
    blocked = box.call("read_filing", {"filing": "GOOGL_10-Q_2026-04-30_Q1_2026", "section": "Income_Statement"})
    assert "target quarter" in blocked["error"]
    late = box.call("read_filing", {"filing": "GOOGL_10-K-A_2026-05-02_Q4_2025", "section": "Income_Statement"})
    assert "after the information cutoff 2026-04-28" in late["error"] and "target" not in late["error"]
    assert "after the information cutoff" in box.call("read_transcript", {"quarter": "2026Q1"})["error"]
    prior = box.call("read_transcript", {})
    assert prior["quarter"] == "2025Q4" and prior["has_more"] is False
    assert "no section" in box.call("read_filing", {"filing": "2025Q4", "section": "Nope"})["error"]
    news = box.call("search_news", {"query": "cloud revenue"})
    assert [r["date"] for r in news["results"]] == ["2026-03-10"] and news["withheld_outside_window"] == 2
    assert len(box.docs.requests_blocked) == 3
    calc = box.call("calculate_eps", {"drivers": DRIVERS})
    assert calc["key_metrics"]["eps"] == pytest.approx(2.7376, abs=5e-5)
    assert "unknown driver" in box.call("calculate_eps", {"drivers": {"growth": 1}})["error"]
    none_box = Toolbox(RELEASE.schema(GOOGL.id), GOOGL, None, "none")
    assert [s["function"]["name"] for s in none_box.specs()] == ["calculate_eps"]
    assert "disabled" in none_box.call("search_news", {"query": "x"})["error"]


def test_extract_final_json_variants():
    obj = {"fundamental_predictions": {"a": {"value": 1, "evidence": "e"}}, "eps_interval": {"p10": 1, "p90": 2}}
    assert extract_final_json(json.dumps(obj)) == obj
    assert extract_final_json(f"Done.\n```json\n{json.dumps(obj)}\n```") == obj
    assert extract_final_json(f"Here: {json.dumps(obj)} thanks") == obj
    assert extract_final_json("I think EPS is about 5") is None


def test_extract_final_json_reads_as_the_release():
    """Audit s21 (deviation 1): the release's final_json.py takes the FIRST balanced {...} (after the whole text and
    the last fence), of any JSON type; ledgerlm took the last object holding fundamental_predictions."""
    draft = {"fundamental_predictions": {"g": 0.01}, "eps_interval": {"p10": 1, "p90": 2}}
    final = {"fundamental_predictions": {"g": 0.05}, "eps_interval": {"p10": 1.5, "p90": 2.5}}
    assert extract_final_json(f"Draft: {json.dumps(draft)} Revised final: {json.dumps(final)}") == draft
    assert extract_final_json(f'Calculator returned {{"eps": 1.23}} so my answer: {json.dumps(final)}') == {"eps": 1.23}
    assert extract_final_json(f"```json\n[1,2]\n```\n{json.dumps(final)}") == [1, 2]  # the fence wins, a list
    assert extract_final_json(f'{{"note": "a }} in a string"}} then {json.dumps(final)}') == {"note": "a } in a string"}
    assert extract_final_json(f"{{broken {json.dumps(final)}") == final  # a span that does not parse is skipped
    # second audit (s22): a fenced JSON null is skipped as the release's `_try` does; deep nesting is no crash
    assert extract_final_json(f"```json\n{json.dumps(final)}\n```\nNo further changes:\n```json\nnull\n```") == final
    assert extract_final_json("[" * 5000) is None and extract_final_json("{" * 5000 + json.dumps(final)) == final


def _final_answer(drivers: dict, eps: float) -> str:
    preds = {k: {"value": v, "evidence": f"{k}: from the Q4 call"} for k, v in drivers.items()}
    return json.dumps({"fundamental_predictions": preds, "calculated_results_summary": {"key_metrics": {"eps": eps}},
                       "eps_interval": {"p10": round(eps * 0.9, 4), "p90": round(eps * 1.1, 4)}})


def _call(name: str, args: dict, k: int) -> dict:
    return {"id": f"call_{name}_{k}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def scripted_agent(body: dict) -> dict:
    """GOOGL: list filings, ask for the target-quarter 10-Q and the post-cutoff call (both refused),
    search news, run the calculator, answer. ADBE: answer with prose (a format failure)."""
    messages = body["messages"]
    user = messages[1]["content"]
    tool_rounds = sum(1 for m in messages if m["role"] == "assistant")
    if "Company: ADBE" in user:
        return {"content": "EPS will be roughly 4.5, I am fairly confident."}
    script = [
        [_call("list_filings", {}, 0), _call("read_filing", {"filing": "GOOGL_10-Q_2026-04-30_Q1_2026", "section": "Income_Statement"}, 1)],
        [_call("read_transcript", {"quarter": "2026Q1"}, 2), _call("search_news", {"query": "cloud revenue"}, 3)],
        [_call("calculate_eps", {"drivers": DRIVERS}, 4)],
    ]
    if tool_rounds < len(script):
        return {"content": None, "tool_calls": script[tool_rounds]}
    eps = json.loads(messages[-1]["content"])["key_metrics"]["eps"]
    return {"content": "```json\n" + _final_answer(DRIVERS, eps) + "\n```"}


def test_scripted_openai_server_end_to_end(docs: Path, tmp_path: Path):
    from openai_stub_server import StubServer

    out = tmp_path / "run"
    with StubServer(responder=scripted_agent) as server:
        rc = eval_main(["--benchmark", "epsbench", "--model", "openai:stub", "--base-url", server.url, "--docs", str(docs),
                        "--instances", "GOOGL_2026Q1", "ADBE_2025Q4", "--out", str(out), "--runs", "1"])
        requests = list(server.requests)
    assert rc == 0
    record = json.loads((out / "s1" / "records" / "GOOGL" / "2026Q1" / "t-1.record.json").read_text())
    expected = calculate(RELEASE.schema("GOOGL_2026Q1"), DRIVERS)
    assert record["eps_gaap_pred"] == pytest.approx(expected["eps"]) and record["format_failure"] is False
    assert record["operating_pred"] == pytest.approx(35887.86, abs=0.01) and record["pretax_pred"] == pytest.approx(39887.86, abs=0.01)
    assert record["eps_gaap_actual"] == 5.11 and record["eps_p10"] < record["eps_gaap_pred"] < record["eps_p90"]
    assert set(record["evidence"]) == set(DRIVERS) and record["drivers_missing"] == []
    assert len(record["blocked_requests"]) == 2 and record["usage"]["tool_calls"] == 5 and record["usage"]["requests"] == 4
    # the refusals reached the model as tool results, and nothing of `_validation` ever did
    tool_msgs = [m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"]
    assert any("target quarter" in t for t in tool_msgs) and any("after the information cutoff" in t for t in tool_msgs)
    assert all("_validation" not in json.dumps(r) and "target_fq_eps" not in json.dumps(r) for r in requests)
    assert all(r.get("tools") for r in requests)  # native tool calling for openai:
    adbe = json.loads((out / "s1" / "records" / "ADBE" / "2025Q4" / "t-1.record.json").read_text())
    assert adbe["format_failure"] is True and adbe["eps_gaap_pred"] is None
    results = json.loads((out / "results.json").read_text())
    assert results["n_records"] == 2 and results["n_format_failures"] == 1 and results["format_compliance"] == 0.5
    samples = {json.loads(x)["id"]: json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()}
    assert samples["GOOGL_2026Q1@s1"]["pde"] == pytest.approx(abs(expected["eps"] - 5.11) / RELEASE.prices["GOOGL_2026Q1"])
    assert samples["ADBE_2025Q4@s1"]["pde"] is None and samples["ADBE_2025Q4@s1"]["format_ok"] is False
    assert samples["GOOGL_2026Q1@s1"]["instance"] == "GOOGL_2026Q1" and samples["GOOGL_2026Q1@s1"]["record"] == record
    # the one runner wrote it: lm-eval-style results with n beside every score, the completion cache, resume
    assert results["results"]["epsbench"]["format_compliance_n"] == 2 and results["primary_metric"] == {"epsbench": "pde_median"}
    assert results["higher_is_better"]["epsbench"]["pde_median"] is False and (out / "cache.jsonl").is_file()
    # offline re-scoring of the run's samples.jsonl gives the same numbers
    from ledgerlm.evaluate.cli import score_main

    assert score_main(["--benchmark", "epsbench", "--predictions", str(out / "samples.jsonl"), "--out", str(tmp_path / "re")]) == 0
    again = json.loads((tmp_path / "re" / "results.json").read_text())
    assert {k: again[k] for k in ("pde_median", "n_records", "instance_pde", "compliance")} == \
        {k: results[k] for k in ("pde_median", "n_records", "instance_pde", "compliance")}


def test_tiny_hf_model_end_to_end(tokenizer_json: Path, tmp_path: Path):
    from ledgerlm.train.tiny_model import build_tiny_model

    model = build_tiny_model(tmp_path / "tiny", tokenizer_json=tokenizer_json, max_position_embeddings=8192)
    out = tmp_path / "run"
    rc = eval_main(["--benchmark", "epsbench", "--model", f"hf:{model}", "--instances", "GOOGL_2026Q1", "NVDA_2026Q4",
                    "--max-tokens", "8", "--max-turns", "2", "--runs", "2", "--out", str(out)])
    assert rc == 0
    records = sorted(out.rglob("t-1.record.json"))
    assert len(records) == 4  # 2 instances x 2 runs, release layout
    trajectory = json.loads((records[0].parent / "trajectory.json").read_text())
    assert "<tool_call>" in trajectory[0]["content"] and "calculate_eps" in trajectory[0]["content"]  # text tool protocol
    assert "_validation" not in json.dumps(trajectory)
    results = json.loads((out / "results.json").read_text())
    assert results["n_records"] == 4 and results["runs"] == ["s1", "s2"]
    # no --docs: the paper's source-removal condition with both sources removed, named in results.json
    assert results["information_condition"]["release_config_suffix"] == "neither" and results["information_condition"]["source_removal"]
    assert results["n_format_failures"] == 4 and results["format_compliance"] == 0.0  # random weights never answer
    assert results["config"]["information"] == "none" and results["requests_median"] >= 1


def test_a_flipped_interval_is_a_compliance_failure_stored_as_given():
    """The release's make_record.py calls a flipped interval (p10 > p90) a compliance failure and stores it as given;
    the scorer did, the agent's record did not (helper audit of the scorers). The forecast itself is unchanged."""
    from ledgerlm.evaluate.epsbench.agent import Conversation, make_record

    schema = RELEASE.schema("GOOGL_2026Q1")
    eps = calculate(schema, DRIVERS)["eps"]
    good = json.loads(_final_answer(DRIVERS, eps))
    flipped = dict(good, eps_interval={"p10": round(eps * 1.1, 4), "p90": round(eps * 0.9, 4)})
    from types import SimpleNamespace

    toolbox = SimpleNamespace(docs=SimpleNamespace(requests_blocked=[]))  # the record lists what the tools refused
    records = [make_record(Conversation(GOOGL, schema, toolbox, "1", [], final_text=json.dumps(final)), None, "stub")
               for final in (good, flipped)]
    assert records[0]["format_failure"] is False and records[1]["format_failure"] is True
    assert "flipped" in records[1]["format_error"] and records[1]["eps_p10"] > records[1]["eps_p90"]
    assert records[1]["eps_gaap_pred"] == pytest.approx(records[0]["eps_gaap_pred"]) == pytest.approx(eps)


def test_a_tool_echo_before_the_answer_is_a_format_failure_as_in_the_release():
    """The release reads the first object, the calculator's echo: no drivers, no forecast, a compliance failure."""
    from types import SimpleNamespace

    from ledgerlm.evaluate.epsbench.agent import Conversation, make_record

    schema = RELEASE.schema("GOOGL_2026Q1")
    answer = _final_answer(DRIVERS, calculate(schema, DRIVERS)["eps"])
    toolbox = SimpleNamespace(docs=SimpleNamespace(requests_blocked=[]))
    texts = [answer, f'The calculator returned {{"eps": 1.23}}; my answer: {answer}', f"```json\n[1, 2]\n```\n{answer}"]
    records = [make_record(Conversation(GOOGL, schema, toolbox, "1", [], final_text=t), None, "stub") for t in texts]
    assert records[0]["format_failure"] is False and records[0]["eps_gaap_pred"] is not None
    assert records[1]["format_failure"] is True and records[1]["eps_gaap_pred"] is None
    assert "fundamental_predictions missing" in records[1]["format_error"]
    assert records[2]["format_failure"] is True and "is a list, not an object" in records[2]["format_error"]
