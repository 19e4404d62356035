#!/usr/bin/env bash
# NNODES=2 NODE_RANK=0 MASTER_ADDR=node001 bash launch/torchrun_sft.sh configs/sft/qwen2.5-7b-lora.yaml [flags]
#
# torchrun alternative to `accelerate launch` (no accelerate config file): DDP by default; add
# `--deepspeed configs/deepspeed/zero2.json` (or zero3*.json) to the flags for DeepSpeed through the HF Trainer.
# Run once per node with its NODE_RANK; single node: bash launch/torchrun_sft.sh configs/sft/X.yaml
set -euo pipefail

SFT_CONFIG=${1:?usage: bash launch/torchrun_sft.sh configs/sft/X.yaml [flags]}
shift
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
NPROC_PER_NODE=${NPROC_PER_NODE:-$(python -c "import torch; print(max(torch.cuda.device_count(), 1))")}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

exec torchrun \
  --nnodes "$NNODES" --node_rank "$NODE_RANK" --nproc_per_node "$NPROC_PER_NODE" \
  --master_addr "$MASTER_ADDR" --master_port "$MASTER_PORT" \
  train/sft.py --config "$SFT_CONFIG" "$@"
