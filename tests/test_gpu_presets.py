"""GPU presets as the libraries themselves read them (no GPU needed): accelerate's launcher, DeepSpeed's
config class with the Trainer's "auto" values filled in, accelerate's FSDP plugin, TRL's SFTConfig.

    python -m pytest -q tests/test_gpu_presets.py

Each check mirrors a failure that would only show on a GPU node: ZeRO CPU-offload without a DeepSpeed
optimizer (ZeRORuntimeException), FSDP sharded state dicts (Trainer.save_model writes no model), ZeRO-3
saves without gathered weights, sequences longer than the model's context, vLLM's max-model-len above it,
SLURM --output folders that do not exist.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"
ACCELERATE = sorted((CONFIGS / "accelerate").glob("*.yaml"))
DEEPSPEED = sorted((CONFIGS / "deepspeed").glob("*.json"))
SFT = sorted((CONFIGS / "sft").glob("*.yaml"))
# context lengths of the models the GPU presets name (config.json max_position_embeddings)
CONTEXT = {"Qwen/Qwen2.5-0.5B-Instruct": 32768, "Qwen/Qwen2.5-7B-Instruct": 32768, "Qwen/Qwen2.5-32B-Instruct": 32768,
           "Qwen/Qwen3-8B": 40960, "meta-llama/Llama-3.1-8B-Instruct": 131072}


def _rel(path: Path) -> str:
    return str(path.relative_to(REPO))


def _launch_env(path: Path) -> dict[str, str]:
    """The environment `accelerate launch --config_file PATH` gives each process (accelerate's own code)."""
    from accelerate.commands.launch import _validate_launch_command, launch_command_parser
    from accelerate.utils.launch import prepare_deepspeed_cmd_env, prepare_multi_gpu_env

    args = launch_command_parser().parse_args(["--config_file", str(path), "train/sft.py"])
    args, defaults, mp_from_config = _validate_launch_command(args)
    if args.use_deepspeed:  # as accelerate's launch_command does before deepspeed_launcher
        fields = list(defaults.deepspeed_config.keys()) if defaults else []
        args.deepspeed_fields_from_accelerate_config = ",".join(fields + (["mixed_precision"] if mp_from_config else []))
        _, env = prepare_deepspeed_cmd_env(args)
        return env
    return prepare_multi_gpu_env(args) if args.multi_gpu or args.use_fsdp else {}


def _deepspeed_config(path: Path, **training):
    """DeepSpeed's own DeepSpeedConfig after the HF Trainer filled the "auto" values."""
    from deepspeed.runtime.config import DeepSpeedConfig
    from transformers import TrainingArguments
    from transformers.integrations.deepspeed import HfTrainerDeepSpeedConfig

    args = TrainingArguments(output_dir="runs/x", use_cpu=True, bf16=True, report_to="none", **training)
    hf = HfTrainerDeepSpeedConfig(str(path))
    hf.trainer_config_process(args)
    hf.trainer_config_finalize(args, types.SimpleNamespace(config=types.SimpleNamespace(hidden_size=4096)), 1000)
    return DeepSpeedConfig({k: v for k, v in hf.config.items() if not k.startswith("_")})


@pytest.mark.parametrize("path", ACCELERATE, ids=_rel)
def test_accelerate_presets_build_their_plugins(path, monkeypatch):
    env = _launch_env(path)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    if env.get("ACCELERATE_USE_FSDP") == "true":
        from accelerate.utils import FullyShardedDataParallelPlugin
        from torch.distributed.fsdp import StateDictType

        plugin = FullyShardedDataParallelPlugin()
        # SHARDED_STATE_DICT: Trainer.save_model writes only pytorch_model_fsdp_0/ and no loadable model
        assert plugin.state_dict_type == StateDictType.FULL_STATE_DICT, f"{_rel(path)}: {plugin.state_dict_type}"
    if env.get("ACCELERATE_USE_DEEPSPEED") == "true":
        ds_file = REPO / env["ACCELERATE_DEEPSPEED_CONFIG_FILE"] if "ACCELERATE_DEEPSPEED_CONFIG_FILE" in env else None
        assert ds_file is not None and ds_file.is_file(), f"{_rel(path)}: DeepSpeed config file {ds_file}"


@pytest.mark.parametrize("path", DEEPSPEED, ids=_rel)
def test_deepspeed_configs_validate_in_deepspeed(path):
    ds = _deepspeed_config(path, per_device_train_batch_size=1, gradient_accumulation_steps=8, learning_rate=1e-4)
    zero = ds.zero_config
    assert ds.zero_optimization_stage == (3 if "zero3" in path.stem else 2)
    assert ds.train_batch_size == 8 and ds.bfloat16_config.enabled
    offloaded = zero.offload_optimizer is not None and str(zero.offload_optimizer.device).endswith("cpu")
    if offloaded and ds.zero_force_ds_cpu_optimizer:
        # DeepSpeedEngine raises ZeRORuntimeException for the Trainer's torch AdamW on offloaded optimizer state
        assert ds.optimizer_name is not None, f"{_rel(path)}: CPU offload needs an `optimizer` block"
        assert ds.optimizer_params["lr"] == 1e-4  # "auto" took the SFT config's value
    if ds.zero_optimization_stage == 3:
        assert zero.gather_16bit_weights_on_model_save, f"{_rel(path)}: ZeRO-3 save_model would write no weights"


def test_zero3_offload_without_optimizer_block_is_what_deepspeed_rejects(tmp_path):
    """The check above can fail: the preset as it was (no optimizer block) is caught."""
    raw = json.loads((CONFIGS / "deepspeed" / "zero3_offload.json").read_text())
    raw.pop("optimizer")
    path = tmp_path / "zero3_offload_no_optimizer.json"
    path.write_text(json.dumps(raw))
    ds = _deepspeed_config(path, per_device_train_batch_size=1, gradient_accumulation_steps=8, learning_rate=1e-4)
    assert ds.zero_force_ds_cpu_optimizer and ds.optimizer_name is None


@pytest.mark.parametrize("path", SFT, ids=_rel)
def test_sft_configs_build_sftconfig_and_fit_the_model(path):
    from ledgerlm.train.sft import make_parser

    script_args, training_args, model_args = make_parser().parse_args_and_config(args=["--config", str(path), "--use_cpu", "true"])
    assert training_args.max_length and training_args.assistant_only_loss
    assert not training_args.packing or training_args.padding_free, "packing without padding_free lets examples attend to each other"
    assert isinstance(training_args.warmup_steps, (int, float))
    model = model_args.model_name_or_path
    if model in CONTEXT:
        assert training_args.max_length <= CONTEXT[model], f"{_rel(path)}: max_length above {model}'s context"
        text = path.read_text(encoding="utf-8")
        cap = re.search(r"--max-tokens (\d+)", text)
        assert cap, f"{_rel(path)}: no synth command saying which prompt cap (model tokenizer) fits max_length"
        assert int(cap.group(1)) <= training_args.max_length - 2048, "leave room for the worked solution"
    if training_args.deepspeed:
        assert (REPO / training_args.deepspeed).is_file()


def test_serve_vllm_defaults_to_the_models_own_length(tmp_path):
    """Without MAX_MODEL_LEN the script passes no --max-model-len (vLLM then uses the model's length)."""
    fake = tmp_path / "vllm"
    fake.write_text('#!/usr/bin/env bash\necho "$@"\n')
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}", "MODEL": "Qwen/Qwen2.5-7B-Instruct", "TP": "1"}
    out = subprocess.run(["bash", str(REPO / "launch" / "serve_vllm.sh")], env=env, capture_output=True, text=True, check=True).stdout
    assert "--max-model-len" not in out and "serve Qwen/Qwen2.5-7B-Instruct" in out
    env["MAX_MODEL_LEN"] = "16384"
    out = subprocess.run(["bash", str(REPO / "launch" / "serve_vllm.sh")], env=env, capture_output=True, text=True, check=True).stdout
    assert "--max-model-len 16384" in out


@pytest.mark.parametrize("script", ["slurm_sft.sh", "synth_array.slurm"])
def test_slurm_scripts_create_their_output_folder_before_submitting(script, tmp_path):
    text = (REPO / "launch" / script).read_text()
    folder = re.search(r"#SBATCH --output=([^/\s]+)/", text).group(1)
    fake = tmp_path / "bin" / "sbatch"
    fake.parent.mkdir()
    fake.write_text('#!/usr/bin/env bash\necho "sbatch $@"\n')
    fake.chmod(0o755)
    work = tmp_path / "clone"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.update(PATH=f"{fake.parent}:{env['PATH']}", SBATCH_ARGS="--nodes 2")
    out = subprocess.run(["bash", str(REPO / "launch" / script), "configs/sft/x.yaml"], cwd=work, env=env,
                         capture_output=True, text=True, check=True).stdout
    assert (work / folder).is_dir() and out.startswith("sbatch --nodes 2 ")


def test_pyproject_extras_and_pins():
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    deps = project["dependencies"] + [d for group in project["optional-dependencies"].values() for d in group]
    names = {re.split(r"[<>=;\[ ]", d, maxsplit=1)[0].lower() for d in deps}
    extras = project["optional-dependencies"]
    assert any(d.startswith("flash-attn") for d in extras["flash"]) and any(d.startswith("bitsandbytes") for d in extras["qlora"])
    assert any(d.startswith("gguf") for d in extras["smollm2"])
    train = {re.split(r"[<>=;\[ ]", d, maxsplit=1)[0]: d for d in extras["train"]}
    assert "transformers>=5,<6" in train["transformers"] and "deepspeed>=0.18.6" in train["deepspeed"]
    assert any(d.startswith("datasets>=4.7") for d in project["dependencies"])
    if "openai" not in names:  # dropped: nothing in the package may import it
        used = subprocess.run(["grep", "-rlE", r"^\s*(import openai|from openai )", "synth", "evaluate", "train", "ledgerlm", "recipes"],
                              cwd=REPO, capture_output=True, text=True).stdout
        assert not used.strip(), f"openai imported but not a dependency: {used}"
