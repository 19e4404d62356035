#!/usr/bin/env bash
# MODEL=Qwen/Qwen2.5-72B-Instruct TP=8 bash launch/serve_vllm.sh
#
# An OpenAI-compatible vLLM server for teacher distillation and evaluation:
#   ledgerlm distill --data runs/data --teacher openai:$SERVED_NAME --base-url http://HOST:$PORT/v1 --out runs/distill
#   ledgerlm eval --benchmark finindices --model openai:$SERVED_NAME --base-url http://HOST:$PORT/v1 --data runs/data --out runs/eval
# A LoRA adapter from train/sft.py is served next to its base with ADAPTER=runs/sft-qwen2.5-7b-lora.
# Reasoning models (Qwen3, DeepSeek-R1) get REASONING_PARSER so `reasoning_content` comes back separately.
set -euo pipefail

MODEL=${MODEL:?set MODEL to a Hub id or local folder}
SERVED_NAME=${SERVED_NAME:-$(basename "$MODEL")}
PORT=${PORT:-8000}
TP=${TP:-$(python -c "import torch; print(max(torch.cuda.device_count(), 1))")}
MAX_MODEL_LEN=${MAX_MODEL_LEN:-}   # tokens; empty = the model's own context length (vLLM refuses a value above it,
                                  # e.g. 40960 for Qwen2.5's 32768); synth with --tokenizer MODEL so prompts fit
GPU_MEMORY_UTILIZATION=${GPU_MEMORY_UTILIZATION:-0.90}

args=(serve "$MODEL" --served-model-name "$SERVED_NAME" --host 0.0.0.0 --port "$PORT"
      --tensor-parallel-size "$TP" --dtype bfloat16
      --gpu-memory-utilization "$GPU_MEMORY_UTILIZATION" --enable-prefix-caching --seed 0)
if [[ -n "$MAX_MODEL_LEN" ]]; then args+=(--max-model-len "$MAX_MODEL_LEN"); fi
if [[ -n "${REASONING_PARSER:-}" ]]; then args+=(--reasoning-parser "$REASONING_PARSER"); fi
if [[ -n "${ADAPTER:-}" ]]; then args+=(--enable-lora --max-lora-rank 64 --lora-modules "$SERVED_NAME-sft=$ADAPTER"); fi
if [[ -n "${API_KEY_ENV:-}" ]]; then args+=(--api-key "${!API_KEY_ENV}"); fi   # key read from the named variable, never echoed

exec vllm "${args[@]}" "$@"
