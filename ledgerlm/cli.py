"""The `ledgerlm` command: one subcommand per step of the data flow.

    ledgerlm statements --company AAPL --period FY2023 --statement income --as markdown

Each subcommand lives in its own module and exposes `main(argv) -> int`; this file only
dispatches, so `ledgerlm --help` stays fast (nothing heavy is imported until a command runs).
"""
from __future__ import annotations

import importlib
import sys

COMMANDS = {
    # statement layer (synth/statements)
    "statements": ("ledgerlm.synth.statements.cli:statements_main", "show one canonical statement"),
    "validate": ("ledgerlm.synth.statements.cli:validate_main", "check facts: A = L + E, conflicts, units, derivability"),
    "fetch": ("ledgerlm.synth.statements.fetch:main", "download SEC companyfacts (needs internet)"),
    # synthesis engine (synth/indices, synth/build, synth/distill)
    "compute": ("ledgerlm.synth.indices.cli:main", "one index value with its computation trace"),
    "synth": ("ledgerlm.synth.build.cli:main", "build a dataset (default: embedded real SEC sample)"),
    "distill": ("ledgerlm.synth.distill.cli:main", "teacher trajectories verified by the scorer"),
    # evaluator (evaluate/)
    "eval": ("ledgerlm.evaluate.cli:eval_main", "evaluate a model on finindices / macrolens / epsbench"),
    "score": ("ledgerlm.evaluate.cli:score_main", "score saved model outputs offline"),
    "compare": ("ledgerlm.evaluate.compare:main", "paired deltas with significance between two runs"),
    "report": ("ledgerlm.evaluate.report:main", "markdown + plots for one or more runs"),
    "epsbench": ("ledgerlm.evaluate.epsbench.cli:main", "EPSBench tools: calc, build-schema, build-instances"),
}


def _usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: ledgerlm COMMAND [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "Run `ledgerlm COMMAND --help` for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0
    if argv[0] in ("-V", "--version"):
        from ledgerlm import __version__

        print(__version__)
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"ledgerlm: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module_name, func_name = COMMANDS[name][0].split(":")
    func = getattr(importlib.import_module(module_name), func_name)
    from ledgerlm.errors import LedgerError

    try:
        return int(func(rest) or 0)
    except LedgerError as err:
        print(f"ledgerlm {name}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `ledgerlm statements … | head`: the reader left; stop quietly like other CLI tools
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes stdout
        return 141


if __name__ == "__main__":
    sys.exit(main())
