"""`ledgerlm compare` / `ledgerlm report` on loss-scored runs (EPSBench PDE, MacroLens primary losses):
pairs by instance id, null scores (format failures) counted per side and left out of the paired
statistics, paired bootstrap CIs of the mean and median difference, Wilcoxon signed-rank p — checked
against hand values and scipy on runs written by the benchmarks' own `ledgerlm score` / `eval`."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import wilcoxon

from ledgerlm.cli import main as ledgerlm
from ledgerlm.errors import InputError
from ledgerlm.evaluate.compare import compare_runs, main as compare_main
from ledgerlm.evaluate.epsbench.release import load_release
from ledgerlm.evaluate.epsbench.validation import validate_release
from ledgerlm.evaluate.macrolens.fixture import cached_fixture_dir
from ledgerlm.evaluate.report import main as report_main
from ledgerlm.evaluate.runfiles import read_jsonl, read_run, write_run

RELEASE = load_release()
FLAGGED = {f.id for f in validate_release(RELEASE)}
IDS = [i.id for i in RELEASE.instances if i.id not in FLAGGED and RELEASE.truth[i.id].eps is not None and RELEASE.prices.get(i.id)][:8]
# PDE per instance (None = no parseable forecast); a tuple = that instance's runs s1, s2, s3
PDE_A = [(0.02, 0.04, None), 0.021, 0.03, 0.05, 0.04, 0.02, 0.06, None]
PDE_B = [0.01, 0.021, 0.012, 0.022, 0.047, None, 0.025, 0.015]


def _eps_records(pdes):
    """Records whose forecast sits `pde × price` above the reported EPS (so PDE = pde), with a valid interval."""
    rows = []
    for iid, value in zip(IDS, pdes):
        ticker, quarter = iid.rsplit("_", 1)
        actual, price = RELEASE.truth[iid].eps, RELEASE.prices[iid]
        for k, pde in enumerate(value if isinstance(value, tuple) else (value,), 1):
            pred = None if pde is None else actual + pde * price
            rows.append({"ticker": ticker, "fiscal_quarter": quarter, "run": f"s{k}", "eps_gaap_pred": pred,
                         "eps_p10": actual - 1.0, "eps_p90": actual + 1.0})
    return rows


@pytest.fixture(scope="module")
def eps_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("eps")
    for name, pdes in (("A", PDE_A), ("B", PDE_B)):
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _eps_records(pdes)))
        assert ledgerlm(["score", "--benchmark", "epsbench", "--predictions", str(root / f"{name}.jsonl"), "--out", str(root / name)]) == 0
    return root / "A", root / "B"


def test_epsbench_runs_declare_a_loss(eps_runs):
    results, samples = read_run(eps_runs[0])
    assert (results["score_kind"], results["score_name"], results["score_aggregate"]) == ("loss", "PDE", "median")
    assert sum(s["score"] is None for s in samples) == 2 and len(samples) == 10


def test_epsbench_pair_matches_hand_values_and_scipy(eps_runs):
    result = compare_runs(*eps_runs, n_boot=4000, seed=3)
    assert result["score_kind"] == "loss" and result["score_name"] == "PDE" and result["lower_is_better"]
    assert (result["n_paired"], result["only_a"], result["only_b"]) == (8, 0, 0)
    # A: 10 sample rows, 2 null (IDS[0] run s3 and IDS[7]); IDS[0] folds to median(0.02, 0.04, +inf) = 0.04
    assert result["format_failures"]["a"] == {"samples": 10, "null_samples": 2, "instances": 8, "null_instances": 1}
    assert result["format_failures"]["b"] == {"samples": 8, "null_samples": 1, "instances": 8, "null_instances": 1}
    assert result["excluded_pairs"] == [{"id": IDS[5], "a": pytest.approx(0.02), "b": None}, {"id": IDS[7], "a": None, "b": pytest.approx(0.015)}]
    [overall] = result["rows"]  # EPSBench declares no grouping
    # used pairs: IDS 0,1,2,3,4,6 -> B − A = −0.03, 0, −0.018, −0.028, +0.007, −0.035
    diff = np.array([0.01 - 0.04, 0.0, 0.012 - 0.03, 0.022 - 0.05, 0.047 - 0.04, 0.025 - 0.06])
    assert (overall["n"], overall["n_used"], overall["null_a"], overall["null_b"]) == (8, 6, 1, 1)
    assert overall["mean_a"] == pytest.approx((0.04 + 0.021 + 0.03 + 0.05 + 0.04 + 0.06) / 6)
    assert overall["delta"] == pytest.approx(-0.104 / 6)
    assert overall["median_delta"] == pytest.approx((-0.028 - 0.018) / 2)
    assert (overall["b_lower"], overall["b_higher"], overall["ties"]) == (4, 1, 1)
    # with a failure counted as a loss to the run that answered (EPSBench's convention): IDS[7] (A failed) is a win
    # for B, IDS[5] (B failed) a loss; sign test over 5 wins / 2 losses, two-sided exact: 2 * P(X <= 2 | n=7) = 58/128
    assert (overall["b_wins_failures_lose"], overall["b_losses_failures_lose"]) == (5, 2)
    assert overall["sign_p_failures_lose"] == pytest.approx(58 / 128)
    # Wilcoxon by hand: zero dropped, ranks of |d| 1..5, the only positive difference has rank 1 -> W = 1;
    # exact two-sided p = 2 · P(W ≤ 1) = 2 · 2/32
    assert overall["wilcoxon_statistic"] == 1.0
    assert overall["p_value"] == pytest.approx(wilcoxon(diff).pvalue) == pytest.approx(4 / 32)
    assert diff.min() <= overall["ci_low"] < overall["delta"] < overall["ci_high"] <= diff.max()
    assert diff.min() <= overall["median_ci_low"] <= overall["median_delta"] <= overall["median_ci_high"] <= diff.max()
    assert compare_runs(*eps_runs, n_boot=4000, seed=3) == result  # seeded


def test_epsbench_pair_also_gets_the_release_paired_comparison(eps_runs):
    """Audit s21 (deviation 2): EPSBench's own paired comparison (release common.paired over main_tables' instance PDEs:
    every release instance, a missing run or record +inf, inf-inf dropped, median of finite differences, 90% CI from
    random.Random(0) medians, sign test) beside the 95% CI and Wilcoxon. A ran s1-s3 but has s2/s3 records only for
    IDS[0], so its other instances are median(x, inf, inf) = inf (audit s22: the samples alone would pair them)."""
    import random
    import statistics
    from math import comb

    [overall] = compare_runs(*eps_runs, n_boot=300, seed=3)["rows"]
    inf = math.inf
    a = dict(zip(IDS, [0.04, inf, inf, inf, inf, inf, inf, inf]))
    b = dict(zip(IDS, [0.01, 0.021, 0.012, 0.022, 0.047, inf, 0.025, 0.015]))
    diffs = [b[i] - a[i] for i in sorted(IDS) if math.isfinite(a[i]) and math.isfinite(b[i])]
    assert diffs == [pytest.approx(-0.03)]
    rng = random.Random(0)  # the release's boot_ci, typed from JadeXu16/epsbench stage_3_eval/common.py
    medians = sorted(statistics.median(rng.choices(diffs, k=len(diffs))) for _ in range(10000))
    assert overall["release_median_delta"] == pytest.approx(-0.03)
    assert (overall["release_ci90_low"], overall["release_ci90_high"]) == pytest.approx((medians[500], medians[9500]))
    # B wins IDS 0-4, 6, 7 (finite against inf or lower); IDS[5] is inf on both sides: dropped
    assert (overall["release_n_diffs"], overall["release_b_wins"], overall["release_b_losses"]) == (1, 7, 0)
    assert overall["release_sign_p"] == pytest.approx(2 * comb(7, 0) / 2 ** 7)


def test_epsbench_markdown_says_lower_is_better_and_lists_excluded_pairs(eps_runs, tmp_path, capsys):
    assert compare_main([str(eps_runs[0]), str(eps_runs[1]), "--out", str(tmp_path / "cmp.md"), "--json", str(tmp_path / "cmp.json"),
                         "--n-boot", "300"]) == 0
    text = capsys.readouterr().out
    assert text == (tmp_path / "cmp.md").read_text()
    assert text.startswith("# PDE (lower is better)") and "| **all** | 8 | 6 | 1 | 1 | " in text
    overall = next(line for line in text.splitlines() if line.startswith("| **all** |"))
    assert overall.count("(n=6)") == 6  # A, B and Δ means and medians: n beside every score
    assert "A 2 of 10 samples (1 of 8 instances), B 1 of 8 samples (1 of 8 instances)" in text
    assert f"{IDS[5]} (B null)" in text and f"{IDS[7]} (A null)" in text
    assert json.loads((tmp_path / "cmp.json").read_text())["rows"][0]["b_lower"] == 4
    assert "EPSBench's own paired comparison" in text and "| **all** | 1 | -0.03 | [" in text


def test_kind_mismatch_and_undeclared_continuous_scores_are_refused(eps_runs, tmp_path):
    row = {"id": IDS[0], "prompt": [], "response": "", "reasoning": None, "answer_text": "", "extracted": None,
           "score": 1, "error_reason": None}
    write_run(tmp_path / "acc", {"model": "m"}, [row])
    with pytest.raises(InputError, match="disagree on score_kind"):
        compare_runs(tmp_path / "acc", eps_runs[1])
    results, samples = read_run(eps_runs[1])
    write_run(tmp_path / "old", {k: v for k, v in results.items() if k != "score_kind"}, samples)
    with pytest.raises(InputError, match="not 0/1"):
        compare_runs(tmp_path / "old", tmp_path / "old")
    [same] = compare_runs(tmp_path / "old", eps_runs[1], kind="loss")["rows"]  # B against itself, forced to a loss
    assert (same["n_used"], same["delta"], same["ties"], same["p_value"]) == (7, 0.0, 7, 1.0)


@pytest.fixture(scope="module")
def macrolens_runs(tmp_path_factory):
    """A = baseline:naive on T1, T2, T4 at ladder levels A and E; B = A's rows with T2 answers 10% off the
    target and T4 answers `d` off it (re-scored by `ledgerlm score`); T1 rows unchanged (ties)."""
    root = tmp_path_factory.mktemp("ml")
    assert ledgerlm(["eval", "--benchmark", "macrolens", "--tasks", "T1,T2,T4", "--ladder", "A,E", "--model", "baseline:naive",
                     "--data", str(cached_fixture_dir()), "--out", str(root / "A_eval"), "--budget", "all=6", "--horizon", "5",
                     "--b-min", "50", "--b-max", "50"]) == 0
    rows = [r for t in ("t1", "t2", "t4") for r in read_jsonl(root / "A_eval" / f"macrolens_{t}" / "samples.jsonl")]  # one folder per task
    (root / "A.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert ledgerlm(["score", "--benchmark", "macrolens", "--predictions", str(root / "A.jsonl"), "--out", str(root / "A"),
                     "--b-min", "50", "--b-max", "50"]) == 0  # the three tasks' rows as one run folder
    rows = read_jsonl(root / "A" / "samples.jsonl")
    offsets = {}
    for k, row in enumerate(r for r in rows if r["task"] == "T4"):
        offsets[row["id"]] = (0.5 + k) * (-1) ** k
        row["response"] = f"Answer: {row['target'] + offsets[row['id']]!r}"
    for row in rows:
        if row["task"] == "T2":
            row["response"] = f"Answer: {row['target'] * 1.1!r}"
    (root / "B.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert ledgerlm(["score", "--benchmark", "macrolens", "--predictions", str(root / "B.jsonl"), "--out", str(root / "B"),
                     "--b-min", "50", "--b-max", "50"]) == 0
    return root / "A", root / "B", offsets


def test_macrolens_pair_groups_by_task_and_level(macrolens_runs):
    run_a, run_b, offsets = macrolens_runs
    (results_b, samples_b), (_, samples_a) = read_run(run_b), read_run(run_a)
    assert results_b["score_kind"] == "loss" and results_b["group_by"] == ["task", "level"]
    a, b = {s["id"]: s["score"] for s in samples_a}, {s["id"]: s["score"] for s in samples_b}
    for s in samples_b:  # the edited answers scored as intended: T4 |error| = |d|, T2 APE = 10%
        if s["task"] == "T4":
            assert s["score"] == pytest.approx(abs(offsets[s["id"]]), abs=1e-9)
        elif s["task"] == "T2":
            assert s["score"] == pytest.approx(10.0)
    result = compare_runs(run_a, run_b, n_boot=2000, seed=0)
    assert result["n_paired"] == len(a) == 26
    assert result["format_failures"]["a"]["null_samples"] == result["format_failures"]["b"]["null_samples"] == 0
    groups = [tuple(r["group"].items()) for r in result["rows"]]
    assert groups[:4] == [(), (("task", "T1"),), (("task", "T2"),), (("task", "T4"),)]
    assert (("task", "T4"), ("level", "E")) in groups and len(groups) == 4 + 6
    for row in result["rows"]:
        ids = [i for i in a if all(i.split("/")[0] == v if k == "task" else i.endswith("@" + v) for k, v in row["group"].items())]
        diff = np.array([b[i] - a[i] for i in ids])
        assert row["n"] == row["n_used"] == len(ids)
        assert row["delta"] == pytest.approx(diff.mean()) and row["median_delta"] == pytest.approx(np.median(diff))
        assert row["ci_low"] <= row["delta"] <= row["ci_high"]
        expected_p = wilcoxon(diff).pvalue if np.any(diff != 0) else 1.0
        assert row["p_value"] == pytest.approx(expected_p)
        if row["group"].get("task") == "T1":
            assert row["ties"] == len(ids) and row["delta"] == 0.0 and row["p_value"] == 1.0
    overall = result["rows"][0]
    diff = np.array([b[i] - a[i] for i in a])
    se = diff.std(ddof=0) / np.sqrt(len(diff))
    assert 0.5 < (overall["ci_high"] - overall["ci_low"]) / (2 * 1.96 * se) < 1.5  # near the normal approximation


def test_report_on_loss_runs_writes_loss_plots(macrolens_runs, eps_runs, tmp_path):
    run_a, run_b, _ = macrolens_runs
    assert report_main([str(run_a), str(run_b), "--out", str(tmp_path / "ml"), "--n-boot", "200"]) == 0
    assert report_main([str(eps_runs[0]), str(eps_runs[1]), "--out", str(tmp_path / "eps"), "--n-boot", "200"]) == 0
    for folder in ("ml", "eps"):
        for name in ("losses.png", "deltas.png"):
            data = (tmp_path / folder / name).read_bytes()
            assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
        assert not (tmp_path / folder / "hint_vs_nohint.png").exists()
    text = (tmp_path / "eps" / "report.md").read_text()
    assert "Score: PDE, **lower is better**" in text and "| A | " in text and "| 10 | 2 | " in text
    assert "# PDE (lower is better)" in text and "![losses](losses.png)" in text
    assert "| task=T2 · level=A | 1 |" in (tmp_path / "ml" / "report.md").read_text()
