"""One-line errors for YAML config files read by dataclass parsers (train/sft.py, recipes/*, synth).

    python -c "from ledgerlm.configcheck import read_yaml_config; print(read_yaml_config('configs/sft/tiny-cpu.yaml', {'x'}))"

A broken file names the file, line and column; a typo'd key names the key, the file and the closest
known key ("did you mean"); an empty file, and a value of the wrong type or outside a field's choices
(`learning_rate: fast`, `model_name_or_path: [1, 2]`, `dtype: float128`), name the file and the key.
Used before TrlParser so a user never sees a parser traceback or its 150-line usage text.
"""
from __future__ import annotations

import dataclasses
import difflib
import sys
import types as _types
import typing
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


_TRUTH = {"yes", "no", "true", "false", "t", "f", "y", "n", "1", "0"}  # HfArgumentParser's string_to_bool


def value_problem(value: Any, hint: Any, choices: Iterable | None = None) -> str | None:
    """Why `value` (from YAML) does not fit a dataclass field of type `hint` (bool, int, float, str, or one of
    them | None) and `choices`; None when it fits or the type is not one of these. Strings are checked as
    HfArgumentParser would convert them; other values it would pass through unchecked."""
    if value is None:
        return None
    kinds = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, _types.UnionType) else (hint,)
    kinds = [k for k in kinds if k is not type(None)]
    kind = kinds[0] if len(kinds) == 1 and kinds[0] in (bool, int, float, str) else None
    if isinstance(value, (list, dict)) and kind is not None:
        single = "number" if kind in (int, float) else "string" if kind is str else "true or false"
        return f"{value!r} is a {type(value).__name__}, not a single {single}"
    if kind is bool and not (isinstance(value, bool) or value in (0, 1) or (isinstance(value, str) and value.lower() in _TRUTH)):
        return f"{value!r} is not true or false"
    if kind in (int, float):
        try:
            converted = kind(value) if isinstance(value, str) and not isinstance(value, bool) else value
        except ValueError:
            converted = None
        if isinstance(converted, bool) or not isinstance(converted, (int, float)) or (kind is int and not isinstance(converted, int)):
            return f"{value!r} is not {'an integer' if kind is int else 'a number'}"
    if choices is not None and kind is str and str(value) not in list(choices):
        return f"{value!r} is not one of {', '.join(map(str, choices))}"
    return None


def check_values(doc: dict, types: tuple, path: str | Path) -> None:
    """InputError naming file and key for the first value of `doc` that does not fit its field (`value_problem`)."""
    for cls in types:
        try:
            hints = typing.get_type_hints(cls)
        except Exception:  # an annotation that cannot be resolved: leave its values to the parser
            continue
        for f in dataclasses.fields(cls):
            if f.name in doc:
                problem = value_problem(doc[f.name], hints.get(f.name), f.metadata.get("choices"))
                if problem:
                    raise InputError(problem, path=str(path), field=f.name)


def normalize_config_argv(argv: list[str]) -> list[str]:
    """`argv` with the first `--config=C` written as `--config C` (the form TrlParser reads)."""
    argv = list(argv)
    for i, arg in enumerate(argv):
        if arg == "--config":
            break
        if arg.startswith("--config="):
            argv[i:i + 1] = ["--config", arg[len("--config="):]]
            break
    return argv


def check_config_argv(argv: list[str], types: tuple, prog: str) -> None:
    """Exit with one line (`PROG: error: file F; field K: unknown key 'K' (did you mean ...)`) when the
    `--config` file of `argv` is missing, not YAML, empty, has a key none of the dataclasses `types` has,
    or a value that does not fit its field (`check_values`). `--config=F` is read as `--config F`."""
    argv = normalize_config_argv(argv)
    if "--config" not in argv[:-1]:
        return
    path = argv[argv.index("--config") + 1]
    try:
        doc = read_yaml_config(path, dataclass_keys(*types) | TRL_EXTRA_KEYS)
        if not doc:
            raise InputError("the config file is empty (expected key: value lines)", path=str(path))
        check_values(doc, types, path)
    except InputError as err:
        sys.exit(f"{prog}: error: {err}")
