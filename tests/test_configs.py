"""Every config under configs/ loads and validates, and starts with a comment giving its exact command.

    python -m pytest tests/test_configs.py -q
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs"
YAMLS = sorted(CONFIGS.rglob("*.yaml")) + sorted((REPO / "recipes" / "configs").glob("*.yaml"))
COMMANDS = ("accelerate launch", "sbatch ", "python ", "ledgerlm ", "bash ")


def _rel(path: Path) -> str:
    return str(path.relative_to(REPO))


@pytest.mark.parametrize("path", YAMLS, ids=_rel)
def test_every_yaml_loads_and_starts_with_its_command(path):
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# ") and any(c in first for c in COMMANDS), f"{_rel(path)}: first line {first!r}"
    assert isinstance(yaml.safe_load(path.read_text(encoding="utf-8")), dict)


@pytest.mark.parametrize("path", sorted((CONFIGS / "accelerate").glob("*.yaml")), ids=_rel)
def test_accelerate_presets_validate(path):
    from accelerate.commands.config.config_args import load_config_from_file
    from accelerate.commands.launch import launch_command_parser

    config = load_config_from_file(str(path))  # unknown top-level keys raise here
    options = {action.dest for action in launch_command_parser()._actions}
    nested = {**(config.deepspeed_config or {}), **(config.fsdp_config or {})}
    assert set(nested) <= options, f"{_rel(path)}: unknown keys {set(nested) - options}"
    if config.deepspeed_config:
        assert (REPO / config.deepspeed_config["deepspeed_config_file"]).is_file()
        assert config.mixed_precision in (None, "no") or path.name != "zero2.yaml"
    if path.name == "zero2.yaml":  # must also run on CPU: precision comes from the SFT config
        assert "mixed_precision" not in yaml.safe_load(path.read_text(encoding="utf-8"))
    elif path.name != "single.yaml":
        assert config.num_processes % 8 == 0  # sized for 8xA100-80GB nodes
    if path.name == "fsdp2.yaml":
        assert config.fsdp_config["fsdp_version"] == 2


@pytest.mark.parametrize("path", sorted((CONFIGS / "deepspeed").glob("*.json")), ids=_rel)
def test_deepspeed_json_goes_through_accelerates_plugin(path):
    from accelerate.utils import DeepSpeedPlugin

    raw = json.loads(path.read_text(encoding="utf-8"))
    assert "accelerate launch" in raw["_comment"]
    plugin = DeepSpeedPlugin(hf_ds_config=str(path))
    expected_stage = 3 if "zero3" in path.stem else 2
    assert plugin.zero_stage == expected_stage
    offload = "offload" in path.stem
    assert (plugin.offload_optimizer_device == "cpu") is offload and (plugin.offload_param_device == "cpu") is offload


@pytest.mark.parametrize("path", sorted((CONFIGS / "sft").glob("*.yaml")), ids=_rel)
def test_sft_configs_parse_into_the_script_dataclasses(path):
    """TrlParser fails on any key that is not a ScriptArguments / SFTConfig / ModelConfig field."""
    from ledgerlm.train.chat_templates import resolve_template
    from ledgerlm.train.sft import make_parser

    # use_cpu: this machine has no GPU; bf16 configs are otherwise rejected by TrainingArguments
    script_args, training_args, model_args = make_parser().parse_args_and_config(args=["--config", str(path), "--use_cpu", "true"])
    assert script_args.dataset_name and training_args.output_dir.startswith("runs/")
    assert training_args.assistant_only_loss
    # packing only padding-free with bfd (no attention across examples); the CPU SmolLM2 config does not pack
    assert not training_args.packing or (training_args.packing_strategy == "bfd" and training_args.padding_free)
    if script_args.chat_template:
        resolve_template(script_args.chat_template)
    if model_args.load_in_4bit:
        assert model_args.use_peft  # QLoRA trains an adapter on the 4-bit base
    command = path.read_text(encoding="utf-8").splitlines()[0]
    for preset in [w for w in command.split() if w.startswith("configs/accelerate/")]:
        assert (REPO / preset).is_file(), f"{_rel(path)} names a missing preset {preset}"


@pytest.mark.parametrize("name, dataclass_name", [("finindices_sft", "RecipeConfig"), ("hint_ablation", "AblationConfig"),
                                                   ("real_model_cpu", "RealModelConfig")])
def test_recipe_configs_parse_into_their_dataclasses(name, dataclass_name):
    import importlib.util
    import sys

    from trl import TrlParser

    spec = importlib.util.spec_from_file_location(f"recipe_{name}", REPO / "recipes" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module while parsing
    spec.loader.exec_module(module)
    (config,) = TrlParser((getattr(module, dataclass_name),)).parse_args_and_config(
        args=["--config", str(REPO / "recipes" / "configs" / f"{name}.yaml")])
    assert config.out_dir.startswith("runs/")
