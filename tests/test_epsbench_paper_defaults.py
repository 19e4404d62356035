"""EPSBench defaults as the paper / release code: 3 runs, no turn cap, driver fallback, source-removal label.

    python -m pytest -q tests/test_epsbench_paper_defaults.py
"""
from __future__ import annotations

import argparse
import json
from types import SimpleNamespace

import pytest

from ledgerlm.evaluate.epsbench.agent import AgentConfig, Conversation, make_record
from ledgerlm.evaluate.epsbench.bench import add_eval_args, information_condition
from ledgerlm.evaluate.epsbench.calculator import calculate
from ledgerlm.evaluate.epsbench.release import load_release

RELEASE = load_release()
GOOGL = RELEASE.instance("GOOGL_2026Q1")
DRIVERS = dict(revenues_yoy=0.19, cogs_margin_delta_bps=80, rd_yoy=0.22, sales_marketing_yoy=0.10,
               general_admin_yoy=0.14, other_income_net_abs=4000, tax_rate=0.167832, shares_abs=12125)


def _conv(final: dict) -> Conversation:
    box = SimpleNamespace(docs=SimpleNamespace(requests_blocked=[]))
    conv = Conversation(GOOGL, RELEASE.schema(GOOGL.id), box, "s1", [])
    conv.final_text, conv.done = json.dumps(final), True
    return conv


def _final(drivers: dict, eps) -> dict:
    return {"fundamental_predictions": {k: {"value": v, "evidence": "x"} for k, v in drivers.items()},
            "calculated_results_summary": {"key_metrics": {"eps": eps}}, "eps_interval": {"p10": 4.5, "p90": 5.5}}


def test_numeric_drivers_are_recomputed():
    record = make_record(_conv(_final(DRIVERS, 1.0)), RELEASE.truth[GOOGL.id], "m")
    assert record["eps_gaap_pred"] == pytest.approx(calculate(RELEASE.schema(GOOGL.id), DRIVERS)["eps"])
    assert record["eps_source"] == "recomputed"


def test_non_numeric_driver_falls_back_to_the_agents_own_eps():
    """make_record.py: calculate_from_prediction raises on float('n/a'), the statement is {}, and
    eps_gaap_pred = key_metrics.eps (the agent's own EPS) - a parseable forecast, not a failure."""
    record = make_record(_conv(_final({**DRIVERS, "rd_yoy": "about 20%"}, 5.02)), RELEASE.truth[GOOGL.id], "m")
    assert record["eps_gaap_pred"] == 5.02 and record["eps_source"] == "agent_reported"
    assert record["driver_errors"] and "rd_yoy" in record["driver_errors"][0]
    assert record["format_failure"] is False


def test_defaults_are_three_runs_and_no_turn_cap():
    parser = argparse.ArgumentParser()
    add_eval_args(parser)
    args = parser.parse_args(["--model", "oracle", "--out", "x"])
    assert args.runs == 3 and args.max_turns is None
    assert AgentConfig().max_turns is None


@pytest.mark.parametrize("info,suffix,removal", [("full", "full", False), ("filings", "filings_only", True),
                                                 ("news", "news_only", True), ("none", "neither", True)])
def test_information_condition_labels(info, suffix, removal):
    label = information_condition(info)
    assert label["release_config_suffix"] == suffix and label["source_removal"] is removal
    if info == "none":
        assert "source removal" in label["paper_condition"] and "both removed" in label["paper_condition"]
