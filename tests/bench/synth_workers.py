"""#17 goal 1: how much work a second worker process redoes, without two busy workers slowing each other.

    TIKTOKEN_CACHE_DIR=../shared/tiktoken python tests/bench/synth_workers.py [--num 10000]

Builds the Builder and warms it as `--num-proc` does (stores loaded, gc frozen), then forks workers that
draft, cap and check every shard (no files written) and reads their CPU seconds from wait4: one worker
doing every shard; two workers on alternate shards at once; the same two one after the other. The last
minus the first is the memo work (index values, statements, renderings, line token counts) each worker
refills for itself: what sharing memos across workers would save.
"""
from __future__ import annotations

import argparse
import gc
import os
import time

from ledgerlm.synth.finindices import shards
from ledgerlm.synth.finindices.config import load_config
from ledgerlm.synth.finindices.contexts import Builder
from ledgerlm.synth.finindices.pipeline import Stats


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--num", type=int, default=10_000)
    num = p.parse_args().num
    cfg = load_config(None, num=num, seed=0)
    t0 = time.process_time()
    b = Builder.from_config(cfg)
    n = -(-cfg.num // len(cfg.hint_variants))
    k_all = shards.n_shards(n, cfg.shard_size)
    b.warm(range(n))
    gc.freeze()
    print(f"start-up + warm {time.process_time() - t0:.2f} s CPU")

    def work(ks) -> None:
        stats = Stats()
        for k in ks:
            for row in b.many(shards.shard_slots(k, n, cfg.shard_size), stats):
                shards.sample_line(row)

    def fork(groups) -> list[float]:
        pids = []
        for g in groups:
            pid = os.fork()
            if pid == 0:
                gc.set_threshold(100_000, 50, 100)
                work(g)
                os._exit(0)
            pids.append(pid)
        return [(lambda ru: ru.ru_utime + ru.ru_stime)(os.wait4(pid, 0)[2]) for pid in pids]

    halves = [range(0, k_all, 2), range(1, k_all, 2)]
    one = fork([range(k_all)])[0]
    both = fork(halves)
    seq = fork(halves[:1]) + fork(halves[1:])
    print(f"1 worker, every shard        {one:.2f} s CPU")
    print(f"2 workers at once            {both[0]:.2f} + {both[1]:.2f} = {sum(both):.2f} s CPU ({sum(both) - one:+.2f})")
    print(f"2 workers one after another  {seq[0]:.2f} + {seq[1]:.2f} = {sum(seq):.2f} s CPU; "
          f"memo work each worker redoes: {sum(seq) - one:.2f} s")


if __name__ == "__main__":
    main()
