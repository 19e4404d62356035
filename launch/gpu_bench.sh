#!/usr/bin/env bash
# bash launch/gpu_bench.sh            # on one GPU machine; ~5 minutes on an A100/H100
#
# Trains a randomly initialised ~0.5B model (Qwen2.5-0.5B shape, the real 128k tokenizer) for a fixed
# number of steps on a synthesized FinIndices dataset, padded and then packed (bfd, padding-free with a
# flash-attention kernel), and prints tokens/s and MFU for each, plus train/sft.py's overhead over a bare
# SFTTrainer. Needs no model download; the dataset is built from the embedded SEC filings.
# Not yet run by its author (no GPU in the development session): expect to fix small things on first use.
set -euo pipefail
cd "$(dirname "$0")/.."

STEPS=${STEPS:-20}                      # optimizer steps per measurement (first one untimed)
MAX_LENGTH=${MAX_LENGTH:-16384}         # tokens per packed bin / padded row
BATCH_SIZE=${BATCH_SIZE:-4}
ATTN=${ATTN:-flash_attention_2}         # or kernels-community/flash-attn (pip install kernels)
DATA=${DATA:-runs/bench-data}

nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python -m ledgerlm.train.tiny_model --out runs/bench-tokenizer-model >/dev/null   # tokenizer for the token cap
[[ -f "$DATA/manifest.json" ]] || ledgerlm synth --out "$DATA" --num 2000 --tokenizer runs/bench-tokenizer-model \
    --max-tokens "$MAX_LENGTH" --no-progress

python tests/bench/train_throughput.py --data "$DATA" --device cuda --scale 0.5b --attn "$ATTN" \
    --steps "$STEPS" --batch-size "$BATCH_SIZE" --max-length "$MAX_LENGTH" --rows 1000 --repeats 1
