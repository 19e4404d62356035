"""`ledgerlm distill` against a real OpenAI-compatible HTTP server on 127.0.0.1 (tests/openai_stub_server.py).

Every (item, sample) gets a scripted outcome — correct, correct with a separate reasoning_content,
a case/whitespace near-duplicate, wrong, malformed, truncated, slow, 429 + Retry-After, 500, dropped
connection, and 500s / drops that never stop — and each must land in the right file with the right reason.
"""
from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # distill_fixtures, with or without tests/__init__.py
from distill_fixtures import answer_text, item_of, make_items, malformed_text, read_jsonl, stub_server, write_dataset  # noqa: E402

from ledgerlm.synth.distill.cli import main  # noqa: E402
from ledgerlm.synth.distill.pipeline import sample_seed  # noqa: E402

K = 3
PLANS = [  # outcome of sample 0, 1, 2 of an item, cycled over the items
    ("correct", "wrong", "malformed"),
    ("truncated", "correct", "dup"),
    ("retry429", "retry500", "drop"),
    ("dead500", "slow", "reasoning"),
    ("malformed", "wrong", "truncated"),
    ("malformed", "correct", "dead_drop"),
    ("correct", "wrong", "malformed"),
]
SEED_TO_INDEX = {sample_seed(0, k): k for k in range(K)}


class ScriptedTeacher:
    """The server's responder: looks up (item, sample index) and plays that outcome; records attempts."""

    def __init__(self, items):
        self.items = {item["id"]: item for item in items}
        self.attempts: dict[tuple[str, int], list[float]] = {}
        self.lock = threading.Lock()

    def outcome(self, item_id: str, k: int) -> str:
        return PLANS[int(item_id.split("-")[1]) % len(PLANS)][k]

    def __call__(self, body: dict) -> dict:
        item = item_of(body, self.items)
        k = SEED_TO_INDEX[body["seed"]]
        with self.lock:
            times = self.attempts.setdefault((item["id"], k), [])
            times.append(time.monotonic())
            attempt = len(times)
        outcome = self.outcome(item["id"], k)
        correct = {"content": f"<think>sample {k}: compute from the figures shown.</think>\n{answer_text(item)}"}
        if outcome == "correct":
            return correct
        if outcome == "dup":  # sample 1's trajectory with different case and spacing
            return {"content": f"<think>SAMPLE  1: Compute from the figures shown.</think>\n\n{answer_text(item)}"}
        if outcome == "reasoning":
            return {"content": answer_text(item), "reasoning_content": f"separate reasoning of sample {k}"}
        if outcome == "wrong":
            return {"content": f"<think>slip</think>{answer_text(item, offset=1.0)}"}
        if outcome == "malformed":
            return {"content": malformed_text(item)}
        if outcome == "truncated":
            return {"content": "<think>Let me think about this very carefully, first the", "finish_reason": "length"}
        if outcome == "slow":
            return {**correct, "latency": 0.4}
        if outcome == "retry429" and attempt == 1:
            return {"status": 429, "retry_after": "0.3"}
        if outcome == "retry500" and attempt == 1:
            return {"status": 500}
        if outcome == "drop" and attempt == 1:
            return {"drop": True}
        if outcome == "dead500":
            return {"status": 500}
        if outcome == "dead_drop":
            return {"drop": True}
        return correct

    def expected(self, item: dict, k: int) -> str:
        """'train' or the reject reason this sample must get."""
        outcome = self.outcome(item["id"], k)
        deficient = item["answer"] == "Insufficient information"
        if outcome in ("correct", "reasoning", "slow", "retry429", "retry500", "drop"):
            return "train"
        if outcome == "dup":
            return "near_duplicate" if self.outcome(item["id"], 1) == "correct" else "train"
        if outcome == "malformed":
            return "wrong_value" if deficient else ("no_answer" if item["answer_format"] == "number" else "wrong_format")
        return {"wrong": "wrong_value", "truncated": "truncated", "dead500": "transport_error",
                "dead_drop": "transport_error"}[outcome]


def run_cli(data, out, url, *extra):
    return main(["--data", str(data), "--teacher", "openai:stub", "--base-url", url, "--out", str(out),
                 "--samples-per-item", str(K), "--policy", "all", "--max-retries", "2", "--backoff-base", "0.01",
                 "--timeout", "5", "--concurrency", "8", "--no-progress", *extra])


def test_every_outcome_lands_in_the_right_file_with_the_right_reason(tmp_path):
    items = make_items(14)
    data = write_dataset(tmp_path / "data", items)
    teacher = ScriptedTeacher(items)
    with stub_server(responder=teacher) as server:
        assert run_cli(data, tmp_path / "out", server.url) == 0
        first_requests = len(server.requests)
        rows = read_jsonl(tmp_path / "out" / "train.jsonl")
        rejects = read_jsonl(tmp_path / "out" / "rejects.jsonl")

        landed = {r["id"]: "train" for r in rows} | {r["id"]: r["reason"] for r in rejects}
        assert len(landed) == len(rows) + len(rejects) == len(items) * K  # each sample in exactly one file
        expected = {f"{item['id']}#{k}": teacher.expected(item, k) for item in items for k in range(K)}
        assert landed == expected
        assert {"wrong_value", "wrong_format", "no_answer", "truncated", "transport_error", "near_duplicate"} <= set(landed.values())

        # 429: the retry waited for Retry-After; 500 and dropped connection were retried once and then succeeded
        t429 = teacher.attempts[("d-002", 0)]
        assert len(t429) == 2 and t429[1] - t429[0] >= 0.3
        assert len(teacher.attempts[("d-002", 1)]) == 2 and len(teacher.attempts[("d-002", 2)]) == 2
        assert len(teacher.attempts[("d-003", 0)]) == 3  # a 500 that never stops: 1 + max_retries attempts

        # contract 5: the assistant turn holds the final answer, reasoning in reasoning_content
        by_id = {r["id"]: r for r in rows}
        row = by_id["d-003#2"]
        assert row["messages"][-1] == {"role": "assistant", "content": answer_text(items[3]),
                                       "reasoning_content": "separate reasoning of sample 2"}
        row = by_id["d-000#0"]
        assert row["messages"][-1]["content"] == answer_text(items[0]) and "<think>" not in row["messages"][-1]["content"]
        assert row["messages"][-1]["reasoning_content"] == "sample 0: compute from the figures shown."
        assert row["messages"][:-1] == items[0]["messages"]
        assert (row["teacher"], row["score"], row["sample_index"], row["seed"]) == ("openai:stub", 1, 0, sample_seed(0, 0))
        assert row["tokens"]["completion"] > 0 and row["tokens"]["prompt"] > 0
        truncated = next(r for r in rejects if r["reason"] == "truncated")
        assert truncated["finish_reason"] == "length"

        manifest = (tmp_path / "out" / "manifest.json").read_text()
        assert '"acceptance"' in manifest

        # rerun: finished samples come from the cache; only errors and truncations are asked again
        retried = {key for key, times in teacher.attempts.items() if teacher.expected(item_of_id(items, key[0]), key[1]) in ("truncated", "transport_error")}
        assert run_cli(data, tmp_path / "out", server.url) == 0
        second = server.requests[first_requests:]
        asked = {(item_of(body, teacher.items)["id"], SEED_TO_INDEX[body["seed"]]) for body in second}
        assert asked == retried
        assert read_jsonl(tmp_path / "out" / "train.jsonl") == rows
        assert [(r["id"], r["reason"]) for r in read_jsonl(tmp_path / "out" / "rejects.jsonl")] == [(r["id"], r["reason"]) for r in rejects]


def item_of_id(items, item_id):
    return next(item for item in items if item["id"] == item_id)


@pytest.mark.parametrize("concurrency", [1, 4])
def test_in_flight_requests_never_exceed_concurrency(tmp_path, concurrency):
    items = make_items(12)
    data = write_dataset(tmp_path / "data", items)
    state = {"now": 0, "max": 0}
    lock = threading.Lock()
    by_id = {item["id"]: item for item in items}

    def responder(body):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.03)
        with lock:
            state["now"] -= 1
        return {"content": answer_text(item_of(body, by_id))}

    with stub_server(responder=responder) as server:
        assert main(["--data", str(data), "--teacher", "openai:stub", "--base-url", server.url, "--out", str(tmp_path / "o"),
                     "--samples-per-item", "2", "--concurrency", str(concurrency), "--no-progress"]) == 0
    assert len(read_jsonl(tmp_path / "o" / "train.jsonl")) == 12  # policy first: one row per item
    assert state["max"] == concurrency if concurrency == 1 else 2 <= state["max"] <= concurrency


def test_requests_per_second_limit_spaces_the_requests(tmp_path):
    items = make_items(6)
    data = write_dataset(tmp_path / "data", items)
    stamps = []
    by_id = {item["id"]: item for item in items}

    def responder(body):
        stamps.append(time.monotonic())
        return {"content": answer_text(item_of(body, by_id))}

    with stub_server(responder=responder) as server:
        assert main(["--data", str(data), "--teacher", "openai:stub", "--base-url", server.url, "--out", str(tmp_path / "o"),
                     "--samples-per-item", "2", "--concurrency", "8", "--rps", "20", "--no-progress"]) == 0
    assert len(stamps) == 12
    assert stamps[-1] - stamps[0] >= 11 / 20 * 0.8  # 12 starts 50 ms apart (unlimited: all 12 within ~50 ms)
