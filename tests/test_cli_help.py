"""Every `ledgerlm` command and subcommand answers --help with exit 0 and examples whose flags it documents;
`ledgerlm eval --tasks list` and `ledgerlm indices` list what can be run.

    python -m pytest -q tests/test_cli_help.py
"""
from __future__ import annotations

import json
import re

import pytest

from ledgerlm import cli

CALLS = [[name] for name in cli.COMMANDS] + [[name, sub] for name, subs in cli.SUBCOMMANDS.items() for sub in subs]


@pytest.mark.parametrize("call", CALLS, ids=" ".join)
def test_help_exits_0_with_examples_using_documented_flags(call, capsys):
    assert cli.main([*call, "--help"]) == 0
    out = capsys.readouterr().out
    assert "usage:" in out and "\nexamples:\n" in out, out[-500:]
    examples = out.split("\nexamples:\n", 1)[1]
    assert f"ledgerlm {' '.join(call)}" in examples
    for sub in cli.SUBCOMMANDS.get(call[0], ()) if len(call) == 1 else ():
        assert f"ledgerlm {call[0]} {sub} --help" in out
    documented = set(re.findall(r"--[a-z][a-z0-9_-]*", out.split("\nexamples:\n", 1)[0]))
    for flag in set(re.findall(r"(?<=\s)--[a-z][a-z0-9_-]*", examples)):
        if call[0] in ("eval", "score") and flag != "--tasks" or call == [call[0]] and call[0] in cli.SUBCOMMANDS:
            continue  # benchmark options appear under `--benchmark NAME --help`, subcommands' under their own help
        assert flag in documented, f"example flag {flag} of `ledgerlm {' '.join(call)}` is not in its --help"


@pytest.mark.parametrize("bench", ["finindices", "macrolens", "epsbench"])
@pytest.mark.parametrize("command", ["eval", "score"])
def test_benchmark_help_documents_every_flag_its_examples_use(command, bench, capsys):
    assert cli.main([command, "--benchmark", bench, "--help"]) == 0
    out = capsys.readouterr().out
    documented = set(re.findall(r"--[a-z][a-z0-9_-]*", out.split("\nexamples:\n", 1)[0]))
    for line in cli.EXAMPLES[command]:
        if f"--benchmark {bench}" in line:
            flags = set(re.findall(r"(?<=\s)--[a-z][a-z0-9_-]*", line.split("#")[0]))
            assert flags <= documented, (line, flags - documented)


def test_eval_without_tasks_names_the_missing_lm_eval_flags(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["eval", "--model", "oracle"])
    assert done.value.code == 2
    assert "the following arguments are required: --tasks, --output_path" in capsys.readouterr().err


def test_score_without_benchmark_names_the_benchmarks(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["score", "--predictions", "x.jsonl"])
    assert done.value.code == 2
    assert "--benchmark is required (epsbench, finindices, macrolens)" in capsys.readouterr().err


def test_eval_tasks_list_names_every_task(capsys):
    assert cli.main(["eval", "--tasks", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    tasks = {(r["benchmark"], r["task"]) for r in rows}
    from ledgerlm.evaluate.tasks import TASKS_DIR

    assert {("finindices", p.stem) for p in TASKS_DIR.glob("finindices/*.yaml")} <= tasks
    assert {("macrolens", f"macrolens_t{i}") for i in range(1, 8)} <= tasks and ("epsbench", "epsbench") in tasks
    assert cli.main(["eval", "--tasks", "list", "--benchmark", "macrolens", "--json"]) == 0
    assert {r["benchmark"] for r in json.loads(capsys.readouterr().out)} == {"macrolens"}


def test_indices_listing_filters_by_family_and_axis(capsys):
    from ledgerlm.synth.indices.registry import load_registry

    registry = load_registry()
    assert cli.main(["indices", "--json"]) == 0
    everything = json.loads(capsys.readouterr().out)
    assert {r["id"] for r in everything} == set(registry)
    assert cli.main(["indices", "--family", "liquidity", "--axis", "domain", "--json"]) == 0
    some = json.loads(capsys.readouterr().out)
    want = {i for i, ix in registry.items() if ix.family == "liquidity" and ix.axis == "domain"}
    assert want and {r["id"] for r in some} == want
    row = next(r for r in everything if r["id"] == "current_ratio")
    assert row["formula"] == registry["current_ratio"].formula and row["result"] == "ratio" and row["periods"] and row["source"]
    assert cli.main(["indices", "--family", "nope"]) == 1
    assert "unknown family nope; known:" in capsys.readouterr().err
