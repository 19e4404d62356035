"""Invariant (iii) of the MacroLens paper (§4.5): no input is an algebraic function of the target.

    python -m pytest -q tests/test_macrolens_leakage.py

Every number a rendered prompt shows (labelled by its line; ISO dates removed) is combined in pairs -
a, a*b, a/b, b/a, a+b, a-b, b-a - and compared with every target value of the instance (each T1 horizon
step, the market cap, each statement field, the return, rent and price). A combination rule that lands
within 0.2 % of the target (what 4-significant-digit rendering of both factors allows) on at least half
of a task's fixture instances is a leak and fails the test.
"""
from __future__ import annotations

import re
from collections import defaultdict

import numpy as np
import pytest

from ledgerlm.evaluate.macrolens import data as D
from ledgerlm.evaluate.macrolens import schema as S
from ledgerlm.evaluate.macrolens.fixture import cached_fixture_dir
from ledgerlm.evaluate.macrolens import instances as I
from ledgerlm.evaluate.macrolens.instances import DEFAULT_BUDGETS, TaskConfig, build
from ledgerlm.evaluate.macrolens.parsers import numbers
from ledgerlm.evaluate.macrolens.prompts import LADDER_TASKS, build_messages

TOL, RATE, MIN_HITS = 2e-3, 0.5, 3
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_LABELLED = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*:\s*(.+)$")


@pytest.fixture(scope="module")
def release():
    return D.load_release(cached_fixture_dir(), "daily")


def _valuation_instances(release, task: str, cfg: TaskConfig, per_ticker: int = 6) -> list[dict]:
    """T2/T5 instances at several test-window anchors of every fixture company (the paper's one latest snapshot
    per holdout company gives the 4-company fixture a single instance - too few to measure a hit rate)."""
    out = []
    for ticker, g in release.panel.groupby("ticker"):
        g = g.reset_index(drop=True)
        ok = np.flatnonzero((g["market_cap"].notna() & D.is_test_date(g["date"], "daily")).to_numpy())
        for i in ok[:: max(1, len(ok) // per_ticker)][:per_ticker]:
            row = {"sector": g["sector"].iloc[i], "cap_quartile": "n/a", "filing_tercile": "n/a"}
            t = g["date"].iloc[i].strftime("%Y-%m-%d")
            out.append(I._instance(task, f"{task}/{ticker}/{t}", ticker, t, ticker, row, float(g["market_cap"].iloc[i]), {},
                                   I._context(release, g, int(i), I.VALUATION_LOOKBACK, task, cfg)))
    return out


@pytest.fixture(scope="module")
def instances(release):
    cfg = TaskConfig(horizon=21, budgets={**DEFAULT_BUDGETS, "T1": 24, "T4": 24, "T7": 30}, t3_instances="test")
    out = {task: build(task, release, cfg)[0] for task in ("T1", "T3", "T4", "T6", "T7")}
    out.update({task: _valuation_instances(release, task, cfg) for task in ("T2", "T5")})
    return out


def prompt_numbers(text: str) -> list[tuple[str, float]]:
    """(label, value) of every number in a prompt: `label: value` lines by their label, other lines by their
    digit-free prefix and position (stable across instances)."""
    out = []
    for line in _DATE.sub(" ", text).splitlines():
        m = _LABELLED.match(line)
        values = numbers(line if not m else m.group(2))
        if m and len(values) == 1:
            out.append((m.group(1), values[0]))
            continue
        stem = re.sub(r"[\d.,$%()-]+", "#", line.strip())[:40]
        out += [(f"{stem}#{k}", v) for k, v in enumerate(values)]
    return out


def target_values(inst: dict) -> list[tuple[str, float]]:
    t = inst["target"]
    if isinstance(t, dict):
        return [(k, v) for k, v in t.items() if v]
    if isinstance(t, list):
        return [(("rent", "price")[j] if inst["task"] == "T7" else f"step{j + 1}", v) for j, v in enumerate(t) if v]
    return [("target", t)] if t else []


def leak_rules(insts: list[dict], level: str) -> list[tuple[str, float]]:
    """Combination rules that hit the target on >= RATE of the instances showing both numbers (and >= MIN_HITS)."""
    hits, present = defaultdict(int), defaultdict(int)
    for inst in insts:
        shown = prompt_numbers(build_messages(inst, level)[-1]["content"])
        labels = [lab for lab, _ in shown]
        for lab in set(labels):
            present[lab] += 1
        v = np.array([x for _, x in shown], float)
        if v.size == 0:
            continue
        n = len(labels)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            a, b = v[:, None], v[None, :]
            combos = {"a": v, "*": (a * b).ravel(), "/": (a / b).ravel(), "+": (a + b).ravel(), "-": (a - b).ravel()}
            found = set()
            for tname, tval in target_values(inst):
                for op, vals in combos.items():
                    for idx in np.flatnonzero(np.abs(vals / tval - 1.0) < TOL):
                        pair = (labels[idx],) if op == "a" else (labels[idx // n], labels[idx % n])
                        found.add((op, pair, tname))
        for key in found:
            hits[key] += 1
    leaks = []
    for (op, pair, tname), k in hits.items():
        rate = k / min(present[lab] for lab in pair)
        if k >= MIN_HITS and rate >= RATE:
            rule = pair[0] if op == "a" else f"{pair[0]} {op} {pair[1]}"
            leaks.append((f"{rule} = {tname}", rate))
    return sorted(leaks, key=lambda x: -x[1])


@pytest.mark.parametrize("task", ["T1", "T2", "T3", "T4", "T5", "T6", "T7"])
def test_no_shown_number_or_pair_combination_is_the_target(instances, task):
    insts = instances[task]
    assert len(insts) >= 4, f"{task}: too few fixture instances to test"
    for level in ("A", "B", "C", "D", "E") if task in LADDER_TASKS else ("-",):
        leaks = leak_rules(insts, level if level != "-" else "E")
        assert not leaks, f"{task} level {level}: algebraic leaks {leaks[:5]}"


def test_the_checker_finds_close_times_shares_when_the_share_count_is_shown(release, monkeypatch):
    """The leak the paper's invariant forbids: showing shares next to the close hands over the market cap."""
    monkeypatch.setattr(S, "VALUATION_EXCLUDED", ())
    leaks = dict(leak_rules(_valuation_instances(release, "T2", TaskConfig()), "B"))
    assert any(rule.startswith(("last_close * shares_outstanding", "shares_outstanding * last_close")) for rule in leaks), leaks
    rate = max(v for k, v in leaks.items() if "shares_outstanding" in k)
    assert rate == 1.0  # every instance


def test_cover_page_share_counts_are_redacted_in_valuation_excerpts(instances):
    texts = [build_messages(i, "E")[-1]["content"] for i in instances["T2"]]
    assert all("share count redacted" in t for t in texts if "shares of common stock" in t)
    assert any("share count redacted" in t for t in texts)
