"""One-line errors for YAML config files read by dataclass parsers (train/sft.py, recipes/*, synth).

    python -c "from ledgerlm.configcheck import read_yaml_config; print(read_yaml_config('configs/sft/tiny-cpu.yaml', {'x'}))"

A broken file names the file, line and column; a typo'd key names the key, the file and the closest
known key ("did you mean"). Used before TrlParser so a user never sees a parser traceback.
"""
from __future__ import annotations

import dataclasses
import difflib
import sys
from pathlib import Path
from typing import Any, Iterable

from ledgerlm.errors import InputError

TRL_EXTRA_KEYS = {"env"}  # TrlParser: `env:` sets environment variables before parsing


def read_yaml(path: str | Path) -> Any:
    """The parsed YAML document; InputError naming file, line and column when it is not valid YAML."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise InputError("config not found", path=str(path))
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as err:
        raise InputError(f"not UTF-8 text ({err.reason})", path=str(path)) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise InputError(f"not valid YAML: {where}{problem}", path=str(path)) from None


def unknown_key_error(key: str, known: Iterable[str], path: str | Path) -> InputError:
    close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return InputError(f"unknown key {key!r}{hint}", path=str(path), field=key)


def read_yaml_config(path: str | Path, known: Iterable[str]) -> dict:
    """A YAML mapping whose keys are all in `known`; else one InputError naming file and key."""
    doc = read_yaml(path)
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise InputError(f"a config file is a mapping of key: value, not a {type(doc).__name__}", path=str(path))
    known = set(known)
    for key in doc:
        if str(key) not in known:
            raise unknown_key_error(str(key), known, path)
    return doc


def dataclass_keys(*types) -> set[str]:
    return {f.name for t in types for f in dataclasses.fields(t)}


def check_config_argv(argv: list[str], types: tuple, prog: str) -> None:
    """Exit with one line (`PROG: error: file F; field K: unknown key 'K' (did you mean ...)`) when the
    `--config` file of `argv` is missing, not YAML, or has a key none of the dataclasses `types` has."""
    if "--config" not in argv[:-1]:
        return
    path = argv[argv.index("--config") + 1]
    try:
        read_yaml_config(path, dataclass_keys(*types) | TRL_EXTRA_KEYS)
    except InputError as err:
        sys.exit(f"{prog}: error: {err}")
