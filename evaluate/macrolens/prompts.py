"""Prompt templates (module-level) and builders for MacroLens T1-T7, with the A-E context ladder.

    python -c "from ledgerlm.evaluate.macrolens.prompts import LADDER; print(LADDER)"

Ladder (paper Table 5), strictly nested, for T1, T2, T4, T5: A OHLCV -> B + fundamentals -> C + macro
state -> D + scenario flags -> E + filing excerpt (and the latest news headlines, both gated at t).
T3, T6, T7 have no ladder (level "-"). T2/T5 never show a market-cap blacklist column; T5 also drops
the 11 derived ratios (`schema.input_features`). Everything shown comes from the instance context,
which `instances.py` gated at the anchor date.
"""
from __future__ import annotations

import json

from ledgerlm.evaluate.macrolens.schema import input_features
from ledgerlm.synth.macrolens_t3 import FIELDS, SYSTEM_PROMPT as STATEMENT_SYSTEM, statement_prompt

LADDER = "ABCDE"
LADDER_TASKS = ("T1", "T2", "T4", "T5")
SYSTEM = "You are a financial forecasting assistant. Use only the information given. Reply in exactly the format requested."

HEADER = "Company: {ticker}{name} | sector: {sector} | anchor date t = {t}"
BLOCK_A = "Price history (OHLCV, most recent {n} rows up to t):\ndate, open, high, low, close, volume\n{rows}"
BLOCK_B = "Fundamentals (as reported in the latest filing visible at t):\n{items}"
BLOCK_C = "Macroeconomic state at t:\n{items}"
BLOCK_D = "Scenario flags at t (1 = an event of this category was detected in the 63 days up to t):\n{items}\nRecent detected scenarios:\n{events}"
BLOCK_E = "Latest SEC filing on or before t ({form}, filed {date}), excerpt:\n{text}\nRecent news (published on or before t):\n{news}"

T1_TASK = ("Forecast the closing price for each of the next {h} {unit}s after t. Answer with a JSON list of exactly {h} numbers "
           "(prices in USD) and nothing else.")
T2_TASK = ("Estimate the company's total market capitalization (equity value) in US dollars at t. "
           "End with one line: Answer: <number in dollars>")
T4_TASK = ("A macroeconomic scenario was detected: {description} (type: {type}; category: {category}; date: {date}). "
           "Predict the stock's total return in percent from the close on {date} to {days} calendar days later. "
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
    keys = [k for k in (keys if keys is not None else d) if k in d]
    return "\n".join(f"  {k}: {fmt(d[k])}" for k in keys) or "  (none)"


def context_blocks(task: str, ctx: dict, level: str) -> list[str]:
    """The ladder blocks up to `level` (inclusive), in A..E order."""
    steps = LADDER[: LADDER.index(level) + 1]
    hist = ctx["history"]
    rows = "\n".join(", ".join([h["date"], *(fmt(h[k]) if k in h else "" for k in ("open", "high", "low", "close", "volume"))]) for h in hist)
    blocks = [BLOCK_A.format(n=len(hist), rows=rows)]
    if "B" in steps:
        blocks.append(BLOCK_B.format(items=_items(ctx["fundamentals"], input_features(task))))
    if "C" in steps:
        blocks.append(BLOCK_C.format(items=_items(ctx["macro"])))
    if "D" in steps:
        events = "\n".join(f"  - {e['date']}: {e['description']}" for e in ctx["recent_scenarios"]) or "  (none)"
        blocks.append(BLOCK_D.format(items=_items(ctx["scenario_flags"]), events=events))
    if "E" in steps:
        f = ctx["filing"] or {"form": "none", "date": "n/a", "text": "(no filing on or before t)"}
        news = "\n".join(f"  - {n['date']}: {n['headline']}" for n in ctx["news"]) or "  (none)"
        blocks.append(BLOCK_E.format(form=f["form"], date=f["date"], text=f["text"], news=news))
    return blocks


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
            ask = T4_TASK.format(description=ev["description"], type=ev["type"], category=ev["category"], date=ev["date"], days=63)
        else:
            ask = T2_TASK
        user = "\n\n".join([_header(inst), *context_blocks(task, ctx, level), ask])
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
