"""Rejection sampling: K teacher samples per item, each scored by the FinIndices scorer, kept by policy.

    ledgerlm distill --data runs/data --teacher openai:gpt-4o-mini --samples-per-item 4 --out runs/distill

Steps, top to bottom: `plan_jobs` (one job per item x sample index, with its cache key) ->
`run_jobs` (cache hits first; the rest go to the teacher under the rate limiter; every finished
completion is appended to the cache before it counts) -> `assemble` (score every sample, drop
near-duplicates, apply the policy, mix in worked solutions) -> rows + rejects, each sorted by
(item id, sample index), so the output never depends on the order in which requests finished.
Every sample lands in exactly one of train / rejects; a reject carries one reason from REASONS.
"""
from __future__ import annotations

import asyncio
import hashlib
import random
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ledgerlm.contracts import Sample, iter_jsonl
from ledgerlm.errors import InputError
from ledgerlm.evaluate.finindices.scoring import score_response
from ledgerlm.inference.cache import CompletionCache, cache_key
from ledgerlm.inference.ratelimit import RateLimiter
from ledgerlm.inference.reasoning import split_reasoning
from ledgerlm.inference.sampling import Completion, GenerationParams

POLICIES = ("first", "all", "shortest")
REASONS = ("wrong_value", "wrong_format", "no_answer", "truncated", "transport_error",
           "near_duplicate", "not_selected", "solution_unverified")
# scorer error_reason -> reject reason (evaluate/finindices/scoring.py names them)
SCORER_REASONS = {
    "wrong_value": "wrong_value", "missing_values": "wrong_value", "refused": "wrong_value",
    "no_refusal": "wrong_value", "answered_deficient": "wrong_value",
    "no_block": "wrong_format", "not_rows": "wrong_format",
    "unterminated_think": "no_answer", "empty_response": "no_answer", "no_number": "no_answer",
}
REQUIRED_FIELDS = ("id", "messages", "answer", "paradigm", "axis", "hint")


@dataclass(frozen=True)
class DistillConfig:
    teacher: str  # model spec: openai:MODEL | vllm:PATH | hf:PATH
    samples_per_item: int = 4  # K teacher samples per item
    temperature: float = 0.7  # > 0 so the K samples differ
    top_p: float = 1.0
    max_tokens: int = 4096  # new tokens per sample; longer answers are rejected as truncated
    seed: int = 0
    policy: str = "first"  # first | all | shortest: which verified samples of an item become rows
    mix_solutions: str | None = None  # "unsolved" or a fraction F of all items (solutions of unsolved items first)
    concurrency: int = 8  # requests in flight
    batch_size: int = 1  # conversations per sampler call (local hf:/vllm: teachers batch)
    rps: float | None = None  # requests per second
    tpm: float | None = None  # tokens per minute (prompt estimate + max_tokens, corrected by usage)

    def __post_init__(self) -> None:  # bad settings fail before any request is paid for
        if self.policy not in POLICIES:
            raise InputError(f"unknown policy {self.policy!r}; use one of {POLICIES}", field="policy")
        if self.samples_per_item < 1 or self.concurrency < 1 or self.batch_size < 1 or self.max_tokens < 1:
            raise InputError("samples-per-item, concurrency, batch-size and max-tokens must be >= 1", field="samples_per_item")
        mix_fraction(self.mix_solutions)

    def params_dict(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens}

    def generation(self, seed: int) -> GenerationParams:
        """The sampler's params for one sample (its own seed)."""
        return GenerationParams(max_tokens=self.max_tokens, temperature=self.temperature, top_p=self.top_p, seed=seed)


@dataclass(frozen=True)
class Job:
    item_id: str
    sample_index: int
    seed: int  # the seed sent to the teacher for this sample
    key: str  # cache key
    messages: list[dict[str, Any]]
    estimated_tokens: int  # for the tokens/minute bucket


@dataclass
class Progress:
    """Live counters for the progress bar (updated on the event loop as samples finish)."""

    done: int = 0
    verified: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def acceptance(self) -> float:
        return self.verified / self.done if self.done else 0.0


# ---------------------------------------------------------------- items and jobs

def load_items(data: str | Path, split: str = "train", hint: str = "both", limit: int | None = None) -> list[dict[str, Any]]:
    """Contract-4 rows of `split` (DATASET_DIR/{split}.jsonl, or a .jsonl file), filtered by hint variant."""
    path = Path(data)
    if path.is_dir():
        path = path / f"{split}.jsonl"
    if not path.is_file():
        raise InputError(f"no {split}.jsonl in the dataset folder", path=str(path))
    items, seen = [], set()
    for line_no, sample in iter_jsonl(path, Sample, numbered=True):  # contract 4, typed: a bad row names file:line + field
        row = sample.to_dict()
        missing = [f for f in REQUIRED_FIELDS if f not in row]
        if missing:
            raise InputError(f"line {line_no} (id {row.get('id')!r}) lacks {missing}", path=str(path), field=missing[0])
        if row["id"] in seen:
            raise InputError(f"line {line_no}: duplicate id {row['id']!r}", path=str(path), field="id")
        seen.add(row["id"])
        try:  # an unusable answer fails now, not after paying the teacher
            score_response(row, "Final answer: 0")
        except InputError as err:
            raise InputError(f"line {line_no}: {err}", path=str(path)) from err
        if hint == "both" or bool(row["hint"]) == (hint == "hint"):
            items.append(row)
    return items[:limit] if limit else items


def sample_seed(seed: int, sample_index: int) -> int:
    """A per-sample teacher seed (31 bits, as OpenAI-compatible servers accept)."""
    digest = hashlib.sha256(f"ledgerlm-distill/{seed}/{sample_index}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def prompt_messages(item: dict[str, Any]) -> list[dict[str, Any]]:
    """The item's prompt: its messages without any assistant turn, as role/content pairs."""
    return [{"role": m["role"], "content": m["content"]} for m in item["messages"] if m.get("role") != "assistant"]


def plan_jobs(items: list[dict[str, Any]], config: DistillConfig, render: Callable[[list], Any] = lambda m: m,
              model_id: str | None = None) -> list[Job]:
    """One job per item x sample index; the cache key (`ledgerlm.inference.cache.cache_key`) covers the
    teacher's model id (default: the --teacher spec), the prompt as `render` gives it, the sample's
    generation params with its seed, and the sample index."""
    jobs = []
    for item in items:
        messages = prompt_messages(item)
        rendered = render(messages)
        estimate = int(item.get("n_tokens") or sum(len(m["content"]) for m in messages) // 3) + config.max_tokens
        for k in range(config.samples_per_item):
            seed = sample_seed(config.seed, k)
            key = cache_key(model_id or config.teacher, rendered, config.generation(seed), sample_index=k)
            jobs.append(Job(item["id"], k, seed, key, messages, estimate))
    return jobs


# ---------------------------------------------------------------- running

def completion_dict(completion: Completion) -> dict[str, Any]:
    return {"text": completion.text, "reasoning": completion.reasoning, "finish_reason": completion.finish_reason,
            "prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens,
            "error": completion.error}


def run_jobs(teacher, jobs: list[Job], cache: CompletionCache, config: DistillConfig,
             items_by_id: dict[str, dict[str, Any]], progress: Progress | None = None,
             on_update: Callable[[Progress], None] | None = None) -> dict[str, dict[str, Any]]:
    """Outcome (cache record shape) for every job: cached ones from the cache, the rest from the teacher."""
    return asyncio.run(_run_jobs(teacher, jobs, cache, config, items_by_id, progress or Progress(), on_update))


async def _run_jobs(teacher, jobs, cache, config, items_by_id, progress, on_update):
    outcomes: dict[str, dict[str, Any]] = {}
    todo = []
    for job in jobs:
        hit = cache.get(job.key)
        if hit is None:
            todo.append(job)
            continue
        record = {"key": job.key, "item_id": job.item_id, "sample_index": job.sample_index, "completion": completion_dict(hit)}
        outcomes[job.key] = _count(progress, items_by_id[job.item_id], record, cached=True)
    if on_update:
        on_update(progress)
    limiter = RateLimiter(config.concurrency, rps=config.rps, tpm=config.tpm)

    async def run_batch(batch: list[Job]) -> None:
        params = config.generation(batch[0].seed)
        estimate = sum(job.estimated_tokens for job in batch)
        async with limiter.slot(estimate):
            completions = await teacher.generate([job.messages for job in batch], params,
                                                 [items_by_id[job.item_id] for job in batch])
        limiter.settle(estimate, sum(c.prompt_tokens + c.completion_tokens for c in completions))
        pairs = list(zip(batch, completions, strict=True))
        meta = [{"item_id": job.item_id, "sample_index": job.sample_index, "seed": job.seed, "teacher": config.teacher}
                for job, _ in pairs]
        # durable before it counts; errors, truncations and empty completions are not stored
        if len(pairs) == 1:  # the usual case (--batch-size 1): no extra Task per request
            await cache.aput(pairs[0][0].key, pairs[0][1], **meta[0])
        else:
            await asyncio.gather(*(cache.aput(job.key, completion, **m) for (job, completion), m in zip(pairs, meta)))
        for (job, completion), m in zip(pairs, meta):
            record = {**m, "key": job.key, "completion": completion_dict(completion)}
            outcomes[job.key] = _count(progress, items_by_id[job.item_id], record, cached=False)
        if on_update:
            on_update(progress)

    batches = iter(_batches(todo, config.batch_size))

    async def worker() -> None:  # `concurrency` workers share one iterator: memory stays flat for any dataset size
        for batch in batches:
            await run_batch(batch)

    try:
        await asyncio.gather(*(worker() for _ in range(config.concurrency)))
    finally:
        await teacher.aclose()
    return outcomes


def _batches(jobs: list[Job], size: int) -> list[list[Job]]:
    """Chunks of jobs that share a sample index (and so one seed per sampler call)."""
    by_index: dict[int, list[Job]] = {}
    for job in jobs:
        by_index.setdefault(job.sample_index, []).append(job)
    return [group[i:i + size] for _, group in sorted(by_index.items()) for i in range(0, len(group), max(1, size))]


def _count(progress: Progress, item: dict[str, Any], record: dict[str, Any], *, cached: bool) -> dict[str, Any]:
    """Score the sample once (kept on the in-memory record as `verdict`) and update the live counters."""
    completion = record["completion"]
    record["verdict"] = judge(item, completion)
    verified = record["verdict"][0] == "verified"
    progress.done += 1
    progress.verified += verified
    progress.cached += cached
    progress.prompt_tokens += completion.get("prompt_tokens") or 0
    progress.completion_tokens += completion.get("completion_tokens") or 0
    return record


# ---------------------------------------------------------------- judging and assembling

def judge(item: dict[str, Any], completion: dict[str, Any]) -> tuple[str, str | None, Any]:
    """("verified" | reject reason, scorer detail, ScoreResult or None) for one completion."""
    if completion.get("error") or completion.get("finish_reason") == "error":
        return "transport_error", completion.get("error") or "error", None
    if completion.get("finish_reason") == "length":
        return "truncated", "finish_reason=length", None
    result = score_response(item, completion.get("text") or "")  # a separate `reasoning` is never scored
    if result.score == 1:
        return "verified", None, result
    return SCORER_REASONS.get(result.error_reason, "wrong_value"), result.error_reason, result


def normalized_hash(answer: str, reasoning: str) -> str:
    """Hash of the trajectory with case, punctuation and whitespace differences removed."""
    text = unicodedata.normalize("NFKC", f"{reasoning}\n{answer}").casefold()
    text = re.sub(r"[\W_]+", " ", text).strip()
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _meta(item: dict[str, Any]) -> dict[str, Any]:
    return {"paradigm": item["paradigm"], "axis": item["axis"], "hint": bool(item["hint"])}


def assemble(items: list[dict[str, Any]], jobs: list[Job], outcomes: dict[str, dict[str, Any]],
             config: DistillConfig) -> tuple[list[dict], list[dict]]:
    """Train rows and reject rows, both sorted by (item id, sample index)."""
    jobs_by_item: dict[str, list[Job]] = {}
    for job in jobs:
        jobs_by_item.setdefault(job.item_id, []).append(job)
    rows, rejects, unsolved, solved = [], [], [], []
    for item in items:
        verified = []
        seen_hashes: set[str] = set()
        for job in sorted(jobs_by_item.get(item["id"], []), key=lambda j: j.sample_index):
            record = outcomes[job.key]
            completion = record["completion"]
            status, detail, result = record.get("verdict") or judge(item, completion)
            answer, reasoning = split_reasoning(completion.get("text"), completion.get("reasoning"))
            base = _provenance(item, job, completion, config)
            if status != "verified":
                rejects.append({**base, "reason": status, "detail": detail, "response": completion.get("text"),
                                "reasoning_content": completion.get("reasoning"),
                                "extracted": result.extracted if result else None})
                continue
            digest = normalized_hash(answer or "", reasoning or "")
            if digest in seen_hashes:
                rejects.append({**base, "reason": "near_duplicate", "detail": digest[:16],
                                "response": completion.get("text"), "reasoning_content": completion.get("reasoning"),
                                "extracted": result.extracted})
                continue
            seen_hashes.add(digest)
            assistant = {"role": "assistant", "content": answer or "", "reasoning_content": reasoning or ""}
            verified.append({"messages": prompt_messages(item) + [assistant], **base,
                             "score": result.score, "positional": result.positional})
        kept = {id(row) for row in _apply_policy(verified, config.policy)}
        for row in verified:
            if id(row) in kept:
                rows.append(row)
            else:
                rejects.append({k: v for k, v in row.items() if k != "messages"} | {"reason": "not_selected", "detail": config.policy})
        (solved if verified else unsolved).append(item)
    solution_rows, solution_rejects = mix_solutions(unsolved, solved, config)
    rows += solution_rows
    rejects += solution_rejects
    order = lambda r: (r["item_id"], r["sample_index"] if r["sample_index"] is not None else 1 << 30)  # noqa: E731
    return sorted(rows, key=order), sorted(rejects, key=order)


def _apply_policy(verified: list[dict], policy: str) -> list[dict]:
    if not verified or policy == "all":
        return verified
    if policy == "first":
        return verified[:1]
    if policy == "shortest":
        return [min(verified, key=lambda r: (r["tokens"]["completion"], r["sample_index"]))]
    raise InputError(f"unknown policy {policy!r}; use one of {POLICIES}", field="policy")


def _provenance(item: dict[str, Any], job: Job, completion: dict[str, Any], config: DistillConfig) -> dict[str, Any]:
    return {"id": f"{item['id']}#{job.sample_index}", "item_id": item["id"], "sample_index": job.sample_index,
            "source": "teacher", "teacher": config.teacher, "params": config.params_dict(), "seed": job.seed,
            "finish_reason": completion.get("finish_reason"),
            "tokens": {"prompt": completion.get("prompt_tokens") or 0, "completion": completion.get("completion_tokens") or 0},
            **_meta(item)}


def mix_fraction(spec: str | None) -> float | None:
    """`--mix-solutions` as a fraction: None for "unsolved", 0.0 when off; anything else is an error."""
    if spec in (None, ""):
        return 0.0
    if spec == "unsolved":
        return None
    try:
        fraction = float(spec)
    except ValueError:
        fraction = -1.0
    if not 0.0 <= fraction <= 1.0:
        raise InputError(f"--mix-solutions {spec!r}: give 'unsolved' or a fraction in [0, 1]", field="mix_solutions")
    return fraction


def mix_solutions(unsolved: list[dict], solved: list[dict], config: DistillConfig) -> tuple[list[dict], list[dict]]:
    """Worked-solution rows: all never-solved items ("unsolved"), or round(F x all items), unsolved ones first.

    A solution enters only if the scorer verifies its final answer (else a `solution_unverified`
    reject, and the next candidate takes its place). Candidates are drawn in a seeded order.
    """
    spec = config.mix_solutions
    fraction = mix_fraction(spec)
    if fraction == 0.0:
        return [], []
    rng = random.Random(config.seed)
    pool_unsolved = sorted(unsolved, key=lambda r: r["id"])
    rng.shuffle(pool_unsolved)
    if fraction is None:  # "unsolved"
        candidates, target = pool_unsolved, len(pool_unsolved)
    else:
        target = round(fraction * (len(unsolved) + len(solved)))
        pool_solved = sorted(solved, key=lambda r: r["id"])
        rng.shuffle(pool_solved)
        candidates = pool_unsolved + pool_solved
    rows, rejects = [], []
    for item in candidates:
        if len(rows) == target:
            break
        base = {"id": f"{item['id']}#solution", "item_id": item["id"], "sample_index": None, "source": "solution",
                "teacher": None, "params": None, "seed": None, "finish_reason": None,
                "tokens": {"prompt": 0, "completion": 0}, **_meta(item)}
        solution = item.get("solution") or ""
        result = score_response(item, solution)
        if result.score != 1:
            rejects.append({**base, "reason": "solution_unverified", "detail": result.error_reason,
                            "response": solution, "reasoning_content": None, "extracted": result.extracted})
            continue
        answer, reasoning = split_solution(item, solution)
        assistant = {"role": "assistant", "content": answer, "reasoning_content": reasoning}
        rows.append({"messages": prompt_messages(item) + [assistant], **base, "score": 1, "positional": result.positional})
    return rows, rejects


def split_solution(item: dict[str, Any], solution: str) -> tuple[str, str]:
    """(final answer, worked steps) of a verified solution, shaped like a teacher row: the last
    paragraph is the answer and the steps before it the reasoning — kept only if the answer alone
    still passes the scorer; otherwise the whole solution is the answer."""
    head, sep, last = solution.strip().rpartition("\n\n")
    if not sep:
        head, sep, last = solution.strip().rpartition("\n")
    if sep and head.strip() and score_response(item, last).score == 1:
        return last.strip(), head.strip()
    return solution.strip(), ""
