"""Human labels for taxonomy tags when a filing gives none (SEC companyfacts of IFRS filers).

    python -m ledgerlm.synth.statements.tag_labels ifrs-full:FinanceCosts ifrs-full:RightofuseAssets

IFRS tags use taxonomy_data/ifrs_labels.yaml (the IFRS Taxonomy's standard labels); any other tag has
its CamelCase name split into words ("ProceedsFromIssuingShares" -> "Proceeds from issuing shares").
"""
from __future__ import annotations

import re
import sys
from functools import lru_cache
from pathlib import Path

import yaml

LABELS_FILE = Path(__file__).with_name("taxonomy_data") / "ifrs_labels.yaml"
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_SMALL = {"And", "Of", "In", "From", "To", "For", "On", "Or", "At", "By", "The", "Than", "As", "With", "Used"}


@lru_cache(maxsize=1)
def ifrs_labels() -> dict[str, str]:
    return {str(k): str(v) for k, v in (yaml.load(LABELS_FILE.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}).items()}


def split_camel(tag: str) -> str:
    """'ProceedsFromIssuingShares' -> 'Proceeds from issuing shares' (acronyms kept)."""
    words = _WORD.findall(tag) or [tag]
    out = [words[0]] + [w.lower() if (w in _SMALL or not w.isupper()) else w for w in words[1:]]
    return " ".join(out)


def tag_label(taxonomy: str, tag: str) -> str:
    """The label to show for `taxonomy:tag` when the filing's own label is missing."""
    if taxonomy.lower().startswith("ifrs"):
        label = ifrs_labels().get(tag)
        if label:
            return label
    return split_camel(tag)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        taxonomy, _, tag = arg.rpartition(":")
        print(f"{arg}: {tag_label(taxonomy or 'ifrs-full', tag)}")
