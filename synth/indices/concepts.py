"""Which names in a formula are canonical concepts (DESIGN contract 1 keys) rather than index ids.

    python -c "from ledgerlm.synth.indices.concepts import concept_keys; print(len(concept_keys()))"

Shared by registry.py and conventions.py (both need it; neither imports the other for it).
"""
from __future__ import annotations

from functools import lru_cache

from ledgerlm.synth.statements import taxonomy


@lru_cache(maxsize=1)
def concept_keys() -> frozenset[str]:
    """Every canonical concept key of the taxonomy."""
    return frozenset(taxonomy.concepts())


def is_concept(name: str) -> bool:
    """True when `name` is a canonical concept key of the taxonomy."""
    return name in concept_keys()
