"""Items built from the embedded real SEC data: answers, traps, solutions, variants and the fidelity checker.

    python -m pytest tests/test_synth_finindices_items.py -q
"""
from __future__ import annotations

import ast
import json
import re

import pytest

from ledgerlm.errors import NotDerivable
from ledgerlm.synth.finindices import fidelity
from ledgerlm.synth.finindices.config import SynthConfig
from ledgerlm.synth.finindices.pipeline import Stats

N_SLOTS = 100  # ~200 samples


@pytest.fixture(scope="module")
def built():
    from ledgerlm.synth.finindices.contexts import Builder

    builder = Builder.from_config(SynthConfig(seed=11))
    stats, rows = Stats(), []
    for slot in range(N_SLOTS):
        rows += builder.slot(slot, stats)
    return builder, rows, stats


def _user(row):
    return next(m["content"] for m in row["messages"] if m["role"] == "user")


def test_fidelity_every_answer_recomputed_from_prompt_text(built):
    builder, rows, _ = built
    report = fidelity.check_rows(rows, builder.store_for, builder.registry)
    assert report.checked == len(rows) >= 150
    assert report.problems == [] and report.agree == report.checked
    assert report.deficiency_checked > 0


def test_fidelity_catches_a_changed_number_and_a_wrong_answer(built):
    builder, rows, _ = built
    row = next(r for r in rows if r["paradigm"] == "single" and r["answer"] != "Insufficient information"
               and r["context_formats"][r["context_periods"].index(r["provenance"][0]["period"])] == "json")
    bad = json.loads(json.dumps(row))
    bad["answer"] = row["answer"] + 1
    assert fidelity.check_row(bad, builder.store_for(row['company']), builder.registry) is not None
    fact = row["provenance"][0]
    tampered = json.loads(json.dumps(row))
    msg = next(m for m in tampered["messages"] if m["role"] == "user")
    old = f'"concept": "{fact["concept"]}",'
    assert old in msg["content"]
    msg["content"] = re.sub(rf'("concept": "{fact["concept"]}",\s*"label": "[^"]*",\s*"value": )([-0-9.e+]+)',
                            lambda m: m[1] + repr(float(m[2]) * 3 + 7), msg["content"])
    assert fidelity.check_row(tampered, builder.store_for(row['company']), builder.registry) is not None


def test_deficiency_items_are_proven_not_derivable(built):
    builder, rows, _ = built
    from ledgerlm.synth.indices.compute import compute

    deficient = [r for r in rows if any(t["kind"] == "deficiency" for t in r["traps"])]
    assert deficient
    for row in deficient:
        assert row["answer"] == "Insufficient information" and row["paradigm"] == "single"
        detail = next(t["detail"] for t in row["traps"] if t["kind"] == "deficiency")
        missing = detail.split()[0]
        assert missing not in row["context_periods"]
        view = builder.store.restrict({row["company"]: set(row["context_periods"])})
        with pytest.raises(NotDerivable):
            compute(view, row["company"], row["indices"][0], row["target_periods"][0], registry=builder.registry)
        # ...while the full store can compute it: the removal is what blocks it
        compute(builder.store, row["company"], row["indices"][0], row["target_periods"][0], registry=builder.registry)
        assert missing in row["solution"] and row["solution"].splitlines()[-1] == "Insufficient information"


def test_distractor_and_parent_traps_show_unneeded_reports(built):
    builder, rows, _ = built
    from ledgerlm.synth.indices.compute import compute

    distracted = [r for r in rows if any(t["kind"] == "distractor_period" for t in r["traps"])
                  and r["answer"] != "Insufficient information"]
    assert distracted
    for row in distracted[:10]:
        needed = set()
        for index_id in row["indices"]:
            for period in row["target_periods"]:
                needed |= {k.label for k in compute(builder.store, row["company"], index_id, period, registry=builder.registry).reports}
        assert set(row["context_periods"]) - needed, row["id"]


def test_no_parent_distractor_from_a_multi_registrant_filing():
    """Duke's FSDS rows tagged LegalEntity=ParentCompany are Duke's own consolidated statements (a
    multi-registrant 10-K/10-Q, issue #11), not Schedule I parent-only ones: never shown as "parent".
    The embedded data holds no genuine parent-only statements, so no item may carry a parent distractor."""
    from ledgerlm.synth.finindices.contexts import Builder

    builder = Builder.from_config(SynthConfig(seed=3, companies=["DUK"], p_parent=1.0, p_deficiency=0.0))
    rows = [r for slot in range(12) for r in builder.slot(slot, Stats())]
    assert rows
    assert not [r for r in rows if any(t["kind"] == "parent_distractor" for t in r["traps"])]
    assert not any(re.search(r"— (parent|母公司)", _user(r)) for r in rows)
    assert builder.stores["DUK"].scopes("DUK") == ["consolidated"]


def test_solution_ends_with_the_answer_in_the_requested_format(built):
    _, rows, _ = built
    seen = set()
    for row in rows:
        sol = row["solution"]
        seen.add(row["answer_format"])
        if row["answer"] == "Insufficient information":
            assert sol.endswith("\nInsufficient information")
        elif row["answer_format"] == "number":
            last = sol.splitlines()[-1]
            assert float(last) == row["answer"] and re.fullmatch(rf"-?\d+\.\d{{{row['decimals']}}}", last)
        elif row["answer_format"] == "json":
            block = re.search(r"```json\n(.*?)\n```\s*$", sol, re.S)
            assert json.loads(block[1]) == row["answer"]
        elif row["answer_format"] == "tuple_list":
            tuples = ast.literal_eval(sol.splitlines()[-1])
            assert [list(t[1:]) for t in tuples] == row["answer"]
        else:
            table = re.search(r"<table>(.*)</table>\s*$", sol, re.S)[1]
            cells = [re.findall(r"<td>([^<]*)</td>", tr)[1:] for tr in re.findall(r"<tr>(.*?)</tr>", table)[1:]]
            assert [[float(c) for c in line] for line in cells] == row["answer"]
    assert {"number", "json", "tuple_list", "html_table"} <= seen


def test_hint_and_no_hint_variants_differ_only_by_the_formula(built):
    _, rows, _ = built
    by_item = {}
    for row in rows:
        by_item.setdefault(row["id"][:-2], {})[row["hint"]] = row
    pairs = [v for v in by_item.values() if len(v) == 2]
    assert pairs
    for pair in pairs:
        hint, plain = pair[True], pair[False]
        assert {k: v for k, v in hint.items() if k not in ("id", "hint", "messages", "n_tokens")} == \
               {k: v for k, v in plain.items() if k not in ("id", "hint", "messages", "n_tokens")}
        h, p = _user(hint).splitlines(), _user(plain).splitlines()
        extra = [line for line in h if line not in p]
        # the hint variant may add one line: how its TTM / standalone-quarter periods are formed (period_notes)
        assert extra and all(l.startswith(("Formula", "公式", "- ")) for l in extra[:-1])
        assert extra[-1].startswith(("Formula", "公式", "- ", "Conventions:", "口径说明："))
        # issue 11: without the formula, the prompt states the conventions the answer uses (when it has any): those its
        # indices share once, the others under each index's name
        assert all(l.startswith(("Conventions:", "口径说明：", "Conventions of single indices:", "各指标的口径：", "- "))
                   for l in p if l not in h)
        assert hint["n_tokens"] > plain["n_tokens"]


def test_table_items_shape_and_unit_constraints(built):
    _, rows, _ = built
    tables = [r for r in rows if r["paradigm"] == "table"]
    assert tables
    for row in tables:
        n = len(row["indices"]) * len(row["target_periods"])
        assert 2 <= n <= 20 and 4 <= len(row["target_periods"]) <= 9
        assert len(row["answer"]) == len(row["indices"]) and all(len(line) == len(row["target_periods"]) for line in row["answer"])
    units = {r["unit"] for r in rows}
    assert "percent" in units and units & {"thousands", "millions", "billions", "ten_thousands", "hundred_millions"}


def test_token_cap_drops_with_a_named_reason():
    from ledgerlm.synth.finindices.contexts import Builder

    builder = Builder.from_config(SynthConfig(max_tokens=50, companies=["AAPL"]))
    stats = Stats()
    assert [r for slot in range(3) for r in builder.slot(slot, stats)] == []
    assert stats.drops["over_token_cap"] + stats.drops.get("no_derivable_target", 0) \
        + stats.drops.get("no_hint_nonstandard_convention", 0) == 6 and stats.drops["over_token_cap"] > 0


def test_a_table_computes_its_first_period_first():
    """draw_target computes a table's first-period column before the rest (a failing table most often fails there,
    so it computes fewer values it never uses); the rows are those of any order (same bytes, checked by the
    replay runs), and a table item still holds every value, index by index."""
    import random

    from ledgerlm.synth.finindices.config import AXES
    from ledgerlm.synth.finindices.contexts import Builder

    builder = Builder.from_config(SynthConfig(seed=5, companies=["AAPL", "NVDA"]))
    asked = []
    compute_value = builder.value
    builder.value = lambda company, index_id, period: asked.append((index_id, period)) or compute_value(company, index_id, period)
    tables = failed = 0
    for slot in range(60):
        rng = random.Random(slot)
        del asked[:]
        try:
            item = builder.draw_target(rng, "table", AXES[slot % len(AXES)])
        except Exception:
            failed += bool(asked)
            continue
        ids = [ix.id for ix in item.indices]
        if len(ids) > 1 and len(item.periods) > 1:
            tables += 1
            assert asked[:len(ids)] == [(i, item.periods[0]) for i in ids]
            assert asked[len(ids):] == [(i, p) for i in ids for p in item.periods]
            assert [[v.index_id for v in row] for row in item.values] == [[i] * len(item.periods) for i in ids]
    assert tables >= 5


def test_fitting_is_the_eligible_indices_that_accept_the_periods():
    """Builder.fitting: the eligible indices of an axis defined for every period's kind, in eligible order; which
    indices accept a set of period kinds is decided once for every company (`_accepted`)."""
    from ledgerlm.synth.finindices.config import AXES
    from ledgerlm.synth.finindices.contexts import Builder

    builder = Builder.from_config(SynthConfig(seed=2))
    checked = 0
    for company in builder.companies[:8]:
        periods = builder._periods[company]
        for axis in AXES:
            for chosen in [(p,) for p in periods[:6]] + [tuple(periods[i:i + 3]) for i in range(0, len(periods) - 3, 5)]:
                want = [i for i in builder.eligible(company, axis) if all(builder.registry[i].accepts(p) for p in chosen)]
                assert builder.fitting(company, axis, chosen) == want
                checked += 1
    assert checked > 100 and len(builder._accepted) < len(builder._fits)


def test_rendered_blocks_share_labels_across_scales_and_figures_across_languages(built, monkeypatch):
    """A statement's labels are computed once per language and its figures once per scale, whichever formats, scales
    and languages its blocks are shown in (issue 17: a rendering of a company is mostly seen once over many filers);
    each rendering is the one made from scratch."""
    import ledgerlm.synth.finindices.contexts as contexts
    from ledgerlm.synth.statements.render import render_statement

    builder, _, _ = built
    company = builder.companies[0]
    report = builder.reports[company][-1]
    calls = []
    for name in ("statement_labels", "statement_figures"):
        real = getattr(contexts, name)
        monkeypatch.setattr(contexts, name, lambda stmt, arg, real=real, name=name: calls.append((name, arg)) or real(stmt, arg))
    builder._rendered.clear()
    builder._blocks.clear()
    for language, scale in (("en", 1), ("zh", 1), ("en", 1_000_000), ("zh", 1_000_000)):
        for fmt in ("text", "html", "tuples", "markdown"):
            block = builder.rendered_block(company, report, "consolidated", ["income"], fmt, language, scale)
            stmt = builder.statement(company, report, "income", "consolidated")
            assert block.text == render_statement(stmt, fmt, scale=scale, language=language)
    assert sorted(calls) == [("statement_figures", 1), ("statement_figures", 1_000_000),
                             ("statement_labels", "en"), ("statement_labels", "zh")]


def test_a_ttm_or_quarter_target_states_how_it_is_formed(built):
    """Seed-8087 helper audit: 337 rows asked a TTM or standalone quarter of an index whose formula has no ttm() or
    quarter() (net profit cash content YoY for FY2019Q1TTM) and never said how that period is formed. Every such row
    now states the rule in both variants and in its solution; a balance-only index at a quarter gets none."""
    from ledgerlm.synth.indices.registry import load_registry

    _, rows, _ = built
    registry, checked = load_registry(), set()
    rules = {"TTM": ("TTM = current YTD + last annual", "TTM = 本期累计 + 上一年度全年"),
             "Q": ("Standalone quarter Qn = YTD(n) - YTD(n-1)", "单季度 Qn = 第 n 季累计数 − 第 n−1 季累计数")}
    for row in rows:
        if row["answer"] == "Insufficient information":
            continue
        kinds = {"TTM" if p.endswith("TTM") else "Q" if re.fullmatch(r"FY\d{4}Q\d", p) else "" for p in row["target_periods"]}
        flows = any(registry[i].reads_flows for i in row["indices"])
        per_share = any("shares" in registry[i].conventions for i in row["indices"])
        for kind in kinds - {""}:
            rule = rules[kind][row["language"] == "zh"]
            needed = flows or (kind == "TTM" and per_share)  # EPS quarters follow the shares note: never subtracted
            assert (rule in _user(row)) == needed, (row["id"], kind)
            if needed:
                assert rule in row["solution"], row["id"]
                checked.add((kind, row["hint"]))
    assert checked == {("TTM", True), ("TTM", False), ("Q", True), ("Q", False)}
    assert not registry["current_ratio"].reads_flows and registry["ocf_to_net_income"].reads_flows
    from ledgerlm.synth.indices.conventions import period_notes

    eps = [ix for ix in registry.values() if "shares" in ix.conventions and not ix.reads_flows]
    assert eps and not period_notes(eps[:1], ["FY2020Q2"], "en") and period_notes(eps[:1], ["FY2020Q2TTM"], "en")
    # a no-hint table states a period rule once for all its indices, whichever index's own notes hold it
    ttm_own = next(ix for ix in registry.values() if "ttm" in ix.conventions)
    other = next(ix for ix in registry.values() if ix.reads_flows and "ttm" not in ix.conventions)
    assert period_notes([ttm_own, other], ["FY2020Q2TTM"], "en", shared=True) and \
        not period_notes([ttm_own, other], ["FY2020Q2TTM"], "en")


def test_a_line_no_block_shows_is_never_answered():
    """Worked-solution audit (helper): the lookup slice drew `shares_issued` (an equity-statement line; prompts show balance
    sheets, income and cash-flow statements) for slot 163 of seed 6262 and wrote a prompt with no documents beside a
    numeric answer. Now dropped with a named reason, and every kept row shows documents."""
    from ledgerlm.synth.finindices.config import load_config
    from ledgerlm.synth.finindices.contexts import Builder

    builder = Builder.from_config(load_config("configs/synth/lookup.yaml", seed=6262))
    stats, rows = Stats(), []
    for slot in range(400):  # (slot 163 drew it until the store's lines changed; any draw of such a line is dropped)
        rows += builder.slot(slot, stats)
        if stats.drops["needs_unshown_statement"] and slot >= 50:
            break
    assert stats.drops["needs_unshown_statement"] > 0
    assert rows and all("===" in _user(r) for r in rows)


def test_solution_lines_a_reader_can_follow(built):
    """Worked-solution audit (helper, 3,183 rows): a deficiency solution carried the store's log message ("index
    'interest_bearing_debt_ratio', company F, ...") and Chinese lists joined with ", "; a rounding line showed the value
    to 2 places and rounded it to 3 from places it did not show."""
    _, rows, _ = built
    deficient = [r for r in rows if r["answer"] == "Insufficient information"]
    assert deficient
    for r in deficient:
        assert "index '" not in r["solution"] and "company " not in r["solution"]
        if r["language"] == "zh":
            assert ", " not in r["solution"].split("最终答案")[0]
    rounding = re.compile(r": (-?[\d,]+(?:\.(\d+))?) -> .*?(\d) decimals? = ")
    for r in rows:
        for line in r["solution"].splitlines():
            m = rounding.search(line)
            if m and m.group(2) is not None and "percent" not in line:
                assert len(m.group(2)) > int(m.group(3)), line
