"""The index registry: YAML files under registry/, one per family, validated on load (unknown keys fail).

    python -c "from ledgerlm.synth.indices.registry import load_registry; r = load_registry(); print(len(r), r['roe_avg'].hint)"

Each YAML file: `family: NAME` and `indices: [ {id, name: {en, zh}, formula, result, axis, hint, source}, … ]`.
`needs` is derived from the formula (DESIGN contract 3). Every canonical concept key is also an index
(`registry["revenue"]` gives an auto-generated entry whose formula is the concept itself).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from ledgerlm.errors import InputError
from ledgerlm.synth.indices.formula import BUILTIN_NAMES, Name, Needs, Node, needs, parse

REGISTRY_DIR = Path(__file__).with_name("registry")
RESULT_KINDS = ("currency", "percent", "ratio", "times", "days", "per_share")
AXES = ("domain", "caliber", "temporal+caliber", "temporal+domain")
INDEX_KEYS = {"id", "name", "formula", "result", "axis", "hint", "source"}
FILE_KEYS = {"family", "indices"}


@dataclass(frozen=True)
class Index:
    id: str
    name_en: str
    name_zh: str
    formula: str
    ast: Node
    result: str
    axis: str
    hint: str
    source: str
    family: str
    path: str  # the YAML file it came from ("<concept>" for auto-generated entries)

    @property
    def needs(self) -> Needs:
        return needs(self.ast, is_concept=is_concept)


def is_concept(name: str) -> bool:
    """True when `name` is a canonical concept key of the taxonomy."""
    return name in _concept_keys()


@lru_cache(maxsize=1)
def _concept_keys() -> frozenset[str]:
    from ledgerlm.synth.statements import taxonomy

    for attr in ("concept_keys", "all_concepts", "concepts"):
        fn = getattr(taxonomy, attr, None)
        if callable(fn):
            return frozenset(k if isinstance(k, str) else k.key for k in fn())
    table = getattr(taxonomy, "CONCEPTS", None)
    if table is not None:
        return frozenset(table)
    raise InputError("ledgerlm.synth.statements.taxonomy exposes no list of concept keys (concept_keys())")


def concept_index(key: str) -> Index:
    """The auto-generated index for a canonical concept: its value at the period (stocks at period end)."""
    from ledgerlm.synth.statements.taxonomy import concept_info

    info = concept_info(key)
    result = {"per_share": "per_share"}.get(info.kind, "currency")  # shares counts scale like amounts
    label_en, label_zh = info.label_en or key, info.label_zh or info.label_en or key
    return Index(key, label_en, label_zh, key, Name(key), result, "caliber",
                 f"{label_en}: read the line item for the period (flows over the period, balances at its end).",
                 "Canonical statement line item", "concept", "<concept>")


class Registry(dict):
    """id -> Index for the YAML entries; lookups of a concept key fall back to `concept_index`."""

    def __missing__(self, key: str) -> Index:
        if is_concept(key):  # cached aside, so `key in registry` stays True only for YAML entries
            auto = self.__dict__.setdefault("_auto", {})
            if key not in auto:
                auto[key] = concept_index(key)
            return auto[key]
        raise InputError(f"unknown index {key!r} (not in {REGISTRY_DIR} and not a canonical concept key)", field="index")

    def get_index(self, key: str) -> Index:
        return self[key]

    def yaml_indices(self) -> list[Index]:
        return list(self.values())


def load_registry(paths: list[str | Path] | None = None, *, check_concepts: bool = True) -> Registry:
    """Load and validate every registry YAML (default: the shipped registry/*.yaml)."""
    files = [Path(p) for p in paths] if paths else sorted(REGISTRY_DIR.glob("*.yaml"))
    if not files:
        raise InputError(f"no registry YAML files found in {REGISTRY_DIR}")
    registry = Registry()
    for path in files:
        for entry in _read_file(path):
            if entry.id in registry:
                raise InputError(f"duplicate index id {entry.id!r} (also in {registry[entry.id].path})", path=str(path), field="id")
            registry[entry.id] = entry
    _check_references(registry, check_concepts)
    return registry


def _read_file(path: Path) -> list[Index]:
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise InputError(f"not valid YAML: {err}", path=str(path)) from None
    if not isinstance(doc, dict) or set(doc) != FILE_KEYS:
        raise InputError(f"a registry file has exactly the keys {sorted(FILE_KEYS)}", path=str(path))
    family = doc["family"]
    out = []
    for i, raw in enumerate(doc["indices"] or []):
        where = f"indices[{i}]"
        if not isinstance(raw, dict):
            raise InputError("each index is a mapping", path=str(path), field=where)
        unknown, missing = set(raw) - INDEX_KEYS, INDEX_KEYS - set(raw)
        if unknown or missing:
            raise InputError(f"index {raw.get('id', '?')!r}: unknown keys {sorted(unknown)}, missing keys {sorted(missing)}", path=str(path), field=where)
        index_id = str(raw["id"])
        name = raw["name"]
        if not isinstance(name, dict) or set(name) != {"en", "zh"} or not all(name.values()):
            raise InputError(f"index {index_id!r}: name must be {{en, zh}}, both non-empty", path=str(path), field=f"{where}.name")
        if raw["result"] not in RESULT_KINDS:
            raise InputError(f"index {index_id!r}: result {raw['result']!r} is not one of {RESULT_KINDS}", path=str(path), field=f"{where}.result")
        if raw["axis"] not in AXES:
            raise InputError(f"index {index_id!r}: axis {raw['axis']!r} is not one of {AXES}", path=str(path), field=f"{where}.axis")
        for key in ("hint", "source"):
            if not isinstance(raw[key], str) or not raw[key].strip():
                raise InputError(f"index {index_id!r}: {key} must be non-empty text", path=str(path), field=f"{where}.{key}")
        node = parse(index_id, str(raw["formula"]))
        out.append(Index(index_id, name["en"], name["zh"], str(raw["formula"]).strip(), node, raw["result"], raw["axis"],
                         raw["hint"].strip(), raw["source"].strip(), family, str(path)))
    return out


def _check_references(registry: Registry, check_concepts: bool) -> None:
    """Every name is a builtin, another index or (when checked) a concept key; no index refers to itself."""
    for entry in list(registry.values()):
        if check_concepts and is_concept(entry.id):
            raise InputError(f"index id {entry.id!r} is a canonical concept key (concepts are indices already)", path=entry.path, field="id")
        for name in needs(entry.ast, is_concept=lambda n: n not in registry).concepts:
            if check_concepts and not is_concept(name):
                raise InputError(f"index {entry.id!r}: {name!r} is neither a concept key, an index id nor a builtin "
                                 f"({', '.join(sorted(BUILTIN_NAMES))})", path=entry.path, field="formula")
    state: dict[str, int] = {}

    def visit(index_id: str, stack: tuple[str, ...]) -> None:
        if state.get(index_id) == 2:
            return
        if state.get(index_id) == 1:
            raise InputError(f"index {index_id!r} refers to itself: {' -> '.join(stack + (index_id,))}", path=registry[index_id].path, field="formula")
        state[index_id] = 1
        for ref in needs(registry[index_id].ast, is_concept=lambda n: n not in registry).indices:
            visit(ref, stack + (index_id,))
        state[index_id] = 2

    for index_id in list(registry):
        visit(index_id, ())
