"""`ledgerlm synth` settings: one dataclass, each field with its default and why; YAML and CLI only set them.

    python -c "from ledgerlm.synth.finindices.config import load_config; print(load_config('configs/synth/default.yaml'))"

Unknown YAML keys fail loudly (naming the key and the file). Every value is type-checked against the
dataclass annotations (pydantic) before any work — `sources: "synth/data"` (a string, not a list),
`decimals: 3`, `axes` as a list, `p_deficiency: "high"` are one-line errors — then range-checked
(probabilities in [0, 1], positive weights, sources that exist). The resume fingerprint holds a
sha256 of the sources' CONTENTS (`sources_sha256`), so editing a source file between runs starts a
new run instead of resuming stale shards.
"""
from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ledgerlm.configcheck import read_yaml_config
from ledgerlm.errors import InputError

FORMATS = ["text", "json", "tuples", "html", "markdown", "latex"]
AXES = ["domain", "caliber", "temporal+caliber", "temporal+domain"]
SOLUTION_STYLES = ("full", "compact")
LANGUAGES = ("en", "zh")  # the template pools under templates/ (instructions.templates)
EMBEDDED_DATA = Path(__file__).resolve().parents[1] / "data" / "sec"  # = statements.sources.DEFAULT_DATA_DIR


@dataclass
class SynthConfig:
    sources: list[str] = field(default_factory=list)  # fact files/folders; empty = the embedded SEC sample
    num: int = 2000  # samples to attempt; each item slot yields one sample per hint variant
    seed: int = 0  # every item draws from random.Random(f"{seed}:{slot}")
    shard_size: int = 50  # item slots per shard: the unit of resume and merge (keep it fixed across reruns)
    num_proc: int = 1  # worker processes on this machine (never changes the output)
    tokenizer: str = "o200k_base"  # tiktoken encoding name, tokenizer.json path, local HF folder or cached HF model id
    model: str = ""  # the model to be trained (HF id or folder): the token cap then counts with its tokenizer (recorded in the manifest)
    max_tokens: int = 32768  # FinIndices context cap, tokens
    hint_variants: list[str] = field(default_factory=lambda: ["hint", "no_hint"])  # one sample per variant per item
    languages: list[str] = field(default_factory=lambda: list(LANGUAGES))  # prompt languages, one drawn per item
    paradigms: dict = field(default_factory=lambda: {"single": 0.7, "table": 0.3})  # draw weights
    axes: dict = field(default_factory=lambda: {a: 1.0 for a in AXES})  # draw weights over capability axes
    formats: list[str] = field(default_factory=lambda: list(FORMATS))  # statement renderings, one per shown report
    units: list[str] = field(default_factory=lambda: ["units", "thousands", "ten_thousands", "millions",
                                                      "hundred_millions", "billions"])  # for currency results
    decimals: list[int] = field(default_factory=lambda: [1, 2, 3])
    table_answer_formats: list[str] = field(default_factory=lambda: ["html_table", "json", "tuple_list"])
    table_periods: list[int] = field(default_factory=lambda: [4, 9])  # consecutive periods per table (min, max)
    table_indices: list[int] = field(default_factory=lambda: [1, 5])  # indices per table (min, max)
    max_table_values: int = 20  # indices × periods, FinIndices range 2-20
    p_distractor: float = 0.5  # add 1-3 adjacent unneeded reports
    p_parent: float = 0.5  # show parent-company statements beside consolidated ones (where the source has them)
    p_deficiency: float = 0.15  # remove a needed report (single-index items; kept only if provably not derivable)
    max_distractors: int = 3
    p_full_report: float = 0.25  # show all statements of each report, not only the ones the answer needs
    dev_fraction: float = 0.1  # of companies
    test_fraction: float = 0.2  # of companies
    test_companies: list[str] = field(default_factory=list)  # pin companies to test
    dev_companies: list[str] = field(default_factory=list)  # pin companies to dev
    companies: list[str] = field(default_factory=list)  # restrict to these companies; empty = all
    indices: list[str] = field(default_factory=list)  # restrict to these registry ids; empty = all
    # slice options (a "lookup" or "ratio" slice: configs/synth/lookup.yaml, ratio.yaml)
    index_families: list[str] = field(default_factory=list)  # registry families (profitability, growth, ...) and/or
    #   "concept" (every canonical line item as an index); empty = all registry families, no concept indices
    traps: bool = True  # False: no distractor periods, parent statements or deficiencies (p_* ignored)
    max_attempts: int = 16  # draws per item slot before it is dropped as `no_derivable_target`
    solution_style: str = "full"  # worked solutions: "full" (the FinIndices case-study steps) or "compact" (only the figures,
    #   the arithmetic and the unit conversion: about half the tokens, for small models trained on CPU)
    company_group: int = 32  # with more companies, slots draw from groups of this many (bounded memory, see companies.py)

    def fingerprint(self) -> dict:
        """What decides the generated items (not `num_proc`, which never changes them), with a digest of
        the sources' contents: the same paths holding edited facts are a different run."""
        d = asdict(self)
        d.pop("num_proc")
        d["sources_sha256"] = sources_digest(self.sources)
        return d


def sources_digest(sources: list[str]) -> str:
    """sha256 over every source file's relative name, size and bytes (folders walked in sorted order);
    empty `sources` = the embedded SEC data. A missing source is an InputError."""
    import hashlib

    roots = [Path(s) for s in sources] if sources else [EMBEDDED_DATA]
    digest = hashlib.sha256()
    for root in roots:
        if not root.exists():
            raise InputError("no such source file or folder", path=str(root), field="sources")
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for f in files:
            digest.update(f"{f.relative_to(root) if f != root else f.name}\0{f.stat().st_size}\0".encode())
            with open(f, "rb") as handle:
                digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()


def load_config(path: str | None = None, **overrides) -> SynthConfig:
    """Defaults, then the YAML file, then non-None `overrides` (CLI flags)."""
    values = {}
    if path:
        values = dict(read_yaml_config(path, {f.name for f in fields(SynthConfig)}))  # one line: missing file, broken YAML, typo'd key
    values.update({k: v for k, v in overrides.items() if v is not None})
    cfg = _typed(values, path)
    if cfg.model and cfg.tokenizer == SynthConfig.tokenizer:  # count with the trained model's tokenizer, not o200k
        cfg.tokenizer = cfg.model
    _check(cfg, path)
    return cfg


def _typed(values: dict, path: str | None) -> SynthConfig:
    """`SynthConfig(**values)` with every value checked against its annotation (pydantic, no str->list or
    float->int coercion); the first wrong value is one InputError naming file and field."""
    for name, value in values.items():  # pydantic's lax mode reads true as 1: a yes/no is not a number
        if isinstance(value, bool) and name in _NON_BOOL:
            raise InputError(f"expected a {_NON_BOOL[name]}, got {value!r}", path=path, field=name)
    if all(_exactly_typed(name, value) for name, value in values.items()):
        return SynthConfig(**{name: copy.copy(value) for name, value in values.items()})
    from pydantic import ValidationError

    try:
        return (_ADAPTER or _adapter()).validate_python(values)
    except ValidationError as err:
        first = err.errors()[0]
        field_name = ".".join(str(p) for p in first["loc"]) or "config"
        shown = repr(first.get("input"))
        raise InputError(f"{first['msg']}, got {shown[:80]}", path=path, field=field_name) from None


_ADAPTER = None
_NON_BOOL = {f.name: str(f.type) for f in fields(SynthConfig) if str(f.type) != "bool"}
_ANNOTATIONS = {f.name: str(f.type) for f in fields(SynthConfig)}
_PLAIN_TYPES = {"int": int, "float": float, "str": str, "bool": bool, "dict": dict}


def _exactly_typed(name: str, value) -> bool:
    """`value` already has exactly the type SynthConfig annotates `name` with (int, float, str, bool, dict, or a list
    of one of those): pydantic would accept it unchanged. The usual values (YAML scalars and lists, argparse-typed
    flags) then skip building pydantic's validator: its import and schema cost ~0.2 s CPU of serial start-up before
    the workers fork (issue 17). Anything else (1 for a float, a str for a list, a bool for an int) goes to pydantic."""
    annotation = _ANNOTATIONS.get(name)
    if annotation is None:
        return False
    if annotation.startswith("list[") and annotation.endswith("]"):
        item = _PLAIN_TYPES.get(annotation[len("list["):-1])
        return item is not None and type(value) is list and all(type(x) is item for x in value)
    return type(value) is _PLAIN_TYPES.get(annotation)


def _adapter():
    global _ADAPTER
    from pydantic import TypeAdapter

    _ADAPTER = TypeAdapter(SynthConfig)
    return _ADAPTER


PROBABILITIES = ("p_distractor", "p_parent", "p_deficiency", "p_full_report", "dev_fraction", "test_fraction")


def _check(cfg: SynthConfig, path: str | None) -> None:
    def bad(name, msg):
        raise InputError(msg, path=path, field=name)

    for name in PROBABILITIES:
        value = getattr(cfg, name)
        if not 0.0 <= value <= 1.0:
            bad(name, f"{name} must be a probability in [0, 1], got {value!r}")
    if cfg.dev_fraction + cfg.test_fraction >= 1.0:
        bad("test_fraction", f"dev_fraction + test_fraction must be < 1, got {cfg.dev_fraction} + {cfg.test_fraction}")
    for name in ("table_periods", "table_indices"):
        pair = getattr(cfg, name)
        if len(pair) != 2 or not 1 <= pair[0] <= pair[1]:
            bad(name, f"{name} must be [min, max] with 1 <= min <= max, got {pair!r}")
    for name in ("max_table_values", "max_attempts", "max_distractors"):
        if getattr(cfg, name) < (0 if name == "max_distractors" else 1):
            bad(name, f"{name} must be >= {0 if name == 'max_distractors' else 1}, got {getattr(cfg, name)!r}")
    for source in cfg.sources:
        if not Path(source).exists():
            bad("sources", f"source {source!r} does not exist")

    if cfg.num < 1:
        bad("num", f"num must be >= 1, got {cfg.num}")
    if not isinstance(cfg.company_group, int) or cfg.company_group < 1:
        bad("company_group", f"company_group must be an integer >= 1, got {cfg.company_group!r}")
    if cfg.shard_size < 1:
        bad("shard_size", f"shard_size must be >= 1, got {cfg.shard_size}")
    if cfg.num_proc < 1:
        bad("num_proc", f"num_proc (--num-proc) must be >= 1, got {cfg.num_proc}")
    for f in cfg.formats:
        if f not in FORMATS:
            bad("formats", f"unknown format {f!r}; expected {FORMATS}")
    for a in cfg.axes:
        if a not in AXES:
            bad("axes", f"unknown axis {a!r}; expected {AXES}")
    for lang in cfg.languages:
        if lang not in LANGUAGES:
            bad("languages", f"unsupported language {lang!r}; supported: {', '.join(LANGUAGES)}")
    for v in cfg.hint_variants:
        if v not in ("hint", "no_hint"):
            bad("hint_variants", f"unknown hint variant {v!r}; expected hint / no_hint")
    for d in cfg.decimals:
        if not 0 <= int(d) <= 6:
            bad("decimals", f"decimals must be 0..6, got {d}")
    for name in ("paradigms", "axes"):
        weights = getattr(cfg, name)
        if not isinstance(weights, dict) or not weights or any(not isinstance(w, (int, float)) or w < 0 for w in weights.values()) \
                or not sum(weights.values()) > 0:
            bad(name, f"{name} must map names to non-negative draw weights, not all zero; got {weights!r}")
    for p in cfg.paradigms:
        if p not in ("single", "table"):
            bad("paradigms", f"unknown paradigm {p!r}; expected single / table")
    if not isinstance(cfg.traps, bool):
        bad("traps", f"traps must be true or false, got {cfg.traps!r}")
    if cfg.solution_style not in SOLUTION_STYLES:
        bad("solution_style", f"unknown solution_style {cfg.solution_style!r}; expected one of {list(SOLUTION_STYLES)}")
    if cfg.max_tokens < 1:
        bad("max_tokens", f"max_tokens must be >= 1, got {cfg.max_tokens}")
    if not cfg.hint_variants or not cfg.languages:
        bad("hint_variants", "hint_variants and languages must not be empty")
