"""manifest.json: config, seed, versions, counts by paradigm × axis × trap × format × hint × language, drops by reason.

    python -c "import json; print(json.load(open('out/synth/manifest.json'))['counts']['by_trap'])"

Nothing time- or machine-dependent goes in, so reruns are byte-identical.
"""
from __future__ import annotations

import json
import platform
from collections import Counter, defaultdict
from importlib import metadata

from ledgerlm.synth.finindices.pipeline import Stats


def trap_key(row: dict) -> str:
    return "+".join(sorted({t["kind"] for t in row["traps"]})) or "none"


class Counts:
    """Accumulates per-row counts while the merge streams rows."""

    def __init__(self):
        self.by = defaultdict(Counter)
        self.cross = Counter()
        self.tokens = []

    def add(self, row: dict) -> None:
        hint = "hint" if row["hint"] else "no_hint"
        lang = row.get("language") or "en"
        self.by["split"][row["split"]] += 1
        self.by["paradigm"][row["paradigm"]] += 1
        self.by["axis"][row["axis"]] += 1
        for kind in {t["kind"] for t in row["traps"]} or {"none"}:
            self.by["trap"][kind] += 1
        for fmt in row["context_formats"]:
            self.by["context_format"][fmt] += 1
        self.by["answer_format"][row["answer_format"]] += 1
        self.by["hint"][hint] += 1
        self.by["language"][lang] += 1
        self.by["unit"][row["unit"]] += 1
        self.by["decimals"][str(row["decimals"])] += 1
        self.by["company"][row["company"]] += 1
        self.by["answer_kind"]["insufficient" if row["answer"] == "Insufficient information" else "value"] += 1
        fmts = "+".join(sorted(set(row["context_formats"])))
        self.cross["|".join([row["paradigm"], row["axis"], trap_key(row), row["answer_format"], hint, lang])] += 1
        self.by["context_format_set"][fmts] += 1
        self.tokens.append(row["n_tokens"])

    def as_dict(self) -> dict:
        toks = sorted(self.tokens)
        out = {"total": len(toks)}
        out.update({f"by_{k}": dict(sorted(v.items())) for k, v in sorted(self.by.items())})
        out["paradigm|axis|trap|answer_format|hint|language"] = dict(sorted(self.cross.items()))
        out["tokens"] = {"mean": round(sum(toks) / len(toks), 1), "min": toks[0], "max": toks[-1],
                         "p50": toks[len(toks) // 2]} if toks else {}
        return out


def versions() -> dict:
    out = {"python": platform.python_version()}
    for dist in ("ledgerlm", "tiktoken", "pandas", "datasets", "tokenizers"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def build_manifest(config: dict, counts: Counts, stats: Stats, extra: dict) -> str:
    manifest = {
        "format": "ledgerlm-finindices-v1",
        "seed": config["seed"],
        "config": config,
        "versions": versions(),
        "counts": counts.as_dict(),
        "split_rule": config.get("split_rule") or {"rule": "company"},  # split.py: company-level or by fiscal year
        "kept": stats.kept,
        "drops": dict(sorted(stats.drops.items())),
        **extra,
    }
    return json.dumps(manifest, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
