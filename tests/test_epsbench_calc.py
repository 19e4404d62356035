"""EPSBench calculator on the real release schemas: neutral drivers, hand-checked drivers, errors."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgerlm.errors import InputError
from ledgerlm.evaluate.epsbench.calculator import calculate, load_schema, neutral_drivers, schema_from_dict
from ledgerlm.evaluate.epsbench.cli import main as epsbench_main
from ledgerlm.evaluate.epsbench.release import EMBEDDED_RELEASE

SCHEMAS = EMBEDDED_RELEASE / "ticker_schemas_v4"


def schema(name: str):
    return load_schema(SCHEMAS / f"{name}.json")


def test_neutral_drivers_reproduce_year_ago_eps_on_all_release_schemas():
    paths = sorted(SCHEMAS.glob("*.json"))
    assert len(paths) == 149
    gaps = {}
    for path in paths:
        s = load_schema(path)
        gaps[s.id] = abs(calculate(s, neutral_drivers(s))["eps"] - s.validation["baseline_fq_eps"])
    within = sorted(k for k, g in gaps.items() if g <= 0.01 + 1e-9)
    others = {k: round(g, 4) for k, g in gaps.items() if k not in within}
    print(f"\nneutral drivers: {len(within)}/149 schemas within $0.01 of baseline_fq_eps; others: {others}")
    assert len(within) >= 146  # the paper: 146 of 149
    assert max(others.values(), default=0) <= 0.04  # the paper: the rest within four cents


def test_googl_2026q1_hand_checked():
    s = schema("GOOGL_2026Q1")
    drivers = dict(revenues_yoy=0.19, cogs_margin_delta_bps=80, rd_yoy=0.22, sales_marketing_yoy=0.10,
                   general_admin_yoy=0.14, other_income_net_abs=4000, tax_rate=0.167832, shares_abs=12125)
    nodes = calculate(s, drivers)
    revenue = 90234.0 * 1.19
    cogs = (36361.0 / 90234.0 + 0.0080) * revenue  # bps: baseline share + 80 bp of the new revenue
    operating = revenue - cogs - 13556.0 * 1.22 - 6172.0 * 1.10 - 3539.0 * 1.14
    assert nodes["revenues"] == pytest.approx(revenue)
    assert nodes["cost_of_revenues"] == pytest.approx(cogs)
    assert nodes["operating_income"] == pytest.approx(operating) and round(operating, 2) == 35887.86
    assert nodes["pretax_income"] == pytest.approx(operating + 4000) and round(nodes["pretax_income"], 2) == 39887.86
    assert nodes["eps"] == pytest.approx((operating + 4000) * (1 - 0.167832) / 12125, abs=1e-12)
    assert round(nodes["eps"], 4) == 2.7376


def test_omitted_drivers_rate_takes_default_absolute_takes_baseline():
    s = schema("GOOGL_2026Q1")
    nodes = calculate(s, {})
    assert nodes["tax_rate"] == 0.167832  # rate_override default (TTM), not the baseline 0.173467
    assert nodes["shares"] == 12291.81  # absolute omitted -> baseline, not its `default`
    assert nodes["other_income_net"] == 11183.0
    assert nodes["revenues"] == 90234.0


def test_yoy_scales_every_constituent():
    s = schema("ADBE_2026Q1")
    meta = s.drivers["total_opex_yoy"]
    nodes = calculate(s, {"total_opex_yoy": 0.10})
    for leaf in meta["constituents"]:
        assert nodes[leaf] == pytest.approx(s.baseline[leaf] * 1.10)
    untouched = set(s.baseline) - set(meta["constituents"]) - {d["variable"] for d in s.drivers.values()}
    untouched -= {c for d in s.drivers.values() for c in d.get("constituents", [])}
    assert all(nodes[k] == s.baseline[k] for k in untouched)


def test_bps_splits_pro_rata_after_propagation():
    s = schema("CSCO_2026Q2")  # cogs over two constituents, anchored on the total_revenue formula
    nodes = calculate(s, {"cogs_margin_delta_bps": -150, "product_revenue_yoy": 0.08, "services_revenue_yoy": -0.02})
    base = {k: s.baseline[k] for k in ("product_cogs", "services_cogs")}
    base_rev = s.baseline["product_revenue"] + s.baseline["services_revenue"]
    new_rev = s.baseline["product_revenue"] * 1.08 + s.baseline["services_revenue"] * 0.98
    target = (sum(base.values()) / base_rev - 0.0150) * new_rev
    assert nodes["product_cogs"] + nodes["services_cogs"] == pytest.approx(target)
    assert nodes["product_cogs"] / nodes["services_cogs"] == pytest.approx(base["product_cogs"] / base["services_cogs"])


def test_bps_anchor_sees_yoy_growth():
    s = schema("GOOGL_2026Q1")
    nodes = calculate(s, {"revenues_yoy": 0.5, "cogs_margin_delta_bps": 0})
    assert nodes["cost_of_revenues"] == pytest.approx(36361.0 * 1.5)  # same share of a 50% larger anchor


def _toy(formulas, **extra):
    data = {"ticker": "TOY", "target_fq": "2026Q1", "baseline_fq": "2025Q1",
            "variables_baseline": {"revenue": 100.0, "cost": 60.0, "other": 5.0, "tax_rate": 0.2, "shares": 10.0},
            "formulas": formulas, "prediction_schema": {"revenue_yoy": {"variable": "revenue", "type": "yoy", "constituents": ["revenue"]}}}
    data.update(extra)
    return schema_from_dict(data, "toy.json")


TOY_FORMULAS = {"pretax": "revenue - cost + other", "net": "pretax * (1 - tax_rate)", "eps": "net / shares"}


def test_static_rules_each_strategy():
    rules = {"cost": {"strategy": "historical_peg", "anchor": "revenue"}, "other": {"strategy": "oracle", "value": 9},
             "tax_rate": {"strategy": "ttm_average", "ttm_value": 0.25}, "shares": "carry_forward"}
    nodes = calculate(_toy(TOY_FORMULAS, static_rules=rules), {"revenue_yoy": 0.10})
    assert nodes["cost"] == pytest.approx(66.0)  # 60% of the grown revenue
    assert nodes["other"] == 9.0 and nodes["tax_rate"] == 0.25 and nodes["shares"] == 10.0
    assert nodes["eps"] == pytest.approx((110 - 66 + 9) * 0.75 / 10)


@pytest.mark.parametrize("formulas,needle,field", [
    ({"a": "b + 1", "b": "a * 2", "eps": "a / shares"}, "cycle", "formulas"),
    ({"eps": "revenue / share_count"}, "unknown variable", "eps"),
    ({"eps": "revenue / (shares - 10)"}, "division by zero", "eps"),
    ({"eps": "__import__('os').getcwd()"}, "disallowed", "eps"),
    ({"eps": "revenue ** 2"}, "not allowed", "eps"),
    ({"eps": "revenue.real"}, "disallowed", "eps"),
    ({"eps": "'1' + revenue"}, "not a number", "eps"),
])
def test_errors_name_the_schema_file_and_variable(formulas, needle, field):
    with pytest.raises(InputError) as err:
        calculate(_toy(formulas))
    assert needle in str(err.value) and "toy.json" in str(err.value) and field in str(err.value)


def test_unknown_and_non_numeric_drivers_rejected():
    s = schema("GOOGL_2026Q1")
    with pytest.raises(InputError, match="unknown driver"):
        calculate(s, {"revenue_growth": 0.1})
    with pytest.raises(InputError, match="not a number"):
        calculate(s, {"revenues_yoy": "fast"})
    with pytest.raises(InputError, match="finite"):
        calculate(s, {"revenues_yoy": float("nan")})
    assert calculate(s, {"revenue_growth": 0.1}, strict=False)["eps"] == calculate(s, {})["eps"]


def test_cli_calc_json(capsys, tmp_path: Path):
    drivers = tmp_path / "d.json"
    drivers.write_text(json.dumps({"fundamental_predictions": {"revenues_yoy": {"value": 0.19, "evidence": "x"}}}))
    assert epsbench_main(["calc", "--schema", str(SCHEMAS / "GOOGL_2026Q1.json"), "--drivers", str(drivers), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"eps", "nodes"}
    assert out["nodes"]["revenues"] == pytest.approx(90234 * 1.19)
    assert out["eps"] == out["nodes"]["eps"]


@pytest.mark.parametrize("name", ["nofile.json", "sub/drivers.txt"])
def test_cli_calc_missing_drivers_file_says_file_not_found(tmp_path: Path, name: str):
    missing = tmp_path / name
    with pytest.raises(InputError) as err:
        epsbench_main(["calc", "--schema", str(SCHEMAS / "GOOGL_2026Q1.json"), "--drivers", str(missing)])
    assert "file not found" in str(err.value) and str(missing) in str(err.value)
    assert "Expecting value" not in str(err.value)


def test_cli_calc_inline_json_that_is_broken_still_reports_the_json_error():
    with pytest.raises(InputError, match="not a JSON object") as err:
        epsbench_main(["calc", "--schema", str(SCHEMAS / "GOOGL_2026Q1.json"), "--drivers", '{"revenues_yoy": }'])
    assert "file not found" not in str(err.value)
