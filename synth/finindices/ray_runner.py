"""`ledgerlm synth --ray-tasks N`: one Ray task per shard job (`--shard i/n`), then the usual merge.

    pip install 'ledgerlm[ray]'
    ledgerlm synth --config configs/synth/default.yaml --out /shared/synth --ray-tasks 64 --ray-address auto
    ledgerlm synth --out /tmp/synth --num 2000 --ray-tasks 2        # a local Ray instance

This module has no command line of its own (`ledgerlm synth` is the one entry point); `run()` is the API.
Ray schedules, places and retries the tasks (`max_retries`, node failures); each task is exactly what a
SLURM array member runs (`launch/synth_array.slurm`): it builds its own Builder (stores load lazily from
the node's store cache) and writes the shards k with k % n == i into the shared work folder `OUT.work/`
with completion markers, so a retried task skips finished shards and never duplicates rows. The
driver merges once every task has returned; the merged dataset is byte-identical to a one-process run
(tests/test_synth_ray.py). OUT must be on a filesystem every node sees (NFS, Lustre, a mounted bucket).
Ray is an optional extra, imported only when a run starts.
"""
from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path

from ledgerlm.errors import InputError
from ledgerlm.synth.finindices import dataset
from ledgerlm.synth.finindices.config import SynthConfig
from ledgerlm.synth.finindices.contexts import Builder

ENV_PASS = ("LEDGERLM_CACHE_DIR", "TIKTOKEN_CACHE_DIR", "HF_HOME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "OMP_WAIT_POLICY")


def shard_job(cfg_fields: dict, out: str, i: int, n: int) -> dict:
    """One shard job: generate the shards k % n == i of the config into `out`'s work dir; returns its stats."""
    cfg = SynthConfig(**cfg_fields)
    builder = Builder.from_config(cfg)
    fingerprint = cfg.fingerprint()
    if hasattr(builder, "split_rule"):  # as `ledgerlm synth` records it (cli.py): run.json -> manifest
        fingerprint["split_rule"] = builder.split_rule
    with dataset.long_lived_caches():
        done = dataset.generate(Path(out), fingerprint, builder, num_slots=dataset.n_slots(cfg.num, len(cfg.hint_variants)),
                                shard_size=cfg.shard_size, num_proc=cfg.num_proc, select=(i, n), progress=False)
    return {"task": i, "shards": done, "store_loads": getattr(builder.stores, "loads", None)}


def require_ray():
    """The `ray` module, or one InputError line naming the extra that installs it."""
    try:
        import ray
    except ImportError:
        raise InputError("Ray is not installed: pip install 'ledgerlm[ray]'", field="ray-tasks") from None
    return ray


def run(cfg, out: Path, tasks: int, *, address: str | None = None, cpus_per_task: float = 1, max_retries: int = 3,
        init_kwargs: dict | None = None) -> dict:
    """Run `tasks` Ray tasks (one shard job each) and merge; returns the manifest. Starts a local Ray
    instance unless `address` names a cluster ("auto" inside one)."""
    if tasks < 1:
        raise InputError(f"--ray-tasks {tasks}: need >= 1", field="ray-tasks")
    ray = require_ray()

    out = Path(out).resolve()
    env = {k: os.environ[k] for k in ENV_PASS if k in os.environ}
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, runtime_env={"env_vars": env}, include_dashboard=False, log_to_driver=False,
                 **(init_kwargs or {}))
    try:
        job = ray.remote(num_cpus=cpus_per_task, max_retries=max_retries)(shard_job)
        fields = asdict(cfg)
        ray.get([job.remote(fields, str(out), i, tasks) for i in range(tasks)])
    finally:
        if started:
            ray.shutdown()
    return dataset.merge(out, [out])
