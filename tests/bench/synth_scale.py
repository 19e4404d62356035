"""#17 goals 1 and 2, measured in one run on the embedded data: `--num-proc 2` vs `--num-proc 1`
(samples/s, byte-identity, CPU seconds of each phase, efficiency at 16 / 64 processes projected from their measured CPU) and
end-to-end CPU time vs tokenizing every emitted prompt from scratch.

    TIKTOKEN_CACHE_DIR=../shared/tiktoken python tests/bench/synth_scale.py [--num 10000] [--tokenizer o200k_base] [--rounds 3]
    TIKTOKEN_CACHE_DIR=../shared/tiktoken python tests/bench/synth_scale.py --replicas 20 --procs 16 64   # 100 companies

Each build is one `ledgerlm synth` process (the CLI's own `main`, run by this file with `--child`, which
only wraps the phases to time them): CPU seconds of the process and its workers from wait4, and inside
it, per phase, the parent's CPU (`time.process_time`) and the reaped workers' (`RUSAGE_CHILDREN`):
  start-up  interpreter, imports, config, Builder (registry, tokenizer, store index) - serial
  generate  every shard: drafts, token cap, contract check, shard files (with --num-proc > 1 the workers' CPU plus
            the parent's R: each slot's affinity, forwarding moved slots, listing each shard's parts, the merge beside)
  merge     shard files -> train/dev/test.jsonl, manifest, card - serial with 1 process; with --num-proc > 1 a
            thread merges beside the workers (dataset.build): its CPU is inside generate, printed apart
Then the machine's own ceiling for goal 1 (skip with --no-pair): one plain 1-process build alone, then two independent
1-process builds at once; their CPU over the lone build's is what running two processes at once costs on these two vCPUs
by itself (shared physical core, memory bandwidth), whatever the code does.
Each build's wall-clock is printed as a timeline (seconds from the bench starting the process): start-up, each
company-affine worker's fork, first task, last result, the time it sat blocked waiting for a task mid-run and at the
end (recorded inside the workers by a wrapper of `affine._work`) and its own CPU, the first and last shard listed,
the merge's end (and how long after the last shard), the summary. The store cache is built first and not timed. The ratios to read on a loaded machine are the CPU ones;
the wall-clock ratio is only meaningful when the load average stays below the core count.
"""
from __future__ import annotations

import argparse
import atexit
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

FILES = ("train.jsonl", "dev.jsonl", "test.jsonl", "manifest.json", "README.md")


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "n/a"


def child(argv: list[str], phases_path: str) -> int:
    """Run `ledgerlm synth ARGV` in this process, writing the CPU seconds of each phase to `phases_path`."""
    import ledgerlm.cli as program
    from ledgerlm.synth.finindices import affine, cli, dataset, shards

    launched = float(os.environ.get("SYNTH_SCALE_T0") or time.time())  # when the bench started this process
    wall: dict[str, object] = {"interpreter": time.time() - launched, "shards": []}
    trace_workers(affine, phases_path, launched)
    listed = shards.finish_parts

    def finish_parts(*args, **kwargs):  # a shard's parts listed: the shard is done (2 processes)
        listed(*args, **kwargs)
        wall["shards"].append(time.time() - launched)

    shards.finish_parts = finish_parts
    import multiprocessing.process

    start = multiprocessing.process.BaseProcess.start
    wall["spawn cpu"] = []

    def spawn(self):  # the parent's CPU to fork one worker (copying its page tables: grows with the parent's memory)
        t0 = time.thread_time()
        start(self)
        wall["spawn cpu"].append(time.thread_time() - t0)

    multiprocessing.process.BaseProcess.start = spawn

    def cpu() -> tuple[float, float]:
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.process_time(), kids.ru_utime + kids.ru_stime

    phases: dict[str, float] = {}

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            if threading.current_thread() is not threading.main_thread():  # the merge beside generation (dataset.build):
                t0 = time.thread_time()  # its CPU is inside the generate phase already; recorded apart, not as serial
                try:
                    return fn(*args, **kwargs)
                finally:
                    phases[name + " (beside generate)"] = time.thread_time() - t0
                    wall[name + " end"] = time.time() - launched
            p0, c0 = cpu()
            if name == "generate":
                phases.setdefault("start-up", p0)
            wall.setdefault(name + " start", time.time() - launched)
            try:
                return fn(*args, **kwargs)
            finally:
                wall[name + " end"] = time.time() - launched
                p1, c1 = cpu()
                phases[name] = phases.get(name, 0.0) + (p1 - p0) + (c1 - c0)
                phases[name + " (workers)"] = phases.get(name + " (workers)", 0.0) + (c1 - c0)
        return wrapper

    def record() -> None:
        if "total" not in phases:
            phases["total"] = sum(cpu())
            wall["summary printed"] = time.time() - launched
            workers = sorted(Path(phases_path).parent.glob(Path(phases_path).name + ".w*"))
            phases["wall"] = dict(wall, workers=[json.loads(w.read_text()) for w in workers])
            Path(phases_path).write_text(json.dumps(phases))

    def finish(*args, **kwargs):  # the summary is out: record the phases before the program leaves (exit_early)
        try:
            return finish_build(*args, **kwargs)
        finally:
            record()

    finish_build, cli._finish = cli._finish, finish
    dataset.generate = timed("generate", dataset.generate)
    dataset.merge = timed("merge", dataset.merge)
    program._PROCESS_ENTRY = True  # exactly as `ledgerlm synth ...` from a shell: leaves without freeing the caches
    rc = cli.main(argv)
    record()
    return rc


def trace_workers(affine, phases_path: str, launched: float) -> None:
    """Record, in each company-affine worker (forked: it runs this wrapper of `affine._work`), when it started, the
    spans it waited for a task (blocked in its inbox: idle) and when it sent each result, into PHASES.wN."""
    work = affine._work

    def traced(inbox, conn, me, *rest):
        log = {"start": time.time() - launched, "waits": [], "sends": [], "results": 0, "tasks": 0, "moved on": 0}

        class Inbox:
            def __getattr__(self, name):
                return getattr(inbox, name)

            def get(self):
                t = time.time() - launched
                msg = inbox.get()
                log["waits"].append((t, time.time() - launched))
                return msg

        class Conn:
            def __getattr__(self, name):
                return getattr(conn, name)

            def send(self, msg):
                log["sends"].append(time.time() - launched)
                if msg[0] == "part":  # one result: its tasks (queued tasks of a shard are answered together), moved slots
                    log["results"] += 1
                    log["tasks"] += msg[7] if len(msg) > 7 else 1
                    log["moved on"] += len(msg[5])
                conn.send(msg)

        try:
            work(Inbox(), Conn(), me, *rest)
        finally:
            log["end"], log["cpu"] = time.time() - launched, time.process_time()
            Path(f"{phases_path}.w{me}").write_text(json.dumps(log))

    affine._work = traced


def timeline(wall: dict, total: float) -> str:
    """Where one build's wall-clock went (seconds from the bench starting the process; load-dependent)."""
    parts = [f"interpreter up {wall['interpreter']:.2f}", f"generate starts {wall['generate start']:.2f}"]
    for w, log in enumerate(wall.get("workers", [])):
        waits = log["waits"]
        first = waits[0][1] if waits else log["start"]
        last = log["sends"][-1] if log["sends"] else first
        mid = sum(b - a for a, b in waits[1:] if b <= last)  # blocked for a task between its first and last result (the last
        # epoch's moved slots going back and forth show here)
        parts.append(f"worker {w}: forked {log['start']:.2f}, first task {first:.2f}, last result {last:.2f}, idle before "
                     f"its last result {mid:.2f}, idle at the end {log['end'] - last:.2f}, {log['cpu']:.2f} s CPU, "
                     f"{log.get('results', 0)} results for {log.get('tasks', 0)} tasks, {log.get('moved on', 0)} slots moved on")
    after = wall["shards"][-1] if wall["shards"] else wall["generate end"]  # the last shard listed (2 processes)
    if wall["shards"]:
        parts.append(f"first / last shard listed {wall['shards'][0]:.2f} / {after:.2f}")
    parts.append(f"generate returns {wall['generate end']:.2f}")
    end = wall.get("merge end")
    if end is not None:
        parts.append(f"merge (train/dev/test, manifest, card) done {end:.2f} (+{max(0.0, end - after):.2f} after the last shard)")
    parts.append(f"summary printed {wall['summary printed']:.2f}, process gone {total:.2f}")
    return "; ".join(parts)


def timed_run(cmd: list[str], env: dict | None = None) -> dict:
    """wall s, CPU s (the process and every descendant it waited for) and peak RSS MB of one command."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{err[-2000:]}")
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024}


def build(args, out: Path, num_proc: int, env: dict) -> dict:
    phases = out.with_name(out.name + ".phases.json")
    env = dict(env, SYNTH_SCALE_T0=repr(time.time()))
    run = timed_run([sys.executable, __file__, "--child", str(phases), "--", "--out", str(out), "--num", str(args.num),
                     "--seed", str(args.seed), "--tokenizer", args.tokenizer, "--no-progress", "--num-proc", str(num_proc),
                     *(["--source", args.source] if args.source else [])], env)
    run["phases"] = json.loads(phases.read_text())
    return run


def tmp_pair() -> Path:
    return Path(tempfile.mkdtemp(prefix="synth_scale_pair_"))


def pair_line(args, tmp: Path, env: dict) -> str:
    """The machine's own ceiling for goal 1: one plain 1-process build alone, then two independent 1-process builds
    at once (separate outputs, nothing shared). If the two cores were independent, each of the pair would take the
    lone build's CPU; on a VM whose two vCPUs share a physical core (hyperthreads) or memory bandwidth, each takes more,
    and no 2-process run of the same work can beat 2 x lone / pair on this machine."""
    def cmd(out: Path) -> list[str]:
        return [sys.executable, "-m", "ledgerlm", "synth", "--out", str(out), "--num", str(args.num), "--seed",
                str(args.seed), "--tokenizer", args.tokenizer, "--no-progress", "--num-proc", "1",
                *(["--source", args.source] if args.source else [])]

    try:
        lone = timed_run(cmd(tmp / "lone"), env)
        pair: list[dict] = [{}, {}]
        threads = [threading.Thread(target=lambda i=i: pair[i].update(timed_run(cmd(tmp / f"pair{i}"), env))) for i in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    each = sum(r["cpu"] for r in pair) / 2
    return (f"machine ceiling      two independent 1-process builds at once: {pair[0]['cpu']:.1f} / {pair[1]['cpu']:.1f} s "
            f"CPU each ({pair[0]['wall']:.1f} / {pair[1]['wall']:.1f} s wall) vs {lone['cpu']:.1f} s CPU alone: running two "
            f"at once costs {100 * (each / lone['cpu'] - 1):+.0f} % CPU per process here, so no 2-process run can exceed "
            f"{2 * lone['cpu'] / each:.2f}x on this machine (load {loadavg()})")


def digest(folder: Path) -> dict:
    return {f: hashlib.sha256((folder / f).read_bytes()).hexdigest() for f in FILES}


def rows(folder: Path) -> list[dict]:
    return [json.loads(line) for s in ("train", "dev", "test") for line in open(folder / f"{s}.jsonl", encoding="utf-8")]


def floor_child(tokenizer: str, folder: str) -> int:
    """Print (rows, tokens, CPU s) of encoding every message of the dataset in `folder` in full with a fresh counter (no
    memo: `count` encodes the whole text), timed around the encode loop only; the tokens must equal the rows' n_tokens."""
    from ledgerlm.synth.finindices.tokens import TokenCounter

    emitted = rows(Path(folder))
    counter = TokenCounter(tokenizer)
    counter.count("warm up")
    c0 = time.process_time()
    tokens = sum(counter.count(m["content"]) for r in emitted for m in r["messages"])
    cpu = time.process_time() - c0
    assert tokens == sum(r["n_tokens"] for r in emitted), "n_tokens differ from a full encode"
    print(json.dumps([len(emitted), tokens, cpu]))
    return 0


def tokenize_alone(tokenizer: str, folder: Path, env: dict) -> tuple[int, int, float]:
    """`floor_child` in its own process: the parsed rows never enlarge this one, whose pages a later build's peak RSS
    would count (it starts as a fork of this process)."""
    out = subprocess.run([sys.executable, __file__, "--floor", tokenizer, str(folder)], env=env, check=True,
                         capture_output=True, text=True).stdout
    n, tokens, cpu = json.loads(out.splitlines()[-1])
    return n, tokens, cpu


def projection(procs: int, run: dict, one: dict) -> str:
    """Efficiency at `procs` free cores, projected from a build with `procs` company-affine workers on this machine
    (oversubscribed): its CPU seconds are measured - every worker's own, the parent's R beside them (each slot's
    affinity, moved slots, listing parts, the merge thread), the start-up and each fork - and only the wall-clock is
    projected: T(P) = start-up + P forks + max(busiest worker, (workers + R) / P, R) + the serial rest. The busiest
    worker bounds it: a company's values and texts stay with its owner, so a few costly companies cap the speed-up
    (5 of the 20 embedded filers cost ~78 %). At 100x the samples the start-up and forks stay, the rest scales (an
    upper bound on the extra work: per-process memos are filled once, not per sample). The 1-process run's CPU is the
    work a perfect P-way split would divide."""
    ph, wall = run["phases"], run["phases"]["wall"]
    workers = [w["cpu"] for w in wall["workers"]]
    spawn_each = max(wall["spawn cpu"], default=0.0)
    r = ph["generate"] - ph["generate (workers)"]
    rest = run["cpu"] - ph["generate"] - ph["start-up"]
    start1 = one["phases"]["start-up"]
    lines = []
    for scale in (1, 100):
        t = ph["start-up"] + procs * spawn_each + scale * (max(max(workers), (sum(workers) + r) / procs, r) + rest)
        t1 = start1 + scale * (one["cpu"] - start1)
        lines.append(f"{t:.1f} s, efficiency {t1 / (procs * t):.2f}" + (" at 100x the samples" if scale > 1 else ""))
    return (f"P={procs:<3} measured     {run['cpu']:.1f} s CPU with {procs} workers on these {os.cpu_count()} cores "
            f"({100 * (run['cpu'] / one['cpu'] - 1):+.0f} % over 1 process; workers {sum(workers):.1f} s, busiest "
            f"{max(workers):.2f}, mean {sum(workers) / len(workers):.2f}; parent R {r:.2f}; start-up {ph['start-up']:.2f}; "
            f"fork {spawn_each:.3f} s each; peak RSS {run['rss_mb']:.0f} MB); projected on {procs} free cores: "
            + "; ".join(lines))


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        return child(sys.argv[4:], sys.argv[2])
    if sys.argv[1:2] == ["--floor"]:
        return floor_child(sys.argv[2], sys.argv[3])
    p = argparse.ArgumentParser()
    p.add_argument("--num", type=int, default=10_000)
    p.add_argument("--tokenizer", default="o200k_base")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rounds", type=int, default=1, help="build with 1 and 2 processes N times, interleaved; goal 1 is "
                   "also printed per round (each round's two builds) with the median; the summary "
                   "below uses each one's build with the least CPU (a loaded machine only adds CPU seconds; d is a "
                   "difference of two ~20 s figures that drift +-15 %% run to run); goal 2 is also printed per round, "
                   "each 1-process build over the tokenize pass timed right after it")
    p.add_argument("--no-pair", action="store_true", help="skip the machine-ceiling check (two independent 1-process "
                   "builds at once vs one alone)")
    p.add_argument("--procs", type=int, nargs="*", default=[16, 64], help="also build with P company-affine workers on "
                   "this machine (oversubscribed: P processes on its cores): their CPU seconds, measured, project the "
                   "wall-clock and efficiency on P free cores (`projection`); none: skip")
    p.add_argument("--source", help="a companyfacts zip / file to build from instead of the embedded data")
    p.add_argument("--replicas", type=int, help="build from the embedded filers replicated R times under distinct CIKs, "
                   "each replica's amounts its own (tests/bench/synth_bulk.py's --distinct-figures input, written to a "
                   "temp folder): a projection to 16 or 64 processes needs companies >> P")
    args = p.parse_args()
    if args.replicas:
        sys.path.insert(0, str(Path(__file__).parent))
        from synth_bulk import bulk_zip

        folder = Path(tempfile.mkdtemp(prefix="synth_scale_zip_"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        args.source = str(folder / "companyfacts.zip")
        bulk_zip(Path(args.source), args.replicas, distinct_figures=True)
    env = dict(os.environ)
    print(f"load average before: {loadavg()}  (cores: {os.cpu_count()})")
    subprocess.run([sys.executable, "-m", "ledgerlm.synth.finindices.storecache", *([args.source] if args.source else [])],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ones, twos, digests = [], [], set()
        for i in range(args.rounds):
            for runs, procs in ((ones, 1), (twos, 2)):
                out = tmp / f"p{procs}-{i}"
                runs.append(build(args, out, procs, env))
                digests.add(json.dumps(digest(out)))
                if procs == 1:  # the floor right after the build it is compared with: the machine's speed drifts in minutes
                    n, tokens, runs[-1]["floor"] = tokenize_alone(args.tokenizer, out, env)
                shutil.rmtree(out)
                shutil.rmtree(out.with_name(out.name + ".work"), ignore_errors=True)
            if args.rounds > 1:
                d = twos[-1]["phases"]["generate (workers)"] - ones[-1]["phases"]["generate"]
                print(f"round {i + 1}: goal 1 ratio {ones[-1]['wall'] / twos[-1]['wall']:.2f} wall-clock "
                      f"({ones[-1]['wall']:.2f} / {twos[-1]['wall']:.2f} s); CPU 1 proc {ones[-1]['cpu']:.1f} s, 2 procs {twos[-1]['cpu']:.1f} s; d = {d:.2f} s; "
                      f"goal 2 ratio {ones[-1]['cpu'] / ones[-1]['floor']:.2f} ({ones[-1]['floor']:.1f} s tokenize alone); "
                      f"load {loadavg()}", flush=True)
        one, two = min(ones, key=lambda r: r["cpu"]), min(twos, key=lambda r: r["cpu"])
        same = len(digests) == 1
    print(f"load average after:  {loadavg()}")
    print(f"samples emitted      {n} of {args.num} attempted; tokens {tokens} ({args.tokenizer}); byte-identical num_proc 1 vs 2: {same}")
    for name, r in (("num_proc 1", one), ("num_proc 2", two)):
        ph = r["phases"]
        print(f"{name:<20} {r['wall']:.1f} s wall, {r['cpu']:.1f} s CPU, {n / r['wall']:.0f} samples/s, peak RSS {r['rss_mb']:.0f} MB; "
              f"CPU s by phase: start-up {ph['start-up']:.2f}, generate {ph['generate']:.2f} "
              f"(workers {ph['generate (workers)']:.2f}), merge {ph.get('merge', 0.0):.2f} (beside generate: {ph.get('merge (beside generate)', 0.0):.2f}), other {r['cpu'] - ph['start-up'] - ph['generate'] - ph.get('merge', 0.0):.2f}")
        print(f"{'':<20} wall s from launch: {timeline(ph['wall'], r['wall'])}")
    p1, p2 = one["phases"], two["phases"]
    serial1 = one["cpu"] - p1["generate"]  # start-up, merge and the rest: the same work in both runs
    serial2 = two["cpu"] - p2["generate"]
    g1, g2 = p1["generate"], p2["generate"]
    projected2 = serial2 + g2 / 2  # wall on 2 free cores: serial parts + the workers' CPU shared out evenly
    # ... unless one worker carries more than half of generate (its own CPU; the parent's R shares the other core)
    per_worker = [w["cpu"] for w in p2["wall"]["workers"]]
    busiest = serial2 + max([g2 / 2] + per_worker)
    walls = sorted(a["wall"] / b["wall"] for a, b in zip(ones, twos))
    print(f"GOAL 1 ratio         samples/s 2 procs / 1 proc = {one['wall'] / two['wall']:.2f} wall-clock (goal >= 1.70; "
          f"load-dependent); from CPU seconds on 2 free cores: {one['cpu'] / projected2:.2f} "
          f"(= {one['cpu']:.1f} / ({serial2:.1f} serial + {g2:.1f} / 2 generate)), {one['cpu'] / busiest:.2f} with the "
          f"workers' own CPU ({' / '.join(f'{c:.2f}' for c in per_worker)} s: the busier one bounds it when over half)"
          + (f"; per round (each round's own pair of builds) {' / '.join(f'{r:.2f}' for r in walls)}, median "
             f"{statistics.median(walls):.2f}" if len(walls) > 1 else ""))
    parent = g2 - p2["generate (workers)"]  # the parent during generate: plan, forward moved slots, list parts, merge beside
    # d, the workers' CPU over one process's generate: what each worker redoes (token counts of lines every worker meets:
    # labels, figures, formula texts; eligibility of every company; a re-dealt company's memos), the moved slots (the
    # owner replays their draws; each task of a few moved slots has fixed costs: a draft and token-cap pass, encoding,
    # two part files, messages, a part the merge opens), and the machine's noise (+-15 %). By cProfile call counts at
    # --num 10000 (f167047, 1 process vs the two workers summed): encode_ordinary 15,929 -> 19,563 (lines both workers
    # meet), registry valid / grounded / accepts x2 (eligibility memos), draw_target 15,384 -> 21,814 and _draft 5,000 ->
    # 6,527 (1,527 moved slots' replays), part passes 100 -> 452 (one per worker result, ~257 of them of moved slots only;
    # 656 and 456 before queued tasks of a shard were taken together); compute, render_statement, write: the same counts
    extra = max(0.0, p2["generate (workers)"] - g1)
    wall2 = p2["wall"]
    # each worker is forked in turn by the parent: its CPU per fork (measured) is serial, P times
    spawn_each = max(wall2["spawn cpu"], default=0.0)
    merge_tail = max(0.0, wall2.get("merge end", 0.0) - (wall2["shards"][-1] if wall2["shards"] else 0.0))
    print(f"serial parts         start-up {p2['start-up']:.2f} s + merge {p2.get('merge', 0.0):.2f} s + other "
          f"{serial2 - p2['start-up'] - p2.get('merge', 0.0):.2f} s CPU; generate 1 proc {g1:.2f} s, 2 procs {g2:.2f} s CPU "
          f"(workers {p2['generate (workers)']:.2f}: d = {extra:.2f} s more than 1 process: work redone per process, moved slots; parent R = {parent:.2f} s, "
          f"of it the merge thread {p2.get('merge (beside generate)', 0.0):.2f}); a worker's spawn (fork) {spawn_each:.3f} s CPU "
          f"in the parent; wall: merge done {merge_tail:.2f} s after the last shard (load-dependent)")
    for procs in args.procs:
        out = Path(tempfile.mkdtemp(prefix="synth_scale_procs_")) / "out"
        try:
            run = build(args, out, procs, env)
            same = same and json.dumps(digest(out)) in digests
        finally:
            shutil.rmtree(out.parent, ignore_errors=True)
        print(projection(procs, run, one), flush=True)
    if not args.no_pair:
        print(pair_line(args, tmp_pair(), env))
    import tiktoken

    floor = one["floor"]
    ratios = sorted(r["cpu"] / r["floor"] for r in ones)
    print(f"tokenize alone       {floor:.1f} s CPU ({tokens / max(floor, 1e-9) / 1e6:.2f} M tokens/s), every emitted prompt from scratch, "
          f"timed right after the 1-process build it is compared with "
          f"(tiktoken {tiktoken.__version__}: 0.14 encodes ~2.2x faster than 0.12, which lowers this floor)")
    print(f"GOAL 2 ratio         end-to-end CPU / tokenize-alone CPU = {one['cpu'] / floor:.2f}  (goal <= 0.70; "
          f"{one['cpu']:.1f} s / {floor:.1f} s, 1 process, includes start-up and merge; generate alone {g1 / floor:.2f})"
          + (f"; per round {' / '.join(f'{r:.2f}' for r in ratios)}, median {statistics.median(ratios):.2f}" if len(ratios) > 1 else ""))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
