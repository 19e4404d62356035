"""Resume and export: find the last checkpoint of a run, merge a LoRA adapter into its base model.

    python -m ledgerlm.train.checkpoints merge runs/sft-tiny runs/sft-tiny/merged

Merging reloads the adapter on a fresh copy of the base model on CPU (never on the sharded
training model), so it works the same after DDP, DeepSpeed ZeRO-3 or FSDP runs.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ledgerlm.errors import InputError


def last_checkpoint(output_dir: str | Path) -> str | None:
    """The newest `checkpoint-N` folder in `output_dir` (highest N), or None for a fresh run."""
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(output_dir)) if Path(output_dir).is_dir() else None


def merge_adapter(adapter_dir: str | Path, out_dir: str | Path, dtype: str = "auto") -> Path:
    """Write base model + adapter, merged into plain weights, with the tokenizer, to `out_dir`."""
    from peft import AutoPeftModelForCausalLM
    from transformers import AutoTokenizer

    if not (Path(adapter_dir) / "adapter_config.json").is_file():
        raise InputError("no adapter_config.json: not a LoRA run (nothing to merge)", path=str(adapter_dir))
    model = AutoPeftModelForCausalLM.from_pretrained(str(adapter_dir), dtype=dtype, device_map="cpu")
    merged = model.merge_and_unload()
    merged.save_pretrained(str(out_dir))
    AutoTokenizer.from_pretrained(str(adapter_dir)).save_pretrained(str(out_dir))
    return Path(out_dir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    merge = sub.add_parser("merge", help="merge a LoRA adapter folder into its base model")
    merge.add_argument("adapter_dir")
    merge.add_argument("out_dir")
    last = sub.add_parser("last", help="print the last checkpoint of a run")
    last.add_argument("output_dir")
    args = parser.parse_args(argv)
    if args.command == "merge":
        print(f"merged model written to {merge_adapter(args.adapter_dir, args.out_dir)}")
    else:
        print(last_checkpoint(args.output_dir) or "no checkpoint")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
