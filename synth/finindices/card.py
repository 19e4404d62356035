"""The dataset card (README.md of a built dataset): what it is, how it was made, how to load it.

    python -c "from ledgerlm.synth.finindices.card import dataset_card; print(dataset_card({'counts': {'total': 0}, 'config': {}, 'seed': 0, 'drops': {}}))"
"""
from __future__ import annotations

import json
from pathlib import Path

from ledgerlm.synth.statements.sources import _expand, DEFAULT_DATA_DIR

SOURCES = """\
- SEC EDGAR XBRL **companyfacts** API snapshots (AAPL, NVDA, GOOGL, SNOW, TSM) — public-domain U.S. government data,
  https://www.sec.gov/edgar/sec-api-documentation
- SEC **Financial Statement Data Sets** (FSDS, 2009q3, 2010q1, 2010q2 excerpts; includes parent-company
  Schedule I statements where filers report them), https://www.sec.gov/dera/data/financial-statement-data-sets
- SEC **XBRL instance** documents (AAPL, NFLX excerpts), https://www.sec.gov/edgar
- Task design follows FinIndices (single-index / table-index paradigms, four capability axes, distractor and
  deficiency traps, 32,768-token cap): the FinIndices paper, §2.1–2.2 and Appendix A."""


def _table(d: dict) -> str:
    return "\n".join(f"| {k} | {v} |" for k, v in d.items())


def _attempted(manifest: dict) -> int:
    """Samples attempted: kept + every drop (equals --num rounded up to whole items)."""
    return manifest.get("kept", manifest["counts"].get("total", 0)) + sum(manifest.get("drops", {}).values())


SPLIT_NAMES = {"train": "train", "dev": "validation", "test": "test"}  # file stem -> split name (the card's one name)


def source_files(sources: list[str] | None) -> list[str]:
    """Every file the facts were read from (kind: path), as the loaders expand the sources; embedded files
    are named relative to the package's data folder."""
    out = []
    for target in [Path(s) for s in sources] if sources else [DEFAULT_DATA_DIR]:
        try:
            expanded = _expand(target)
        except Exception as err:  # a source moved or unreadable since the build: say so in the card
            out.append(f"{target} (not readable now: {type(err).__name__})")
            continue
        for kind, path in expanded:
            try:
                shown = f"synth/data/sec/{path.resolve().relative_to(DEFAULT_DATA_DIR)}"
            except ValueError:
                shown = str(path)
            out.append(f"{kind}: {shown}")
    return sorted(set(out))


def _split_section(manifest: dict, by_split: dict) -> str:
    rule = manifest.get("split_rule") or {"rule": "company"}
    if rule["rule"] == "period":
        head = (f"## Splits (period-based: {rule.get('why', '')}; fiscal years train {rule['train'][0]}–{rule['train'][1]}, "
                f"validation {rule['dev'][0]}–{rule['dev'][1]}, test {rule['test'][0]}–{rule['test'][1]})")
    else:
        head = "## Splits (company-level: no company appears in two splits)"
    rows = "\n".join(f"| {SPLIT_NAMES.get(k, k)} | {k}.jsonl | {v} |" for k, v in by_split.items())
    return f"{head}\n| split | file | samples |\n|---|---|---|\n{rows}"


def dataset_card(manifest: dict) -> str:
    counts, cfg = manifest["counts"], manifest["config"]
    by_split = counts.get("by_split", {})
    sources = cfg.get("sources") or ["(embedded SEC sample)"]
    files = "\n".join(f"  - {f}" for f in source_files(cfg.get("sources")))
    about_sources = SOURCES if not cfg.get("sources") else "- Facts supplied by the user (`--source`), listed below."
    return f"""---
license: cc-by-4.0
language: [en, zh]
task_categories: [question-answering]
tags: [finance, financial-statements, tabular-reasoning, finindices, synthetic]
configs:
  - config_name: default
    data_files: [{{split: train, path: train.jsonl}}, {{split: validation, path: dev.jsonl}}, {{split: test, path: test.jsonl}}]
---
# FinIndices-style financial index dataset (ledgerlm)

Questions that ask for financial indices (margins, growth, turnover, leverage, cash flow, per-share, …)
of real companies, computed from real filings shown in the prompt. Every answer is produced by
programmatic execution of a registry formula over canonical facts, and re-checked by an independent
path that parses the numbers back out of the rendered prompt (`ledgerlm.synth.finindices.fidelity`).

Built with `ledgerlm synth` (seed {manifest['seed']}); full configuration and package versions in `manifest.json`.

## Sources
{about_sources}
- Facts read from: {', '.join(map(str, sources))}; the files (XBRL instances, companyfacts, FSDS quarters) were:
{files}

{_split_section(manifest, by_split)}

## Fields (one JSONL row per sample)
`id, split, paradigm (single|table), axis, hint (bool), company, target_periods, indices,
context_periods (shown order; a period appears twice when its parent-company statements are shown too),
traps [{{kind: distractor_period|parent_distractor|deficiency, detail}}], context_formats (per shown report:
text|json|tuples|html|markdown|latex), answer_format (number|html_table|json|tuple_list), unit, decimals,
messages (system, user), answer, solution, n_tokens, tokenizer, provenance` plus `language` (en|zh) and
`value_unrounded` (the unscaled, unrounded value(s) in base units; percent indices as fractions).

`answer` is a number (single), a list of rows — one per index in `indices` order, one column per period in
`target_periods` order — (table), or the exact string `Insufficient information` (deficiency items, whose
context lacks a report the computation needs; each was proven non-derivable by recomputation).

## Units and rounding
Currency results are scaled to the unit the prompt asks for (units, thousands, ten-thousands, millions,
hundred-millions, billions); ratios in percent (×100) unless the index is a ratio/times/days/per-share value.
**Rounding rule: decimal round half away from zero**, applied once to the scaled value, to the number of
decimals the prompt asks for (1–3). The unrounded value is kept in `value_unrounded`. No answer rounds to 0:
when a non-zero value would, the item is re-drawn at a smaller currency unit, then with more decimals (up to 6).

## Conventions (stated in every prompt that needs them; ledgerlm README "Conventions: debt, EBIT, days, hints")
- **Debt**: financial debt = the borrowings the balance sheet presents — the total short-term debt line when the
  filer shows one, otherwise commercial paper / short-term borrowings + current portion of long-term debt +
  convertible notes due within a year — plus non-current long-term debt and bonds; a long-term-debt total that
  includes its current portion is never added to that portion. **Finance and operating lease liabilities are not
  financial debt** (they are in `financial_debt_with_leases` and in the CAS interest-bearing debt, 有息负债 =
  financial debt + lease liabilities + long-term payables).
- **EBIT** = income before income taxes + interest expense (one definition); **EBITDA** = operating income + D&A;
  **NOPAT** = operating income × (1 − income tax / pretax income), the effective rate as reported, also for losses;
  **invested capital** = parent equity + interest-bearing debt; **ROIC** divides by its average.
- **Days and annualisation**: 90 days per quarter (90 / 180 / 270 / 360), also for 52/53-week years;
  annualised = × 12 / months of the period.
- **Balances**: beginning = previous fiscal year end (FY, H1, nine-month YTD), previous quarter end (a standalone
  quarter), one year earlier (TTM); averages = (beginning + ending) / 2; working-capital change = ending − beginning.
- **Periods**: standalone quarter = YTD(n) − YTD(n−1), Q4 = annual − nine-month YTD; TTM = current YTD + last annual
  − prior-year same YTD. Each index declares the period kinds it accepts (a QoQ index is asked only of standalone
  quarters, a TTM index only of TTM periods and fiscal years) and the accounting standards it applies to
  (CAS-only indices such as `ebitda_cas` are never asked of US-GAAP / IFRS filers).
- **Per-share values and EPS**: every per-share value and share count is on the latest filing's stock-split basis
  (older figures rescaled, named in the trace); a standalone quarter's EPS / weighted shares are the three-month
  figures its report shows, else net income / time-weighted shares (Q4 and TTM by the same rule); EPS and share
  counts are never added or subtracted (ledgerlm README "Conventions: splits and EPS").
- **Scope**: answers are for the consolidated group; when parent-company statements are shown the question says so.
- **Hints**: with-hint prompts give the formula and these conventions; no-hint prompts state the conventions without
  the formula, and indices whose definition is not the textbook one (CAS-only and a few others, registry `no_hint:
  false`) have no no-hint variant. Chinese prompts get Chinese hints.

## Counts
- paradigm: {json.dumps(counts.get('by_paradigm', {}))}
- axis: {json.dumps(counts.get('by_axis', {}))}
- trap: {json.dumps(counts.get('by_trap', {}))}
- context format (per shown report): {json.dumps(counts.get('by_context_format', {}))}
- answer format: {json.dumps(counts.get('by_answer_format', {}))}
- hint: {json.dumps(counts.get('by_hint', {}))}
- language: {json.dumps(counts.get('by_language', {}))}
- prompt tokens ({cfg.get('tokenizer')}): {json.dumps(counts.get('tokens', {}))}; cap {cfg.get('max_tokens')}
- attempted: {_attempted(manifest):,} samples (--num {cfg.get('num', 0):,}, rounded up to whole items of \
{len(cfg.get('hint_variants') or [None])} hint variant(s)); kept: {manifest.get('kept', counts.get('total', 0)):,}; \
dropped by reason: {json.dumps(manifest.get('drops', {}))}. `--num` counts attempts, so a dataset can hold fewer rows \
than --num; `drops` in `manifest.json` says why each missing row was dropped.

## Load
```python
import datasets
ds = datasets.load_dataset("path/to/this/folder")   # splits: train, validation (dev.jsonl), test
# or: datasets.load_dataset("json", data_files={{"train": "train.jsonl", "validation": "dev.jsonl", "test": "test.jsonl"}})
```

## Limitations
The embedded sample covers few companies, so splits are small and company-level; build from more filers
(`ledgerlm synth --source …`) for training-scale data. Statements are canonicalised (one label per
canonical concept), so line-item classification is easier than in raw CAS reports.
"""
