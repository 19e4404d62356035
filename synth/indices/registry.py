"""The index registry: YAML files under registry/, one per family, validated on load (unknown keys fail).

    python -c "from ledgerlm.synth.indices.registry import load_registry; r = load_registry(); print(len(r), r['roe_avg'].hint)"

Each YAML file: `family: NAME` and `indices: [ {id, name: {en, zh}, formula, result, axis, hint, source}, … ]`.
`needs` is derived from the formula (DESIGN contract 3). Every canonical concept key is also an index
(`registry["revenue"]` gives an auto-generated entry whose formula is the concept itself).

Optional keys (issue 11, answer fidelity):
- `applies_to`: accounting standards the index is defined for (`us-gaap`, `ifrs`, `cas`; default all
  three). `compute` refuses other filers with one line and synth never asks them (e.g. `ebitda_cas`).
- `periods`: period kinds the index accepts (`FY`, `Q`, `H1`, `Q3YTD`, `TTM`). Default from the formula:
  prior_quarter()/standalone() -> Q only; ttm() -> FY, TTM; annualize() -> FY, Q, H1, Q3YTD; balance-only
  formulas -> every kind but TTM; otherwise all five. `compute` refuses other kinds, synth never asks them.
- `hint_zh`: the Chinese hint; default: the formula written with the Chinese names of its lines and indices.
- `no_hint`: whether a question may omit the formula (true only when the convention is the textbook one or
  the question states it). Default: false when the formula (or an index it uses) carries a convention a
  reader cannot guess — days_in_period, annualize, begin/avg balances, first_of, interest-bearing debt,
  EBIT, NOPAT, invested capital, working-capital change, TTM/standalone derivations — or is CAS-only.
`Index.hint_text(language)` is the hint plus the convention notes its formula needs (stated once, in one
wording, for every index that uses them).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

from ledgerlm.errors import InputError
from ledgerlm.synth.indices import conventions
from ledgerlm.synth.indices.concepts import concept_keys, is_concept
from ledgerlm.synth.indices.formula import BUILTIN_NAMES, BinOp, Call, Name, Neg, Needs, Node, needs, parse
from ledgerlm.synth.statements.periods import parse_period
from ledgerlm.synth.statements.taxonomy import concept_info

REGISTRY_DIR = Path(__file__).with_name("registry")
RESULT_KINDS = ("currency", "percent", "ratio", "times", "days", "per_share")
AXES = ("domain", "caliber", "temporal+caliber", "temporal+domain")
INDEX_KEYS = {"id", "name", "formula", "result", "axis", "hint", "source"}
OPTIONAL_KEYS = {"applies_to", "periods", "hint_zh", "no_hint"}
STANDARDS = ("us-gaap", "ifrs", "cas")
PERIOD_KINDS = ("FY", "Q", "H1", "Q3YTD", "TTM")
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
    applies_to: tuple[str, ...] = STANDARDS
    periods: tuple[str, ...] | None = None  # None until conventions.fill_defaults derives it from the formula
    hint_zh: str = ""  # "" until fill_defaults writes the formula with Chinese names
    no_hint: bool | None = None  # None until fill_defaults decides
    conventions: tuple[str, ...] = ()  # keys of conventions.NOTES the answer depends on (set by fill_defaults)
    definitions: tuple[tuple[str, ...], tuple[str, ...]] | None = None  # (en, zh) of the indices its hint names (fill_defaults)
    positive_base: bool | None = None  # a ratio over net income / EBITDA / equity / invested capital: undefined when <= 0
    reads_flows: bool | None = None  # its formula reads a flow of a period (fill_defaults)

    @property
    def needs(self) -> Needs:
        return needs(self.ast, is_concept=is_concept)

    def accepts(self, period) -> bool:
        """True when the index is defined for the period's kind (FY, Q, H1, Q3YTD, TTM)."""
        return period_kind(period) in (self.periods or PERIOD_KINDS)

    def hint_text(self, language: str = "en") -> str:
        """The hint shown in with-hint prompts, in `language`, with the conventions its formula needs."""
        return conventions.hint_text(self, language)

    @property
    def point_in_time(self) -> bool:
        """Balances at the period end only (no flow, no weighted shares, no beginning or average balance, no days): the
        question names the period's end, not a window."""
        return not self.reads_flows and not set(self.conventions) & {"begin", "begin_year_start", "avg", "shares", "days_in_period", "annualize", "ttm"}

    def convention_notes(self, language: str = "en") -> list[str]:
        """The convention sentences alone, one per note (no-hint prompts state each shared one once)."""
        return conventions.notes(self, language)

    def convention_text(self, language: str = "en") -> str:
        """The conventions alone (no formula): stated in no-hint prompts so that the answer is unambiguous."""
        return conventions.joined(conventions.notes(self, language), language)


def required_concepts(index: "Index", registry) -> frozenset[str]:
    """Concepts a company must report for the index to be derivable at all: lines inside optional() are not
    required, and a first_of() needs only what every one of its alternatives needs (a cheap eligibility filter;
    compute decides). Referenced indices are expanded."""
    def walk(node, stack: tuple[str, ...]) -> frozenset[str]:
        if isinstance(node, Name):
            n = node.name
            if n in BUILTIN_NAMES:
                return frozenset()
            if n in registry and not is_concept(n) and n not in stack:
                return walk(registry[n].ast, stack + (n,))
            return frozenset({n}) if is_concept(n) else frozenset()
        if isinstance(node, Neg):
            return walk(node.operand, stack)
        if isinstance(node, BinOp):
            return walk(node.left, stack) | walk(node.right, stack)
        if isinstance(node, Call):
            if node.func == "optional":
                return frozenset()
            parts = [walk(a, stack) for a in node.args]
            if node.func == "first_of":
                return frozenset.intersection(*parts)
            return frozenset().union(*parts)
        return frozenset()

    return walk(index.ast, (index.id,))


def _names_read(index: "Index", registry) -> frozenset[str]:
    """Every name the formula reads, through referenced indices: `may_derive` depends on `have` only through these."""
    out: set[str] = set()
    seen: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, Name):
            out.add(node.name)
            if node.name in registry and not is_concept(node.name) and node.name not in seen:
                seen.add(node.name)
                walk(registry[node.name].ast)
        elif isinstance(node, Neg):
            walk(node.operand)
        elif isinstance(node, BinOp):
            walk(node.left)
            walk(node.right)
        elif isinstance(node, Call):
            for a in node.args:
                walk(a)

    walk(index.ast)
    return frozenset(out)


def may_derive(index: "Index", registry, have: set[str]) -> bool:
    """Cheap filter before computing (compute decides): the company reports every required concept, and the value
    is grounded in lines it reports — an index used in a product, a quotient or a function (e.g. `noncurrent_debt /
    total_equity`) must read at least one reported line, a sum needs one grounded term, a first_of() one grounded
    alternative. So a sum of optional lines (debt under unmapped tags) is never asked and answered 0.

    The answer depends on `have` only through the names the formula reads, so it is memoised on the registry per
    (index, those names the company reports): with thousands of filers every company asks it for every index (issue
    17), and companies share the few lines one formula reads. A registry is not changed after `load_registry`."""
    memo = registry.__dict__.setdefault("_may_derive", {}) if hasattr(registry, "__dict__") else {}
    static = memo.get(id(index))
    if static is None or static[0] is not index:  # the index object is kept, so its id is never reused meanwhile
        static = memo[id(index)] = (index, required_concepts(index, registry), _names_read(index, registry), {})
    _, required, names, answers = static
    if not required <= have:
        return False
    key = names.intersection(have)
    hit = answers.get(key)
    if hit is None:
        hit = answers[key] = _may_derive(index, registry, have)
    return hit


def _may_derive(index: "Index", registry, have: set[str]) -> bool:

    def ref(n: str) -> bool:
        return n in registry and not is_concept(n) and n not in BUILTIN_NAMES

    def grounded(node, depth=0) -> bool:
        if depth > 50:
            return False
        if isinstance(node, Name):
            if ref(node.name):
                return grounded(registry[node.name].ast, depth + 1)
            return node.name in have
        if isinstance(node, Neg):
            return grounded(node.operand, depth)
        if isinstance(node, BinOp):
            return grounded(node.left, depth) or grounded(node.right, depth)
        if isinstance(node, Call):
            return any(grounded(a, depth) for a in node.args)
        return False

    def valid(node, strict: bool, depth=0) -> bool:
        """strict: an index reference here must itself be grounded (it is not one term of a sum)."""
        if depth > 50:
            return False
        if isinstance(node, Name):
            if not ref(node.name):
                return True
            inner = registry[node.name].ast
            return valid(inner, False, depth + 1) and (not strict or grounded(inner))
        if isinstance(node, Neg):
            return valid(node.operand, strict, depth)
        if isinstance(node, BinOp):
            if node.op in "+-":
                return valid(node.left, False, depth) and valid(node.right, False, depth) \
                    and (not strict or grounded(node.left) or grounded(node.right))
            return valid(node.left, True, depth) and valid(node.right, True, depth)
        if isinstance(node, Call):
            if node.func == "first_of":  # a grounded alternative; as one term of a sum, a valid one (it may be 0)
                return any(valid(a, False, depth) and grounded(a) for a in node.args) \
                    or not strict and all(valid(a, False, depth) for a in node.args)
            if node.func in ("optional", "sum_of"):
                return all(valid(a, False, depth) for a in node.args)
            return all(valid(a, True, depth) for a in node.args)
        return True

    concepts_read = grounded(index.ast)
    return valid(index.ast, True) and (concepts_read or not conventions.closure(index, registry)[2])


def period_kind(period) -> str:
    """`FY2023` -> FY, `FY2023Q1` -> Q, `FY2023H1` -> H1, `FY2023Q3YTD` -> Q3YTD, `FY2023Q2TTM` -> TTM."""
    p = parse_period(period)
    return "H1" if p.kind == "YTD" and p.quarter == 2 else "Q3YTD" if p.kind == "YTD" else p.kind


KIND_WORDS = {"FY": "fiscal years", "Q": "standalone quarters", "H1": "half-year YTD periods",
              "Q3YTD": "nine-month YTD periods", "TTM": "trailing-twelve-month periods"}


def accounting_standard(store, company: str) -> str | None:
    """The standard a company reports under, read from its facts: `us-gaap` / `ifrs` by the taxonomy of
    most tags, `cas` for CNY statements or Chinese labels without a taxonomy; None when unknown."""
    cache = store.__dict__.setdefault("_standards", {})  # restrict() views share their parent's dict
    if company not in cache:
        facts = store.facts
        if "company" in facts.columns:
            facts = facts[facts["company"].astype(str) == company]
        counts: dict[str, int] = {}
        if "tag" in facts.columns:  # count each distinct tag once, then its prefix (a split per row cost ~50 ms per company)
            for tag, n in facts["tag"].astype(str).value_counts(sort=False).items():
                prefix = tag.split(":")[0].lower()
                counts[prefix] = counts.get(prefix, 0) + int(n)
        us, ifrs = counts.get("us-gaap", 0), counts.get("ifrs-full", 0)
        if us or ifrs:
            cache[company] = "us-gaap" if us >= ifrs else "ifrs"
        elif (facts["unit"].astype(str) == "CNY").any() or ("label" in facts.columns and facts["label"].astype(str).str.contains("[\u4e00-\u9fff]").any()):
            cache[company] = "cas"
        else:
            cache[company] = None
    return cache[company]


def check_applicable(index: "Index", standard: str | None, period, company: str = "") -> None:
    """Raise IndexNotApplicable (one line naming index, company/standard and period) when the index is not
    defined for the filer's standard or the period's kind."""
    who = f"company {company} " if company else ""
    if standard is not None and standard not in index.applies_to:
        raise IndexNotApplicable(f"index {index.id!r} applies to {'/'.join(index.applies_to)} filers only; "
                                 f"{who}reports under {standard} (period {period})", field="index")
    kind = period_kind(period)
    if not index.accepts(period):
        raise IndexNotApplicable(f"index {index.id!r} is defined for {', '.join(KIND_WORDS[k] for k in index.periods)} only; "
                                 f"{who}period {period} is a {KIND_WORDS[kind][:-1]}", field="period")


class IndexNotApplicable(InputError):
    """The index is not defined for this filer's accounting standard or this kind of period."""


def concept_index(key: str) -> Index:
    """The auto-generated index for a canonical concept: its value at the period (stocks at period end)."""
    info = concept_info(key)
    result = {"per_share": "per_share"}.get(info.kind, "currency")  # shares counts scale like amounts
    label_en, label_zh = info.label_en or key, info.label_zh or info.label_en or key
    periods = tuple(k for k in PERIOD_KINDS if k != "TTM") if info.kind == "stock" else PERIOD_KINDS
    return Index(key, label_en, label_zh, key, Name(key), result, "caliber",
                 f"{label_en}: read the line item for the period (flows over the period, balances at its end).",
                 "Canonical statement line item", "concept", "<concept>", periods=periods,
                 hint_zh=f"{label_zh}：读取该期间的报表科目（流量取期间发生额，余额取期末数）。", no_hint=True)


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
    if check_concepts:
        conventions.fill_defaults(registry)
    return registry


_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML has it: the same documents, ~10x faster


def _read_file(path: Path) -> list[Index]:
    try:
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_YAML_LOADER)
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
        unknown, missing = set(raw) - INDEX_KEYS - OPTIONAL_KEYS, INDEX_KEYS - set(raw)
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
        extra = {}
        for key, allowed in (("applies_to", STANDARDS), ("periods", PERIOD_KINDS)):
            if key in raw:
                vals = raw[key]
                if not isinstance(vals, list) or not vals or any(v not in allowed for v in vals):
                    raise InputError(f"index {index_id!r}: {key} must be a non-empty list of {allowed}, got {vals!r}", path=str(path), field=f"{where}.{key}")
                extra[key] = tuple(v for v in allowed if v in vals)
        if "hint_zh" in raw:
            if not isinstance(raw["hint_zh"], str) or not raw["hint_zh"].strip():
                raise InputError(f"index {index_id!r}: hint_zh must be non-empty text", path=str(path), field=f"{where}.hint_zh")
            extra["hint_zh"] = raw["hint_zh"].strip()
        if "no_hint" in raw:
            if not isinstance(raw["no_hint"], bool):
                raise InputError(f"index {index_id!r}: no_hint must be true or false", path=str(path), field=f"{where}.no_hint")
            extra["no_hint"] = raw["no_hint"]
        out.append(Index(index_id, name["en"], name["zh"], str(raw["formula"]).strip(), node, raw["result"], raw["axis"],
                         raw["hint"].strip(), raw["source"].strip(), family, str(path), **extra))
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
