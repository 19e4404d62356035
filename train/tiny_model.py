"""Build a tiny random Llama- or Qwen2-style model with a real 128k tokenizer, saved to a folder.

    python -m ledgerlm.train.tiny_model --out runs/tiny-model

Tests, `configs/sft/tiny-cpu.yaml` and the CPU recipes train this model offline. The tokenizer is
the real DeepSeek-V3 byte-level BPE, shipped inside the package (train/tokenizers/deepseek-v3/,
MIT license, gzipped; no download, nothing outside the repository) with our training chat template (`deepseek_v3_reasoning`), so prompts tokenize exactly as a real model's do;
the weights are random (seeded), so scores are ~0 and only the plumbing is proven.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from ledgerlm.errors import InputError
from ledgerlm.train.chat_templates import resolve_template

DEFAULT_TOKENIZER = Path(__file__).resolve().with_name("tokenizers") / "deepseek-v3" / "tokenizer.json.gz"
SPECIAL = {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>", "pad_token": "<｜▁pad▁｜>"}


def load_tokenizer_object(tokenizer_json: str | Path = DEFAULT_TOKENIZER):
    """A `tokenizers.Tokenizer` from a tokenizer.json file, plain or gzipped (the shipped default)."""
    import gzip

    from tokenizers import Tokenizer

    path = Path(tokenizer_json)
    if not path.is_file():
        raise InputError("tokenizer file not found (give a tokenizer.json or tokenizer.json.gz; the default ships in "
                         "ledgerlm/train/tokenizers/deepseek-v3)", path=str(path))
    try:
        text = gzip.decompress(path.read_bytes()).decode("utf-8") if path.suffix == ".gz" else path.read_text(encoding="utf-8")
        return Tokenizer.from_str(text)
    except Exception as err:  # OSError / gzip / UnicodeDecodeError, or the tokenizers library's own error type
        raise InputError(f"not a readable tokenizer.json: {str(err).splitlines()[0][:200]}", path=str(path)) from None


def write_tokenizer_json(out_file: str | Path, tokenizer_json: str | Path = DEFAULT_TOKENIZER) -> Path:
    """Write the (shipped) tokenizer as a plain tokenizer.json file; returns its path."""
    out = Path(out_file)
    out.parent.mkdir(parents=True, exist_ok=True)
    load_tokenizer_object(tokenizer_json).save(str(out))
    return out


def build_tokenizer(tokenizer_json: str | Path = DEFAULT_TOKENIZER, chat_template: str = "deepseek_v3_reasoning"):
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(tokenizer_object=load_tokenizer_object(tokenizer_json), **SPECIAL)
    tokenizer.chat_template = resolve_template(chat_template).read_text(encoding="utf-8")
    return tokenizer


def build_tiny_model(
    out_dir: str | Path,
    *,
    tokenizer_json: str | Path = DEFAULT_TOKENIZER,
    arch: str = "llama",  # "llama" | "qwen2"
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    num_kv_heads: int = 2,
    intermediate_size: int = 128,
    max_position_embeddings: int = 4096,  # tokens
    seed: int = 0,
) -> Path:
    """Write config, random weights and tokenizer to `out_dir`; returns it. ~8.4M parameters, most in the embedding."""
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config

    tokenizer = build_tokenizer(tokenizer_json)
    config_cls = {"llama": LlamaConfig, "qwen2": Qwen2Config}.get(arch)
    if config_cls is None:
        raise InputError(f"unknown arch {arch!r}; use llama or qwen2", field="arch")
    config = config_cls(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_kv_heads,
        intermediate_size=intermediate_size,
        max_position_embeddings=max_position_embeddings,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    out = Path(out_dir)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ledgerlm.train.tiny_model", description=__doc__.splitlines()[0],
                                     epilog="example: python -m ledgerlm.train.tiny_model --out runs/tiny-model",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder to write the model to")
    parser.add_argument("--arch", default="llama", choices=["llama", "qwen2"])
    parser.add_argument("--tokenizer-json", default=str(DEFAULT_TOKENIZER),
                        help="tokenizer.json or .json.gz (default: the shipped DeepSeek-V3 tokenizer)")
    parser.add_argument("--hidden-size", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    out = build_tiny_model(
        args.out, tokenizer_json=args.tokenizer_json, arch=args.arch, hidden_size=args.hidden_size,
        num_layers=args.layers, seed=args.seed,
    )
    print(f"tiny {args.arch} model written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
