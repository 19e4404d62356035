"""Worked solutions from computation traces, in the style of the FinIndices case studies (Appendix A):
which reports and line items, the period arithmetic, the formula, unit conversion and rounding, and the
final answer written exactly in the requested answer format (it is the solution's last line, so the
evaluator's `oracle` backend, which answers with the solution verbatim, scores 100%).

    python -m pytest tests/test_synth_finindices_items.py -q -k solution

Deficiency items say which report is missing and which facts of it the computation needs.
"""
from __future__ import annotations

import functools
import re
from decimal import Decimal

from ledgerlm.synth.finindices.answers import answer_text, answer_unit
from ledgerlm.synth.indices.compute import UNIT_SCALES
from ledgerlm.synth.indices.conventions import period_notes, zh_formula, zh_name
from ledgerlm.synth.indices.formula import parse
from ledgerlm.synth.indices.registry import load_registry
from ledgerlm.synth.statements.periods import parse_report
from ledgerlm.synth.statements.render import shown_scaled
from ledgerlm.synth.statements.taxonomy import concept_info

PHRASES = {
    "en": {
        "reports": "Step 1 - Reports and line items used:",
        "from": "From the {report} {scope} report:",
        "periods": "Step 2 - Period arithmetic:",
        "formula": "Step 3 - Formula and calculation:",
        "rounding": "Step 4 - Unit conversion and rounding (half away from zero):",
        "cell": "{index}, {period}:",
        "index_formula": "{index} = {formula}",
        "no_periods": "Every value is read directly from a report (no de-cumulation needed).",
        "scaled": "{raw} -> {unit}, {decimals} {places} = {text}",
        "divided": "{raw} / {divisor} = {exact} -> {unit}, {decimals} {places} = {text}",
        "places": {1: "decimal"}, "places_other": "decimals",
        "shown_as": "{shown} {scale_word} = {value}",
        "scale_words": {1_000: "thousand", 10_000: "ten-thousand", 1_000_000: "million", 1_000_000_000: "billion"},
        "final": "Final answer:",
        "conventions": "Conventions: {text}",
        "need": "Step 1 - Reports the computation needs: {reports}.",
        "shown": "Step 2 - Reports provided: {reports}.",
        "missing": "Step 3 - The {report} report is missing. The computation needs from it: {facts}.",
        "stop": "Step 4 - Without it the value cannot be derived, so I do not substitute another period's figures.",
        "consolidated": "consolidated", "parent": "parent-company",
        "units": {"units": "units", "thousands": "thousands", "ten_thousands": "ten-thousands", "millions": "millions",
                  "hundred_millions": "hundred-millions", "billions": "billions", "percent": "percent"},
        "kinds": {"ratio": "a plain number", "times": "times", "days": "days", "per_share": "per share"},
    },
    "zh": {
        "reports": "第1步 - 使用的报告与科目：",
        "from": "来自{report}{scope}报表：",
        "periods": "第2步 - 期间换算：",
        "formula": "第3步 - 公式与计算：",
        "rounding": "第4步 - 单位换算与舍入（四舍五入，远离零）：",
        "cell": "{index}，{period}：",
        "index_formula": "{index} = {formula}",
        "no_periods": "所有数值均可直接从报告读取，无需拆分累计数。",
        "scaled": "{raw} -> {unit}，保留{decimals}位小数 = {text}",
        "divided": "{raw} / {divisor} = {exact} -> {unit}，保留{decimals}位小数 = {text}",
        "places": {}, "places_other": "",
        "shown_as": "{shown}{scale_word} = {value}",
        "scale_words": {1_000: "千", 10_000: "万", 1_000_000: "百万", 1_000_000_000: "十亿"},
        "final": "最终答案：",
        "conventions": "口径：{text}",
        "need": "第1步 - 计算所需的报告：{reports}。",
        "shown": "第2步 - 已提供的报告：{reports}。",
        "missing": "第3步 - 缺少{report}报告。计算需要其中的：{facts}。",
        "stop": "第4步 - 缺少该报告无法推导该数值，因此不能用其他期间的数据替代。",
        "consolidated": "合并", "parent": "母公司",
        "units": {"units": "原币单位", "thousands": "千", "ten_thousands": "万", "millions": "百万",
                  "hundred_millions": "亿", "billions": "十亿", "percent": "百分比"},
        "kinds": {"ratio": "数值", "times": "次", "days": "天", "per_share": "每股金额"},
    },
}


def _per_value(fn):
    """Memoise a function of one IndexValue on the value itself: the builder caches values and reuses them across
    samples, and a value is never changed once computed (the result is shared: callers only read it)."""
    name = f"_memo_{fn.__name__}"

    @functools.wraps(fn)
    def wrapper(v):
        memo = getattr(v, "__dict__", None)
        if memo is None:
            return fn(v)
        hit = memo.get(name)
        if hit is None:
            hit = memo[name] = fn(v)
        return hit
    return wrapper


def _num(x: float) -> str:
    if float(x).is_integer():
        return f"{x:,.0f}"
    return f"{x:,.2f}" if abs(x) >= 1e3 else f"{x:,.10g}"  # never e-notation in a worked solution


_num_memo = functools.lru_cache(maxsize=1 << 16, typed=True)(_num)  # typed: Decimal("2.50") == 2.5 prints differently


def num(x: float) -> str:
    """A trace number: thousands separators, integers without decimals, others to 10 significant digits. Memoised
    (a figure is quoted in its fact line, in every calculation that uses it and in the conversion; the grouped
    formatting is the costly part); 0.0 and -0.0 are equal keys that print differently: not memoised."""
    return _num_memo(x) if x else _num(x)


@functools.lru_cache(maxsize=None)
def _label(concept: str, language: str) -> str:
    try:
        info = concept_info(concept)
    except KeyError:
        return concept
    return (info.label_en if language == "en" else info.label_zh or info.label_en) or concept


def _as_shown(concept: str, value: float, scale: int, t: dict) -> str:
    """A fact as the reader finds it in the report, then in base units: `2,908,086 thousand = 2,908,086,000`
    when the report is shown in thousands (the renderer's rule decides which figures the scale divides)."""
    if scale == 1 or not shown_scaled(concept) or scale not in t["scale_words"]:
        return num(value)
    shown = _scaled_whole(value, scale)
    if shown is None:  # the block was rendered at an exact scale, so this only guards odd inputs
        return num(value)
    return t["shown_as"].format(shown=f"{shown:,}", scale_word=t["scale_words"][scale], value=num(value))


def _scaled_whole(value: float, scale: int) -> int | None:
    """`value / scale` as an int when it is a whole number (the decimal the figure's repr writes, divided), else None.
    A whole float below 2**53 in magnitude is its repr's decimal exactly, so int division decides it (a cold figure:
    the Decimal route cost more than the rest of its line); larger or fractional values take the Decimal route."""
    if type(value) is float and value.is_integer() and -_EXACT_INT < value < _EXACT_INT:
        whole = int(value)
        return None if whole % scale else whole // scale
    shown = Decimal(repr(float(value))) / scale
    return int(shown) if shown == shown.to_integral_value() else None


_EXACT_INT = float(2 ** 53)


@functools.lru_cache(maxsize=1 << 16)
def _shown_memo(concept: str, value: float, scale: int, language: str) -> str:
    return _as_shown(concept, value, scale, PHRASES[language])


def _shown(concept: str, value: float, scale: int, language: str) -> str:
    """`_as_shown` in `language`, memoised (0.0 and -0.0 are equal keys but print differently: not memoised)."""
    return _shown_memo(concept, value, scale, language) if value else _as_shown(concept, value, scale, PHRASES[language])


def _fact_text(concept: str, value: float, scale: int, language: str, label: str = "") -> str:
    if language == "zh":  # the line as the statement names it, no English key (Chinese analyst audit)
        return f"- {label or _label(concept, language)}：{_shown(concept, value, scale, language)}"
    return f"- {label or _label(concept, language)} ({concept}): {_shown(concept, value, scale, language)}"


_fact_memo = functools.lru_cache(maxsize=1 << 16, typed=True)(_fact_text)


def _fact_line(concept: str, value: float, scale: int, language: str, label: str = "") -> str:
    """A fact's line under its report, `- Revenue (revenue): 2,263,891,300 thousand = 2,263,891,300,000` (`label`: the
    line's label in the prompt, else the concept's own), memoised whole (a company's facts recur in many solutions; 0.0
    and -0.0 are equal keys but print differently: not memoised)."""
    return _fact_memo(concept, value, scale, language, label) if value else _fact_text(concept, value, scale, language, label)


def _facts_grouped(values, only: set[str] | None = None) -> dict[str, dict[str, float]]:
    """report label -> {concept: value} of every fact the values read (first use order within a report)."""
    by_report: dict[str, dict] = {}
    for row in values:
        for v in row:
            for f in v.facts:
                if only is None or f.report in only:
                    by_report.setdefault(f.report, {})[f.concept] = f.value
    return by_report


def _facts_by_report(values, language: str, only: set[str] | None = None, scales: dict[str, int] | None = None,
                     labels: dict[str, dict[str, str]] | None = None) -> list[str]:
    t, scales, labels = PHRASES[language], scales or {}, labels or {}
    by_report = _facts_grouped(values, only)
    lines = []
    for report in sorted(by_report):
        lines.append(t["from"].format(report=report, scope=t["consolidated"]))
        scale, shown = scales.get(report, 1), labels.get(report, {})
        lines += [_fact_line(c, val, scale, language, shown.get(c, "")) for c, val in by_report[report].items()]
    return lines


def _exact(x: Decimal) -> str:
    """An exact quotient with thousands separators and no trailing zeros: 2,657.821"""
    return format(x.normalize(), ",f")


@functools.lru_cache(maxsize=1 << 16)
def _is_derived(line: str) -> bool:
    """True for a fact step's arithmetic line: YTD differences and sums, and ratios (quarter EPS = net income / shares,
    rounded to the filed cent). Memoised: a company's fact steps recur in every value that reads the fact."""
    return " = " in line and any(op in line.split(" = ")[1] for op in ("-", "+", " / ", " rounded to "))


@_per_value
def _period_steps(v) -> list[str]:
    out = []
    for step in v.trace:
        if step["kind"] == "fact":
            out.extend(filter(_is_derived, step.get("steps", ())))  # the memo's C wrapper called from C: no frame per line
    return list(dict.fromkeys(out))


@_per_value
def _calc_steps(v) -> list[str]:
    out = []
    for step in v.trace:
        if step["kind"] == "calc" and step.get("arithmetic"):
            out.append(f"{step['expr']} = {step['arithmetic']} = {num(step['value'])}")
        elif step["kind"] == "aggregate":
            items = " + ".join(f"{i['concept']} {num(i['value'])}" for i in step["interest_bearing_items"]) or "0"
            out.append(f"{step['name']} ({step['period']}): interest-bearing items {items}; "
                       f"total liabilities {num(step['total_liabilities'])} -> {num(step['value'])}")
        elif step["kind"] == "index":
            out.append(f"{step['index']} = {step['formula']} = {num(step['value'])}")
    return out


@_per_value
def _calc_block(v) -> str:
    """A cell's calculation lines, indented, as one text (the value alone when it needs no arithmetic)."""
    calc = _calc_steps(v)
    return "  " + "\n  ".join(calc) if calc else f"  = {num(v.value)}"


@_per_value
def _calc_block_zh(v) -> str:
    """`_calc_block` in Chinese (`zh_line`)."""
    calc = _calc_steps(v)
    return "  " + "\n  ".join([zh_line(x) for x in calc]) if calc else f"  = {num(v.value)}"


# Chinese worked solutions: the trace's lines (compute.py, store.py) are written in English formula syntax with concept
# keys; a Chinese solution shows them with the Chinese names of the lines and indices, the hints' formula writer
# (`conventions.zh_formula`) and Chinese wording of the trace's phrases (Chinese analyst audit: `TTM(...)`-style syntax
# and English concept names in zh solutions). The figures and arithmetic are the trace's own, unchanged.
_ZH_PHRASES = [
    (re.compile(r" \(year-to-date, as reported\)"), "（年初至今累计，按报告数）"),
    (re.compile(r" \(annual, as reported\)"), "（全年，按报告数）"),
    (re.compile(r" \(three months, as reported in the (\S+) report\)"), r"（单季三个月，取自\1报告）"),
    (re.compile(r" is not shown in the (\S+) report: 0"), r"在\1报告中未列示，按 0 计"),
    (re.compile(r" \(from the (\S+) report\)"), r"（取自\1报告）"),
    (re.compile(r"annual value of (FY\d{4})"), r"\1全年数"),
    (re.compile(r" \(weighted-average shares are time-weighted: share-days of the year-to-date reports over the days of (\S+)\)"),
     r"（加权平均股数按时间加权：各累计期报告的股数×天数，除以\1的天数）"),
    (re.compile(r" \(EPS is not additive: (\S+) net income over (\S+) weighted-average shares\)"),
     r"（每股收益不可加减：\1净利润除以\2加权平均股数）"),
    (re.compile(r"the filing tags this outflow as (-?[\d,.]+); Payments elements are positive"),
     r"报告将该流出列为 \1；支付类科目取正数"),
    (re.compile(r"share basis: as filed \(no stock split in the data\)"), "股数口径：按报告原数（数据中无拆股）"),
    (re.compile(r"share basis: the latest filing's \(as filed, after "), "股数口径：最新一期报告（按拆股后口径，"),
    (re.compile(r"(\d+(?:\.\d+)?)-for-1 stock split \(filings up to ([\d-]+) on the old basis, from ([\d-]+) on the new\)"),
     r"1拆\1股票拆分（\2及以前提交的文件为拆分前口径，\3起为拆分后口径）"),
    (re.compile(r"as filed (-?[\d,.]+) ([/x]) ([\d.]+) = (-?[\d,.]+)( \(to 6 decimals\))? on the latest share basis \("),
     lambda m: f"报告原数 {m[1]} {'/' if m[2] == '/' else '×'} {m[3]} = {m[4]}{'（保留6位小数）' if m[5] else ''}，按最新拆股口径（"),
    (re.compile(r"(?<=口径）); (?=1拆)"), "；"),  # between two split notes (NVIDIA: 4-for-1 in 2021, 10-for-1 in 2024)
    (re.compile(r" (beginning|ending) balance of (\S+) = "), lambda m: f" {m.group(2)}{'期初' if m.group(1) == 'beginning' else '期末'}余额 = "),
    (re.compile(r" (\d[\d,]*) days\b"), r" \1 天"),
    (re.compile(r"\)\]$"), "）]"),  # the share-basis note's parenthesis opened in Chinese above
    (re.compile(r"(?<=\d) x (?=\d)"), " × "),
    (re.compile(r"\babs\((-?[\d,.]+)\)"), r"|\1|"),
]


def _required_literal(pattern: re.Pattern) -> str:
    """The longest run of plain characters at the top level of `pattern` ("" when it has none or matches ignoring
    case): every match contains it, so a text without it cannot match and `pattern.sub` would return it unchanged."""
    try:
        from re import _parser as sre_parse, _constants as sre_constants  # Python >= 3.11
    except ImportError:  # Python 3.10
        import sre_constants
        import sre_parse
    if pattern.flags & re.IGNORECASE:
        return ""
    runs, run = [""], []
    for op, arg in sre_parse.parse(pattern.pattern, pattern.flags):
        if op is sre_constants.LITERAL:
            run.append(chr(arg))
        else:
            runs.append("".join(run))
            run = []
    runs.append("".join(run))
    return max(runs, key=len)


# each phrase with the text it cannot match without (most trace lines hold none of them: a substring test each, not
# nineteen regex scans per cold line)
_ZH_GUARDED = [(_required_literal(pattern), pattern, repl) for pattern, repl in _ZH_PHRASES]
_ZH_NOT_SHOWN = re.compile(r" \(([^()]*(?:\([^()]*\)[^()]*)*) not shown\)$")
_ZH_AT = re.compile(r" at (the beginning of )?(FY\w+)$")
_IDENT = re.compile(r"(?<![A-Za-z0-9_])[a-z][a-z0-9_]*(?![A-Za-z0-9_])")  # ASCII bounds: a key may touch Chinese text


_REGISTRY: list = []  # the registry the Chinese writer names indices from (`use_registry`), else the shipped one


def use_registry(registry) -> None:
    """Name indices in Chinese from `registry` (the Builder's own: a process loads the registry once, 0.13 s, and a
    registry other than the shipped one names its own indices)."""
    _REGISTRY[:] = [registry]
    for memo in (_zh_name, _zh_expr, zh_line):
        memo.cache_clear()


def _zh_registry():
    if not _REGISTRY:
        _REGISTRY.append(load_registry())
    return _REGISTRY[0]


@functools.lru_cache(maxsize=1 << 14)
def _zh_name(key: str) -> str:
    """The Chinese name of an index id or a concept key (the key itself when it is neither)."""
    return zh_name(key, _zh_registry())


@functools.lru_cache(maxsize=1 << 15)
def _zh_expr(text: str) -> str:
    """A formula text (`operating_cash_flow - capex`, `ttm(ebitda)`) written with Chinese names; other text with its
    keys named in Chinese."""
    stripped = text.strip()
    if stripped and _IDENT.search(stripped):
        try:
            node = parse("solution", stripped)
        except Exception:  # not a formula: a phrase with keys in it
            return _IDENT.sub(lambda m: _zh_name(m.group()), text)
        written = text[:len(text) - len(text.lstrip())] + zh_formula(node, _zh_registry())
        if _DIGIT_RUNS.findall(written) != _DIGIT_RUNS.findall(text):
            # a figure would change: `max_of(1,000, 0)` parses as three arguments, `100.50` prints as 100.5 (review):
            # the keys are named in place instead, the figures left as written
            return _IDENT.sub(lambda m: _zh_name(m.group()), text)
        return written
    return text


_DIGIT_RUNS = re.compile(r"\d+")


@functools.lru_cache(maxsize=1 << 16)
def zh_line(line: str) -> str:
    """A trace line (a calculation or a period step) in Chinese: each `=`-separated part that is a formula is written
    with the Chinese names, the trace's English phrases in Chinese; the numbers are untouched."""
    for guard, pattern, repl in _ZH_GUARDED:
        if guard in line:
            line = pattern.sub(repl, line)
    parts = line.split(" = ")
    out = []
    for part in parts:
        tail = ""
        m = _ZH_NOT_SHOWN.search(part)
        if m:
            tail, part = f"（{'、'.join(_zh_expr(a) for a in _split_args(m.group(1)))} 未列示）", part[:m.start()]
        m = _ZH_AT.search(part)
        if m:
            tail, part = f"（{m.group(2)}{'期初' if m.group(1) else ''}）" + tail, part[:m.start()]
        out.append(_zh_expr(part) + tail)
    return " = ".join(out)


def _split_args(text: str) -> list[str]:
    """`a, b - c, optional(d)` -> its top-level comma-separated parts."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def _lines_in(language: str, lines: list[str]) -> list[str]:
    return lines if language != "zh" else [zh_line(x) for x in lines]


def solution_text(item, *, language: str, choice, names: list[str], final: str, shown: list, split_text: str = "",
                  scales: dict[str, int] | None = None, style: str = "full",
                  labels: dict[str, dict[str, str]] | None = None) -> str:
    """The worked solution; its last line is `final`, the answer in the requested format. `split_text`: the prompt's
    sentence on stock-split restatement (issue 11), repeated under the reports used. `scales`: the unit each consolidated
    report is shown in (1 = units, 1000 = thousands, …): a fact is quoted as shown, then in base units (issue 15).
    `style="compact"`: the same figures, arithmetic and conversion without step headings, boilerplate or restated formulas.
    `labels`: report -> concept -> the label the prompt shows the line under (the concept's own label elsewhere)."""
    t = PHRASES[language]
    if item.missing is not None:
        return _deficiency(item, t, language, final, shown, split_text)
    if style == "compact":
        return _compact(item, t, language, choice, final, split_text, scales, labels)
    lines = [t["reports"], *_facts_by_report(item.values, language, scales=scales, labels=labels),
             *([split_text] if split_text else [])]
    period_lines = [s for row in item.values for v in row for s in _period_steps(v)]
    lines += ["", t["periods"], *(_lines_in(language, list(dict.fromkeys(period_lines))) or [t["no_periods"]])]
    lines += ["", t["formula"]]
    # issue 11: the solution names the conventions it used, each sentence once however many indices share it
    notes = list(dict.fromkeys([*(n for ix in item.indices for n in ix.convention_notes(language) if n),
                                *period_notes(item.indices, item.periods, language)]))
    if notes:
        lines.append(t["conventions"].format(text=(" " if language == "en" else "").join(notes)))
    many = len(item.values) * len(item.periods) > 1
    zh = language == "zh"
    block = _calc_block_zh if zh else _calc_block
    for ix, name, row in zip(item.indices, names, item.values):
        if zh:  # the Chinese names and the hints' formula writer, no index id or English syntax
            lines.append(t["index_formula"].format(index=name, formula=_zh_formula(ix)))
        else:
            lines.append(t["index_formula"].format(index=f"{name} ({ix.id})", formula=ix.formula))
        if not many:
            lines.append(block(row[0]))
            continue
        for period, v in zip(item.periods, row):
            lines.append(t["cell"].format(index=name if zh else ix.id, period=period))
            lines.append(block(v))
    lines += ["", t["rounding"], *_conversions(item, t, choice, names if zh else None)]
    lines += ["", t["final"], final]
    return "\n".join(lines)


def _zh_formula(ix) -> str:
    return zh_formula(ix.ast, _zh_registry())


def _conversions(item, t: dict, choice, names: list[str] | None = None) -> list[str]:
    """One line per answer cell: the value in base units, the exact quotient in the asked unit, the rounded text.
    `names`: the cells are named by these (the Chinese names), not by the index ids."""
    lines = []
    places = t["places"].get(choice.decimals, t["places_other"])  # "1 decimal", "2 decimals"
    for n, (ix, row) in enumerate(zip(item.indices, item.values)):
        for period, v in zip(item.periods, row):
            unit = answer_unit(v.result, choice.currency_unit)
            text = answer_text(v.value, v.result, choice.currency_unit, choice.decimals)
            # a ratio, multiple, day count or per-share amount is no currency unit ("元(原单位)" labelled days in Chinese
            # solutions: seed-9001 analyst audit)
            label = t["units"].get(unit, unit) if v.result in ("currency", "percent") else t["kinds"].get(v.result, t["units"]["units"])
            divisor = UNIT_SCALES.get(unit, 1) if v.result == "currency" else 1
            if divisor > 1:  # the exact quotient before rounding: 2,657,821,000 / 1,000,000 = 2,657.821 (issue 15); the
                # value written in full, as divided (NOPAT 335,804,530,442.7306, not the trace's 2-decimal 442.73)
                raw = Decimal(repr(float(v.value)))
                step = t["divided"].format(raw=num(v.value) if float(v.value).is_integer() else _exact(raw),
                                           divisor=f"{divisor:,}", exact=_exact(raw / divisor),
                                           unit=label, decimals=choice.decimals, places=places, text=text)
            else:  # in full where the trace's figure has fewer places than the rounding reads (3,766,913,871.39 shown,
                # 3 decimals = ...871.392 read off 3,766,913,871.3916: worked-solution audit)
                shown = num(v.value)
                places_read = choice.decimals + (2 if v.result == "percent" else 0) + 1
                if not float(v.value).is_integer() and len(shown.partition(".")[2]) < places_read:
                    shown = _exact(Decimal(repr(float(v.value))))
                step = t["scaled"].format(raw=shown, unit=label, decimals=choice.decimals, places=places, text=text)
            lines.append(f"{ix.id} {period}: " + step if names is None else f"{names[n]} {period}：" + step)
    return lines


def _is_number(text: str) -> bool:
    try:
        float(text.replace(",", ""))
    except ValueError:
        return False
    return True


def _compact(item, t: dict, language: str, choice, final: str, split_text: str, scales: dict[str, int] | None,
             labels: dict[str, dict[str, str]] | None = None) -> str:
    """The compact worked solution: facts as shown (one line each, with their report, under the prompt's label), the
    period arithmetic, the index arithmetic where there is any, the unit conversion, the final answer."""
    facts, scales, labels = _facts_grouped(item.values), scales or {}, labels or {}
    lines = [f"{report} {labels.get(report, {}).get(c) or _label(c, language)}: {_shown(c, val, scales.get(report, 1), language)}"
             for report in sorted(facts) for c, val in facts[report].items()]
    lines += [split_text] if split_text else []
    periods = dict.fromkeys(s for row in item.values for v in row for s in _period_steps(v))
    shown = [s for s in periods if not _is_number(s.rsplit(" = ", 1)[0].split(" = ", 1)[-1])]  # not "x (as reported) = -7,750"
    calc = dict.fromkeys(s for row in item.values for v in row for s in _calc_steps(v))
    shown += [s for s in calc if s.count(" = ") > 1 and " is not shown in " not in s]  # concept indices have no arithmetic
    lines += _lines_in(language, shown)
    lines += _conversions(item, t, choice, [ix.name_zh for ix in item.indices] if language == "zh" else None)
    lines += [t["final"], final]
    return "\n".join(lines)


@_per_value
def consulted(v) -> tuple[set, set[str]]:
    """Reports and statements an IndexValue relied on: those of the facts it read, plus those it found a
    line *absent* from (an optional line counted as 0 is only right if the reader sees that report)."""
    reports, statements = set(v.reports), {concept_info(f.concept).statement for f in v.facts}
    for concept, report in getattr(v, "absent", []):
        reports.add(parse_report(report))
        statements.add(concept_info(concept).statement)
    return reports, statements


def _deficiency(item, t: dict, language: str, final: str, shown: list, split_text: str = "") -> str:
    v = item.values[0][0]
    needed = sorted({r.label for r in consulted(v)[0]})
    shown_labels = sorted({r.label for r, scope in shown if scope == "consolidated"})
    missing = item.missing.label
    facts = sorted({_label(f.concept, language) if language == "zh" else f"{_label(f.concept, language)} ({f.concept})"
                    for f in v.facts if f.report == missing})
    sep = ", " if language == "en" else "、"  # the store's own message (index ids, tickers) stays in the trap's detail
    lines = [t["need"].format(reports=sep.join(needed)), t["shown"].format(reports=sep.join(shown_labels) or "-"),
             *([split_text] if split_text else []),
             t["missing"].format(report=missing, facts=sep.join(facts)), t["stop"],
             "", t["final"], final]
    return "\n".join(lines)
