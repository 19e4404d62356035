"""Question text: template pools (en, zh), period wording, unit/precision constraints, answer formats, hints.

    python -c "from ledgerlm.synth.finindices.instructions import templates; print(templates('zh')['single'][0])"

Templates live in `templates/<language>.yaml`; every choice is drawn once per item (`choose`) so the
with-hint and no-hint variants of an item differ only in the formula block.
"""
from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from pathlib import Path

import yaml

from ledgerlm.errors import InputError
from ledgerlm.synth.finindices.answers import CURRENCY_UNITS, rounds_to_zero
from ledgerlm.synth.finindices.config import LANGUAGES
from ledgerlm.synth.finindices.pipeline import Drop
from ledgerlm.synth.statements.periods import parse_period

TEMPLATE_DIR = Path(__file__).parent / "templates"
REQUIRED_KEYS = ("system", "intro", "block_header", "blocks_end", "single", "table", "hint_single", "hint_table", "hint_item",
                 "units", "decimals", "currency", "answer", "periods", "scope", "scope_note", "conventions", "list_sep",
                 "split_note", "split_one", "split_many", "split_and", "conventions_by_index", "sentence_sep")


@functools.lru_cache(maxsize=None)
def templates(language: str) -> dict:
    """The template pool for `language`, checked for every key the builder uses."""
    path = TEMPLATE_DIR / f"{language}.yaml"
    if not path.is_file():
        raise InputError(f"no template pool for language {language!r}; expected one of {LANGUAGES}", path=str(path))
    pool = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml: same data, faster
    missing = [k for k in REQUIRED_KEYS if k not in pool]
    if missing:
        raise InputError(f"template pool lacks {missing}", path=str(path), field=missing[0])
    return pool


@functools.lru_cache(maxsize=None)  # a few hundred period labels, described in every prompt that asks about them
def describe_period(label: str, language: str, *, at_end: bool = False) -> str:
    """`FY2023Q3YTD` -> 'the first three quarters of fiscal 2023 (FY2023Q3YTD, nine months year-to-date)'; `at_end`:
    the period's end date, for indices of balances only ('the end of the third quarter of fiscal 2023 (FY2023Q3YTD)':
    seed-777 analyst audit, a retained-earnings-per-share question asked for a "standalone quarter")."""
    p = parse_period(label)
    forms = templates(language)["periods_at_end" if at_end else "periods"]
    if p.kind == "FY":
        form = forms["FY"]
    elif p.kind == "Q":
        form = forms["Q"]
    elif p.kind == "TTM":
        form = forms["TTM"]
    else:
        form = forms["H1"] if p.quarter == 2 else forms["Q3YTD"]
    return form.format(year=p.fiscal_year, q=p.quarter, label=p.label)


@dataclass(frozen=True)
class Choice:
    """Everything drawn at random for an item's instruction (shared by its hint variants)."""

    language: str
    system: str
    intro: str
    question: str  # the template, unfilled
    decimals: int
    currency_unit: str  # units | thousands | ... (applies to currency-valued indices)
    answer_format: str  # number | html_table | json | tuple_list


def choose(rng: random.Random, *, language: str, paradigm: str, units: list[str], decimals: list[int],
           table_formats: list[str]) -> Choice:
    pool = templates(language)
    return Choice(
        language=language,
        system=rng.choice(pool["system"]),
        intro=rng.choice(pool["intro"]),
        question=rng.choice(pool[paradigm]),
        decimals=rng.choice(decimals),
        currency_unit=rng.choice(units),
        answer_format="number" if paradigm == "single" else rng.choice(table_formats),
    )


def constraint_text(choice: Choice, kinds: list[str], currency: str, names: list[str] | None = None) -> str:
    """'Express currency amounts in millions of US dollars; express ratios as percentages and round to 2 decimal places.'
    With `names` (the indices, in `kinds` order) and more than one way to express them, each way names its indices:
    a table asking a debt-to-equity ratio as a percentage beside capex / D&A as a plain number said "express ratios as
    percentages; express the ratio as a plain number" and never which was which (seed-9001 analyst audit)."""
    pool = templates(choice.language)
    keys = [choice.currency_unit if kind == "currency" else kind for kind in kinds]
    named = names is not None and len(set(keys)) > 1
    parts = []
    for key in dict.fromkeys(keys):
        text = pool["units"][key].format(currency=currency_word(pool, currency, key))
        if named:
            which = list(dict.fromkeys(n for n, k in zip(names, keys) if k == key))
            text += f" ({', '.join(which)})" if choice.language == "en" else f"（{'、'.join(which)}）"
        parts.append(text if not parts or choice.language != "en" else text[0].lower() + text[1:])
    sep = "; " if choice.language == "en" else "；"
    return sep.join(parts) + " " * (choice.language == "en") + pool.get(f"decimals_{choice.decimals}", pool["decimals"]).format(decimals=choice.decimals)


def currency_word(pool: dict, currency: str, key: str) -> str:
    """The currency as the unit sentence `key` names it: 'US dollars' in English, where the sentence carries the scale;
    in Chinese the amount unit itself, the pool's `scale_words` put where `currency` says ('百万美元', '新台币亿元':
    "亿新台币元" read wrong, Chinese analyst audit; the statements' 单位 header is written the same way)."""
    form = pool["currency"].get(currency, pool.get("currency_other", currency))
    if "{" not in form:
        return form
    return form.format(scale=pool.get("scale_words", {}).get(key, ""), code=currency)


def showing(choice: Choice, values: list, units: list[str]) -> Choice:
    """`choice`, re-drawn so that no non-zero answer rounds to 0 (issue 11): a smaller currency unit from `units`
    first, then more decimals (up to 6); raises Drop("rounds_to_zero") when nothing shows the value."""
    import dataclasses

    def hidden(c: Choice) -> list:
        return [v for v in values if rounds_to_zero(v.value, v.result, c.currency_unit, c.decimals)]

    if not hidden(choice):
        return choice
    smaller = [u for u in CURRENCY_UNITS if u in units and CURRENCY_UNITS.index(u) < CURRENCY_UNITS.index(choice.currency_unit)]
    for unit in reversed(smaller):  # the largest unit that shows every value
        if any(v.result == "currency" for v in hidden(choice)):
            candidate = dataclasses.replace(choice, currency_unit=unit)
            if not any(v.result == "currency" for v in hidden(candidate)):
                choice = candidate
                break
    for decimals in range(choice.decimals, 7):
        candidate = dataclasses.replace(choice, decimals=decimals)
        if not hidden(candidate):
            return candidate
    raise Drop("rounds_to_zero", f"{len(hidden(choice))} value(s) round to 0 at every allowed unit and up to 6 decimals")


def split_note(language: str, restatement: tuple[list[str], str] | None) -> str:
    """One sentence saying the shown per-share amounts and share counts are restated for stock splits (issue 11), from
    `FactStore.split_restatement` ((factors, basis filing date)); "" when nothing shown is restated."""
    if not restatement:
        return ""
    factors, date = restatement
    pool = templates(language)
    splits = (pool["split_one"].format(k=factors[0]) if len(factors) == 1 else
              pool["split_many"].format(ks=pool["split_and"].join(f"{k}-for-1" if language == "en" else f"1拆{k}" for k in factors)))
    return pool["split_note"].format(splits=splits, date=date)


def user_message(choice: Choice, *, company: str, company_name: str, blocks: list[str], index_names: list[str],
                 periods: list[str], kinds: list[str], currency: str, hints: list[str] | None,
                 conventions: list[str] | None = None, scope_note: bool = False, split_text: str = "") -> str:
    """The whole user turn: intro, numbered documents, question, optional formula block (or, without it, the
    conventions the answer uses), constraints, answer format. `scope_note`: parent-company statements are shown,
    so the question says the answer is for the consolidated group (issue 11)."""
    return user_messages(choice, company=company, company_name=company_name, blocks=blocks, index_names=index_names,
                         periods=periods, kinds=kinds, currency=currency, variants=[(hints, conventions)],
                         scope_note=scope_note, split_text=split_text)[1][0]


def user_messages(choice: Choice, *, company: str, company_name: str, blocks: list[str], index_names: list[str],
                  periods: list[str], kinds: list[str], currency: str, variants: list[tuple[list[str] | None, list[str] | None]],
                  scope_note: bool = False, split_text: str = "", at_end: bool = False) -> tuple[str, list[str]]:
    """The head every variant starts with (intro, documents, question: one str) and `user_message` for each (hints,
    conventions) of `variants`: an item's hint variants differ only in the formula block (or the conventions said
    instead), so the documents, question and constraints are written once, and the head's JSON is escaped once for
    all of them (`contracts.line_pieces`, `shown`)."""
    pool = templates(choice.language)
    sep = pool["list_sep"]
    head = [choice.intro.format(company_name=company_name, company=company), ""]
    for n, block in enumerate(blocks, 1):
        head += [pool["block_header"].format(n=n), block, ""]
    head += [pool["blocks_end"], ""]
    period_text = sep.join(describe_period(p, choice.language, at_end=at_end) for p in periods)
    head.append(choice.question.format(company_name=company_name, company=company, index=sep.join(index_names),
                                       indices=sep.join(index_names), period=period_text, periods=period_text))
    if scope_note:
        head.append(pool["scope_note"])
    if split_text:  # the shown per-share amounts / share counts are on the latest split basis, not as first filed
        head.append(split_text)
    tail = [constraint_text(choice, kinds, currency, index_names), pool["answer"][choice.answer_format]]
    text = "\n".join(head)
    return text, ["\n".join([text, *_formula_block(pool, index_names, hints, conventions), *tail]) for hints, conventions in variants]


def _conventions_block(pool: dict, index_names: list[str], conventions: list) -> list[str]:
    """No-hint prompts: the conventions every asked index shares, stated once, then those of one index only under its
    name. Each element of `conventions` is one index's sentences (a list; a str is one sentence). A table once said
    "This index uses average balances" beside indices that use ending balances, and repeated the sentences the indices
    shared (seed-31415 and seed-27182 helper audits)."""
    lists = [[c] if isinstance(c, str) else list(c) for c in conventions]
    lists = [[x for x in dict.fromkeys(sentences) if x] for sentences in lists]
    if not any(lists):
        return []
    sep = pool.get("sentence_sep", " ")
    common = [x for x in lists[0] if all(x in other for other in lists)]
    own = [(name, [x for x in sentences if x not in common]) for name, sentences in zip(index_names, lists)]
    lines = [pool["conventions"].format(conventions=sep.join(common))] if common else []
    if any(sentences for _, sentences in own):
        lines.append(pool["conventions_by_index"])
        lines += [pool["hint_item"].format(index=name, hint=sep.join(sentences)) for name, sentences in own if sentences]
    return lines


def _formula_block(pool: dict, index_names: list[str], hints: list[str] | None, conventions: list | None) -> list[str]:
    """The hint lines (the formulas), or without hints the conventions the answer uses (none when all are standard).
    With hints, `conventions` are sentences every hinted index shares beyond its hint (how its target periods are
    formed: `conventions.period_notes`), stated once after the formulas."""
    if hints is None:
        return _conventions_block(pool, index_names, conventions or [])
    shared = [pool["conventions"].format(conventions=pool.get("sentence_sep", " ").join(conventions))] if conventions else []
    if len(hints) == 1:
        return [pool["hint_single"].format(hint=hints[0]), *shared]
    items = "\n".join(pool["hint_item"].format(index=n, hint=h) for n, h in zip(index_names, hints))
    return [pool["hint_table"].format(hints=items), *shared]
