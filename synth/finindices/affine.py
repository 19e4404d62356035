"""Company-affine worker processes for `ledgerlm synth --num-proc P`.

    python -m pytest tests/test_synth_affine.py -q

Most of a slot's cost is memoised per company (index values, statements, rendered blocks, their token
counts). Workers that take whole shards in turn each refill every company's memos: with two workers about
a third of the run's CPU was done twice. Here every company has one owner worker, and a company's costly
work (its index values, and everything written from them) is done by its owner only:

- a slot starts at the owner of the company whose values it likely computes (`affinity(slot)`);
- a slot's attempt that reaches the values of a company another worker owns stops there (`Moved`: the
  attempt's number) and this process sends it on to the owner, which replays the earlier attempts' draws and
  goes on from that attempt: the draws, hence the rows, are exactly those of one process;
- owners start as an even cut of the companies; a company first seen later (with company draw groups a whole group
  arrives at once) goes to the worker with the least expected CPU in its epoch (`deal_new`); once the first
  (short) epoch is done, and again after the
  third, they are re-dealt by the CPU seconds each company actually cost, only where a worker's share is more
  than 5 % over an even share, moving as few companies as that takes (`deal`): a company that changes owner
  is loaded and memoised again by the new one. So the workers stay balanced when a few rich filers yield
  most rows (here 5 of 20 embedded filers cost ~78 %). Re-dealing every company largest-first instead
  moved 11 of 20 companies in a --num 10000 run (31 store loads, not 20), where the even cut was within 1 %
  of balance (measured at --num 4000).

Workers append their rows of a shard to their own stream files (`shards.PartWriter`: one file pair per worker, not
per task); this (parent) process lists where a finished shard's parts are, with the slot of each row
(`shards.finish_parts`), and the merge reads them in slot order, so the output is
the same bytes as one process and no row passes through the parent.
Shards are handed out in epochs (`EPOCH_SHARDS` per worker, two epochs in flight, a third while a worker has
nothing queued: its share of the two was lighter, and it would otherwise wait for the oldest epoch to finish; the
first two are short, so the owners are re-dealt early, while little is memoised under the first cut) so the parent
holds little; moved slots go first in a worker's queue so a shard is never held up behind new work.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import secrets
import time
import traceback
from collections import Counter, deque
from multiprocessing.connection import wait
from pathlib import Path
from typing import Callable

from ledgerlm.synth.finindices import shards
from ledgerlm.synth.finindices.pipeline import Stats

EPOCH_SHARDS = 8  # shards per worker in one epoch
FIRST_EPOCH_SHARDS = 2  # ... in each of the first two: the owners are re-dealt after the first, before memos grow
REDEAL_AFTER = (0, 2)  # epochs after which the owners are re-dealt by cost where unbalanced
REDEAL_IMBALANCE = 0.05  # ... by more than this: the most loaded worker's share over an even share, minus 1
EPOCHS_IN_FLIGHT = 2  # epochs handed out ahead of the oldest unfinished one, plus it: a worker done with its share goes on
IDLE_EPOCHS_IN_FLIGHT = 3  # ... while a worker has nothing queued


class WorkerFailed(RuntimeError):
    """A worker process died without reporting an error (killed, out of memory)."""


def deal(costs: dict[str, float], procs: int, owners: dict[str, int],
         tolerance: float = REDEAL_IMBALANCE) -> dict[str, int]:
    """company -> worker, balanced by cost while keeping `owners` where it can: a costed company without an owner
    goes to the least loaded worker (costliest first); then, while the most loaded worker carries more than
    `1 + tolerance` even shares, the company of its that best halves its gap to the least loaded worker moves
    there (each move lowers the sum of squared loads, so this ends). Companies without a cost keep their owner."""
    out = dict(owners)
    load = [0.0] * procs
    for company, cost in costs.items():
        if company in out:
            load[out[company]] += cost
    for company in sorted((c for c in costs if c not in out), key=lambda c: (-costs[c], c)):
        w = min(range(procs), key=lambda i: (load[i], i))
        out[company] = w
        load[w] += costs[company]
    total = sum(load)
    for _ in range(len(costs) * procs):
        hi = max(range(procs), key=lambda i: (load[i], -i))
        lo = min(range(procs), key=lambda i: (load[i], i))
        gap = load[hi] - load[lo]
        if load[hi] * procs <= (1 + tolerance) * total:
            break
        movable = [c for c, cost in costs.items() if out[c] == hi and 0 < cost < gap]
        if not movable:
            break
        company = min(movable, key=lambda c: (abs(gap / 2 - costs[c]), c))
        out[company] = lo
        load[hi] -= costs[company]
        load[lo] += costs[company]
    return out


def deal_new(slots: dict[str, int], owners: dict[str, int], procs: int, rates: dict[str, float]) -> dict[str, int]:
    """Owners for the companies of an epoch's slots (`slots`: company -> slots whose affinity it is) that have none:
    each, the costliest first, goes to the worker with the least expected CPU in this epoch so far - its companies'
    slots times their measured CPU per slot (`rates`; the mean rate for a company not measured yet). With company
    draw groups (`company_group`: 100 companies are 4 groups drawn one after another) a new group's companies arrive
    together: dealt one by one to the worker owning the fewest companies, every one went to the same worker (the
    100-company input, 2 workers, `--num 10000`: 9.42 vs 4.47 s CPU)."""
    mean = sum(rates.values()) / len(rates) if rates else 1.0
    load = [0.0] * procs
    for company, n in slots.items():
        if company in owners:
            load[owners[company]] += n * rates.get(company, mean)
    out = {}
    for company in sorted((c for c in slots if c not in owners), key=lambda c: (-slots[c] * rates.get(c, mean), c)):
        w = min(range(procs), key=lambda i: (load[i], i))
        out[company] = w
        load[w] += slots[company] * rates.get(company, mean)
    return out


def even_cut(companies: list[str], procs: int) -> dict[str, int]:
    """company -> worker before any cost is known: the sorted companies cut into `procs` runs."""
    ordered = sorted(set(companies))
    return {c: i * procs // len(ordered) for i, c in enumerate(ordered)}


def _part(slot_fn, items: list, stats: Stats, costs: dict) -> tuple[list, list]:
    """(kept (slot, row) pairs, moved slots) of one task: the slot function's `part` where it has one
    (contexts.Builder), else slot by slot (nothing ever moves)."""
    part = getattr(slot_fn, "part", None)
    if part is not None:
        return part(items, stats, costs)
    return [(slot, row) for slot in items for row in slot_fn(slot, stats)], []


def _coalesce(queue: deque, k: int, items: list, covered: int) -> tuple[list, int]:
    """`items` with the items of every task of shard k waiting in `queue` (removed from it), and how many tasks that
    makes. A slot moved here for a shard whose own task is still queued is drafted in the same pass and written
    to the same part: a task of a few moved slots cost ~0.3 ms of fixed work (token-cap pass, encoding, then two
    part files, messages; measured before parts were appended to worker streams), and the workers take an epoch's
    shards in rotated orders so that this is the common case."""
    same = [task for task in queue if task[1] == k]
    for task in same:
        queue.remove(task)
        items = items + task[2]
    return items, covered + len(same)


def _work(inbox, conn, me: int, out: Path, stream: Path) -> None:
    """Worker loop (in a forked child). In (`inbox`, a queue: the parent never blocks sending): ("owners", map),
    ("task", shard, items, moved) and None to stop. Out (`conn`), per task:
    ("part", shard, where its rows are or None, [slot of each row], stats, moved [(company, slot, resume)], costs,
    tasks answered); the rows are appended to this worker's streams (`stream`, `shards.PartWriter`), never sent
    through this process's parent. Queued tasks of the shard it takes are done with it (`_coalesce`)."""
    slot_fn, owners = shards._SLOT_FN, {}
    writer = shards.PartWriter(stream)
    if hasattr(slot_fn, "owns"):
        slot_fn.owns = lambda company: owners.get(company, me) == me
    urgent, normal = deque(), deque()
    try:
        while True:
            while not (urgent or normal) or not inbox.empty():
                msg = inbox.get()
                if msg is None:
                    return
                if msg[0] == "owners":
                    owners.update(msg[1])
                else:
                    (urgent if msg[3] else normal).append(msg)
            _, k, items, _moved_here = (urgent or normal).popleft()
            covered = 1  # tasks this result answers: every queued task of shard k joins this one (`_coalesce`)
            for queue in (urgent, normal):
                items, covered = _coalesce(queue, k, items, covered)
            stats, costs = Stats(), {}
            kept, moved = _part(slot_fn, items, stats, costs)
            t0 = time.process_time()
            lines, metas = shards.encoded_lines([row for _, row in kept])  # checked and encoded here, in parallel
            share = (time.process_time() - t0) / max(1, len(kept))
            for _, row in kept:
                costs[row["company"]] = costs.get(row["company"], 0.0) + share
            part = writer.write(lines, metas) if kept else None
            conn.send(("part", k, part, [slot for slot, _ in kept], stats.as_dict(), moved, costs, covered))
    except BaseException as err:  # noqa: BLE001 - every failure goes back to the parent, which raises it
        try:
            payload = pickle.dumps(err)
        except Exception:  # noqa: BLE001 - an exception that does not pickle: its text
            payload = pickle.dumps(RuntimeError(f"{type(err).__name__}: {err}"))
        conn.send(("error", payload, traceback.format_exc()))
    finally:
        writer.close()
        conn.close()


class _Run:
    """The parent's side: hands out epochs, forwards moved slots, re-deals owners by cost, lists finished shards' parts."""

    def __init__(self, out: Path, slot_fn, todo: list[int], n_slots: int, shard_size: int, procs: int, on_done):
        self.out, self.slot_fn, self.n_slots, self.shard_size, self.procs, self.on_done = out, slot_fn, n_slots, shard_size, procs, on_done
        self.epochs = epochs(todo, procs)
        self.epoch_of = {k: e for e, ks in enumerate(self.epochs) for k in ks}
        self.left = [len(ks) for ks in self.epochs]  # shards of each epoch not yet written
        self.pending: dict[int, int] = {}  # shard -> tasks still out
        self.parts: dict[int, list] = {}
        self.stats: dict[int, Stats] = {}
        self.owners: dict[str, int] = {}
        self.costs: dict[str, float] = {}
        self.handed: Counter = Counter()  # company -> slots handed out with it as their affinity
        self.conns: list = []  # results from each worker
        self.inboxes: list = []  # tasks to each worker
        self.sent = 0  # epochs handed out so far
        self.queued = [0] * procs  # tasks each worker has not answered yet

    def slots(self, k: int) -> range:
        return shards.shard_slots(k, self.n_slots, self.shard_size)

    def send_owners(self) -> None:
        for inbox in self.inboxes:
            inbox.put(("owners", dict(self.owners)))

    def send_more(self) -> None:
        """Hand out the next epochs: two in flight (the oldest unfinished and the next), and a third early when a
        worker has nothing queued (its share of both was lighter than the other workers': it would sit idle until
        the oldest epoch is finished)."""
        while self.sent < len(self.epochs):
            oldest = next((e for e in range(self.sent) if self.left[e]), self.sent)
            idle = 0 in self.queued
            if self.sent - oldest >= (IDLE_EPOCHS_IN_FLIGHT if idle else EPOCHS_IN_FLIGHT):
                return
            self.sent += 1
            self.send_epoch(self.sent - 1)

    def send_epoch(self, e: int) -> None:
        first = {s: self.slot_fn.affinity(s) for k in self.epochs[e] for s in self.slots(k)}
        counts = Counter(first.values())
        if any(c not in self.owners for c in counts):
            rates = {c: cost / self.handed[c] for c, cost in self.costs.items() if self.handed[c]}
            self.owners.update(even_cut(list(counts), self.procs) if not self.owners else
                               deal_new(counts, self.owners, self.procs, rates))
            self.send_owners()
        self.handed.update(counts)
        tasks: dict[int, list] = {}
        for k in self.epochs[e]:
            by_worker: dict[int, list] = {}
            for s in self.slots(k):
                by_worker.setdefault(self.owners[first[s]], []).append(s)
            self.pending[k], self.parts[k], self.stats[k] = 0, [], Stats()
            for w, items in sorted(by_worker.items()):
                tasks.setdefault(w, []).append((k, items))
            if not by_worker:
                self.finish(k)
        for w, todo in sorted(tasks.items()):
            # worker w starts its share of the epoch w/P of the way in: the slots another worker moves to it are then
            # mostly for a shard whose own task it has not taken yet, and join that task (`_coalesce`). Not in the last
            # epoch: its shards would be finished out of order, and the in-order merge (dataset.build) would be left
            # with more of them after the last one
            shift = w * len(todo) // self.procs if e < len(self.epochs) - 1 else 0
            for k, items in todo[shift:] + todo[:shift]:
                self.task(w, k, items, moved=False)

    def task(self, w: int, k: int, items: list, moved: bool) -> None:
        self.pending[k] += 1
        self.queued[w] += 1
        self.inboxes[w].put(("task", k, items, moved))

    def receive(self, w: int, msg: tuple) -> None:
        _, k, part, slots, stats, moved, costs, covered = msg
        if part is not None:
            self.parts[k].append({**part, "slots": slots})
        self.stats[k].add(Stats.from_dict(stats))
        for company, cost in costs.items():
            self.costs[company] = self.costs.get(company, 0.0) + cost
        onward: dict[int, list] = {}
        for company, slot, resume in moved:
            if company not in self.owners:
                self.owners[company] = least_owning(self.owners, self.procs)
                self.send_owners()
            onward.setdefault(self.owners[company], []).append((slot, resume, company))
        for to, items in sorted(onward.items()):
            self.task(to, k, items, moved=True)
        self.queued[w] -= covered
        self.pending[k] -= covered
        if self.pending[k] == 0:
            self.finish(k)
        self.send_more()

    def finish(self, k: int) -> None:
        shards.finish_parts(self.out, k, self.parts.pop(k), self.stats[k])
        del self.pending[k]
        if self.on_done:
            self.on_done(k, self.stats.pop(k))
        else:
            del self.stats[k]
        e = self.epoch_of[k]
        self.left[e] -= 1
        if self.left[e] == 0:
            if e in REDEAL_AFTER and self.costs:
                owners = deal(self.costs, self.procs, self.owners)  # by what each company has cost so far
                if owners != self.owners:
                    self.owners = owners
                    self.send_owners()


def imbalance(costs: dict[str, float], owners: dict[str, int], procs: int) -> float:
    """How much more than an even share the most loaded worker would carry under `owners` (0: balanced)."""
    load = [0.0] * procs
    for company, cost in costs.items():
        load[owners.get(company, 0)] += cost
    return max(load) * procs / max(sum(load), 1e-9) - 1


def epochs(todo: list[int], procs: int) -> list[list[int]]:
    """`todo` cut into epochs: two short ones (`FIRST_EPOCH_SHARDS` per worker), then `EPOCH_SHARDS` per worker."""
    first, size, out, i = FIRST_EPOCH_SHARDS * procs, EPOCH_SHARDS * procs, [], 0
    while i < len(todo):
        n = first if len(out) < 2 else size
        out.append(todo[i:i + n])
        i += n
    return out


def least_owning(owners: dict[str, int], procs: int) -> int:
    """An owner for a company first seen after the first cut: the worker that owns the fewest companies."""
    counts = [0] * procs
    for w in owners.values():
        counts[w] += 1
    return min(range(procs), key=lambda i: (counts[i], i))


def worker_cpus(procs: int) -> list[int] | None:
    """The CPU each worker is kept on, where the workers are exactly as many as the CPUs this process may run on
    (each CPU then runs one worker: moving a worker between them only costs it its warm per-core caches); None
    otherwise (fewer workers: the system picks idle CPUs; more: they share CPUs anyway) and where the platform
    cannot pin. `ledgerlm synth --num 10000 --num-proc 2` on a 2-CPU machine with other processes running (load 3-5),
    8 interleaved runs each, /usr/bin/time: user CPU median 8.59 -> 7.73 s (min 7.29 / 7.38: no gain when quiet),
    wall median 18.6 -> 15.7 s. Pinning changes no work: the user CPU two workers take beyond one process is mostly
    the same instructions run slower (callgrind at d9c13d5: 31.7 G instructions in the two workers, fork to exit,
    against 30.3 G for one process's generation, +4.7 %)."""
    getaffinity = getattr(os, "sched_getaffinity", None)
    cpus = sorted(getaffinity(0)) if getaffinity is not None and hasattr(os, "sched_setaffinity") else []
    return cpus if len(cpus) == procs else None


def run(out: Path, slot_fn: shards.SlotFn, todo: list[int], n_slots: int, shard_size: int, procs: int,
        on_done: Callable[[int, Stats], None] | None = None, select: tuple[int, int] = (0, 1)) -> None:
    """Generate shards `todo` of job `select` with `procs` company-affine workers; `on_done(k, stats)` after each shard
    is written. What a killed run left of these shards was removed by the caller (`dataset.generate`)."""
    shards._SLOT_FN = slot_fn
    tag = secrets.token_hex(4)  # this run's worker streams: a rerun never appends to what a killed run left
    ctx = multiprocessing.get_context("fork")
    state = _Run(out, slot_fn, todo, n_slots, shard_size, procs, on_done)
    workers, cpus = [], worker_cpus(procs)
    for w in range(procs):
        parent, child = ctx.Pipe(duplex=False)
        inbox = ctx.Queue()
        proc = ctx.Process(target=_work, args=(inbox, child, w, out, shards.worker_stream(out, select, tag, w)), daemon=True)
        proc.start()
        if cpus:
            os.sched_setaffinity(proc.pid, {cpus[w]})
        child.close()
        state.conns.append(parent)
        state.inboxes.append(inbox)
        workers.append(proc)
    try:
        state.send_more()
        sentinels = {p.sentinel: w for w, p in enumerate(workers)}
        while state.pending:
            for item in wait(state.conns + list(sentinels)):
                w = sentinels.get(item)
                if w is None:
                    w = state.conns.index(item)
                    _receive(state, w)
                    continue
                while state.conns[w].poll() and _receive(state, w):
                    pass  # what it sent before it exited (an error report) comes first
                workers[w].join(5)  # the sentinel is ready as the process exits, maybe before its exit code is known
                raise WorkerFailed(f"synth worker process {w} died (exit code {workers[w].exitcode}) before finishing its "
                                   f"shards; rerun the same command to resume from the finished shards in {out}")
        for inbox in state.inboxes:
            inbox.put(None)
        for proc in workers:
            proc.join()
    finally:
        for proc in workers:
            if proc.is_alive():
                proc.terminate()
            proc.join()
        for conn, inbox in zip(state.conns, state.inboxes):
            conn.close()
            inbox.close()
            inbox.cancel_join_thread()  # a worker that died never reads what is left: do not wait to flush it


def _receive(state: _Run, w: int) -> bool:
    """Take one message from worker w (False at end of stream: the worker exited, its sentinel reports it)."""
    try:
        msg = state.conns[w].recv()
    except (EOFError, OSError):
        return False
    if msg[0] == "error":  # the worker's exception, raised here with the worker's traceback as a note (Python >= 3.11)
        err = pickle.loads(msg[1])
        getattr(err, "add_note", lambda _note: None)(f"in a synth worker process:\n{msg[2]}")
        raise err
    state.receive(w, msg)
    return True
