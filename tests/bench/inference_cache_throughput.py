"""Relative aput throughput: the distill JSONL cache before the merge vs ledgerlm.inference.cache
(same machine, same load, alternating order), then reopen + get of every key.

    git show 943b760:synth/distill/cache.py > /tmp/oldcache/oldcache.py
    python tests/bench/inference_cache_throughput.py /tmp/oldcache
"""
import asyncio, os, sys, tempfile, time
sys.path.insert(0, sys.argv[1])
import oldcache  # noqa: E402
from ledgerlm.inference.cache import CompletionCache
from ledgerlm.inference.sampling import Completion

N, CONC = 4000, 32
TEXT = "<think>" + "step " * 300 + "</think>Final answer: 44.13"

async def drive(put):
    sem = asyncio.Semaphore(CONC)
    async def one(i):
        async with sem:
            await asyncio.sleep(0)
            await put(i)
    await asyncio.gather(*(one(i) for i in range(N)))

def run_old(d):
    c = oldcache.CompletionCache(f"{d}/old.jsonl")
    rec = lambda i: {"item_id": f"i{i}", "sample_index": 0, "seed": 1, "teacher": "t",
                     "completion": {"text": TEXT, "reasoning": None, "finish_reason": "stop", "prompt_tokens": 5, "completion_tokens": 300, "error": None}}
    t = time.perf_counter(); asyncio.run(drive(lambda i: c.aput(f"k{i}", rec(i)))); c.close(); return time.perf_counter() - t

def run_new(d):
    c = CompletionCache(f"{d}/new.jsonl")
    comp = Completion(text=TEXT, prompt_tokens=5, completion_tokens=300)
    t = time.perf_counter(); asyncio.run(drive(lambda i: c.aput(f"k{i}", comp, item_id=f"i{i}", sample_index=0, seed=1, teacher="t"))); c.close(); return time.perf_counter() - t

with tempfile.TemporaryDirectory() as d:
    for r in range(6):
        if r % 2: n, o = run_new(d), run_old(d)
        else: o, n = run_old(d), run_new(d)
        print(f"round {r}: old {N/o:.0f} puts/s, new {N/n:.0f} puts/s")
        os.remove(f"{d}/old.jsonl"); os.remove(f"{d}/new.jsonl")
    c = CompletionCache(f"{d}/r.jsonl")
    for i in range(N): c.put_many([(f"k{i}", Completion(text=TEXT), {})]) if i % 500 == 0 else None
    asyncio.run(drive(lambda i: c.aput(f"k{i}", Completion(text=TEXT))))
    c.close()
    t = time.perf_counter(); c = CompletionCache(f"{d}/r.jsonl"); hits = sum(c.get(f"k{i}") is not None for i in range(N)); dt = time.perf_counter() - t
    print(f"reopen + {N} gets: {dt:.3f}s, hits {hits}")
