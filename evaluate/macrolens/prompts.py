"""Prompt templates (module-level) and builders for MacroLens T1-T7, with the A-E context ladder.

    python -c "from ledgerlm.evaluate.macrolens.prompts import LADDER; print(LADDER)"

Ladder (paper Table 5 and §5.2 "lookback summary statistics, fundamentals, macroeconomic state, scenario
description, filing-text excerpt"), strictly nested, for T1, T2, T4, T5:
  A  summary statistics of the OHLCV lookback (not raw rows)
  B  + fundamentals (as reported in the latest filing visible at t)
  C  + macroeconomic state at t (every macro series of the release: the paper's 53)
  D  + scenario flags and recent detected scenarios; T4's scenario description is shown only from D on
  E  + filing-text excerpt (the paper's ladder has no news channel, so none is shown)
T3, T6, T7 have no ladder (level "-"). Invariant (iii), no input an algebraic function of the target:
T2/T5 never show a market-cap blacklist column nor the share count (close x shares = market cap);
T5 also drops the 11 derived ratios (`schema.input_features`). `shown_items` lists every number a
prompt shows, by label (tests/test_macrolens_leakage.py tries pairwise products / ratios / sums of them
against every target). Everything comes from the instance context, gated at the anchor date.
"""
from __future__ import annotations

import json
import re

import numpy as np

from ledgerlm.evaluate.macrolens.schema import input_features
from ledgerlm.synth.macrolens_t3 import FIELDS, SYSTEM_PROMPT as STATEMENT_SYSTEM, statement_prompt

LADDER = "ABCDE"
LADDER_TASKS = ("T1", "T2", "T4", "T5")
SYSTEM = "You are a financial forecasting assistant. Use only the information given. Reply in exactly the format requested."

HEADER = "Company: {ticker}{name} | sector: {sector} | anchor date t = {t}"
BLOCK_A = "Price history summary ({n} {unit}s up to t, {start} to {end}):\n{items}"
BLOCK_B = "Fundamentals (as reported in the latest filing visible at t):\n{items}"
BLOCK_C = "Macroeconomic state at t:\n{items}"
BLOCK_D = "Scenario flags at t (1 = an event of this category was detected in the 63 days up to t):\n{items}\nRecent detected scenarios:\n{events}"
BLOCK_E = "Latest SEC filing on or before t ({form}, filed {date}), excerpt:\n{text}"

T1_TASK = ("Forecast the closing price for each of the next {h} {unit}s after t. Answer with a JSON list of exactly {h} numbers "
           "(prices in USD) and nothing else.")
T2_TASK = ("Estimate the company's total market capitalization (equity value) in US dollars at t. "
           "End with one line: Answer: <number in dollars>")
T4_SCENARIO = "A macroeconomic scenario was detected: {description} (type: {type}; category: {category}; date: {date}). "
T4_TASK = ("{scenario}Predict the stock's total return in percent from the close on {date} to {days} calendar days later. "
           "End with one line: Answer: <percent>")
T6_TASK = ("Company: {name} ({ticker}) | sector: {sector} | industry: {industry}\nDescription: {description}\n\n"
           "Predict the company's financial statement for the reporting period ending {period_end}. Return one JSON object "
           "with exactly these keys, values in USD (flows year-to-date, balances at period end; null if not reported):\n{keys}")
T7_TASK = ("Property attributes:\n{items}\n\nEstimate this property's monthly rent and its sale price, both in US dollars. "
           'Answer with one JSON object: {{"rent": <number>, "price": <number>}}')
UNIT = {"daily": "trading day", "weekly": "week", "monthly": "month"}


def fmt(value) -> str:
    if isinstance(value, str):
        return value
    v = float(value)
    return f"{v:,.0f}" if abs(v) >= 1e4 else f"{v:.4g}"


def _items(d: dict, keys=None) -> str:
    return _render(_pairs(d, keys))


def summary_items(history: list[dict]) -> list[tuple[str, float]]:
    """Level A: summary statistics of the lookback (last / mean / min / max close, return and volatility
    of the window in %, mean volume)."""
    closes = np.array([h["close"] for h in history if "close" in h], float)
    if closes.size == 0:
        return []
    items = [("last_close", closes[-1]), ("mean_close", closes.mean()), ("min_close", closes.min()), ("max_close", closes.max())]
    if closes.size > 1 and closes[0] > 0:
        rets = np.diff(closes) / closes[:-1]
        items += [("window_return_pct", 100.0 * (closes[-1] / closes[0] - 1.0)), ("daily_volatility_pct", 100.0 * rets.std())]
    vols = [h["volume"] for h in history if "volume" in h]
    if vols:
        items.append(("mean_volume", float(np.mean(vols))))
    return [(k, float(v)) for k, v in items]


def _pairs(d: dict, keys=None) -> list[tuple[str, float]]:
    keys = [k for k in (keys if keys is not None else d) if k in d]
    return [(k, d[k]) for k in keys]


def shown_items(task: str, ctx: dict, level: str) -> dict[str, list[tuple[str, float]]]:
    """Every labelled number the ladder blocks up to `level` show, by block (A..D)."""
    steps = LADDER[: LADDER.index(level) + 1]
    out = {"A": summary_items(ctx["history"])}
    if "B" in steps:
        out["B"] = _pairs(ctx["fundamentals"], input_features(task))
    if "C" in steps:
        out["C"] = _pairs(ctx["macro"])
    if "D" in steps:
        out["D"] = _pairs(ctx["scenario_flags"])
    return out


def _render(pairs: list[tuple[str, float]]) -> str:
    return "\n".join(f"  {k}: {fmt(v)}" for k, v in pairs) or "  (none)"


def context_blocks(task: str, ctx: dict, level: str, granularity: str = "daily") -> list[str]:
    """The ladder blocks up to `level` (inclusive), in A..E order."""
    steps = LADDER[: LADDER.index(level) + 1]
    items = shown_items(task, ctx, level)
    hist = ctx["history"]
    blocks = [BLOCK_A.format(n=len(hist), unit=UNIT.get(granularity, "row"), start=hist[0]["date"] if hist else "n/a",
                             end=hist[-1]["date"] if hist else "n/a", items=_render(items["A"]))]
    if "B" in steps:
        blocks.append(BLOCK_B.format(items=_render(items["B"])))
    if "C" in steps:
        blocks.append(BLOCK_C.format(items=_render(items["C"])))
    if "D" in steps:
        events = "\n".join(f"  - {e['date']}: {e['description']}" for e in ctx["recent_scenarios"]) or "  (none)"
        blocks.append(BLOCK_D.format(items=_render(items["D"]), events=events))
    if "E" in steps:
        f = ctx["filing"] or {"form": "none", "date": "n/a", "text": "(no filing on or before t)"}
        text = redact_share_counts(f["text"]) if task in ("T2", "T5") else f["text"]
        blocks.append(BLOCK_E.format(form=f["form"], date=f["date"], text=text))
    return blocks


_SHARE_COUNT = re.compile(r"\d[\d,]*(?:\.\d+)?\s*(?:(?:million|billion|thousand)\s+)?(?=(?:shares|ordinary shares|common shares)\b)", re.I)


def redact_share_counts(text: str) -> str:
    """T2/T5: a filing's cover-page share count times the close is the market cap (invariant iii) - redact it."""
    return _SHARE_COUNT.sub("[share count redacted] ", text)


def _header(inst: dict) -> str:
    st = inst["context"].get("static", {})
    return HEADER.format(ticker=inst["ticker"], name=f" ({st['name']})" if st.get("name") else "", sector=st.get("sector", "unknown"),
                         t=inst["anchor"])


def build_messages(inst: dict, level: str = "E", granularity: str = "daily") -> list[dict]:
    """Chat messages for one instance at one ladder level (ignored for T3, T6, T7)."""
    task, ctx = inst["task"], inst["context"]
    if task in LADDER_TASKS:
        if level not in LADDER:
            raise ValueError(f"ladder level must be one of {LADDER}, got {level!r}")
        if task == "T1":
            ask = T1_TASK.format(h=inst["meta"]["horizon"], unit=UNIT[granularity])
        elif task == "T4":
            ev = ctx["event"]
            scenario = (T4_SCENARIO.format(description=ev["description"], type=ev["type"], category=ev["category"], date=ev["date"])
                        if level in LADDER[LADDER.index("D"):] else "")  # the scenario text is ladder step D
            ask = T4_TASK.format(scenario=scenario, date=ev["date"], days=63)
        else:
            ask = T2_TASK
        user = "\n\n".join([_header(inst), *context_blocks(task, ctx, level, granularity), ask])
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]
    if task == "T3":
        st = ctx["static"]
        prior = [{"period": f"period ended {p['period_end']} (filed {p['filing_date']})", "values": p["values"]} for p in ctx["prior"]]
        user = statement_prompt(f"{st.get('name', inst['ticker'])} ({inst['ticker']})", prior,
                                f"the period ending {ctx['target_period_end']}", "USD", st.get("sector", ""))
        return [{"role": "system", "content": STATEMENT_SYSTEM}, {"role": "user", "content": user}]
    if task == "T6":
        st = ctx["static"]
        user = T6_TASK.format(name=st.get("name", inst["ticker"]), ticker=inst["ticker"], sector=st.get("sector", "unknown"),
                              industry=st.get("industry", "unknown"), description=st.get("description", "(none)"),
                              period_end=ctx["target_period_end"], keys=", ".join(FIELDS))
        return [{"role": "system", "content": STATEMENT_SYSTEM}, {"role": "user", "content": user}]
    if task == "T7":
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": T7_TASK.format(items=_items(ctx["attributes"]))}]
    raise ValueError(f"unknown task {task!r}")


def render_answer(task: str, pred) -> str:
    """The text a reference baseline 'responds' with, so baselines go through the same parsers."""
    if task == "T1":
        return json.dumps([float(x) for x in pred])  # full precision: a baseline loses nothing in rendering
    if task in ("T2", "T5", "T4"):
        return f"Answer: {float(pred)!r}"
    return json.dumps({k: (None if v is None else float(v)) for k, v in pred.items()})
