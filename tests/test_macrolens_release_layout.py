"""The MacroLens release reader on a small fixture written in exactly the release's layout
data/{daily,filings,fundamentals,macro,monthly,prices,processed,real_estate}.

    python -m pytest -q tests/test_macrolens_release_layout.py
"""
from __future__ import annotations

import pandas as pd
import pytest

from ledgerlm.errors import InputError
from ledgerlm.evaluate.macrolens import data as D
from ledgerlm.evaluate.macrolens.fixture import cached_fixture_dir
from ledgerlm.evaluate.macrolens.instances import DEFAULT_BUDGETS, TaskConfig, build
from ledgerlm.evaluate.macrolens.prompts import build_messages
from ledgerlm.evaluate.macrolens.fixture import write_layout
from ledgerlm.evaluate.macrolens.release_layout import EIA_SERIES, FOLDERS, FRED_SERIES


@pytest.fixture(scope="module")
def layout_root(tmp_path_factory):
    return write_layout(tmp_path_factory.mktemp("macrolens_release"))


def test_the_fixture_is_in_exactly_the_release_layout(layout_root):
    assert sorted(p.name for p in (layout_root / "data").iterdir()) == sorted(FOLDERS)
    assert len(FRED_SERIES) == 46 and len(EIA_SERIES) == 7  # the paper's 53 macro series


def test_layout_reader_gives_the_same_panel_as_the_flat_files_plus_all_53_macro_series(layout_root):
    layout = D.load_release(str(layout_root), "daily")
    flat = D.load_release(str(cached_fixture_dir()), "daily")
    cols = ["ticker", "date", "close", "revenue", "total_assets", "market_cap"]
    pd.testing.assert_frame_equal(layout.panel[cols].reset_index(drop=True), flat.panel[cols].reset_index(drop=True))
    assert len(layout.macro_series) == 53 and set(layout.macro_series) <= set(layout.panel.columns)
    assert "fed_funds_rate" in layout.macro_series and "RWTC" in layout.macro_series  # columns.yaml names where it has one
    assert len(layout.filings) == len(flat.filings) and len(layout.properties) == len(flat.properties)


def test_assembled_panel_without_daily_folder(layout_root, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(layout_root, copy)
    shutil.rmtree(copy / "data" / "daily")
    (copy / "data" / "daily").mkdir()
    assembled = D.load_release(str(copy), "daily")
    direct = D.load_release(str(layout_root), "daily")
    for col in ("close", "revenue", "total_assets"):
        assert assembled.panel[col].reset_index(drop=True).equals(direct.panel[col].reset_index(drop=True)), col


def test_ladder_c_shows_every_macro_series(layout_root):
    release = D.load_release(str(layout_root), "daily")
    inst = build("T1", release, TaskConfig(horizon=21, budgets={**DEFAULT_BUDGETS, "T1": 2}))[0][0]
    text = build_messages(inst, "C")[-1]["content"]
    assert len(release.macro_series) == 53 and all(f"  {sid}: " in text for sid in release.macro_series)


def test_shipped_holdout_and_instances_are_used_not_rebuilt(layout_root):
    release = D.load_release(str(layout_root), "daily")
    shipped_holdout = set(pd.read_parquet(layout_root / "data" / "processed" / "holdout_tickers.parquet")["ticker"])
    assert D.release_holdout(release) == shipped_holdout != D.company_holdout(release.tickers())
    insts, _ = build("T2", release, TaskConfig())
    shipped = pd.read_parquet(layout_root / "data" / "processed" / "instances_T2.parquet")
    assert {(i["ticker"], i["anchor"]) for i in insts} == {(r.ticker, r.date.strftime("%Y-%m-%d")) for r in shipped.itertuples()}


def test_holdout_is_the_papers_1324_of_4416():
    tickers = [f"T{k:04d}" for k in range(4416)]
    assert len(D.company_holdout(tickers)) == 1324  # floor(0.3 x 4,416); rounding would give 1,325


def test_a_folder_missing_a_table_is_one_clear_error(layout_root, tmp_path):
    import shutil

    copy = tmp_path / "broken"
    shutil.copytree(layout_root, copy)
    for f in (copy / "data" / "macro").glob("*.parquet"):
        f.unlink()
    with pytest.raises(InputError, match="macro"):
        D.load_release(str(copy), "daily")


@pytest.mark.parametrize("task, keys, cands", [
    ("T4", {"event_id": ["EV2", "EV1"], "ticker": ["B", "A"]},
     {"event_id": ["EV1", "EV1", "EV2", "EV2"], "ticker": ["A", "B", "A", "B"]}),
    ("T7", {"address": ["x2"]}, {"address": ["x1", "x2", "x3"]}),
    ("T1", {"ticker": ["A"], "date": pd.to_datetime(["2025-01-02"])},
     {"ticker": ["A", "A", "B"], "date": pd.to_datetime(["2025-01-02", "2025-01-03", "2025-01-02"])}),
])
def test_shipped_keys_select_the_instances(task, keys, cands):
    from types import SimpleNamespace

    from ledgerlm.evaluate.macrolens.instances import _select

    release = SimpleNamespace(shipped={task: pd.DataFrame(keys)})
    picked = _select(task, release, pd.DataFrame(cands), TaskConfig())
    want = {tuple(map(str, row)) for row in pd.DataFrame(keys).astype(str).itertuples(index=False)}
    got = {tuple(map(str, row)) for row in picked[list(keys)].astype(str).itertuples(index=False)}
    if task == "T1":
        got = {(t, d[:10]) for t, d in got}
        want = {(t, d[:10]) for t, d in want}
    assert got == want
