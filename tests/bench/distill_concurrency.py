"""Distillation throughput vs --concurrency against a loopback OpenAI-compatible server, 50 ms per request.

    python tests/bench/distill_concurrency.py            # prints requests/s at 1 and 32 and the ratio (goal >= 25.6x)

The server (tests/openai_stub_server.py, answering every item correctly after `--latency`) runs in
its own process, as a real teacher server would. Both runs go through `ledgerlm distill` end to end
(cache appends with fsync, scoring, output files); the elapsed time is the run's own (runs.jsonl).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))  # fixtures and the stub server

from distill_fixtures import answer_text, item_of, make_items, stub_server, write_dataset  # noqa: E402


def serve(n_items: int, latency: float) -> None:
    """Child process: serve correct answers for make_items(n_items) until killed."""
    by_id = {item["id"]: item for item in make_items(n_items)}
    server = stub_server(responder=lambda body: {"content": answer_text(item_of(body, by_id))}, latency=latency)
    print(server.url, flush=True)
    server._httpd.serve_forever()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process `pid`, all its threads (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(concurrency: int, n_items: int, latency: float, root: Path) -> float:
    from ledgerlm.synth.distill.cli import main

    data = write_dataset(root / f"data{concurrency}", make_items(n_items))
    out = root / f"out{concurrency}"
    child = subprocess.Popen([sys.executable, __file__, "--serve", "--items", str(n_items), "--latency", str(latency)],
                             stdout=subprocess.PIPE, text=True)
    try:
        url = child.stdout.readline().strip()
        server_cpu, client_cpu = cpu_seconds(child.pid), time.process_time()
        code = main(["--data", str(data), "--teacher", "openai:stub", "--base-url", url, "--out", str(out),
                     "--samples-per-item", "1", "--concurrency", str(concurrency), "--no-progress"])
        client_cpu, server_cpu = time.process_time() - client_cpu, cpu_seconds(child.pid) - server_cpu
    finally:
        child.terminate()
        child.wait()
    manifest = json.loads((out / "manifest.json").read_text())
    assert code == 0 and manifest["counts"]["rows"] == n_items, manifest["counts"]
    run = json.loads((out / "runs.jsonl").read_text().splitlines()[-1])
    print(f"  concurrency {concurrency}: {run['requested']} requests in {run['elapsed_s']:.2f} s; CPU per request: "
          f"distiller {client_cpu / n_items * 1000:.2f} ms (whole `main`, incl. setup and output files), "
          f"server {server_cpu / n_items * 1000:.2f} ms")
    return run["requested"] / run["elapsed_s"]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per request at the server")
    parser.add_argument("--items-1", type=int, default=60, help="requests at concurrency 1")
    parser.add_argument("--items-32", type=int, default=1280, help="requests at concurrency 32")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--items", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.items, args.latency)
        sys.exit(0)
    with tempfile.TemporaryDirectory() as tmp:
        one = measure(1, args.items_1, args.latency, Path(tmp))
        many = measure(32, args.items_32, args.latency, Path(tmp))
    load = os.getloadavg()[0]
    print(f"latency {args.latency * 1000:.0f} ms/request: concurrency 1 -> {one:.1f} req/s, "
          f"concurrency 32 -> {many:.1f} req/s; ratio {many / one:.1f}x (goal >= 25.6x, ideal 32x); "
          f"load average {load:.1f} on {os.cpu_count()} CPUs")
