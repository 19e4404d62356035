"""`ledgerlm synth` settings: one dataclass, each field with its default and why; YAML and CLI only set them.

    python -c "from ledgerlm.synth.build.config import load_config; print(load_config('configs/synth/default.yaml'))"

Unknown YAML keys fail loudly (naming the key and the file).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import yaml

from ledgerlm.errors import InputError

FORMATS = ["text", "json", "tuples", "html", "markdown", "latex"]
AXES = ["domain", "caliber", "temporal+caliber", "temporal+domain"]


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
    languages: list[str] = field(default_factory=lambda: ["en", "zh"])
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
    max_attempts: int = 16  # draws per item slot before it is dropped as `no_derivable_target`
    company_group: int = 64  # with more companies, slots draw from groups of this many (bounded memory, see companies.py)

    def fingerprint(self) -> dict:
        """What decides the generated items (not `num_proc`, which never changes them)."""
        d = asdict(self)
        d.pop("num_proc")
        return d


def load_config(path: str | None = None, **overrides) -> SynthConfig:
    """Defaults, then the YAML file, then non-None `overrides` (CLI flags)."""
    values = {}
    if path:
        from ledgerlm.configcheck import read_yaml_config  # one line: missing file, broken YAML, typo'd key (did you mean)

        values = dict(read_yaml_config(path, {f.name for f in fields(SynthConfig)}))
    values.update({k: v for k, v in overrides.items() if v is not None})
    cfg = SynthConfig(**values)
    if cfg.model and cfg.tokenizer == SynthConfig.tokenizer:  # count with the trained model's tokenizer, not o200k
        cfg.tokenizer = cfg.model
    _check(cfg, path)
    return cfg


def _check(cfg: SynthConfig, path: str | None) -> None:
    def bad(name, msg):
        raise InputError(msg, path=path, field=name)

    if cfg.num < 1:
        bad("num", f"num must be >= 1, got {cfg.num}")
    if not isinstance(cfg.company_group, int) or cfg.company_group < 1:
        bad("company_group", f"company_group must be an integer >= 1, got {cfg.company_group!r}")
    if cfg.shard_size < 1:
        bad("shard_size", f"shard_size must be >= 1, got {cfg.shard_size}")
    for f in cfg.formats:
        if f not in FORMATS:
            bad("formats", f"unknown format {f!r}; expected {FORMATS}")
    for a in cfg.axes:
        if a not in AXES:
            bad("axes", f"unknown axis {a!r}; expected {AXES}")
    for v in cfg.hint_variants:
        if v not in ("hint", "no_hint"):
            bad("hint_variants", f"unknown hint variant {v!r}; expected hint / no_hint")
    for d in cfg.decimals:
        if not 0 <= int(d) <= 6:
            bad("decimals", f"decimals must be 0..6, got {d}")
    if not cfg.hint_variants or not cfg.languages:
        bad("hint_variants", "hint_variants and languages must not be empty")
