"""Items: pick targets (Single-Index / Table-Index), build the minimal context, add traps, render each
shown report in one of six representations, write the instruction, answer and worked solution.

    python -c "from ledgerlm.synth.finindices.contexts import Builder; from ledgerlm.synth.finindices.config import SynthConfig; b = Builder.from_config(SynthConfig()); print(b.slot(0, __import__('ledgerlm.synth.finindices.pipeline', fromlist=['Stats']).Stats())[0]['messages'][-1]['content'][-600:])"

Every draw for slot i comes from `random.Random(f"{seed}:{i}")`, so an item never depends on other
items, on sharding or on the number of processes. Traps (recorded as {kind, detail}):
- distractor_period: adjacent reports the computation does not need;
- parent_distractor: parent-company statements of a shown report (FSDS Schedule I), beside the consolidated ones;
- deficiency: a needed report removed; kept only when recomputing on `store.restrict(shown reports)`
  raises NotDerivable, and then the answer is exactly `Insufficient information`.
"""
from __future__ import annotations

import bisect
import itertools
import math
import random
import re
import time
from dataclasses import dataclass, field

from ledgerlm.errors import InputError, LedgerError, NotDerivable
from ledgerlm.synth.finindices import instructions, storecache
from ledgerlm.synth.finindices.answers import INSUFFICIENT, answer_text, table_text
from ledgerlm.synth.finindices.companies import CompanyGroups, PerCompany, forget
from ledgerlm.synth.finindices.config import SynthConfig
from ledgerlm.synth.finindices.pipeline import Drop, Stats, run_steps, token_cap_step
from ledgerlm.synth.finindices.solutions import consulted, solution_text, use_registry
from ledgerlm.synth.finindices.split import MIN_COMPANIES, fiscal_year, row_split, split_rule
from ledgerlm.synth.finindices.tokens import Block, TokenCounter
from ledgerlm.synth.indices.compute import compute
from ledgerlm.synth.indices.concepts import concept_keys
from ledgerlm.synth.indices.conventions import period_notes
from ledgerlm.synth.indices.registry import load_registry, may_derive, period_kind
from ledgerlm.synth.statements.periods import ReportKey, parse_report
from ledgerlm.synth.statements.render import render_statement, statement_figures, statement_labels
from ledgerlm.synth.statements.store import FactStore, forget_frames, fresh_copy

STATEMENTS = ("balance", "income", "cashflow")
STATEMENT_SEP = "\n\n-----\n\n"  # between the statements of one shown report
SCALES = {"en": (1, 1_000, 1_000_000), "zh": (1, 10_000, 1_000_000)}  # statement units a report may be shown in
ALL_SCALES = sorted(set().union(*SCALES.values()))


class Moved(Exception):
    """Raised by `_draft` for a company-affine worker (affine.py): the slot's current attempt draws `company`,
    which another worker owns; `resume` (the attempt's number) lets the owner go on exactly where this worker
    stopped: it replays the earlier attempts' draws (`_draft`), which never depend on index values."""

    def __init__(self, company: str, resume: int):
        super().__init__(company)
        self.company, self.resume = company, resume


@dataclass
class Item:
    """One drawn question before it is written out (shared by its hint variants)."""

    paradigm: str
    axis: str
    company: str
    indices: list  # registry Index objects
    periods: list[str]
    values: list[list]  # IndexValue per index × period
    blocks: list[tuple[ReportKey, str]] = field(default_factory=list)  # (report, scope) in shown order
    traps: list[dict] = field(default_factory=list)
    missing: ReportKey | None = None  # the removed report of a deficiency item
    deficiency_error: str = ""


class _Elsewhere(Exception):
    """draw_target reached the values of a company another affine worker owns (caught in `_draft`)."""

    def __init__(self, company: str):
        super().__init__(company)
        self.company = company


class _Replayed(Exception):
    """draw_target replayed the draws of an attempt that failed in another worker (`_draft`), up to its values."""


def select_indices(registry, families: list[str]) -> list[str]:
    """Registry ids of the given families (all YAML entries when empty); "concept" adds every canonical concept key."""
    if not families:
        return sorted(registry)
    known = sorted({ix.family for ix in registry.values()} | {"concept"})
    unknown = [f for f in families if f not in known]
    if unknown:
        raise InputError(f"unknown index famil{'y' if len(unknown) == 1 else 'ies'} {unknown}; known: {known}", field="index_families")
    ids = sorted(i for i, ix in registry.items() if ix.family in families)
    return ids + (sorted(concept_keys()) if "concept" in families else [])


def _weights(weights: dict) -> tuple[list, list]:
    """The keys with weight > 0 in sorted order, and their weights: what a weighted draw picks from."""
    keys = sorted(k for k, w in weights.items() if w > 0)
    return keys, [weights[k] for k in keys]


def _cumulative(keys: list, weights: list) -> tuple[list, float] | None:
    """(cumulative weights, their total as a float) as `random.choices` computes them for `weights`, or None where
    `choices` raises (no keys, a total that is not positive and finite): `Builder._opening` then calls it."""
    if not keys or len(keys) != len(weights):
        return None
    cum_weights = list(itertools.accumulate(weights))
    total = cum_weights[-1] + 0.0
    return (cum_weights, total) if total > 0.0 and math.isfinite(total) else None


def _choice(rng: random.Random, keys: list, weights: list, cumulative: tuple[list, float] | None):
    """`rng.choices(keys, weights=weights)[0]` from the `_cumulative` of the weights; where that is None (nothing to
    draw from, weights `choices` refuses) `choices` itself is called and raises its own error."""
    if cumulative is None:
        return rng.choices(keys, weights=weights)[0]
    cum_weights, total = cumulative
    return keys[bisect.bisect(cum_weights, rng.random() * total, 0, len(keys) - 1)]


def _runs(labels_by_key: list[tuple[tuple, str]], step) -> list[list[str]]:
    """Split (sort key, label) pairs into runs where each key follows the previous one by `step`."""
    runs, prev = [], None
    for key, label in sorted(labels_by_key):
        if prev is not None and step(prev) == key:
            runs[-1].append(label)
        else:
            runs.append([label])
        prev = key
    return runs


def no_reports_message(stores, cfg: SynthConfig) -> str:
    """Why no company can be drawn from: no mapped facts at all, or facts without one annual period (a lone 10-Q)."""
    where = ", ".join(cfg.sources) if cfg.sources else "the embedded SEC sample"
    found = sorted(stores)
    if cfg.companies:
        return f"no company of --companies {', '.join(cfg.companies)} has consolidated reports in the given sources ({where})"
    if not found:
        return f"no company has consolidated reports in the given sources ({where}): they hold no facts of a mapped concept"
    shown = ", ".join(found[:10]) + (f" and {len(found) - 10} more" if len(found) > 10 else "")
    who = f"company {shown} has" if len(found) == 1 else f"companies {shown} have"
    return (f"no company has consolidated reports in the given sources ({where}): {who} facts but no annual "
            "(about 12-month) period to place fiscal years and reports on; add an annual report (10-K, FY facts)")


class Builder:
    """Holds the store, the registry and per-company caches; `slot(i, stats)` makes item i's samples."""

    def __init__(self, stores: dict, registry, cfg: SynthConfig, counter: TokenCounter):
        # one FactStore per company: lookups scan only that company's facts (much faster than one big store)
        self.stores, self.registry, self.cfg, self.counter = stores, registry, cfg, counter
        use_registry(registry)  # the worked solutions' Chinese names
        self.companies = [self._resolve(c) for c in cfg.companies] if cfg.companies else sorted(stores)
        has = getattr(stores, "has_reports", None)  # a lazy store cache knows without loading every store
        self.companies = [c for c in self.companies if (has(c) if has else stores[c].reports(c))]
        if not self.companies:
            raise InputError(no_reports_message(stores, cfg), field="sources")
        few = len(self.companies) < MIN_COMPANIES and not (cfg.test_companies or cfg.dev_companies)
        years = {fiscal_year(r.label) for c in self.companies for r in stores[c].reports(c)} if few else ()
        self.split_rule = split_rule(self.companies, years, seed=cfg.seed, dev_fraction=cfg.dev_fraction,
                                     test_fraction=cfg.test_fraction, test_companies=cfg.test_companies,
                                     dev_companies=cfg.dev_companies)  # split.py: company-level, or by fiscal year
        ids = cfg.indices or select_indices(registry, cfg.index_families)  # YAML entries (concept keys only when asked for)
        self.by_axis: dict[str, list[str]] = {}
        for index_id in ids:
            self.by_axis.setdefault(registry[index_id].axis, []).append(index_id)
        # per-company tables are computed when a company is first drawn (stores load lazily, see companies.py)
        self.reports = PerCompany(lambda c: [parse_report(r) for r in self._summary[c]["reports"]])
        self._report_pos = PerCompany(lambda c: {r: i for i, r in enumerate(self.reports[c])})  # add_context's neighbours
        self.parent_reports = PerCompany(lambda c: set(self.stores[c].reports(c, "parent")) if "parent" in self.stores[c].scopes(c) else set())
        self._eligible: dict = {}
        self._values: dict = {}
        self._statements: dict = {}
        self._rendered: dict = {}
        self._blocks: dict = {}  # (company, report, scope, statements, fmt, language, scale) -> Block (text, statement renderings)
        self._splits: dict = {}  # (company, "splits") and (company, report, scope, statements) -> split factors
        self._fits: dict = {}  # (company, axis, period kinds) -> eligible indices defined for those periods
        self._kinds: dict = {}  # periods -> {kind: one period of that kind}
        self._accepted: dict = {}  # (axis, period kinds) -> the indices of `axis` defined for those kinds (any company)
        self._periods = PerCompany(self._period_candidates)
        self._summary = PerCompany(self._summary_of)
        self._series = PerCompany(self._series_candidates)
        self.groups = CompanyGroups(self.companies, seed=cfg.seed, n_slots=-(-cfg.num // len(cfg.hint_variants)),
                                    size=cfg.company_group)
        if hasattr(stores, "on_evict"):  # drop a company's memoised values and renderings with its store
            stores.on_evict = lambda gone: forget([self._values, self._statements, self._rendered, self._blocks, self._splits, self._fits], gone)
        self.cap_step = token_cap_step(counter, cfg.max_tokens)
        self._openers = [_weights(cfg.paradigms), _weights(cfg.axes)]  # the first two draws of every slot (`_opening`)
        self.owns = None  # affine workers: company -> bool; an attempt on a company this worker does not own moves the slot

    @classmethod
    def from_config(cls, cfg: SynthConfig) -> "Builder":
        stores = storecache.company_stores(cfg.sources or None, resident=max(storecache.DEFAULT_RESIDENT, 2 * cfg.company_group),
                                            workers=cfg.num_proc)  # a cache built on first use: by --num-proc processes
        return cls(stores, load_registry(), cfg, TokenCounter(cfg.tokenizer))

    @property
    def p_traps(self) -> tuple[float, float, float]:
        """(p_deficiency, p_distractor, p_parent), all 0 when the config turns traps off."""
        cfg = self.cfg
        return (cfg.p_deficiency, cfg.p_distractor, cfg.p_parent) if cfg.traps else (0.0, 0.0, 0.0)

    def _summary_of(self, company: str) -> dict:
        """A company's consolidated reports, concepts and accounting standard: from the store cache's index where
        it has them (no store is loaded: a worker's draws reach other workers' companies), else from the store."""
        quick = getattr(self.stores, "summary", None)
        return (quick(company) if quick is not None else None) or storecache.summary(self.stores[company], company)

    def _resolve(self, query: str) -> str:
        quick = getattr(self.stores, "resolve", None)  # lazy stores: code or name from the index, nothing loaded
        if quick is not None and quick(query):
            return quick(query)
        for store in self.stores.values():
            try:
                return store.resolve_company(query)
            except InputError:
                continue
        raise InputError(f"unknown company {query!r}; known: {', '.join(sorted(self.stores))}", field="companies")

    def store_for(self, company: str):
        return self.stores[company]

    @property
    def store(self):
        """One store over every company (built on first use; generation itself uses the per-company stores)."""
        if not hasattr(self, "_all"):
            import pandas as pd

            self._all = FactStore(pd.concat([s.facts for s in self.stores.values()], ignore_index=True), quarter_columns=False)
        return self._all

    # -- candidates ------------------------------------------------------------------------
    def _period_candidates(self, company: str) -> list[str]:
        reps = set(self.reports[company])
        out = set()
        for r in reps:
            out.add(r.period.label)
            if r.quarters > 1 and r.previous() in reps:
                out.add(f"FY{r.fiscal_year}Q{r.quarters}")
            if r.quarters < 4 and ReportKey(r.fiscal_year - 1, 4) in reps and ReportKey(r.fiscal_year - 1, r.quarters) in reps:
                out.add(f"FY{r.fiscal_year}Q{r.quarters}TTM")
        return sorted(out)

    def _series_candidates(self, company: str) -> list[list[str]]:
        """Runs of consecutive periods of one kind: fiscal years, reports as filed, standalone quarters."""
        reps = self.reports[company]
        annual = _runs([((r.fiscal_year,), r.label) for r in reps if r.is_annual], lambda k: (k[0] + 1,))
        filed = _runs([((r.fiscal_year, r.quarters), r.period.label) for r in reps],
                      lambda k: (k[0], k[1] + 1) if k[1] < 4 else (k[0] + 1, 1))
        have = set(reps)
        quarters = _runs([((r.fiscal_year, r.quarters), f"FY{r.fiscal_year}Q{r.quarters}") for r in reps
                          if r.quarters == 1 or r.previous() in have], lambda k: (k[0], k[1] + 1) if k[1] < 4 else (k[0] + 1, 1))
        lo = self.cfg.table_periods[0]
        return [run for run in annual + filed + quarters if len(run) >= lo]

    def _concepts_of(self, index_id: str, seen=None) -> set[str]:
        needs = self.registry[index_id].needs
        out = set(needs.concepts)
        for ref in needs.indices:
            out |= self._concepts_of(ref)
        return out

    def eligible(self, company: str, axis: str) -> list[str]:
        """Indices of `axis` whose concepts this company reports (cheap filter before computing)."""
        key = (company, axis)
        if key not in self._eligible:
            have = set(self._summary[company]["concepts"])
            standard = self._summary[company]["standard"]  # issue 11: never ask CAS-only indices of US filers
            self._eligible[key] = [i for i in self.by_axis.get(axis, []) if may_derive(self.registry[i], self.registry, have)
                                   and (standard is None or standard in self.registry[i].applies_to)]
        return self._eligible[key]

    def fitting(self, company: str, axis: str, periods: tuple[str, ...]) -> list[str]:
        """The eligible indices of `axis` defined for every one of `periods` (in eligible order), memoised."""
        kinds = self._kinds.get(periods)
        if kinds is None:  # `Index.accepts` depends only on the period's kind: one period of each kind decides
            kinds = self._kinds[periods] = {period_kind(p): p for p in periods}
        key = (company, axis, tuple(sorted(kinds)))
        hit = self._fits.get(key)
        if hit is None:
            accepted = self._accepted.get(key[1:])  # which indices accept the kinds does not depend on the company
            if accepted is None:
                accepted = self._accepted[key[1:]] = frozenset(i for i in self.by_axis.get(axis, ())
                                                               if all(self.registry[i].accepts(p) for p in kinds.values()))
            hit = self._fits[key] = [i for i in self.eligible(company, axis) if i in accepted]
        return hit

    def value(self, company: str, index_id: str, period: str):
        """compute() with a cache; raises NotDerivable / IndexUndefined (cached too)."""
        key = (company, index_id, period)
        hit = self._values.get(key)
        if hit is None:
            try:
                hit = compute(self.stores[company], company, index_id, period, registry=self.registry)
            except LedgerError as err:
                hit = forget_frames(err)
            if len(self._values) > 200_000:
                self._values.clear()
            self._values[key] = hit
        if isinstance(hit, Exception):
            raise fresh_copy(hit)  # a cached error: raising the cached object would keep the frames of its latest raise
        return hit

    # -- one slot ------------------------------------------------------------------------------
    def slot(self, slot: int, stats: Stats) -> list[dict]:
        """The kept rows of item slot `slot` (drops counted into `stats`)."""
        return self.many(range(slot, slot + 1), stats)

    __call__ = slot  # a Builder is the slot function of `dataset.generate`

    def many(self, slots, stats: Stats) -> list[dict]:
        """The kept rows of several slots (any iterable of slot indices), in the given order (`shards.run_shard`
        calls this once per shard): `part` in one process, where nothing moves."""
        return [row for _, row in self.part(slots, stats, {})[0]]

    def part(self, items, stats: Stats, costs: dict) -> tuple[list[tuple[int, dict]], list[tuple[str, int, int]]]:
        """The kept rows of several slots, or a company-affine worker's share of a shard (affine.py): `items` are
        slots or (slot, resume, company) of slots moved here. Returns the kept (slot, row) pairs and the slots that
        moved on, as (company, slot, resume); adds each drafted slot's CPU seconds to `costs[company]`. Each row is
        the same as `slot` makes; only the token cap runs once over all of them after they are written:
        interleaved with the Python work of writing, the tokenizer ran ~20 % slower (its tables fall out of the
        CPU caches)."""
        drafted, moved = [], []
        for item in items:
            slot, resume, forced = item if isinstance(item, tuple) else (item, None, None)
            t0 = time.process_time()
            try:
                rows = self._draft(slot, stats, resume, forced)
            except Moved as away:
                moved.append((away.company, slot, away.resume))
                continue
            if rows:
                costs[rows[0]["company"]] = costs.get(rows[0]["company"], 0.0) + time.process_time() - t0
            drafted += [(slot, row) for row in rows]
        t0 = time.process_time()
        kept = run_steps([("token_cap", self.cap_step)], [row for _, row in drafted], stats)
        share = (time.process_time() - t0) / max(1, len(drafted))  # the cap's time, shared out by row
        for _, row in drafted:
            costs[row["company"]] = costs.get(row["company"], 0.0) + share
        slot_of = {id(row): slot for slot, row in drafted}  # the cap step keeps (mutates) the row objects it passes
        return [(slot_of[id(row)], row) for row in kept], moved

    def _opening(self, slot: int) -> tuple[random.Random, str, str]:
        """Slot `slot`'s generator and its first two draws, paradigm and axis (drawn once per slot: the weights hold).
        Each is `rng.choices(keys, weights=w)[0]` as `random.choices` computes it (one `random()` bisected into the
        cumulative weights, `_cumulative`), with the cumulative weights summed once per run instead of on every call:
        the opening runs for every slot in a worker and again in the parent of company-affine workers (`affinity`)."""
        rng = random.Random(f"{self.cfg.seed}:{slot}")
        cum = self.__dict__.get("_cum_openers")
        if cum is None:
            cum = self._cum_openers = [_cumulative(keys, weights) for keys, weights in self._openers]
        (paradigms, axes), (p_cum, a_cum) = self._openers, cum
        return rng, _choice(rng, *paradigms, p_cum), _choice(rng, *axes, a_cum)

    def affinity(self, slot: int) -> str:
        """The company whose values slot `slot` likely computes: a scheduling hint only. `--num-proc` gives each
        worker the slots of its own companies so a company's memoised values, renderings and token counts are
        computed by one worker, not by every worker; a slot that retries with another company, or a hint that ever
        drifted from `_draft`, costs time (the slot moves), never different output (each slot has its own generator).
        `draw_target`'s attempts are replayed as far as this per-company fact decides them: a table item on a
        company without a period series drops after its first draw (most failed attempts; in the first 1,500 slots of
        the default config the first drawn company was the company of the values for 52 % of slots, this for 67 %)."""
        rng, paradigm, _ = self._opening(slot)
        pool = self.groups.pool(slot) or self.companies
        for _ in range(self.cfg.max_attempts):
            company = rng.choice(pool)
            if paradigm != "table" or self._series[company]:
                return company
        return company

    def _draft(self, slot: int, stats: Stats, resume: int | None = None, forced: str | None = None) -> list[dict]:
        """Slot `slot`'s rows before the token cap. `resume` (from `Moved`) goes on from that attempt, whose values
        are computed here whoever owns company `forced`: the attempts before it failed in other workers and are
        replayed up to their values (an attempt's draws never depend on its values), so the generator is where it
        was there. (Replaying is cheaper than keeping the generator's state: a 625-word copy per attempt of every
        slot, pickled twice per move.)"""
        rng, paradigm, axis = self._opening(slot)
        variants = self.cfg.hint_variants
        first = resume or 0
        for attempt in range(self.cfg.max_attempts):
            try:
                item = self.draw_target(rng, paradigm, axis, self.groups.pool(slot), replay=attempt < first,
                                        forced=forced if attempt == first else None)
                break
            except _Elsewhere as other:
                raise Moved(other.company, attempt) from None
            except (Drop, LedgerError, _Replayed):
                continue
        else:
            stats.drop("no_derivable_target", len(variants))
            return []
        self.add_context(item, rng)
        if row_split(self.split_rule, item.company, [*item.periods, *(r.label for r, _ in item.blocks)]) is None:
            stats.drop("crosses_split_boundary", len(variants))  # period-based split only (split.py)
            return []
        try:
            rows = self.write(item, rng, slot)
            if len(rows) < len(variants):  # no-hint variant withheld: the index's convention is not standard
                stats.drop("no_hint_nonstandard_convention", len(variants) - len(rows))
            return rows
        except Drop as why:  # e.g. an answer that rounds to 0 at every unit / precision the config allows
            stats.drop(why.reason, len(variants))
            return []

    def draw_target(self, rng: random.Random, paradigm: str, axis: str, companies: list[str] | None = None, *,
                    replay: bool = False, forced: str | None = None) -> Item:
        """One attempt: company, periods and indices drawn from `rng`, then their values (Drop / LedgerError when
        the attempt fails). `replay`: only the draws (raises _Replayed before the values). An affine worker raises
        _Elsewhere before the values of a company it does not own, unless it is `forced`."""
        cfg = self.cfg
        company = rng.choice(companies or self.companies)
        pool = self.eligible(company, axis)
        if not pool:
            raise Drop("no_index_for_company")
        if paradigm == "single":
            periods = [rng.choice(self._periods[company])]
            fits = self.fitting(company, axis, tuple(periods))  # issue 11: only period kinds the index declares
            if not fits:
                raise Drop("no_index_for_period")
            ids = [rng.choice(fits)]
        else:
            series = self._series[company]
            if not series:
                raise Drop("no_period_series")
            run = rng.choice(series)
            lo, hi = cfg.table_periods
            n_periods = rng.randint(lo, min(hi, len(run)))
            start = rng.randrange(len(run) - n_periods + 1)
            periods = run[start:start + n_periods]
            pool = self.fitting(company, axis, tuple(periods))
            if not pool:
                raise Drop("no_index_for_period")
            k_hi = min(cfg.table_indices[1], cfg.max_table_values // n_periods, len(pool))
            k = rng.randint(min(cfg.table_indices[0], k_hi), k_hi)
            if k * n_periods < 2:
                raise Drop("table_too_small")
            ids = sorted(rng.sample(pool, k), key=pool.index)
        if replay:
            raise _Replayed()
        if self.owns is not None and company != forced and not self.owns(company):
            raise _Elsewhere(company)  # computing the values is the costly part: left to the company's worker
        if len(ids) > 1 and len(periods) > 1:
            # a table fails when any of its values does, most often at its first period (no earlier report to compare
            # with): that column first, so a failing attempt computes fewer values it never uses (the bulk stand-in's
            # failed tables computed 5,076 of its 47,352 values); any order gives the same values and the same outcome
            for i in ids:
                self.value(company, i, periods[0])
        values = [[self.value(company, i, p) for p in periods] for i in ids]
        if not any(consulted(v)[0] for row in values for v in row):
            raise Drop("reads_no_report")
        return Item(paradigm, axis, company, [self.registry[i] for i in ids], periods, values)

    def add_context(self, item: Item, rng: random.Random) -> None:
        """Minimal reports + traps; sets item.blocks (shuffled) and item.traps."""
        cfg, company = self.cfg, item.company
        needed = sorted({r for row in item.values for v in row for r in consulted(v)[0]})
        shown = set(needed)
        if item.paradigm == "single" and rng.random() < self.p_traps[0]:
            item.missing = rng.choice(needed)
            shown.discard(item.missing)
        order = self.reports[company]
        if rng.random() < self.p_traps[1]:
            pos = self._report_pos[company]
            near = {order[j] for r in needed for j in range(pos[r] - 2, pos[r] + 3) if 0 <= j < len(order)}
            pool = sorted(near - set(needed) - {item.missing})
            if pool:
                picks = sorted(rng.sample(pool, rng.randint(1, min(cfg.max_distractors, len(pool)))))
                shown |= set(picks)
                needed_text = ", ".join(r.label for r in needed)
                item.traps.append({"kind": "distractor_period", "reports": picks, "needed": needed_text})
        if item.missing is not None and not shown:  # never an empty context: show an adjacent report instead
            pos = self._report_pos[company][item.missing]
            near = [order[j] for j in (pos - 1, pos + 1) if 0 <= j < len(order)]
            if near:
                pick = rng.choice(near)
                shown.add(pick)
                item.traps.append({"kind": "distractor_period", "reports": [pick], "needed": item.missing.label})
            else:
                shown.add(item.missing)
                item.missing = None
        if item.missing is not None:
            if self._still_derivable(item, shown):
                shown.add(item.missing)  # removal does not block the answer: no deficiency trap
                item.missing = None
            else:
                item.traps.append({"kind": "deficiency", "detail": f"{item.missing.label} report removed: {item.deficiency_error}"})
        blocks = [(r, "consolidated") for r in sorted(shown)]
        parents = sorted(self.parent_reports[company] & shown)
        if parents and rng.random() < self.p_traps[2]:
            picks = sorted(rng.sample(parents, rng.randint(1, len(parents))))
            blocks += [(r, "parent") for r in picks]
            item.traps.append({"kind": "parent_distractor", "reports": picks})
        rng.shuffle(blocks)
        item.blocks = blocks

    def _still_derivable(self, item: Item, shown: set) -> bool:
        """Recompute on a store that sees only the shown reports: derivable means no deficiency."""
        view = self.stores[item.company].restrict({item.company: shown})
        try:
            compute(view, item.company, item.indices[0].id, item.periods[0], registry=self.registry)
        except NotDerivable as err:
            item.deficiency_error = str(err)
            return False
        except LedgerError:
            return True
        return True

    # -- writing -----------------------------------------------------------------------------------
    def statement(self, company: str, report: ReportKey, statement: str, scope: str):
        key = (company, report, statement, scope)
        hit = self._statements.get(key, False)  # None: no such statement
        if hit is False:
            try:
                hit = self.stores[company].report_statement(company, report, statement, scope)
            except NotDerivable:
                hit = None
            self._statements[key] = hit
        return hit

    def exact_scales(self, company: str, report: ReportKey, scope: str, statements: list[str], language: str) -> list[int]:
        """Scales of `language` at which every amount of the block is a whole number (so the shown figures are exact).
        Which scales divide the amounts does not depend on the language: the block's amounts are scanned once, for
        the scales of every language, and each language's list is kept (in its SCALES order)."""
        key = (company, report, scope, tuple(statements), "exact_scales")
        hit = self._rendered.get(key)
        if hit is None:  # the scales dividing every amount of the block: those dividing every amount of each statement
            exact = set(ALL_SCALES)
            for name in statements:
                exact &= self._statement_scales(company, report, name, scope)
            hit = self._rendered[key] = {lang: [k for k in scales if k in exact] for lang, scales in SCALES.items()}
        return hit[language]

    def _statement_scales(self, company: str, report: ReportKey, name: str, scope: str) -> frozenset:
        """The scales (of any language) dividing every amount of one statement (all of them when it is not shown),
        memoised: a statement is part of blocks of several statement sets."""
        key = (company, report, name, scope, "exact_scales")
        hit = self._rendered.get(key)
        if hit is None:
            stmt = self.statement(company, report, name, scope)
            amounts = [float(it["value"]) for it in (stmt["items"] if stmt else ()) if it.get("value") is not None
                       and "/" not in it.get("unit", "/") and it.get("unit", "").lower() != "shares"]
            if all(map(float.is_integer, amounts)):  # k divides every whole amount iff it divides their gcd (0: all)
                divisor = math.gcd(*map(int, amounts))
                hit = self._rendered[key] = frozenset(k for k in ALL_SCALES if divisor % k == 0)
            else:
                hit = self._rendered[key] = frozenset(k for k in ALL_SCALES if all(v % k == 0 for v in amounts))
        return hit

    def render_block(self, company: str, report: ReportKey, scope: str, statements: list[str], fmt: str, language: str,
                     scale: int = 1) -> str:
        """The shown report: its statements' renderings joined by STATEMENT_SEP."""
        return self.rendered_block(company, report, scope, statements, fmt, language, scale).text

    def rendered_block(self, company: str, report: ReportKey, scope: str, statements: list[str], fmt: str, language: str,
                       scale: int = 1) -> Block:
        """`render_block` with the statement renderings it joins (for the token count: a rendering is counted once
        per run, whichever blocks show it), memoised: the same str objects each time, whose hashes are computed
        once (token memo keys)."""
        block_key = (company, report, scope, tuple(statements), fmt, language, scale)
        hit = self._blocks.get(block_key)
        if hit is not None:
            return hit
        parts, rendered = [], self._rendered
        shown = (fmt, language) if fmt == "json" else (fmt, language, scale)  # JSON: unscaled, labels in the prompt's language
        for name in statements:
            key = (company, report, name, scope) + shown
            text = rendered.get(key, False)  # None: no such statement
            if text is False:
                text = rendered[key] = self._render(company, report, name, scope, fmt, language, scale)
            if text is not None:
                parts.append(text)
        block = self._blocks[block_key] = Block(STATEMENT_SEP.join(parts), tuple(parts))
        return block

    def _render(self, company: str, report: ReportKey, name: str, scope: str, fmt: str, language: str, scale: int) -> str | None:
        """One statement's rendering (None when the report has no such statement), from the labels and figures the
        table formats share: labels at every scale, figures in both languages (the tuples format writes the values)."""
        stmt = self.statement(company, report, name, scope)
        if stmt is None:
            return None
        labels = figures = None
        if fmt != "json":
            labels = self._column(company, report, name, scope, language, statement_labels, stmt)
            if fmt != "tuples":
                figures = self._column(company, report, name, scope, scale, statement_figures, stmt)
        return render_statement(stmt, fmt, scale=scale, language=language, labels=labels, figures=figures)

    def line_labels(self, company: str, report: ReportKey, language: str) -> dict[str, str]:
        """concept -> the label the report's consolidated statements show it under in `language` (the worked solution
        quotes a line as the prompt names it: seed-6262 prompt audit, 4,134 solution lines named "Total assets" where
        the prompt said "Assets"), memoised per report."""
        key = (company, report, "line_labels", language)
        hit = self._rendered.get(key)
        if hit is None:
            hit = {}
            for name in STATEMENTS:
                stmt = self.statement(company, report, name, "consolidated")
                if stmt is not None:
                    labels = self._column(company, report, name, "consolidated", language, statement_labels, stmt)
                    for line, label in zip(stmt["items"], labels):
                        hit.setdefault(line.get("concept", ""), label)
            self._rendered[key] = hit
        return hit

    def _column(self, company: str, report: ReportKey, name: str, scope: str, arg, column, stmt: dict) -> list[str]:
        """`column(stmt, arg)` (the labels of a language or the figures of a scale), memoised per statement."""
        key = (company, report, name, scope, column, arg)
        hit = self._rendered.get(key)
        if hit is None:
            hit = self._rendered[key] = column(stmt, arg)
        return hit

    def company_splits(self, company: str) -> list[tuple[str, str]]:
        """`store.splits(company)`, memoised (it scans every cell's note)."""
        key = (company, "splits")
        if key not in self._splits:
            self._splits[key] = self.stores[company].splits(company)
        return self._splits[key]

    def restated_splits(self, company: str, report: ReportKey, scope: str, statements: list[str]) -> tuple[str, ...]:
        """Split factors that restate a per-share value or share count `report` shows in `statements`, memoised per
        block. `store.split_restatement` is a union over the given reports, so a prompt's factors are the union of
        its blocks' (the same set as one call over all blocks of a scope)."""
        key = (company, report, scope, tuple(statements))
        hit = self._splits.get(key)
        if hit is None:
            if not self.company_splits(company):
                hit = ()
            else:
                found = self.stores[company].split_restatement(company, [report], scope, statements)
                hit = tuple(found[0]) if found else ()
            self._splits[key] = hit
        return hit

    @staticmethod
    def shown_traps(item: Item, shown_blocks: list) -> list[dict]:
        """Traps as recorded in the row: only the distractor / parent reports that were actually shown."""
        out = []
        for trap in item.traps:
            if trap["kind"] == "deficiency":
                out.append(trap)
                continue
            scope = "parent" if trap["kind"] == "parent_distractor" else "consolidated"
            picks = [r.label for r in trap["reports"] if (r, scope) in shown_blocks]
            if not picks:
                continue
            if scope == "parent":
                out.append({"kind": "parent_distractor", "detail": f"parent-company statements of {', '.join(picks)} shown beside the consolidated ones"})
            else:
                out.append({"kind": "distractor_period", "detail": f"{', '.join(picks)} shown but not needed (needed: {trap['needed']})"})
        return out

    def write(self, item: Item, rng: random.Random, slot: int) -> list[dict]:
        """The contract-4 rows of an item, one per hint variant (same draws, only the formula block differs)."""
        cfg, company = self.cfg, item.company
        language = rng.choice(cfg.languages)
        choice = instructions.choose(rng, language=language, paradigm=item.paradigm, units=cfg.units,
                                     decimals=cfg.decimals, table_formats=cfg.table_answer_formats)
        if item.missing is None:  # issue 11: never an answer that rounds to 0 at the asked unit / decimals
            choice = instructions.showing(choice, [v for row in item.values for v in row], cfg.units)
        needed_statements = {st for row in item.values for v in row for st in consulted(v)[1]}
        if item.missing is None and not needed_statements <= set(STATEMENTS):  # an equity-statement line (shares issued):
            # no block shows it, so the prompt could not hold the figure (worked-solution audit: a lookup prompt with no
            # documents answered 13,898,900,000 shares issued)
            raise Drop("needs_unshown_statement", f"{sorted(needed_statements - set(STATEMENTS))}")
        # a tuple: the memo keys of the per-block calls below take tuple(statements), the same object for a tuple
        statements = tuple(STATEMENTS) if rng.random() < cfg.p_full_report else tuple(s for s in STATEMENTS if s in needed_statements)
        shown_blocks, texts, counted, formats, scales = [], [], [], [], {}
        for report, scope in item.blocks:
            fmt = rng.choice(cfg.formats)
            scale = rng.choice(self.exact_scales(company, report, scope, statements, language))
            block = self.rendered_block(company, report, scope, statements, fmt, language, scale)
            if block.text:
                shown_blocks.append((report, scope))
                texts.append(block.text)
                counted.append(block if len(block.parts) > 1 else block.text)
                formats.append(fmt)
                if scope == "consolidated":  # the unit the solution quotes the figures in (JSON blocks are unscaled)
                    scales[report.label] = 1 if fmt == "json" else scale
        traps = self.shown_traps(item, shown_blocks)
        kinds = [ix.result for ix in item.indices]
        currency = next((v.unit for row in item.values for v in row if v.unit), "USD")
        names = [ix.name_en if language == "en" else ix.name_zh for ix in item.indices]
        if item.missing is not None:
            answer, cells = INSUFFICIENT, None
        else:
            cells = [[answer_text(v.value, v.result, choice.currency_unit, choice.decimals) for v in row] for row in item.values]
            answer = float(cells[0][0]) if item.paradigm == "single" else [[float(x) for x in row] for row in cells]
        final = answer if cells is None else cells[0][0] if item.paradigm == "single" else table_text(cells, names, item.periods, choice.answer_format)
        unit = choice.currency_unit if "currency" in kinds else "percent" if "percent" in kinds else "units"
        shown_labels = {r.label for r, _ in shown_blocks}
        provenance, seen = [], set()
        for row in item.values:
            for v in row:
                for f in v.facts:
                    key = (f.concept, f.report, f.source)
                    if key not in seen and f.report in shown_labels:
                        seen.add(key)
                        provenance.append({"concept": f.concept, "period": f.report, "value": f.value, "source": f.source})
        # issue 11: per-share amounts / share counts shown on the latest split basis are said to be restated (prompt and solution)
        # ... only where an index reads per-share amounts or share counts (seed-4242 Chinese reading: 323 of 331 zh rows
        # with the note asked no share-based index)
        share_based = any("shares" in ix.conventions or ix.result == "per_share" for ix in item.indices)
        restated = ({k for report, scope in shown_blocks for k in self.restated_splits(company, report, scope, statements)}
                    if share_based else set())
        splits = self.company_splits(company) if restated else []
        split_text = instructions.split_note(language, ([k for k, _ in splits if k in restated], splits[-1][1]) if restated else None)
        labels = ({r.label: self.line_labels(company, r, language) for r, scope in shown_blocks if scope == "consolidated"}
                  if language == "en" else None)  # Chinese prompts name every line by its Chinese concept name
        solution = solution_text(item, language=language, choice=choice, names=names, final=final, shown=shown_blocks,
                                 split_text=split_text, scales=scales, style=cfg.solution_style, labels=labels)
        base = {
            "split": row_split(self.split_rule, company, [*item.periods, *(r.label for r, _ in item.blocks)]), "paradigm": item.paradigm, "axis": item.axis, "company": company,
            "target_periods": item.periods, "indices": [ix.id for ix in item.indices],
            "context_periods": [r.label for r, _ in shown_blocks], "traps": traps, "context_formats": formats,
            "answer_format": choice.answer_format, "unit": unit, "decimals": choice.decimals,
        }
        rows = []
        parent_shown = any(scope == "parent" for _, scope in shown_blocks)
        # issue 11: a no-hint variant only for indices whose convention is standard; its prompt states the conventions
        variants = [v for v in cfg.hint_variants if v == "hint" or all(ix.no_hint for ix in item.indices)]
        hinted = [variant == "hint" for variant in variants]
        period_rules = period_notes(item.indices, item.periods, language)  # how a TTM / standalone quarter is formed
        period_shared = period_notes(item.indices, item.periods, language, shared=True)  # no-hint: each sentence once
        head, users = instructions.user_messages(  # the prompt's shared parts are written once for all variants
            choice, company=company, company_name=self.stores[company].company_name(company), blocks=texts, index_names=names,
            periods=item.periods, kinds=kinds, currency=currency, scope_note=parent_shown, split_text=split_text,
            at_end=all(ix.point_in_time for ix in item.indices),
            variants=[([ix.hint_text(language) for ix in item.indices], period_rules) if hint else
                      (None, [ix.convention_notes(language) + period_shared for ix in item.indices]) for hint in hinted])
        # shared by the variants' rows like `provenance` (rows are only read once written: counted, checked, dumped)
        unrounded = [[v.value for v in row] for row in item.values] if item.paradigm == "table" else item.values[0][0].value
        for hint, user in zip(hinted, users):
            row = {"id": f"fin-{cfg.seed}-{slot:07d}-{'h' if hint else 'n'}", **base, "hint": hint,
                   "messages": [{"role": "system", "content": choice.system}, {"role": "user", "content": user}],
                   "answer": answer, "solution": solution, "n_tokens": 0, "tokenizer": self.counter.name,
                   "provenance": provenance, "language": language, "value_unrounded": unrounded,
                   "_blocks": counted,  # popped by the token-cap step: each rendering is counted once per run
                   "_shown": (head,) if len(users) > 1 else ()}  # popped by the writer: the head escaped once per item
            rows.append(row)
        return rows
