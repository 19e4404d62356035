"""Company bookkeeping for many filers: lazily computed per-company tables and draw groups that keep a
bounded set of companies (and their FactStores) in use at a time.

    python -c "from ledgerlm.synth.finindices.companies import CompanyGroups; g = CompanyGroups([f'C{i}' for i in range(200)], seed=0, n_slots=1000, size=64); print(len(g.groups), g.pool(0)[:3], g.pool(999)[:3])"

Each item slot draws its company from `pool(slot)`. Up to `size` companies (the config's
`company_group`, 32) that is every company, exactly as before. With more, the companies are dealt into
near-equal groups (a seeded shuffle, dealt round-robin) and slot i draws from group
`i * n_groups // n_slots`: consecutive slots (hence shards and workers) use one group's stores, each
group gets an equal share of the slots and every company the same expected share. The mapping
depends only on the config and the slot, so `--num-proc` / `--shard` never change the output.
"""
from __future__ import annotations

import random
from typing import Callable


class PerCompany(dict):
    """company -> fn(company), computed on first use (a run over thousands of filers touches each when drawn)."""

    def __init__(self, fn: Callable[[str], object]):
        super().__init__()
        self.fn = fn

    def __missing__(self, company: str):
        value = self[company] = self.fn(company)
        return value


class CompanyGroups:
    def __init__(self, companies: list[str], *, seed: int, n_slots: int, size: int):
        self.companies, self.n_slots = list(companies), max(1, n_slots)
        if len(self.companies) <= size:
            self.groups = [self.companies]
        else:
            order = sorted(self.companies)
            random.Random(f"{seed}:company-groups").shuffle(order)
            n = -(-len(order) // size)
            self.groups = [sorted(order[g::n]) for g in range(n)]

    def pool(self, slot: int) -> list[str]:
        if len(self.groups) == 1:
            return self.groups[0]
        return self.groups[min(len(self.groups) - 1, slot * len(self.groups) // self.n_slots)]


def forget(caches: list[dict], companies: set) -> None:
    """Drop every entry whose key starts with one of `companies` (their stores left memory)."""
    for cache in caches:
        for key in [k for k in cache if k[0] in companies]:
            del cache[key]
