"""Arith: add two integers. The smallest complete `Benchmark` (tests/test_harness_example.py runs it end to end).

    ledgerlm eval --model oracle --tasks arith --output_path runs/arith   # after register("arith", "harness_example.benchmark:Arith")

Everything else (sampler, cache, batching, resume, progress, samples.jsonl, results.json) is the runner's.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ledgerlm.evaluate.harness import Benchmark, Metric, Request, Summary

ITEMS = Path(__file__).with_name("items.jsonl")
_INT = re.compile(r"-?\d+")


class Arith(Benchmark):
    """add two integers (example benchmark)"""
    name = "arith"
    version = 1
    primary_metric = "exact_match"
    higher_is_better = {"exact_match": True}

    def load(self) -> list[dict[str, Any]]:
        rows = [json.loads(line) for line in ITEMS.read_text(encoding="utf-8").splitlines() if line.strip()]
        # `solution`: what the `oracle` backend answers with (a reference model for anchors/tests)
        return [{**r, "answer": r["a"] + r["b"], "solution": f"The sum is {r['a'] + r['b']}."} for r in rows]

    def build_request(self, instance: dict[str, Any]) -> Request:
        return Request(messages=[{"role": "user", "content": f"What is {instance['a']} + {instance['b']}? Answer with the number."}])

    def score(self, instance: dict[str, Any], response) -> dict[str, Any]:
        found = _INT.findall(response.text or "")
        extracted = int(found[-1]) if found else None
        return {"id": instance["id"], "response": response.text, "extracted": extracted, "score": int(extracted == instance["answer"]),
                "error_reason": None if found else "no_number", "backend_error": response.error}

    def summarize(self, samples: list[dict[str, Any]], ctx) -> Summary:
        n = len(samples)
        value = sum(s["score"] for s in samples) / n
        return Summary(metrics={"exact_match": Metric(value=value, n=n)}, text=f"arith: exact match {value:.2%} on {n}")
