"""Trainer callbacks: FinIndices exact match during training, and tokens/s next to the loss.

    accelerate launch train/sft.py --config configs/sft/tiny-cpu.yaml   # logs finindices/em/* and tokens_per_second

`FinIndicesEvalCallback` answers a fixed dev subset (stratified over paradigm x hint, seeded)
with batched, left-padded greedy generation on the live model, scores each response with the
shared FinIndices scorer and logs exact match per paradigm x hint through `trainer.log`, so the
numbers land in `trainer.state.log_history` and in TensorBoard / W&B beside the loss. It runs once
before the first step (the baseline on the same chart) and every `every_n_steps` after. Under
DDP / DeepSpeed / FSDP every rank generates its share of the subset (ZeRO-3 and FSDP need all
ranks in `generate`) and the scores are gathered on every rank.
"""
from __future__ import annotations

import random
import time
from collections import defaultdict
from typing import Any

from transformers import TrainerCallback

from ledgerlm.evaluate.finindices.scoring import score_response


def finindices_exact_match(sample: dict[str, Any], response_text: str) -> int:
    """1 iff the shared FinIndices scorer (the paper's set rule) accepts the response."""
    return score_response(sample, response_text).score


def dev_subset(samples: list[dict[str, Any]], n: int, seed: int = 0) -> list[dict[str, Any]]:
    """A fixed subset of `n` samples, round-robin over (paradigm, hint) cells so each cell is represented."""
    cells: dict[tuple, list] = defaultdict(list)
    for sample in samples:
        cells[(sample.get("paradigm", "single"), bool(sample.get("hint")))].append(sample)
    rng = random.Random(seed)
    for key in sorted(cells):
        rng.shuffle(cells[key])
    picked, queues = [], [cells[k] for k in sorted(cells)]
    while len(picked) < n and any(queues):
        for queue in queues:
            if queue and len(picked) < n:
                picked.append(queue.pop())
    return picked


def em_by_cell(records: list[tuple[str, bool, int]], prefix: str = "finindices/em") -> dict[str, float]:
    """Exact match overall and per paradigm x hint from (paradigm, hint, score) records."""
    metrics = {prefix: sum(s for _, _, s in records) / max(len(records), 1)}
    cells: dict[str, list[int]] = defaultdict(list)
    for paradigm, hint, score in records:
        cells[f"{prefix}/{paradigm}/{'hint' if hint else 'nohint'}"].append(score)
    metrics.update({key: sum(v) / len(v) for key, v in sorted(cells.items())})
    return metrics


class FinIndicesEvalCallback(TrainerCallback):
    """Generate on a fixed dev subset every `every_n_steps` (and before step 1); log EM per paradigm x hint."""

    def __init__(self, trainer, samples: list[dict[str, Any]], *, every_n_steps: int = 50, num_samples: int = 64,
                 batch_size: int = 8, max_new_tokens: int = 512, seed: int = 0, scorer=None):
        self.trainer = trainer
        self.samples = dev_subset(samples, num_samples, seed)
        self.every_n_steps, self.batch_size, self.max_new_tokens = every_n_steps, batch_size, max_new_tokens
        self.score = scorer or finindices_exact_match

    def on_train_begin(self, args, state, control, **kwargs):
        if state.global_step == 0:  # a resumed run already has its baseline
            self.evaluate()

    def on_step_end(self, args, state, control, **kwargs):
        if self.every_n_steps > 0 and state.global_step % self.every_n_steps == 0:
            should_log = control.should_log  # trainer.log() clears it; the loss of this step must still be logged
            self.evaluate()
            control.should_log = should_log
        return control

    def generate(self, samples: list[dict[str, Any]]) -> list[str]:
        """Greedy completions for `samples`, batched with left padding; the model must be in eval mode."""
        import torch

        model, tokenizer = self.trainer.model, self.trainer.processing_class
        side, texts = tokenizer.padding_side, []
        tokenizer.padding_side = "left"
        try:
            for start in range(0, len(samples), self.batch_size):
                batch = samples[start:start + self.batch_size]
                prompts = [tokenizer.apply_chat_template([m for m in s["messages"] if m["role"] != "assistant"],
                                                         tokenize=False, add_generation_prompt=True) for s in batch]
                enc = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(model.device)
                with torch.no_grad():
                    out = model.generate(**enc, max_new_tokens=self.max_new_tokens, do_sample=False, use_cache=True,
                                         pad_token_id=tokenizer.pad_token_id)
                texts += tokenizer.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=False)
        finally:
            tokenizer.padding_side = side
        return [t.split(tokenizer.eos_token)[0] if tokenizer.eos_token else t for t in texts]

    def evaluate(self) -> dict[str, float]:
        accelerator = self.trainer.accelerator
        rank, world = accelerator.process_index, accelerator.num_processes
        per_rank = -(-len(self.samples) // world)  # equal batch counts on every rank (ZeRO-3/FSDP generate in lockstep)
        mine = self.samples[rank * per_rank:(rank + 1) * per_rank]
        padded = mine + self.samples[:per_rank - len(mine)] if self.samples else []
        started, model = time.perf_counter(), self.trainer.model
        was_training = model.training
        model.eval()
        try:
            responses = self.generate(padded)
            records = [(s.get("paradigm", "single"), bool(s.get("hint")), int(self.score(s, r)))
                       for s, r in zip(mine, responses)]
            if world > 1:
                from accelerate.utils import gather_object

                records = gather_object(records)
            metrics = em_by_cell(records)
            metrics["finindices/eval_seconds"] = round(time.perf_counter() - started, 2)
            # logged in eval mode: SFTTrainer.log then leaves its pending train metrics (entropy, accuracy)
            # for the loss entry of this step instead of merging them into ours
            self.trainer.log(dict(metrics))
        finally:
            model.train(was_training)
        return metrics


class TokensPerSecondCallback(TrainerCallback):
    """Adds `tokens_per_second` to each loss log: non-padding input tokens (all ranks) per second of
    training-step time since the previous log. Time spent in evals, logging and checkpoints is left out.

    Needs `include_num_input_tokens_seen="non_padding"` (train/sft.py sets it). Insert it first
    (`trainer.callback_handler.callbacks.insert(0, cb)`) so TensorBoard / W&B callbacks see the value.
    """

    def __init__(self):
        self.tokens_at_last_log, self.step_started, self.busy_seconds = 0, None, 0.0

    def on_train_begin(self, args, state, control, **kwargs):
        self.tokens_at_last_log, self.busy_seconds = state.num_input_tokens_seen, 0.0

    def on_step_begin(self, args, state, control, **kwargs):
        self.step_started = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        if self.step_started is not None:
            self.busy_seconds += time.perf_counter() - self.step_started
            self.step_started = None

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs is None or "loss" not in logs or self.busy_seconds <= 0:
            return
        rate = (state.num_input_tokens_seen - self.tokens_at_last_log) / self.busy_seconds
        self.tokens_at_last_log, self.busy_seconds = state.num_input_tokens_seen, 0.0
        logs["tokens_per_second"] = round(rate, 1)
        if state.log_history and state.log_history[-1].get("step") == state.global_step:
            state.log_history[-1]["tokens_per_second"] = logs["tokens_per_second"]
