"""Render one statement (DESIGN machine-readable shape) as json | html | markdown | text | tuples |
latex, and parse any of them back (`parse_rendered`) for an independent round-trip check.

    python -m ledgerlm.synth.statements.render statement.json --as latex --scale 1000000

A statement is `{"company", "period", "statement", "scope", "unit", "items": [{"concept",
"label", "value"}]}` with values in base units (optional "start"/"end" dates are printed next to
the period). Every format carries a unit header ("(in millions of USD, except per-share amounts
and share counts)" / "单位：百万美元") so `tables.py` re-reads html and latex output to the same
numbers. Per-share values and share counts are never scaled; missing values print as "—".
"""
from __future__ import annotations

import argparse
import ast
import functools
import html
import json
import math
import re
import sys
from json.encoder import encode_basestring  # ensure_ascii=False: the C escaper

from ledgerlm.errors import InputError
from ledgerlm.synth.statements.factindex import currency_of
from ledgerlm.synth.statements.taxonomy import concept_info, map_label
from ledgerlm.synth.statements import tables

FORMATS = ("json", "html", "markdown", "text", "tuples", "latex")
TITLES = {"en": {"income": "Income statement", "balance": "Balance sheet", "cashflow": "Cash flow statement", "equity": "Statement of changes in equity"},
          "zh": {"income": "利润表", "balance": "资产负债表", "cashflow": "现金流量表", "equity": "所有者权益变动表"}}
SCALE_WORDS = {1: "", 1e3: "thousands", 1e6: "millions", 1e9: "billions"}
ZH_SCALES = {1: "", 1e3: "千", 1e4: "万", 1e6: "百万", 1e8: "亿"}
# a Chinese amount unit: the scale word before 元 / 美元 / 港元, after 新台币 ("新台币千元", as Taiwan filers head their
# statements; "万新台币元" / "亿新台币元" read wrong: Chinese analyst audit). templates/zh.yaml `currency` says the same.
ZH_CURRENCY = {"CNY": "{scale}元", "USD": "{scale}美元", "TWD": "新台币{scale}元", "HKD": "{scale}港元"}


def zh_amount_unit(unit: str, scale_word: str = "") -> str:
    """'百万美元', '新台币万元', '亿元': the Chinese unit of an amount in `unit` at the scale `scale_word` names."""
    return ZH_CURRENCY.get(unit, "{scale}" + unit).format(scale=scale_word)
FULL_TITLE = re.compile(r"^(?P<title>.+?) — (?P<company>\S+) — (?P<period>\S+) — (?P<scope>consolidated|parent|合并|母公司)$")


@functools.lru_cache(maxsize=1 << 16)  # the same figures are printed in several formats of one statement
def _number(value: float | None) -> str:
    if value is None:
        return "—"
    text = f"{abs(value):,.6f}".rstrip("0").rstrip(".")
    return f"({text})" if value < 0 else text


@functools.lru_cache(maxsize=None)  # one look-up per line item of every rendering
def shown_scaled(concept: str) -> bool:
    """True when a block's unit scale divides this concept's figures (per-share amounts and share counts never are)."""
    try:
        kind = concept_info(concept).kind
    except KeyError:
        kind = "flow"
    return kind not in ("per_share", "shares")


def _row_label(item: dict, language: str) -> str:
    return _label_for(item.get("concept", ""), item.get("label") or "", language)


@functools.lru_cache(maxsize=65536)
def _label_for(concept: str, label: str, language: str) -> str:
    """The row label of a concept as reported under `label` (cached: the taxonomy lookups are hot in synth)."""
    try:
        info = concept_info(concept)
    except KeyError:
        return label or concept
    if language == "zh":
        return info.label_zh
    return label if label and map_label(label) == concept else info.label_en


def unit_header(unit: str, scale: float, language: str = "en") -> str:
    """'(in millions of USD, except per-share amounts and share counts)' or '单位：百万美元'."""
    if language == "zh":
        note = "（每股金额及股数除外）" if scale != 1 else ""
        return f"单位：{zh_amount_unit(unit, ZH_SCALES.get(scale, ''))}{note}"
    if scale == 1:
        return f"(in {unit})"
    if scale not in SCALE_WORDS:
        raise InputError(f"scale {scale} has no unit word (use 1, 1e3, 1e6 or 1e9)", field="scale")
    return f"(in {SCALE_WORDS[scale]} of {unit}, except per-share amounts and share counts)"


def _labels(stmt: dict, language: str) -> list[str]:
    """The row label of every line item (`_row_label`); a line in another currency than the statement's unit header
    says so after its label ("Revenue (EUR)", "营业收入（EUR）"): a report cell holds a foreign-currency figure where the
    latest filing giving it gives no other (indexing.reporting_currency_first), and the header names one currency."""
    labels = [_label_for(item.get("concept", ""), item.get("label") or "", language) for item in stmt["items"]]
    header = stmt.get("unit", "")
    header_currency = currency_of(header)
    for i, item in enumerate(stmt["items"]):
        unit = item.get("unit", header)
        if unit != header:  # (most lines: the header's unit, or a per-share / share unit checked below)
            currency = currency_of(unit)
            if currency is not None and currency != header_currency:
                labels[i] += f"（{zh_amount_unit(currency)}）" if language == "zh" else f" ({currency})"
    return labels


def _figures(stmt: dict, scale: float) -> list[str]:
    """The shown figure of every line item: `_number(value)`, a whole float written directly: `f"{x:,.0f}"` is
    `f"{x:,.6f}"` without its six zeros for every finite whole float (amounts are whole at the block's exact scales),
    and no memo entry is made for a figure seen once (distinct filers print distinct figures)."""
    figures = []
    add = figures.append
    for item in stmt["items"]:
        value = item.get("value")
        if value is None:
            add("—")
            continue
        if scale != 1 and shown_scaled(item.get("concept", "")):
            value = value / scale
        if type(value) is float and value.is_integer():
            add(f"{value:,.0f}" if value > 0 else f"({-value:,.0f})" if value < 0 else "0")  # -0.0 prints as 0
        else:
            add(_number(value))
    return figures


def _title(stmt: dict, language: str) -> str:
    scope = stmt.get("scope", "consolidated")
    if language == "zh":
        scope = {"consolidated": "合并", "parent": "母公司"}.get(scope, scope)
    return f"{TITLES[language].get(stmt['statement'], stmt['statement'])} — {stmt['company']} — {stmt['period']} — {scope}"


def _with_shown_labels(stmt: dict, language: str = "en") -> dict:
    """The statement with each item's label as the table formats show it in `language` (`_label_for`): a filer's own
    label names the concept only where it maps back to it. Seed-2718 helper audit: JSON blocks carried raw labels such
    as "Weighted average common shares issued and outstanding (in thousands)" beside full counts (BAC 9,177,468,000),
    one "Net income/(loss)" for four Ford lines, and Con Edison's period-end cash as "BALANCE AT BEGINNING OF PERIOD"."""
    labels = _labels(stmt, language)
    if all(label == item.get("label") for label, item in zip(labels, stmt["items"])):
        return stmt
    return dict(stmt, items=[dict(item, label=label) for label, item in zip(labels, stmt["items"])])


def _period_header(stmt: dict, language: str = "en") -> str:
    """The period column's header: its label and dates where the statement has them (`FY2009H1 (2009-01-01 to
    2009-06-30)`, a balance sheet `FY2009H1 (2009-06-30)`), so the days of every window can be counted."""
    if stmt.get("end"):
        to = " 至 " if language == "zh" else " to "
        return f"{stmt['period']} ({stmt['start']}{to}{stmt['end']})" if stmt.get("start") else f"{stmt['period']} ({stmt['end']})"
    return stmt["period"]


@functools.lru_cache(maxsize=1 << 16)  # row labels repeat across statements, periods and scales
def _html_escape(text: str) -> str:
    return html.escape(text)


@functools.lru_cache(maxsize=1 << 16)
def _latex_escape(text: str) -> str:
    return re.sub(r"([&%$#_])", r"\\\1", text)


@functools.lru_cache(maxsize=1 << 16)  # row labels repeat across statements, periods and scales
def _repr(text: str) -> str:
    return repr(text)


_ITEM_KEYS = ("concept", "label", "value", "unit")  # a statement line item as the store writes it


@functools.lru_cache(maxsize=1 << 16)  # a company's line items recur in every report of the statement
def _item_head(concept: str, label: str, level: int) -> str:
    """A line item's JSON text up to its value: `{`, its concept and label members and the value's key."""
    pad = "\n" + "  " * level + "  "
    return f'{{{pad}"concept": {encode_basestring(concept)},{pad}"label": {encode_basestring(label)},{pad}"value": '


@functools.lru_cache(maxsize=1 << 10)
def _item_tail(unit: str, level: int) -> str:
    """A line item's JSON text after its value: the unit member and the closing brace."""
    close = "\n" + "  " * level
    return f',{close}  "unit": {encode_basestring(unit)}{close}}}'


def _json_element(value, level: int) -> str:
    """`_json_indented(value, level)`; a line item ({concept, label, value, unit} in that order, str members, a finite
    number or null value) from its memoised head and tail around the value: only the figure differs between reports."""
    if type(value) is dict and tuple(value) == _ITEM_KEYS:
        concept, label, figure, unit = value.values()
        if type(concept) is str and type(label) is str and type(unit) is str:
            kind = type(figure)
            if kind is float and math.isfinite(figure):
                return _item_head(concept, label, level) + float.__repr__(figure) + _item_tail(unit, level)
            if figure is None:
                return _item_head(concept, label, level) + "null" + _item_tail(unit, level)
            if kind is int:
                return _item_head(concept, label, level) + int.__repr__(figure) + _item_tail(unit, level)
    return _json_indented(value, level)


def _json_indented(value, level: int = 0) -> str:
    """`json.dumps(value, ensure_ascii=False, indent=2)` (the JSON representation of a statement), ~3x faster: Python's
    json writes indented output with its pure-Python encoder; here objects and lists are laid out the same way and
    each scalar is written by the C string escaper or the number repr json uses. Anything else goes to json.dumps.
    Scalars are tested first and strings inside containers written in place: a statement is mostly the strings and
    floats of its line items (a JSON block's first rendering is most of its cost over many filers)."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is float and math.isfinite(value):
        return float.__repr__(value)
    if kind is int:
        return int.__repr__(value)
    close = "\n" + "  " * level
    pad = close + "  "
    if kind is dict and value and all(type(k) is str for k in value):
        members = (encode_basestring(k) + ": " + (encode_basestring(v) if type(v) is str else _json_indented(v, level + 1))
                   for k, v in value.items())
        return "{" + pad + ("," + pad).join(members) + close + "}"
    if kind is list and value:
        return "[" + pad + ("," + pad).join([_json_element(v, level + 1) for v in value]) + close + "]"
    return json.dumps(value, ensure_ascii=False, indent=2).replace("\n", close)  # null, true, NaN, {}, [], other types


def _scale(scale: float) -> float:
    scale = float(scale)
    return int(scale) if scale.is_integer() else scale


def statement_labels(stmt: dict, language: str = "en") -> list[str]:
    """The row label of every line item: the same at every scale (synth renders one statement at several scales
    and in several formats, and passes these back as `labels`)."""
    return _labels(stmt, language)


def statement_figures(stmt: dict, scale: float = 1) -> list[str]:
    """The shown figure of every line item: the same in both languages and in the five table formats (`figures`)."""
    return _figures(stmt, _scale(scale))


def render_statement(stmt: dict, fmt: str, *, scale: float = 1, language: str = "en", labels: list[str] | None = None,
                     figures: list[str] | None = None) -> str:
    """The statement as text in one of FORMATS (`labels`, `figures`: `statement_labels` and `statement_figures` of the
    same statement, language and scale)."""
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}", field="as")
    if fmt == "json":  # the row labels every other format shows, in `language` (keys stay English: the format's
        return _json_indented(_with_shown_labels(stmt, language))  # machine-readable fields), not the filer's raw labels
    scale = _scale(scale)
    title, units, period = _title(stmt, language), unit_header(stmt["unit"], scale, language), _period_header(stmt, language)
    item_word = "项目" if language == "zh" else "Item"
    labels = _labels(stmt, language) if labels is None else labels
    if figures is None and fmt != "tuples":  # the tuples format writes the values themselves
        figures = _figures(stmt, scale)
    if fmt == "html":
        attrs = " ".join(f'data-{k}="{html.escape(str(stmt.get(k, "")))}"' for k in ("company", "period", "statement", "scope", "unit"))
        body = "\n".join([f"    <tr><td>{_html_escape(label)}</td><td>{value}</td></tr>" for label, value in zip(labels, figures)])
        return (f'<table {attrs} data-scale="{scale}">\n  <caption>{html.escape(title)} {html.escape(units)}</caption>\n'
                f"  <thead><tr><th>{item_word}</th><th>{html.escape(period)}</th></tr></thead>\n  <tbody>\n{body}\n  </tbody>\n</table>")
    if fmt == "latex":
        esc = _latex_escape
        body = "\n".join([f"{esc(label)} & {value} \\\\" for label, value in zip(labels, figures)])
        return (f"\\begin{{table}}[h]\n\\caption{{{esc(title)} {esc(units)}}}\n\\begin{{tabular}}{{lr}}\n\\toprule\n"
                f"{item_word} & {esc(period)} \\\\\n\\midrule\n{body}\n\\bottomrule\n\\end{{tabular}}\n\\end{{table}}")
    if fmt == "markdown":
        body = "\n".join([f"| {label.replace('|', '/')} | {value} |" for label, value in zip(labels, figures)])
        return f"**{title}**\n\n{units}\n\n| {item_word} | {period} |\n|---|---:|\n{body}"
    if fmt == "text":
        width = max([len(item_word)] + [len(label) for label in labels])
        vwidth = max([len(period)] + [len(v) for v in figures])
        lines = [title, units, f"{item_word:<{width}}  {period:>{vwidth}}"]
        lines += [label.ljust(width) + "  " + value.rjust(vwidth) for label, value in zip(labels, figures)]  # = f"{label:<{width}}  {value:>{vwidth}}"
        return "\n".join(lines)
    # tuples: one (label, period, value) per line, values scaled as the unit header says; each line is the repr of
    # the tuple, written from its parts' reprs (the period's once per statement)
    lines = [f"# {title}", f"# {units}"] + ([f"# {period}"] if period != stmt["period"] else [])  # the dates, where known
    middle = f", {stmt['period']!r}, "
    for label, item in zip(labels, stmt["items"]):
        value = item.get("value")
        if value is not None and shown_scaled(item.get("concept", "")):
            value = value / scale
            if type(value) is not float or not value.is_integer():  # a whole float is its own rounding
                value = round(value, 6)
        lines.append(f"({_repr(label)}{middle}{value!r})")
    return "\n".join(lines)


# ---------------------------------------------------------------- parse back
def _meta_from_title(title: str) -> dict:
    m = FULL_TITLE.match(title.strip())
    if not m:
        return {}
    scope = {"合并": "consolidated", "母公司": "parent"}.get(m["scope"], m["scope"])
    statement = tables.statement_from_text(m["title"]) or ""
    return {"company": m["company"], "period": m["period"], "statement": statement, "scope": scope}


def _items(pairs: list[tuple[str, float | None]]) -> list[dict]:
    return [{"concept": map_label(label) or "", "label": label, "value": value} for label, value in pairs]


def _scaled(label: str, value: float | None, unit: tables.UnitHeader) -> float | None:
    if value is None:
        return None
    concept = map_label(label)
    kind = concept_info(concept).kind if concept else "flow"
    if kind == "per_share":
        return value
    if kind == "shares":
        return value * (unit.share_scale if unit.share_scale is not None else unit.scale)
    return value * unit.scale


def _split_title_units(text: str) -> tuple[str, str]:
    m = re.search(r"\s(\(in [^)]*\)|单位[:：]\S+)\s*$", text)
    return (text[:m.start()].strip(), m.group(1)) if m else (text.strip(), "")


def parse_rendered(text: str, fmt: str) -> dict:
    """A statement dict back from render_statement output (values in base units)."""
    if fmt == "json":
        return json.loads(text)
    if fmt in ("html", "latex"):
        raws = tables.read_html_tables(text) if fmt == "html" else tables.read_latex_tables(text)
        if not raws:
            raise InputError(f"no table in the {fmt} text", field="table")
        raw = raws[0]
        title, units = _split_title_units(raw.caption)
        rows = raw.header + raw.body
        header, body = rows[0], rows[1:]
        period = re.sub(r"\s*\(.*\)$", "", header[1]) if len(header) > 1 else ""
        pairs = [(r[0], tables.parse_amount(r[1]) if len(r) > 1 else None) for r in body]
    elif fmt in ("markdown", "text"):
        lines = [ln for ln in text.splitlines() if ln.strip()]
        title, units = lines[0].strip("* "), lines[1]
        if fmt == "markdown":
            grid = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines[2:] if not re.fullmatch(r"\|[-:| ]+\|", ln.strip())]
        else:
            grid = [[m[1], m[2]] for ln in lines[2:] if (m := re.match(r"^(.*?)\s{2,}(\S.*)$", ln))]
        period = re.sub(r"\s*\(.*\)$", "", grid[0][1])
        pairs = [(r[0], tables.parse_amount(r[1])) for r in grid[1:]]
    elif fmt == "tuples":
        lines = text.splitlines()
        title, units = lines[0].lstrip("# "), lines[1].lstrip("# ")
        parsed = [ast.literal_eval(ln) for ln in lines[2:] if ln.strip() and not ln.startswith("#")]
        period = parsed[0][1] if parsed else ""
        pairs = [(label, value) for label, _, value in parsed]
    else:
        raise InputError(f"unknown format {fmt!r}", field="as")
    unit = tables.parse_unit_header(units) or tables.UnitHeader(None, 1.0, None)
    meta = _meta_from_title(title)
    return {"company": meta.get("company", ""), "period": meta.get("period", period) or period, "statement": meta.get("statement", ""),
            "scope": meta.get("scope", "consolidated"), "unit": unit.currency or "",
            "items": _items([(label, _scaled(label, value, unit)) for label, value in pairs])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ledgerlm.synth.statements.render", description="render a statement JSON")
    parser.add_argument("path", help="statement JSON (as `ledgerlm statements --as json` prints)")
    parser.add_argument("--as", dest="fmt", default="text", choices=FORMATS)
    parser.add_argument("--scale", type=float, default=1)
    parser.add_argument("--language", default="en", choices=("en", "zh"))
    args = parser.parse_args(argv)
    with open(args.path, encoding="utf-8") as fh:
        print(render_statement(json.load(fh), args.fmt, scale=args.scale, language=args.language))
    return 0


if __name__ == "__main__":
    sys.exit(main())
