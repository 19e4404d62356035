"""Taxonomy: canonical concepts and the maps from US-GAAP / IFRS tags and CAS / English statement
labels onto them. The maps are data (taxonomy_data/*.yaml); this module only reads them.

    python -m ledgerlm.synth.statements.taxonomy 应付票据 us-gaap:Revenues revenue

- `concept_info(key)` -> ConceptInfo(key, statement, kind, sign, interest_bearing, label_en, label_zh)
- `map_tag("us-gaap", "Revenues")` -> ("revenue", 0): concept and precedence (0 = preferred);
  `tag_concepts` gives every concept a tag serves (NetIncomeLoss: net_income and net_income_parent).
- `map_label("应付票据")` / `map_label("Total net sales")` -> concept, after normalising width,
  whitespace, punctuation and leading markers such as 加：/减：/其中：/Less:.
"""
from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

DATA_DIR = Path(__file__).with_name("taxonomy_data")
TAXONOMY_FILES = {"us-gaap": "us_gaap.yaml", "ifrs-full": "ifrs.yaml", "ext": "extensions.yaml"}
TAXONOMY_ALIASES = {"us-gaap": "us-gaap", "usgaap": "us-gaap", "us_gaap": "us-gaap", "ifrs-full": "ifrs-full", "ifrs": "ifrs-full",
                    "ext": "ext"}
EXTENSION_PRECEDENCE = 100  # a filer extension element ranks below every standard element of its concept
STATEMENTS = ("balance", "income", "cashflow", "equity")
KINDS = ("flow", "stock", "per_share", "shares")


@dataclass(frozen=True)
class ConceptInfo:
    key: str
    statement: str  # balance | income | cashflow | equity
    kind: str  # flow | stock | per_share | shares
    sign: int  # +1 adds to its statement's total when positive; -1 reported positive but subtracted
    interest_bearing: bool | None  # liabilities only (CAS practice); None otherwise
    label_en: str
    label_zh: str


def _read_yaml(name: str) -> dict:
    with open(DATA_DIR / name, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}  # libyaml: same data, ~10x faster


@lru_cache(maxsize=None)
def _concepts() -> dict[str, ConceptInfo]:
    out = {}
    for key, spec in _read_yaml("concepts.yaml").items():
        if spec["statement"] not in STATEMENTS or spec["kind"] not in KINDS or spec["sign"] not in (1, -1):
            raise ValueError(f"taxonomy_data/concepts.yaml: concept {key!r} has a bad statement/kind/sign: {spec}")
        out[key] = ConceptInfo(key, spec["statement"], spec["kind"], int(spec["sign"]),
                               spec.get("interest_bearing"), spec["label_en"], spec["label_zh"])
    return out


def concepts() -> list[str]:
    """Every canonical concept key, in the order of concepts.yaml."""
    return list(_concepts())


def concept_info(key: str) -> ConceptInfo:
    """The concept's statement, kind, sign, interest-bearing flag and labels; KeyError for unknown keys."""
    try:
        return _concepts()[key]
    except KeyError:
        raise KeyError(f"unknown canonical concept {key!r} (see taxonomy_data/concepts.yaml)") from None


@lru_cache(maxsize=None)
def _tag_map(taxonomy: str) -> dict[str, list[tuple[str, int]]]:
    known = _concepts()
    out: dict[str, list[tuple[str, int]]] = {}
    if taxonomy == "ext":  # ticker -> concept -> element names; keyed "TICKER:Element" (`extension_tag`)
        for company, entries in _read_yaml(TAXONOMY_FILES[taxonomy]).items():
            for concept, tags in entries.items():
                if concept not in known:
                    raise ValueError(f"taxonomy_data/extensions.yaml: {company}: {concept!r} is not in concepts.yaml")
                for precedence, tag in enumerate(tags):
                    out.setdefault(f"{company}:{tag}", []).append((concept, EXTENSION_PRECEDENCE + precedence))
        return out
    for concept, tags in _read_yaml(TAXONOMY_FILES[taxonomy]).items():
        if concept not in known:
            raise ValueError(f"taxonomy_data/{TAXONOMY_FILES[taxonomy]}: {concept!r} is not in concepts.yaml")
        for precedence, tag in enumerate(tags):
            out.setdefault(tag, []).append((concept, precedence))
    return out


def _split_tag(taxonomy: str | None, tag: str) -> tuple[str | None, str]:
    if ":" in tag:
        prefix, rest = tag.split(":", 1)
        if taxonomy is None or prefix.lower() in TAXONOMY_ALIASES:  # "ext" names are "TICKER:Element"
            taxonomy, tag = taxonomy or prefix, rest
    return TAXONOMY_ALIASES.get((taxonomy or "").lower()), tag


def tag_concepts(taxonomy: str, tag: str) -> list[tuple[str, int]]:
    """Every (concept, precedence) a taxonomy tag maps to; [] when unmapped."""
    taxonomy, name = _split_tag(taxonomy, tag)
    return list(_tag_map(taxonomy).get(name, [])) if taxonomy else []


def extension_tag(company: str, element: str) -> str | None:
    """The tag name (`TICKER:Element`, taxonomy "ext") a filer's own element is read under, where extensions.yaml maps
    it for that filer (FSDS loader: its custom elements); None elsewhere."""
    name = f"{company}:{element}"
    return name if name in _tag_map("ext") else None


def standard_taxonomy(taxonomy: str | None, tag: str, base: str = "us-gaap") -> str | None:
    """The taxonomy a fact's element is read in: a filer's own (extension) element named exactly as an element of the
    filing's base taxonomy that the maps read is read as that element. Duke's 2009 10-Qs, on the 2008 US-GAAP
    taxonomy, which had no ProfitLoss, define their own ProfitLoss for consolidated net income (H1 631 M, beside
    NetIncomeLoss 620 M attributable to Duke), the element the 2009 taxonomy then added; left unmapped, net income
    fell back to the parent's share. Used by the FSDS and XBRL loaders alike; standard elements pass unchanged."""
    if taxonomy is not None:
        return taxonomy
    return base if tag_concepts(base, tag) else None


def map_tag(taxonomy: str, tag: str) -> tuple[str, int] | None:
    """The primary (concept, precedence) of a tag (0 = most preferred alternate), or None."""
    found = tag_concepts(taxonomy, tag)
    return found[0] if found else None


def tag_precedence(tag: str, concept: str) -> int:
    """Precedence of `taxonomy:Tag` for `concept`; 0 for tags without a taxonomy prefix (labels, CSV)."""
    for mapped, precedence in tag_concepts(None, tag) if ":" in tag else []:
        if mapped == concept:
            return precedence
    return 0


_MARKERS = re.compile(r"^(?:[一二三四五六七八九十]+、|[（(][一二三四五六七八九十\d]+[)）]|\d+[.、]|加[:：]|减[:：]|其中[:：]|less[:：]|add[:：]|plus[:：])\s*", re.I)


def normalize_label(text: str) -> str:
    """Canonical form for matching: NFKC width folding, no markers, lower case, letters/digits/CJK only."""
    text = unicodedata.normalize("NFKC", str(text)).strip().lower()
    text = text.replace("’", "'").replace("&", "and")
    for _ in range(2):
        text = _MARKERS.sub("", text).strip()
    return re.sub(r"[^0-9a-z\u4e00-\u9fff]+", "", text)


@lru_cache(maxsize=None)
def _label_map() -> dict[str, str]:
    out: dict[str, str] = {}

    def add(label: str, concept: str) -> None:
        key = normalize_label(label)
        if key:
            out.setdefault(key, concept)  # concepts.yaml first, then cas.yaml

    for key, spec in _read_yaml("concepts.yaml").items():
        for label in [spec["label_en"], spec["label_zh"], *spec.get("aliases", [])]:
            add(label, key)
    for key, spec in _read_yaml("cas.yaml").items():
        for label in [*spec.get("zh", []), *spec.get("en", [])]:
            add(label, key)
    return out


def label_conflicts() -> list[tuple[str, str, str]]:
    """(label, concept, other concept) for labels that two concepts claim (should be empty)."""
    seen: dict[str, str] = {}
    conflicts = []
    sources = [(k, [s["label_en"], s["label_zh"], *s.get("aliases", [])]) for k, s in _read_yaml("concepts.yaml").items()]
    sources += [(k, [*s.get("zh", []), *s.get("en", [])]) for k, s in _read_yaml("cas.yaml").items()]
    for concept, labels in sources:
        for label in labels:
            key = normalize_label(label)
            if key in seen and seen[key] != concept:
                conflicts.append((label, seen[key], concept))
            seen.setdefault(key, concept)
    return conflicts


def map_label(text: str) -> str | None:
    """The concept an English or Chinese statement label names, or None."""
    return _label_map().get(normalize_label(text))


def main(argv: list[str] | None = None) -> int:
    for arg in argv if argv is not None else sys.argv[1:]:
        if arg in _concepts():
            print(arg, concept_info(arg))
        elif ":" in arg:
            print(arg, tag_concepts(None, arg))
        else:
            print(arg, map_label(arg))
    return 0


if __name__ == "__main__":
    sys.exit(main())
