"""Broken YAML and typo'd keys in synth / SFT / recipe configs give one line naming the file and the key.

    python -m pytest -q tests/test_config_errors.py
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ledgerlm import cli
from ledgerlm.configcheck import check_config_argv, read_yaml_config

REPO = Path(__file__).resolve().parents[1]


def test_synth_config_typo_names_file_key_and_the_close_match(tmp_path, capsys):
    (tmp_path / "c.yaml").write_text("num: 10\nnmu: 5\n")
    assert cli.main(["synth", "--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"ledgerlm synth: error: file {tmp_path / 'c.yaml'}; field 'nmu': unknown key 'nmu' (did you mean 'num'?)"
    assert not (tmp_path / "o").exists()


def test_synth_broken_yaml_names_file_line_and_column(tmp_path, capsys):
    (tmp_path / "c.yaml").write_text("num: [10\nseed: 0\n")
    assert cli.main(["synth", "--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"file {tmp_path / 'c.yaml'}: not valid YAML: line 2, column 5" in err


def test_synth_config_unknown_language_names_file_field_and_the_supported_ones(tmp_path, capsys):
    """New-user audit: `languages: [en, fr]` named an internal template file, after the progress bar had started."""
    (tmp_path / "c.yaml").write_text("languages: [en, fr]\n")
    assert cli.main(["synth", "--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert err == f"ledgerlm synth: error: file {tmp_path / 'c.yaml'}; field 'languages': unsupported language 'fr'; supported: en, zh\n"
    assert not (tmp_path / "o").exists() and not (tmp_path / "o.work").exists()


def _sft_types():
    from trl import ModelConfig, SFTConfig

    from ledgerlm.train.sft import ScriptArguments

    return ScriptArguments, SFTConfig, ModelConfig


def test_every_shipped_sft_and_recipe_config_passes_the_key_check():
    import importlib.util

    types = _sft_types()
    for path in sorted((REPO / "configs" / "sft").glob("*.yaml")):
        check_config_argv(["x", "--config", str(path)], types, "train/sft.py")
    for recipe, cls in (("finindices_sft", "RecipeConfig"), ("hint_ablation", "AblationConfig")):
        spec = importlib.util.spec_from_file_location(f"_recipe_{recipe}", REPO / "recipes" / f"{recipe}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[f"_recipe_{recipe}"] = module  # dataclasses look their module up there
        spec.loader.exec_module(module)
        check_config_argv(["x", "--config", str(REPO / "recipes" / "configs" / f"{recipe}.yaml")], (getattr(module, cls),), recipe)


def test_sft_typo_is_one_line_with_did_you_mean(tmp_path):
    text = (REPO / "configs" / "sft" / "tiny-cpu.yaml").read_text().replace("max_steps: 8", "max_stepz: 8")
    (tmp_path / "s.yaml").write_text(text)
    with pytest.raises(SystemExit) as done:
        check_config_argv(["train/sft.py", "--config", str(tmp_path / "s.yaml")], _sft_types(), "train/sft.py")
    assert str(done.value.code) == (f"train/sft.py: error: file {tmp_path / 's.yaml'}; field 'max_stepz': "
                                    "unknown key 'max_stepz' (did you mean 'max_steps'?)")


def test_train_sft_script_checks_its_config_before_parsing(tmp_path):
    (tmp_path / "s.yaml").write_text("model_name_or_path: [x\n")
    done = subprocess.run([sys.executable, "train/sft.py", "--config", str(tmp_path / "s.yaml")], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith(f"train/sft.py: error: file {tmp_path / 's.yaml'}: not valid YAML: line 2")
    assert "Traceback" not in done.stderr


def test_a_config_that_is_not_a_mapping_is_refused(tmp_path):
    (tmp_path / "c.yaml").write_text("- a\n- b\n")
    with pytest.raises(Exception, match="a config file is a mapping of key: value, not a list"):
        read_yaml_config(tmp_path / "c.yaml", {"a"})

