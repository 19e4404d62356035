"""`may_derive` is memoised per (index, the names its formula reads that the company reports) (issue 17: every one of
thousands of filers asks it for every index); the memo must give the unmemoised answer for any set of concepts.

    nice -n 19 python -m pytest -q tests/test_indices_may_derive_memo.py
"""
from __future__ import annotations

import random

from ledgerlm.synth.indices.registry import _may_derive, load_registry, may_derive, required_concepts
from ledgerlm.synth.statements.taxonomy import concepts


def test_memoised_may_derive_equals_the_direct_filter():
    registry = load_registry()
    keys = sorted(concepts())
    rng = random.Random(17)
    # random concept sets of every density, each asked twice (the second time from the memo)
    haves = [set(rng.sample(keys, k)) for k in (0, 5, 40, len(keys) // 3, len(keys) // 2, len(keys) - 5) for _ in range(4)]
    haves.append(set(keys))
    ids = sorted(registry)
    yes = no = 0
    for have in haves + haves:
        for index_id in ids:
            ix = registry[index_id]
            direct = required_concepts(ix, registry) <= have and _may_derive(ix, registry, have)
            assert may_derive(ix, registry, have) == direct, (index_id, sorted(have)[:5])
            yes, no = yes + direct, no + (not direct)
    assert yes > 50 and no > 50  # both answers were exercised
