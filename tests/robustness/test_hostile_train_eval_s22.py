"""Hostile input to eval, training and the OpenAI backend (audit s21c #7-#11): each gives one clear error.

    python -m pytest tests/robustness/test_hostile_train_eval_s22.py -q

#7: a server that echoes the Authorization header in its error body: the API key appears nowhere
(stderr, results.json, samples.jsonl, distill's rejects). #8: train/sft.py configs that are wrong are
refused before any model loads, with one line naming the config file and the key (exit 1, as every config error). #9: non-UTF-8
bytes in a JSONL name the file and line. #10: an --out whose parent is a file names the path. #11:
a manifest with a non-list `config.sources`; `eval --limit -1`.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from .fake_openai import RawServer

KEY = "sk-test-SECRET-s22"


def _echo_auth(headers) -> bytes:
    auth = headers.get("authorization", "")
    return json.dumps({"error": {"message": f"Incorrect API key provided: {auth} (key {auth[7:]})"}}).encode()


def EchoAuthServer(status: int) -> RawServer:  # noqa: N802
    """Loopback server answering every POST with `status` and a body quoting the Authorization header."""
    return RawServer([], status=status, body_for=_echo_auth)


# --- #7: the API key echoed by a server ---------------------------------------------------------------

@pytest.mark.parametrize("status", [401, 500])
def test_echoed_api_key_is_redacted_from_backend_errors(status, monkeypatch):
    from ledgerlm.inference.sampling import GenerationParams, make_sampler

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with EchoAuthServer(status) as server:
        sampler = make_sampler("openai:m", base_url=server.url, max_retries=1, timeout=10, backoff_base=0.01, backoff_max=0.01)
        [c] = sampler.generate([[{"role": "user", "content": "hi"}]], GenerationParams(max_tokens=4))
    assert c.finish_reason == "error" and "Incorrect API key provided: Bearer ***" in c.error, c.error
    assert KEY not in c.error and "SECRET" not in c.error


def test_eval_cli_never_writes_an_echoed_api_key(tmp_path, capsys, monkeypatch):
    from eval_fixtures import make_rows, write_dataset

    from ledgerlm.cli import main as ledgerlm_main

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    write_dataset(tmp_path / "data", make_rows(2, seed=1))
    with EchoAuthServer(401) as server:
        code = ledgerlm_main(["eval", "--benchmark", "finindices", "--model", "openai:gpt-4o-mini", "--base-url", server.url,
                              "--max-retries", "0", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "run"), "--limit", "2"])
    out, err = capsys.readouterr()
    assert code in (0, 3) and KEY not in out + err
    files = [p for p in (tmp_path / "run").rglob("*") if p.is_file()]
    assert any(p.name == "samples.jsonl" for p in files)
    assert "Bearer ***" in (tmp_path / "run" / "samples.jsonl").read_text(encoding="utf-8")
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path


def test_distill_never_prints_an_echoed_api_key(tmp_path, capsys, monkeypatch):
    from distill_fixtures import make_items, write_dataset

    from ledgerlm.synth.distill.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    data = write_dataset(tmp_path / "data", make_items(2))
    with EchoAuthServer(401) as server:
        main(["--data", str(data), "--teacher", "openai:m", "--samples-per-item", "1", "--out", str(tmp_path / "out"),
              "--max-retries", "0", "--no-progress", "--max-failed-fraction", "1.0", "--base-url", server.url])
        assert server.hits >= 1
    out, err = capsys.readouterr()
    assert KEY not in out + err
    for path in (tmp_path / "out").rglob("*"):
        assert not path.is_file() or KEY.encode() not in path.read_bytes(), path


# --- #8: train/sft.py configs -----------------------------------------------------------------------

SFT_BASE = {"model_name_or_path": "{tmp}/model", "dataset_name": "{tmp}/data", "output_dir": "{tmp}/out", "bf16": "false",
            "use_peft": "true", "lora_r": "8", "max_steps": "2", "per_device_train_batch_size": "1", "report_to": "none"}
SFT_BAD = {  # key: (YAML value, what the one line says after "field 'key': ")
    "dataset_name": ("/nonexistent/data", "'/nonexistent/data': no such file or folder, and not a Hugging Face Hub id"),
    "model_name_or_path": ("/nonexistent/model", "'/nonexistent/model': no such file or folder, and not a Hugging Face Hub id"),
    "dtype": ("float128", "'float128' is not one of auto, bfloat16, float16, float32"),
    "lora_r": ("0", "0 is not a positive integer"),
    "per_device_train_batch_size": ("0", "0 is not a positive integer"),
    "output_dir": ("{tmp}/afile", "'{tmp}/afile' is a file, not a folder (output_dir must be a folder)"),
    "max_steps": ("-5", "-5 is not a positive integer (or -1: train num_train_epochs)"),
    "learning_rate": ("fast", "'fast' is not a number"),
    "use_peft": ("maybe", "'maybe' is not true or false"),
}


def sft_config(tmp_path, **changes) -> str:
    (tmp_path / "model").mkdir(exist_ok=True)  # never loaded: every check runs before any model or data loads
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "afile").write_text("x")
    values = {**SFT_BASE, **changes}
    path = tmp_path / "c.yaml"
    path.write_text("".join(f"{k}: {v}\n" for k, v in values.items()).replace("{tmp}", str(tmp_path)))
    return str(path)


def run_sft(argv, capsys):
    from ledgerlm.train.sft import cli

    with pytest.raises(SystemExit) as done:
        cli(argv)
    err = capsys.readouterr().err.strip().splitlines()
    return done.value.code, err[-1] if err else ""


@pytest.mark.parametrize("key", sorted(SFT_BAD))
def test_sft_bad_config_value_is_one_line_naming_file_and_key(key, tmp_path, capsys, assert_one_line):
    value, says = SFT_BAD[key]
    config = sft_config(tmp_path, **{key: value})
    code, _ = run_sft(["--config", config], capsys)
    assert_one_line(code)
    assert code == f"train/sft.py: error: file {config}; field {key!r}: {says.replace('{tmp}', str(tmp_path))}"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("text, says", [("", "the config file is empty (expected key: value lines)"),
                                        ("# only a comment\n", "the config file is empty (expected key: value lines)"),
                                        ("model_name_or_path: [1, 2]\n", "field 'model_name_or_path': [1, 2] is a list, not a single string")])
def test_sft_empty_or_list_valued_config(text, says, tmp_path, capsys):
    (tmp_path / "c.yaml").write_text(text)
    code, _ = run_sft(["--config", str(tmp_path / "c.yaml")], capsys)
    assert code == f"train/sft.py: error: file {tmp_path / 'c.yaml'}{';' if says.startswith('field') else ':'} {says}"


def test_sft_output_dir_below_a_file(tmp_path, capsys):
    config = sft_config(tmp_path, output_dir="{tmp}/afile/sub")
    code, _ = run_sft(["--config", config], capsys)
    assert code == f"train/sft.py: error: file {config}; field 'output_dir': '{tmp_path / 'afile'}' is a file, not a folder"


def test_sft_command_line_errors_are_one_line(tmp_path, capsys):
    config = sft_config(tmp_path)
    code, line = run_sft(["--config", config, "--learning_rate", "fast"], capsys)  # argparse: exit 2, no usage text
    assert code == 2 and line.startswith("train/sft.py: error: argument --learning_rate") and "invalid float value: 'fast'" in line
    assert "usage" not in capsys.readouterr().err
    code, _ = run_sft(["--config", config, "--per_device_train_batch_size", "0"], capsys)  # an override: not the file's fault
    assert code == "train/sft.py: error: field 'per_device_train_batch_size': 0 is not a positive integer"


def test_sft_script_refuses_batch_size_zero_before_loading_a_model(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    config = sft_config(tmp_path, per_device_train_batch_size="0")
    done = subprocess.run([sys.executable, "train/sft.py", "--config", config], cwd=Path(__file__).resolve().parents[2],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.stderr.strip().splitlines()[-1] == (f"train/sft.py: error: file {config}; field 'per_device_train_batch_size': "
                                                    "0 is not a positive integer")


# --- #9: bytes that are not UTF-8 in a JSONL ----------------------------------------------------------

def write_not_utf8(path, good_lines: list[str], bad_line_no: int) -> None:
    """`good_lines` with a Latin-1 line (byte 0xe9) inserted as line `bad_line_no`."""
    lines = [line.encode("utf-8") for line in good_lines]
    lines.insert(bad_line_no - 1, '{"id": "caf\xe9"}'.encode("latin-1"))
    path.write_bytes(b"\n".join(lines) + b"\n")


def test_iter_jsonl_names_file_and_line_of_a_bad_byte(tmp_path):
    from ledgerlm.contracts import read_jsonl
    from ledgerlm.errors import InputError

    path = tmp_path / "rows.jsonl"
    write_not_utf8(path, [json.dumps({"id": str(i), "pad": "é" * 3000}) for i in range(40)], 37)  # past the first read chunks
    with pytest.raises(InputError) as err:
        read_jsonl(path)
    assert str(err.value) == f"file {path}: line 37 is not UTF-8 text (byte 0xe9 at column 12)"
    path.write_bytes(b"\xff\xfe" + '{"id": "x"}\n'.encode("utf-16-le"))  # UTF-16 with a BOM
    with pytest.raises(InputError, match="line 1 is not UTF-8 text"):
        read_jsonl(path)


def test_eval_score_and_fidelity_name_the_line_that_is_not_utf8(tmp_path, capsys, assert_one_line):
    from eval_fixtures import make_rows

    from ledgerlm.cli import main as ledgerlm_main

    data = tmp_path / "data.jsonl"
    write_not_utf8(data, [json.dumps(r) for r in make_rows(3, seed=2)], 2)
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({"config": {}}))
    write_not_utf8(folder / "train.jsonl", [json.dumps(r) for r in make_rows(3, seed=2)], 3)
    for argv, path, line in ((["eval", "--benchmark", "finindices", "--model", "oracle", "--data", str(data), "--out", str(tmp_path / "run")], data, 2),
                             (["score", "--benchmark", "finindices", "--predictions", str(data), "--out", str(tmp_path / "s")], data, 2),
                             (["fidelity", str(folder)], folder / "train.jsonl", 3)):
        assert ledgerlm_main(argv) == 1
        err = assert_one_line(capsys.readouterr().err)
        assert err == f"ledgerlm {argv[0]}: error: file {path}: line {line} is not UTF-8 text (byte 0xe9 at column 12)"
    assert not (tmp_path / "run").exists() and not (tmp_path / "s").exists()


# --- #10: output folders that cannot be made; #11: eval --limit below 1 -------------------------------

def test_eval_and_report_outputs_below_or_at_a_file(tmp_path, capsys, assert_one_line):
    from eval_fixtures import make_rows, write_dataset

    from ledgerlm.cli import main as ledgerlm_main

    write_dataset(tmp_path / "data", make_rows(2, seed=3))
    (tmp_path / "afile").write_text("x")
    sub = tmp_path / "afile" / "sub"
    eval_legacy = ["eval", "--benchmark", "finindices", "--model", "oracle", "--data", str(tmp_path / "data"), "--out"]
    eval_harness = ["eval", "--model", "oracle", "--tasks", "finindices", "--data", str(tmp_path / "data"), "--output_path"]
    for argv in (eval_legacy + [str(sub)], eval_harness + [str(sub)]):
        assert ledgerlm_main(argv) == 1
        assert assert_one_line(capsys.readouterr().err) == (f"ledgerlm eval: error: file {sub}: the output folder cannot be made: "
                                                            f"{tmp_path / 'afile'} is a file, not a folder")
    assert ledgerlm_main(eval_legacy + [str(tmp_path / "run")]) == 0
    capsys.readouterr()
    for out, says in ((tmp_path / "afile", "the --out folder is an existing file"),
                      (sub, f"the --out folder cannot be made: {tmp_path / 'afile'} is a file, not a folder")):
        assert ledgerlm_main(["report", str(tmp_path / "run"), "--out", str(out)]) == 1
        assert assert_one_line(capsys.readouterr().err) == f"ledgerlm report: error: file {out}: {says}"
    assert (tmp_path / "afile").read_text() == "x"


def test_make_folder_that_the_system_refuses(tmp_path):
    from ledgerlm.atomic import atomic_open, make_folder
    from ledgerlm.errors import InputError

    if not Path("/proc/self").is_dir():
        pytest.skip("no /proc")
    with pytest.raises(InputError) as err:
        make_folder("/proc/ledgerlm-s22/x")
    assert str(err.value).startswith("file /proc/ledgerlm-s22/x: cannot create the output folder (")
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError, match="cannot be made: .* is a file, not a folder"):
        with atomic_open(tmp_path / "f" / "g" / "out.json") as handle:
            handle.write("{}")


@pytest.mark.parametrize("limit", ["-1", "0", "-0.5"])
def test_eval_limit_must_be_positive(limit, tmp_path, capsys, assert_one_line):
    from eval_fixtures import make_rows, write_dataset

    from ledgerlm.cli import main as ledgerlm_main

    write_dataset(tmp_path / "data", make_rows(2, seed=3))
    for argv in (["eval", "--benchmark", "finindices", "--model", "oracle", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "r")],
                 ["eval", "--model", "oracle", "--tasks", "finindices", "--data", str(tmp_path / "data"), "--output_path", str(tmp_path / "r")]):
        if argv[1] == "--benchmark" and "." in limit:
            continue  # the pre-harness --limit is an integer flag
        assert ledgerlm_main(argv + ["--limit", limit]) == 1
        err = assert_one_line(capsys.readouterr().err)
        assert err.startswith("ledgerlm eval: error: field '--limit': must be positive") and f"not {float(limit):g}" in err
    assert not (tmp_path / "r").exists()


def test_epsbench_limit_must_be_positive(tmp_path, capsys, assert_one_line):
    from ledgerlm.cli import main as ledgerlm_main

    assert ledgerlm_main(["eval", "--benchmark", "epsbench", "--model", "oracle", "--out", str(tmp_path / "r"), "--limit", "-1"]) == 1
    assert assert_one_line(capsys.readouterr().err) == "ledgerlm eval: error: field '--limit': must be a positive number of instances, not -1"
    assert not (tmp_path / "r").exists()


# --- s22b: an API key with a stray \r/\n, a base_url with a query, local paths that are missing, more sft checks ---

def _ok_body(headers) -> bytes:
    auth = headers.get("authorization", "")
    return json.dumps({"choices": [{"message": {"content": auth}, "finish_reason": "stop"}]}).encode()


@pytest.mark.parametrize("raw", [KEY + "\r", KEY + "\n", KEY + "\r\n", "  " + KEY + " \t"])
def test_api_key_surrounding_whitespace_is_stripped(raw, monkeypatch):
    from ledgerlm.inference.sampling import GenerationParams, make_sampler

    monkeypatch.setenv("OPENAI_API_KEY", raw)
    with RawServer([], body_for=_ok_body) as server:
        sampler = make_sampler("openai:m", base_url=server.url, max_retries=0, timeout=10)
        [c] = sampler.generate([[{"role": "user", "content": "hi"}]], GenerationParams(max_tokens=4))
    assert c.finish_reason == "stop" and c.text == f"Bearer {KEY}", c


@pytest.mark.parametrize("raw", ["sk-abc\r\n123SECRET", "sk-abc\n123SECRET", "sk-abc\x01123SECRET", "sk-abcé123SECRET"])
def test_api_key_with_a_control_character_inside_is_one_line_without_the_key(raw, tmp_path, capsys, monkeypatch, assert_one_line):
    from eval_fixtures import make_rows, write_dataset

    from ledgerlm.cli import main as ledgerlm_main
    from ledgerlm.errors import InputError
    from ledgerlm.inference.sampling import make_sampler

    monkeypatch.setenv("OPENAI_API_KEY", raw)
    with pytest.raises(InputError) as err:
        make_sampler("openai:m", base_url="http://127.0.0.1:9/v1")
    assert "OPENAI_API_KEY" in str(err.value) and "SECRET" not in str(err.value) and "\n" not in str(err.value)
    write_dataset(tmp_path / "data", make_rows(2, seed=1))
    with RawServer([], body_for=_ok_body) as server:
        code = ledgerlm_main(["eval", "--benchmark", "finindices", "--model", "openai:m", "--base-url", server.url,
                              "--max-retries", "0", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "run"), "--limit", "2"])
        assert server.hits == 0
    out, err = capsys.readouterr()
    assert code == 1 and "SECRET" not in out + err and "Traceback" not in err
    line = assert_one_line(err)
    assert line.startswith("ledgerlm eval: error: ") and "OPENAI_API_KEY" in line, line


@pytest.mark.parametrize("query", ["?api-version=2024-02-01", "/?api_key=sk-QUERY-SECRET&x=1"])
def test_base_url_query_stays_a_query(query, monkeypatch):
    from ledgerlm.inference.sampling import GenerationParams, make_sampler

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with RawServer([], body_for=_ok_body) as server:
        sampler = make_sampler("openai:m", base_url=server.url + query, max_retries=0, timeout=10)
        [c] = sampler.generate([[{"role": "user", "content": "hi"}]], GenerationParams(max_tokens=4))
        assert c.finish_reason == "stop", c
        assert server.paths == ["/v1/chat/completions" + query.lstrip("/")], server.paths
    assert "QUERY-SECRET" not in sampler.model_id


@pytest.mark.parametrize("key, value", [("model_name_or_path", "runs/no-such-model"), ("dataset_name", "runs/no-data"),
                                        ("model_name_or_path", "./no-such-model"), ("dataset_name", "a/b/c"),
                                        ("model_name_or_path", "~/no-such-model")])
def test_sft_missing_local_path_is_not_taken_for_a_hub_id(key, value, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    config = sft_config(tmp_path, **{key: value})
    code, _ = run_sft(["--config", config], capsys)
    assert code == f"train/sft.py: error: file {config}; field {key!r}: {value!r}: no such file or folder, and not a Hugging Face Hub id"


@pytest.mark.parametrize("value", ["HuggingFaceTB/SmolLM2-135M-Instruct", "gpt2", "runs/x"])
def test_sft_hub_ids_still_pass(value, tmp_path, monkeypatch):
    from ledgerlm.train.sft import _local_or_hub

    monkeypatch.chdir(tmp_path)  # no runs/ here: runs/x is a well-formed Hub id
    _local_or_hub(value, "model_name_or_path", "model folder", {})


@pytest.mark.parametrize("key, value, says", [("learning_rate", "-1", "-1 is not a positive number"),
                                              ("learning_rate", "-1e-4", "-0.0001 is not a positive number"),
                                              ("max_length", "0", "0 is not a positive integer (or null: no limit)"),
                                              ("max_length", "-3", "-3 is not a positive integer (or null: no limit)"),
                                              ("model_name_or_path", "123", "123 is not a string (a local path or a Hugging Face Hub id)")])
def test_sft_more_bad_values(key, value, says, tmp_path, capsys):
    config = sft_config(tmp_path, **{key: value})
    code, _ = run_sft(["--config", config], capsys)
    assert code == f"train/sft.py: error: file {config}; field {key!r}: {says}"
    assert not (tmp_path / "out").exists()


def test_sft_max_length_null_passes_check_args(tmp_path):
    from ledgerlm.train.sft import check_args, make_parser

    config = sft_config(tmp_path, max_length="null")
    check_args(*make_parser().parse_args_and_config(args=["--config", config]), config)


def test_sft_config_equals_form_is_read(tmp_path, capsys):
    config = sft_config(tmp_path, per_device_train_batch_size="0")
    code, _ = run_sft([f"--config={config}"], capsys)
    assert code == f"train/sft.py: error: file {config}; field 'per_device_train_batch_size': 0 is not a positive integer"
    config = sft_config(tmp_path, lora_rr="8")
    code, _ = run_sft([f"--config={config}"], capsys)
    assert code == f"train/sft.py: error: file {config}; field 'lora_rr': unknown key 'lora_rr' (did you mean 'lora_r'?)"
    config = sft_config(tmp_path, per_device_train_batch_size="0")
    code, _ = run_sft([f"--config={config}", "--per_device_train_batch_size", "2", "--max_length", "0"], capsys)
    assert code == "train/sft.py: error: field 'max_length': 0 is not a positive integer (or null: no limit)"
