"""The `ledgerlm` command: one subcommand per step of the data flow.

    ledgerlm statements --company AAPL --period FY2023 --statement income --as markdown

Each subcommand lives in its own module and exposes `main(argv) -> int`; this file only
dispatches, so `ledgerlm --help` stays fast (nothing heavy is imported until a command runs).
"""
from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys

from ledgerlm import __version__
from ledgerlm.cachedir import remove_temp_folders
from ledgerlm.errors import LedgerError

COMMANDS = {
    # statement layer (synth/statements)
    "statements": ("ledgerlm.synth.statements.cli:statements_main", "show one canonical statement"),
    "validate": ("ledgerlm.synth.statements.validate_cli:validate_main", "check facts: A = L + E, conflicts, units, derivability"),
    "fetch": ("ledgerlm.synth.statements.fetch:main", "download SEC companyfacts (needs internet)"),
    # synthesis engine (synth/indices, synth/finindices, synth/distill)
    "compute": ("ledgerlm.synth.indices.cli:main", "one index value with its computation trace"),
    "indices": ("ledgerlm.synth.indices.listing:main", "list the index registry (filter by --family / --axis)"),
    "synth": ("ledgerlm.synth.finindices.cli:main", "build a dataset (default: embedded real SEC sample)"),
    "fidelity": ("ledgerlm.synth.finindices.fidelity:main", "recompute a dataset's answers from its prompt text alone"),
    "distill": ("ledgerlm.synth.distill.cli:main", "teacher trajectories verified by the scorer"),
    # evaluator (evaluate/)
    "eval": ("ledgerlm.evaluate.cli:eval_main", "evaluate a model on finindices / macrolens / epsbench"),
    "score": ("ledgerlm.evaluate.score:main", "score saved model outputs offline"),
    "compare": ("ledgerlm.evaluate.compare:main", "paired deltas with significance between two runs"),
    "report": ("ledgerlm.evaluate.report:main", "markdown + plots for one or more runs"),
    "epsbench": ("ledgerlm.evaluate.epsbench.cli:main", "EPSBench tools: calc, build-schema, build-instances"),
    "export-lm-eval": ("ledgerlm.evaluate.lm_eval.export:main", "write a FinIndices task folder for lm-evaluation-harness (lm_eval --include_path)"),
    # models (ledgerlm/model.py)
    "model": ("ledgerlm.model:main", "prepare a pretrained model folder (e.g. SmolLM2-135M from a pip-installed GGUF)"),
}


# Printed under every command's --help (the test walks COMMANDS and SUBCOMMANDS: each needs an entry).
EXAMPLES = {
    "statements": ["ledgerlm statements --company AAPL --period FY2023 --statement income --as markdown",
                   "ledgerlm statements --company TSM --period FY2023 --statement cashflow --as text"],
    "validate": ["ledgerlm validate", "ledgerlm validate --source my_facts.csv"],
    "fetch": ["SEC_USER_AGENT='Jane Doe jane@example.com' ledgerlm fetch sec --tickers AAPL,MSFT --out data/sec"],
    "compute": ["ledgerlm compute --company NVDA --index revenue_yoy --period FY2026Q4 --json",
                "ledgerlm compute --company AAPL --index roe_avg --period FY2023 --decimals 2"],
    "indices": ["ledgerlm indices", "ledgerlm indices --family profitability", "ledgerlm indices --axis temporal+caliber --json"],
    "synth": ["ledgerlm synth --out runs/finindices",
              "ledgerlm synth --out runs/data --num 300 --tokenizer runs/tiny-model --max-tokens 1024",
              "ledgerlm synth --source my_company.json.gz --out runs/mine",
              "ledgerlm synth --out runs/finindices --ray-tasks 4   # shard jobs as Ray tasks: pip install 'ledgerlm[ray]'"],
    "fidelity": ["ledgerlm fidelity runs/finindices"],
    "distill": ["ledgerlm distill --data runs/finindices --teacher openai:gpt-4o-mini --base-url http://127.0.0.1:8000/v1 --out runs/distill",
                "ledgerlm distill --data runs/finindices --teacher oracle --out runs/distill-oracle --limit 20"],
    "eval": ["ledgerlm eval --tasks list",
             "ledgerlm eval --model oracle --tasks finindices --data runs/finindices --output_path runs/eval-oracle",
             "ledgerlm eval --model hf --model_args pretrained=runs/tiny-model,dtype=float32 --tasks finindices --data runs/data "
             "--limit 8 --gen_kwargs max_gen_toks=256 --output_path runs/eval-tiny",
             "ledgerlm eval --benchmark macrolens --model baseline:naive --data fixture --budget all=20 --out runs/ml-naive  # offline",
             "ledgerlm eval --benchmark epsbench --model hf:runs/tiny-model --limit 2 --max-turns 2 --out runs/eps-tiny  # offline"],
    "score": ["ledgerlm score --benchmark finindices --predictions runs/eval-oracle/samples.jsonl --out runs/rescored"],
    "compare": ["ledgerlm compare runs/eval-before runs/eval-after"],
    "report": ["ledgerlm report runs/eval-before runs/eval-after --out runs/report"],
    "epsbench": ["ledgerlm epsbench calc --schema evaluate/epsbench/release/ticker_schemas_v4/GOOGL_2026Q1.json --json",
                 "ledgerlm epsbench build-schema --company GOOGL --quarter 2026Q1 --out runs/GOOGL_2026Q1.json"],
    "epsbench calc": ["ledgerlm epsbench calc --schema evaluate/epsbench/release/ticker_schemas_v4/GOOGL_2026Q1.json "
                      "--drivers '{\"revenues_yoy\": 0.19}' --json"],
    "epsbench build-schema": ["ledgerlm epsbench build-schema --company GOOGL --quarter 2026Q1 --out runs/GOOGL_2026Q1.json"],
    "epsbench build-instances": ["ledgerlm epsbench build-instances --companies GOOGL NVDA --quarters 2026Q1 2026Q4 --out runs/schemas"],
    "export-lm-eval": ["ledgerlm export-lm-eval --data runs/finindices --out runs/lmeval_tasks",
                       "lm_eval --model hf --model_args pretrained=MODEL --tasks finindices --include_path runs/lmeval_tasks --apply_chat_template"],
    "model": ["ledgerlm model prepare smollm2-135m --out runs/smollm2-135m"],
    "model prepare": ["ledgerlm model prepare smollm2-135m --out runs/smollm2-135m"],
}
SUBCOMMANDS = {"epsbench": ("calc", "build-schema", "build-instances"), "model": ("prepare",)}


def _examples(name: str, rest: list[str]) -> str:
    """The examples block for `ledgerlm NAME [SUB] --help`."""
    sub = rest[0] if rest and rest[0] in SUBCOMMANDS.get(name, ()) else None
    lines = EXAMPLES.get(f"{name} {sub}" if sub else name) or EXAMPLES.get(name, [])
    subs = [] if sub else [f"  ledgerlm {name} {s} --help" for s in SUBCOMMANDS.get(name, ())]
    head = ["", "subcommands (each has its own --help):", *subs] if subs else []
    return "\n".join(head + ["", "examples:", *(f"  {line}" for line in lines)])


def _usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: ledgerlm COMMAND [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "Run `ledgerlm COMMAND --help` for a command's options."]
    return "\n".join(lines)


_PROCESS_ENTRY = False  # True once main() runs as the `ledgerlm` program (argv from sys.argv), not as a library call


def exit_early(code: int) -> int:
    """After a command whose outputs are all written and closed: the `ledgerlm` program flushes and leaves without
    freeing its in-memory caches one object at a time (synth --num 10000: ~1.5 s CPU); a library call gets `code`.
    atexit handlers do not run then: the run's temp folders (`cachedir.temp_folder`) are removed here."""
    if _PROCESS_ENTRY:
        remove_temp_folders()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


@contextlib.contextmanager
def gc_paused():
    """No cyclic garbage collection inside the block; at its end every tracked object is frozen (`gc.freeze`: moved
    to the permanent generation, which collections never scan) and collection is restored. For blocks that make
    state living for the whole run: importing a command's modules and building its start-up state, which young
    collections would otherwise scan again and again (synth start-up: 114 collections, 0.013-0.015 s CPU, gc
    callbacks). The blocks' cyclic garbage (~29,000 objects in synth's) is held until `gc.unfreeze`."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def main(argv: list[str] | None = None) -> int:
    global _PROCESS_ENTRY
    _PROCESS_ENTRY = _PROCESS_ENTRY or argv is None
    try:
        return _dispatch(list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:  # `ledgerlm statements … | head`: the reader left; stop quietly like other CLI tools
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes stdout
        return 141


def _dispatch(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0
    if argv[0] in ("-V", "--version"):
        print(__version__)
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"ledgerlm: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module_name, func_name = COMMANDS[name][0].split(":")
    # the `ledgerlm` program only: freezing is a decision for the process's lifetime, not for a library caller's
    with gc_paused() if _PROCESS_ENTRY else contextlib.nullcontext():
        func = getattr(importlib.import_module(module_name), func_name)
    if "-h" in rest or "--help" in rest:  # the command's own help, then its examples
        try:
            code = func(rest)
        except SystemExit as done:
            code = done.code
        print(_examples(name, rest))
        return int(code or 0)
    try:
        return int(func(rest) or 0)
    except LedgerError as err:
        print(f"ledgerlm {name}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    # `python -m ledgerlm.cli`: this file runs as `__main__`, a second copy of the module beside the `ledgerlm.cli` the
    # commands import, whose `exit_early` reads that module's _PROCESS_ENTRY: run the package's own `main` (else the
    # program freed every cache one object at a time on the way out: synth over 100 companies, 4-9 s CPU of ~40)
    from ledgerlm.cli import main as program_main

    sys.exit(program_main())
