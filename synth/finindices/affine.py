"""Company-affine worker processes for `ledgerlm synth --num-proc P`.

    python -m pytest tests/test_synth_affine.py -q

Most of a slot's cost is memoised per company (index values, statements, rendered blocks, their token
counts). Workers that take whole shards in turn each refill every company's memos: with two workers about
a third of the run's CPU was done twice. Here each worker drafts only the slots of its own companies:
the slot function's `affinity(slot)` names the company a slot draws first, and every shard is cut into
per-worker parts. The rows of a shard are put back in slot order by this (parent) process, which writes
the shard files, stats and completion marker exactly as `shards.run_shard` does, so the output is the
same bytes as one process (each slot has its own generator; affinity only decides who computes it).

Planning is per epoch of consecutive shards (`EPOCH_SHARDS` per worker): the epoch's slots are sorted by
(company, slot) and cut into P equal runs, so each worker gets a balanced share of every epoch (workers
move through the shards together and the parent holds only about two epochs of rows) and a company
keeps its worker from one epoch to the next; at most P - 1 companies straddle a cut and are computed by
two workers. With company groups (many filers) an epoch draws from one group, so the same holds there.
"""
from __future__ import annotations

import multiprocessing
import pickle
import traceback
from multiprocessing.connection import wait
from pathlib import Path
from typing import Callable

from ledgerlm.contracts import dumps
from ledgerlm.synth.finindices import shards
from ledgerlm.synth.finindices.pipeline import Stats

EPOCH_SHARDS = 8  # shards per worker in one planning epoch


class WorkerFailed(RuntimeError):
    """A worker process died without reporting an error (killed, out of memory)."""


def plan(slots: list[int], affinity: Callable[[int], str], procs: int) -> dict[int, int]:
    """slot -> worker: the slots ordered by (company, slot) and cut into `procs` runs of (almost) equal length."""
    keyed = sorted(slots, key=lambda s: (affinity(s), s))
    return {s: i * procs // len(keyed) for i, s in enumerate(keyed)}


def tagged_rows(slot_fn: shards.SlotFn, slots: list[int], stats: Stats) -> list[tuple[int, dict]]:
    """(slot, row) of the kept rows of `slots`, in the given order: one `many(..., tagged=True)` call where the
    slot function offers it (the synth Builder caps a whole part's prompts in one pass), else slot by slot."""
    many = getattr(slot_fn, "many", None)
    if many is not None:
        return many(slots, stats, tagged=True)
    return [(slot, row) for slot in slots for row in slot_fn(slot, stats)]


def _work(conn) -> None:
    """Worker loop (in a forked child): receive (shard, slots), send back (shard, [(slot, row line, meta line)], stats)."""
    slot_fn = shards._SLOT_FN
    try:
        for k, slots in iter(conn.recv, None):
            stats = Stats()
            part = [(slot, shards.sample_line(row), dumps(shards._meta(row))) for slot, row in tagged_rows(slot_fn, slots, stats)]
            conn.send(("part", k, part, stats.as_dict()))
    except BaseException as err:  # noqa: BLE001 - every failure goes back to the parent, which raises it
        try:
            payload = pickle.dumps(err)
        except Exception:  # noqa: BLE001 - an exception that does not pickle: its text
            payload = pickle.dumps(RuntimeError(f"{type(err).__name__}: {err}"))
        conn.send(("error", payload, traceback.format_exc()))
    finally:
        conn.close()


def run(out: Path, slot_fn: shards.SlotFn, todo: list[int], n_slots: int, shard_size: int, procs: int,
        on_done: Callable[[int, Stats], None] | None = None) -> None:
    """Generate shards `todo` with `procs` company-affine workers; `on_done(k, stats)` after each shard is written."""
    shards._SLOT_FN = slot_fn
    ctx = multiprocessing.get_context("fork")
    conns, workers = [], []
    for _ in range(procs):
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_work, args=(child,), daemon=True)
        proc.start()
        child.close()
        conns.append(parent)
        workers.append(proc)
    size = EPOCH_SHARDS * procs
    epochs = [todo[i:i + size] for i in range(0, len(todo), size)]
    expected: dict[int, int] = {}  # shard -> parts still to come
    parts: dict[int, list] = {}
    stats: dict[int, Stats] = {}
    epoch_of = {k: e for e, ks in enumerate(epochs) for k in ks}
    left = [len(ks) for ks in epochs]  # shards of each epoch not yet written

    def send(e: int) -> None:
        slots = [s for k in epochs[e] for s in shards.shard_slots(k, n_slots, shard_size)]
        owner = plan(slots, slot_fn.affinity, procs) if slots else {}
        for k in epochs[e]:
            by_worker: dict[int, list[int]] = {}
            for s in shards.shard_slots(k, n_slots, shard_size):
                by_worker.setdefault(owner[s], []).append(s)
            expected[k], parts[k], stats[k] = len(by_worker), [], Stats()
            for w, mine in sorted(by_worker.items()):
                conns[w].send((k, mine))
            if not by_worker:  # an empty shard (never happens with shard_size >= 1): written at once
                finish(k)

    def finish(k: int) -> None:
        rows = sorted((row for part in parts.pop(k) for row in part), key=lambda r: r[0])  # stable: a slot's rows keep their order
        shards.write_shard(out, k, [line for _, line, _ in rows], [meta for _, _, meta in rows], stats[k])
        del expected[k]
        if on_done:
            on_done(k, stats.pop(k))
        e = epoch_of[k]
        left[e] -= 1
        if left[e] == 0 and e + 2 < len(epochs):
            send(e + 2)  # two epochs in flight: a worker that finishes its part of one starts the next at once

    try:
        for e in range(min(2, len(epochs))):
            send(e)
        sentinels = {p.sentinel: w for w, p in enumerate(workers)}
        while expected:
            for item in wait(conns + list(sentinels)):
                w = sentinels.get(item)
                if w is None:
                    _receive(item, parts, stats, expected, finish)
                    continue
                while conns[w].poll() and _receive(conns[w], parts, stats, expected, finish):
                    pass  # what it sent before it exited (an error report) comes first
                raise WorkerFailed(f"synth worker process {w} died (exit code {workers[w].exitcode}) before finishing its "
                                   f"shards; rerun the same command to resume from the finished shards in {out}")
        for conn in conns:
            conn.send(None)
        for proc in workers:
            proc.join()
    finally:
        for proc in workers:
            if proc.is_alive():
                proc.terminate()
            proc.join()
        for conn in conns:
            conn.close()


def _receive(conn, parts: dict, stats: dict, expected: dict, finish: Callable[[int], None]) -> bool:
    """Take one message from a worker (False at end of stream: the worker exited, its sentinel reports it)."""
    try:
        msg = conn.recv()
    except (EOFError, OSError):
        return False
    if msg[0] == "error":  # the worker's exception, raised here with the worker's traceback as a note (Python >= 3.11)
        err = pickle.loads(msg[1])
        getattr(err, "add_note", lambda _note: None)(f"in a synth worker process:\n{msg[2]}")
        raise err
    _, k, part, part_stats = msg
    parts[k].append(part)
    stats[k].add(Stats.from_dict(part_stats))
    expected[k] -= 1
    if expected[k] == 0:
        finish(k)
    return True
