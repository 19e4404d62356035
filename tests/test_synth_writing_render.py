"""Faster writers of the statement renderer (issue 17, goal 2) give the text of the plain definitions they replace.

    python -m pytest tests/test_synth_writing_render.py -q
"""
from __future__ import annotations

import json

from hypothesis import given, settings, strategies as st

from ledgerlm.synth.statements.render import _json_indented, render_statement

_scalar = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(),
                    st.text(alphabet=st.sampled_from(list('ab "\\\n\t\x00\x1fé中\ud800/')), max_size=8))
_json = st.recursive(_scalar, lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                                                      st.dictionaries(st.one_of(st.text(max_size=4), st.integers(0, 9)),
                                                                      inner, max_size=4)), max_leaves=25)


@settings(max_examples=150, deadline=None)
@given(_json)
def test_indented_json_is_json_dumps_indent_2(value):
    """Every JSON-able value (non-str keys, tuples, NaN, lone surrogates included) is written as json.dumps does."""
    assert _json_indented(value) == json.dumps(value, ensure_ascii=False, indent=2)


_label = st.text(alphabet=st.sampled_from(list("ab '\"\\\n中")), max_size=6)
_items = st.lists(st.fixed_dictionaries({"concept": st.sampled_from(["revenue", "eps_basic", "shares_basic", "unknown_x"]),
                                         "label": _label, "value": st.one_of(st.none(), st.integers(-10**12, 10**12),
                                                                             st.floats(-1e15, 1e15))}), max_size=6)


@settings(max_examples=100, deadline=None)
@given(_items, st.sampled_from([1, 1000, 1e6]), st.sampled_from(["en", "zh"]), st.sampled_from(["FY2024", "FY'24"]))
def test_statement_json_and_tuples_are_the_plain_definitions(items, scale, language, period):
    """The JSON representation is json.dumps(stmt, indent=2) with the English row labels the table formats show;
    each tuples line is repr((label, period, value))."""
    from ledgerlm.synth.statements.render import _scale, shown_scaled, statement_labels

    stmt = {"company": "X", "period": period, "statement": "income", "scope": "consolidated", "unit": "USD", "items": items}
    shown = dict(stmt, items=[dict(item, label=label) for item, label in zip(items, statement_labels(stmt, "en"))])
    assert render_statement(stmt, "json") == json.dumps(shown, ensure_ascii=False, indent=2)
    lines = render_statement(stmt, "tuples", scale=scale, language=language).split("\n")[2:]
    expected = []
    for label, item in zip(statement_labels(stmt, language), items):
        value = item["value"]
        if value is not None and shown_scaled(item["concept"]):
            value = round(value / _scale(scale), 6)
        expected.append(repr((label, period, value)))
    assert lines == expected


@settings(max_examples=60, deadline=None)
@given(_items, st.sampled_from([1, 1000, 1e6]), st.sampled_from(["en", "zh"]))
def test_text_rows_are_the_padded_format_definition(items, scale, language):
    """Text rows are `f"{label:<{width}}  {value:>{vwidth}}"` (written with ljust/rjust), CJK labels included."""
    from ledgerlm.synth.statements.render import statement_figures, statement_labels

    stmt = {"company": "X", "period": "FY2024", "statement": "income", "scope": "consolidated", "unit": "USD", "items": items}
    rows = list(zip(statement_labels(stmt, language), statement_figures(stmt, scale)))
    width = max([len("项目" if language == "zh" else "Item")] + [len(label) for label, _ in rows])
    vwidth = max([len("FY2024")] + [len(v) for _, v in rows])
    body = render_statement(stmt, "text", scale=scale, language=language).split("\n", 3)[3:]  # after title, units, header
    expected = [f"{label:<{width}}  {value:>{vwidth}}" for label, value in rows]
    assert body == (["\n".join(expected)] if expected else [])


_unit_items = st.lists(st.fixed_dictionaries({
    "concept": st.sampled_from(["revenue", "eps_basic", "shares_basic", "x\"中\n"]), "label": _label,
    "value": st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20), st.floats(), st.just(-0.0), st.text(max_size=2)),
    "unit": st.one_of(st.sampled_from(["USD", "shares", "USD/shares", "元\\"]), st.none())}), max_size=5)


@settings(max_examples=150, deadline=None)
@given(_unit_items, st.booleans())
def test_line_items_with_units_are_json_dumps(items, reorder):
    """Line items as the store writes them ({concept, label, value, unit}) are written from memoised heads and tails;
    any other key order, a non-str member or a NaN / infinite / bool value takes the general writer: all as json.dumps."""
    if reorder:
        items = [dict(reversed(item.items())) for item in items]
    stmt = {"company": "X", "period": "FY2024", "statement": "income", "scope": "consolidated", "unit": "USD", "items": items}
    assert _json_indented(stmt) == json.dumps(stmt, ensure_ascii=False, indent=2)  # the writer render_statement uses
    assert _json_indented([stmt, items]) == json.dumps([stmt, items], ensure_ascii=False, indent=2)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-10**18, 10**18),
                 st.integers(-10**9, 10**9).map(float), st.just(-0.0), st.floats(-1e30, 1e30).map(round).map(float)),
       st.sampled_from([1, 1000, 10_000, 1e6]))
def test_figures_are_the_six_decimal_definition(value, scale):
    """A row's figure is `f"{abs(v):,.6f}"` without trailing zeros, in parentheses when negative, whole floats included
    (written without the six decimals)."""
    from ledgerlm.synth.statements.render import statement_figures

    stmt = {"company": "X", "period": "FY2024", "statement": "income", "scope": "consolidated", "unit": "USD",
            "items": [{"concept": "revenue", "label": "Revenue", "value": value}]}
    shown = value / scale
    text = f"{abs(shown):,.6f}".rstrip("0").rstrip(".")
    assert statement_figures(stmt, scale) == [f"({text})" if shown < 0 else text]
