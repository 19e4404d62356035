"""The scales a report block may be shown in (issue 17, goal 2: memoised per statement, intersected per block) are the
scales that divide every amount of the block, as the plain definition scans them.

    python -m pytest tests/test_synth_writing_scales.py -q
"""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from ledgerlm.synth.finindices.contexts import SCALES, STATEMENTS, Builder

_amount = st.one_of(st.none(), st.sampled_from([0, 1_000, 10_000, 2_000_000, 3_000_000_000, 1_500, 12.5, -40_000, -0.0, 1e22,
                                                  float(2**60 + 2**8), 10**20, float("inf"), float("nan")]))  # gcd path and its fallback
_item = st.fixed_dictionaries({"value": _amount}, optional={"unit": st.sampled_from(["USD", "USD/shares", "shares", "Shares"])})
_statement = st.one_of(st.none(), st.fixed_dictionaries({"items": st.lists(_item, max_size=5)}))


def _plain(stmts: dict, statements: list[str], language: str) -> list[int]:
    """The definition: every amount of the shown statements (per-share figures and share counts aside) is a
    whole number at the scale."""
    amounts = [it["value"] for name in statements if stmts[name] for it in stmts[name]["items"]
               if it.get("value") is not None and "/" not in it.get("unit", "/") and it.get("unit", "").lower() != "shares"]
    return [k for k in SCALES[language] if all(float(v) % k == 0 for v in amounts)]


@settings(max_examples=200, deadline=None)
@given(st.fixed_dictionaries({name: _statement for name in STATEMENTS}),
       st.lists(st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=3, unique=True), min_size=1, max_size=4))
def test_block_scales_are_the_scales_dividing_every_amount(stmts, blocks):
    builder = Builder.__new__(Builder)  # only the statement lookup and the render memo are used
    builder._rendered = {}
    builder.statement = lambda company, report, name, scope: stmts[name]
    for statements in blocks:  # several blocks of one report: statement results are reused between them
        for language in SCALES:
            assert builder.exact_scales("X", "FY2024", "consolidated", statements, language) == _plain(stmts, statements, language)
