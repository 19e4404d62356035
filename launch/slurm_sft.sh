#!/usr/bin/env bash
# mkdir -p runs && sbatch --nodes 2 launch/slurm_sft.sh configs/sft/qwen2.5-32b-zero3.yaml [extra train/sft.py flags]
# SBATCH_ARGS="--nodes 2" bash launch/slurm_sft.sh configs/sft/qwen2.5-32b-zero3.yaml   # same: creates runs/, submits itself
# (SLURM opens --output before the job starts and never creates its folder: a missing runs/ fails the job silently.)
#
# Multi-node SFT on SLURM: one `accelerate launch` per node (srun --ntasks-per-node=1), each spawning one
# process per GPU. Machine rank, main process address and port come from SLURM's variables, so the same
# script runs on any node count. ACCELERATE_CONFIG picks the preset (default: DeepSpeed ZeRO-3 multi-node).
#SBATCH --job-name=ledgerlm-sft
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=64
#SBATCH --exclusive
#SBATCH --output=runs/slurm-%x-%j.out
set -euo pipefail
if [[ -z "${SLURM_JOB_ID:-}" ]]; then   # run by hand: make the --output folder, then submit this script
  mkdir -p runs
  # shellcheck disable=SC2086  # SBATCH_ARGS is a list of sbatch options
  exec sbatch ${SBATCH_ARGS:-} "$0" "$@"
fi

SFT_CONFIG=${1:?usage: sbatch --nodes N launch/slurm_sft.sh configs/sft/X.yaml [flags]}
shift
ACCELERATE_CONFIG=${ACCELERATE_CONFIG:-configs/accelerate/multinode.yaml}
GPUS_PER_NODE=${GPUS_PER_NODE:-${SLURM_GPUS_ON_NODE:-8}}

# The first node of the allocation hosts the rendezvous; the port is derived from the job id so that two
# jobs sharing a node do not collide.
MAIN_PROCESS_IP=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
MAIN_PROCESS_PORT=${MAIN_PROCESS_PORT:-$((29500 + SLURM_JOB_ID % 1000))}
NUM_MACHINES=$SLURM_NNODES
NUM_PROCESSES=$((NUM_MACHINES * GPUS_PER_NODE))

export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
export NCCL_ASYNC_ERROR_HANDLING=1
export HF_HUB_ENABLE_HF_TRANSFER=${HF_HUB_ENABLE_HF_TRANSFER:-0}

echo "nodes=$NUM_MACHINES procs=$NUM_PROCESSES main=$MAIN_PROCESS_IP:$MAIN_PROCESS_PORT config=$SFT_CONFIG"

# SLURM_PROCID (0..nodes-1, one task per node) is the machine rank; single quotes defer its expansion to
# each node's task.
srun --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c '
  accelerate launch \
    --config_file "'"$ACCELERATE_CONFIG"'" \
    --num_machines '"$NUM_MACHINES"' \
    --num_processes '"$NUM_PROCESSES"' \
    --machine_rank "$SLURM_PROCID" \
    --main_process_ip '"$MAIN_PROCESS_IP"' \
    --main_process_port '"$MAIN_PROCESS_PORT"' \
    --rdzv_backend static \
    train/sft.py --config "'"$SFT_CONFIG"'" '"$*"'
'
