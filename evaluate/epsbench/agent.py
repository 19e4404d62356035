"""The EPSBench forecasting agent: a tool-calling loop, the request/response protocol of `benchmark.EPSBench`.

    ledgerlm eval --model openai --model_args model=gpt-4o-mini --tasks epsbench --data DOCS --task_args runs=1 --output_path runs/eps

One conversation per (instance, run), stepped in lockstep (`iter_conversations`, through the runner's
cached `generate`) so a batch backend (hf, vllm) sees all active conversations at once. `openai:` models get native tool calls; other backends get a JSON
tool protocol in text (TEXT_PROTOCOL). The final answer is one JSON object (FINAL_FORMAT): a
value and an evidence line per driver, the calculator's EPS unchanged, and p10 / p90. Unparsable
final JSON is a format failure (paper App. B.3), recorded, never retried.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ledgerlm.errors import InputError
from ledgerlm.evaluate.epsbench.calculator import Schema, calculate, operating_node, pretax_node
from ledgerlm.evaluate.epsbench.release import Instance, Truth
from ledgerlm.evaluate.epsbench.tools import Toolbox
from ledgerlm.inference.reasoning import split_reasoning
from ledgerlm.inference.sampling import GenerationParams

SYSTEM_PROMPT = """You are an equity analyst forecasting a company's GAAP diluted EPS for a quarter that has ended \
but whose results are not yet published. You may only use the documents your tools return; they are \
restricted to what was public on the information cutoff. Forecast the whole income statement through its \
drivers: estimate every driver in the prediction schema, support each with a specific piece of evidence \
(a number from a filing, the prior earnings call or the news), and do not back-solve drivers from an EPS \
or revenue figure. YoY drivers compare with the same fiscal quarter one year earlier (the baseline); bps \
drivers change a line item's share of its anchor in basis points; absolute drivers give the amount in the \
schema's units; tax-rate and share-count references (last_q, ttm, q4) are historical anchors.
Call calculate_eps with your driver values, then report its EPS unchanged as the point forecast, and an 80% \
interval (p10, p90: a 10% chance each that reported EPS falls below p10 or above p90) around it."""

FINAL_FORMAT = """When you are done, reply with only this JSON object:
{"fundamental_predictions": {"<driver>": {"value": <number>, "evidence": "<one line>"}, ...},
 "calculated_results_summary": {"key_metrics": {"eps": <the calculator's EPS>}},
 "eps_interval": {"p10": <number>, "p90": <number>}}"""

TEXT_PROTOCOL = """Tools: to call one, reply with only
<tool_call>{"name": "<tool>", "arguments": {...}}</tool_call>
and wait for the <tool_result>. Available tools (JSON schemas):
{tools}"""

USER_TEMPLATE = """Company: {ticker}. Target fiscal quarter: {quarter}. Information cutoff: {cutoff} \
(news from {news_start}). Sources available: {sources}.
Accounting schema (baseline = fiscal quarter {baseline_fq}; USD millions unless a field says otherwise):
{schema}

{final}"""

SAFETY_TURNS = 500  # only a runaway-loop guard when max_turns is None; no paper run comes near it
_TOOL_CALL_RE = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)
_FENCE_RE = re.compile(r"```(?:json)?\s*([\s\S]*?)```")


@dataclass
class AgentConfig:
    information: str = "full"  # full | filings | news | none
    # paper App. B.3: "no retry or turn limit beyond context" -> None = no cap; the run ends when the model
    # answers, the backend errors (e.g. context exceeded) or SAFETY_TURNS requests pass (recorded as such)
    max_turns: int | None = None
    protocol: str = "auto"  # auto (native for openai:, text otherwise) | native | text


@dataclass
class Conversation:
    instance: Instance
    schema: Schema
    toolbox: Toolbox
    run: str
    messages: list[dict[str, Any]]
    final_text: str | None = None
    error: str | None = None
    done: bool = False
    usage: dict[str, float] = field(default_factory=lambda: {"requests": 0, "tool_calls": 0, "input_tokens": 0, "output_tokens": 0})


def use_native_tools(model_spec: str, protocol: str = "auto") -> bool:
    return protocol == "native" or (protocol == "auto" and model_spec.startswith("openai:"))


def start_conversation(instance: Instance, schema: Schema, toolbox: Toolbox, run: str, native: bool) -> Conversation:
    sources = {"full": "filings, the prior earnings call, news", "filings": "filings and the prior earnings call",
               "news": "news", "none": "none (use the schema and its references)"}[toolbox.information]
    system = SYSTEM_PROMPT if native else f"{SYSTEM_PROMPT}\n\n{TEXT_PROTOCOL.replace('{tools}', json.dumps(toolbox.specs()))}"
    user = USER_TEMPLATE.format(ticker=instance.ticker, quarter=instance.fiscal_quarter, cutoff=instance.cutoff,
                                news_start=instance.news_window_start, sources=sources, baseline_fq=schema.baseline_fq,
                                schema=json.dumps(schema.public(), indent=1), final=FINAL_FORMAT)
    return Conversation(instance, schema, toolbox, run, [{"role": "system", "content": system}, {"role": "user", "content": user}])


def iter_conversations(generate: Callable[..., list], conversations: list[Conversation], params: GenerationParams,
                       config: AgentConfig, native: bool, on_round=None) -> Iterator[Conversation]:
    """Step every unfinished conversation once per round (one `generate(batch, params[, tools=])` call for all
    of them) until all are done or out of turns, yielding each as it ends; `on_round(round, active, done)`
    is called before each round (progress). The harness passes its cached, counted `ctx.generate`."""
    limit = config.max_turns if config.max_turns is not None else SAFETY_TURNS
    for round_ in range(limit):
        active = [c for c in conversations if not c.done]
        if not active:
            break
        if on_round is not None:
            on_round(round_ + 1, len(active), len(conversations) - len(active))
        kwargs = {"tools": active[0].toolbox.specs()} if native else {}
        completions = generate([c.messages for c in active], params, **kwargs)
        for conv, comp in zip(active, completions):
            conv.usage["requests"] += 1
            conv.usage["input_tokens"] += comp.prompt_tokens
            conv.usage["output_tokens"] += comp.completion_tokens
            _advance(conv, comp, native)
            if conv.done:
                yield conv
    for conv in conversations:
        if not conv.done:
            conv.done, conv.error = True, f"no final answer within {limit} model requests"
            yield conv


def _advance(conv: Conversation, comp, native: bool) -> None:
    if comp.error or comp.finish_reason == "error":
        conv.done, conv.error = True, f"backend error: {comp.error or 'unknown'}"
        return
    answer, _ = split_reasoning(comp.text, comp.reasoning)
    if native and comp.tool_calls:
        calls = [_native_call(tc, k) for k, tc in enumerate(comp.tool_calls)]
        conv.messages.append({"role": "assistant", "content": answer or "", "tool_calls": [c["raw"] for c in calls]})
        for call in calls:
            conv.usage["tool_calls"] += 1
            result = conv.toolbox.call(call["name"], call["arguments"])
            conv.messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
        return
    match = _TOOL_CALL_RE.search(answer or "") if not native else None
    if match:
        conv.messages.append({"role": "assistant", "content": comp.text})
        conv.usage["tool_calls"] += 1
        try:
            request = json.loads(match.group(1))
            result = conv.toolbox.call(str(request.get("name")), request.get("arguments", {}))
        except (json.JSONDecodeError, AttributeError):
            result = {"error": "the tool call is not a JSON object with 'name' and 'arguments'"}
        conv.messages.append({"role": "user", "content": f"<tool_result>{json.dumps(result)}</tool_result>"})
        return
    conv.messages.append({"role": "assistant", "content": comp.text})
    conv.final_text, conv.done = answer if answer is not None else "", True


def _native_call(tool_call: dict[str, Any], index: int) -> dict[str, Any]:
    function = tool_call.get("function", tool_call)
    call_id = tool_call.get("id") or f"call_{index}"
    arguments = function.get("arguments", "{}")
    raw = {"id": call_id, "type": "function", "function": {"name": function.get("name"),
                                                           "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}}
    return {"id": call_id, "name": str(function.get("name")), "arguments": arguments, "raw": raw}


# --------------------------------------------------------------------------- final answer
def extract_final_json(text: str | None) -> Any:
    """The final message's JSON, as the release's agent_lib/final_json.py reads it: the whole text, else the LAST
    ```json fence that parses, else the FIRST balanced {...} span that parses; any JSON type (a list or the tool echo
    `{"eps": 1.23}` before the answer is what the release scores, a format failure). None when nothing parses."""
    text = (text or "").strip()
    for candidate in [text] + list(reversed(_FENCE_RE.findall(text))):
        value = _json_or_none(candidate.strip())
        if value is not None:  # the release's `_try`: a JSON null is no answer, the search goes on
            return value
    decoder = json.JSONDecoder()
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:  # the object that starts here, ending at its balancing brace (braces inside strings do not count)
            return decoder.raw_decode(text, start)[0]
        except (ValueError, RecursionError):
            continue
    return None


def _json_or_none(text: str) -> Any:
    """json.loads, or None for anything it cannot read (the release catches every exception: 10,000 nested brackets
    raise RecursionError, not a JSON error)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def make_record(conv: Conversation, truth: Truth | None, model: str, consensus: float | None = None) -> dict[str, Any]:
    """The release's `t-1.record.json` fields, plus run, evidence, usage and format status."""
    schema, errors = conv.schema, []
    final = extract_final_json(conv.final_text) if conv.error is None else None
    if conv.error:
        errors.append(conv.error)
    elif final is None:
        errors.append("final message has no parseable JSON object")
    elif not isinstance(final, dict):
        errors.append(f"final message's JSON is a {type(final).__name__}, not an object")
        final = {}
    predictions, evidence, driver_errors = {}, {}, []
    raw_preds = (final or {}).get("fundamental_predictions")
    if final is not None and not isinstance(raw_preds, dict):
        errors.append("fundamental_predictions missing or not an object")
    for name, entry in (raw_preds or {}).items() if isinstance(raw_preds, dict) else ():
        value = entry.get("value") if isinstance(entry, dict) else entry
        if _finite(value) is None:
            driver_errors.append(f"driver {name}: value {value!r} is not a number")
            continue
        predictions[name] = float(value)
        if isinstance(entry, dict) and str(entry.get("evidence", "")).strip():
            evidence[name] = str(entry["evidence"]).strip()
    nodes = {}
    if predictions and not errors and not driver_errors:
        try:
            nodes = calculate(schema, predictions, strict=False)
        except InputError as err:
            driver_errors.append(f"calculator: {err}")
    interval = (final or {}).get("eps_interval") if isinstance((final or {}).get("eps_interval"), dict) else {}
    p10, p90 = _finite(interval.get("p10")), _finite(interval.get("p90"))
    if final is not None and (p10 is None or p90 is None):
        errors.append("eps_interval p10/p90 missing or not numbers")
    elif p10 is not None and p90 is not None and p10 > p90:  # the release's make_record.py: a compliance failure,
        errors.append(f"eps_interval flipped: p10 {p10} > p90 {p90}")  # stored as given (the scorer does the same)
    summary = (final or {}).get("calculated_results_summary")
    reported = _finite(((summary or {}).get("key_metrics") or {}).get("eps")) if isinstance(summary, dict) else None
    op_node, pre_node = operating_node(schema.formulas), pretax_node(schema.formulas)
    eps, eps_source = nodes.get("eps"), "recomputed"
    if eps is None and reported is not None and final is not None:
        # the release's make_record.py: when recomputing from the driver values fails (a non-numeric driver
        # raises in calculate_from_prediction), the forecast is the agent's own EPS (key_metrics.eps)
        eps, eps_source = reported, "agent_reported"
    record = {
        "ticker": conv.instance.ticker, "fiscal_quarter": conv.instance.fiscal_quarter, "slice_days_before": 1,
        "eps_gaap_pred": eps, "revenue_pred": nodes.get(schema.revenue_field or "total_revenue"),
        "operating_pred": nodes.get(op_node) if op_node else None, "pretax_pred": nodes.get(pre_node) if pre_node else None,
        "eps_p10": p10, "eps_p90": p90,
        "eps_gaap_actual": truth.eps if truth else None, "operating_actual": truth.operating if truth else None,
        "pretax_actual": truth.pretax if truth else None,
        "fundamental_predictions": predictions, "model": model,
        "run": conv.run, "evidence": evidence, "drivers_missing": sorted(set(schema.drivers) - set(predictions)),
        "eps_agent_reported": reported, "eps_source": eps_source if eps is not None else None, "driver_errors": driver_errors,
        "eps_changed_by_agent": bool(reported is not None and eps is not None and abs(reported - eps) > 0.005),
        "format_failure": bool(errors), "format_error": "; ".join(errors) or None,
        "blocked_requests": list(conv.toolbox.docs.requests_blocked), "usage": dict(conv.usage),
    }
    if consensus is not None:
        record["eps_gps_consensus"] = consensus
    return record
