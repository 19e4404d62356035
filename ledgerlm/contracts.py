"""Contract rows (docs/DESIGN.md contracts 1, 4, 5, 6) as typed dataclasses, and the one JSONL reader/writer.

    python -m ledgerlm.contracts runs/finindices/test.jsonl --as sample       # validate a file, print counts

| class           | contract | one row of                                             | unknown keys        |
|-----------------|----------|--------------------------------------------------------|---------------------|
| `CanonicalFact` | 1        | the canonical facts table (CSV/Parquet/loaders)        | error               |
| `Sample`        | 4        | a synthesized dataset split (`train/dev/test.jsonl`)  | error               |
| `TrainingRow`   | 5        | SFT data (`messages` + provenance such as distill's)   | kept in `extra`     |
| `EvalRecord`    | 6        | a run's `samples.jsonl`                                 | kept in `extra`     |

`Row.from_dict(d, where)` checks every field against its annotation (str, int, float, bool, None,
list[...], dict[...], unions, Literal, TypedDict) and raises `InputError` naming `where` (file:line)
and the field (`messages[1].content`). `to_dict()` gives back exactly the keys that were read, in the
contract's order, so `to_dict(from_dict(d)) == d` and a row re-serializes to the same JSON.
Contract 5 rows carry provenance (distill: teacher, seed, tokens, …) and contract 6 rows carry each
benchmark's own fields; those tables are open by design and their extra keys travel in `extra`.

`read_jsonl(path, RowType)` / `iter_jsonl` read one row per line (a bad line names file:line);
`write_jsonl(path, rows)` writes a temp file in the same folder and renames it into place, so a
reader never sees half a file; `append_jsonl(handle, rows, RowType)` appends a validated batch in one write + flush
(the eval runner's samples.jsonl); `dumps_lines(rows)` is a batch of `dumps` lines as UTF-8 bytes (synth shards: long
prompts and solutions escaped on their bytes, values the rows share dumped once). Nothing here imports synth/, train/
or evaluate/ (the core layer).
"""
from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import operator
import re
import sys
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, TypedDict, TypeVar, Union

from ledgerlm.atomic import atomic_open
from ledgerlm.errors import InputError

Number = Union[int, float]
Role = Literal["system", "user", "assistant", "tool"]


class Message(TypedDict, total=False):
    """One OpenAI chat message; `reasoning_content` only on assistant turns (contract 5); `name`,
    `tool_calls` and `tool_call_id` as in the OpenAI chat format (agent transcripts)."""

    role: Role
    content: str | None
    reasoning_content: str | None
    name: str
    tool_calls: list[dict[str, Any]]
    tool_call_id: str


class Trap(TypedDict):
    kind: Literal["distractor_period", "parent_distractor", "deficiency"]
    detail: str


class FactUsed(TypedDict):
    """A provenance entry of a sample: one fact the answer used."""

    concept: str
    period: str
    value: Number | None
    source: str


Cell = Union[int, float, str, None]
Answer = Union[int, float, str, list[list[Cell]]]
REQUIRED_MESSAGE_KEYS = ("role", "content")


class _Absent:
    """Marks an optional field the source row did not have (so `to_dict` leaves it out)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()
R = TypeVar("R", bound="Row")


@dataclasses.dataclass
class Row:
    """Base of the contract rows. Subclasses are dataclasses: fields without a default are required,
    fields defaulting to ABSENT are optional (left out of `to_dict` when the source lacked them)."""

    OPEN: ClassVar[bool] = False  # True: unknown keys are kept in `extra` instead of rejected

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Contract fields in the contract's order."""
        return tuple(f.name for f in dataclasses.fields(cls) if f.name != "extra" and not f.name.startswith("_"))

    @classmethod
    def from_dict(cls: type[R], data: Any, where: str = "") -> R:
        """The row `data` as this type; `where` ("file.jsonl line 3") goes into every error."""
        here = where or None
        row = cls(**cls._values(data, here, None))
        row._keys = tuple(data)
        row.check(here)
        return row

    @classmethod
    def check_rows(cls, rows: Iterable[Any], where: Callable[[Any], str]) -> None:
        """`from_dict`'s checks on every row of a batch (the same errors, `where(row)` naming the row), without keeping
        the rows. A row goes through `_passes` first: the values whose type alone does not settle their field (found once
        per shape: the row's keys and value types) are checked, each object once per call and field (an item's
        variants share their provenance, traps and periods); a row it does not clear goes through `_values`, which
        raises its error (or keeps an open row's unknown keys)."""
        checkers = _checkers(cls)
        plans: dict[tuple, tuple | None] = {}
        checked: dict[tuple[str, int], Any] = {}  # (field, id) -> the value (held: no other object takes its id)
        defaults = {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}
        factories = {f.name: f.default_factory for f in dataclasses.fields(cls) if f.default_factory is not dataclasses.MISSING}
        for data in rows:
            here = where(data) or None
            values = data if cls._passes(data, plans, checkers) else cls._values(data, here, checked)
            row = object.__new__(cls)  # the fields `cls(**values)` would set, without its per-field Python code
            row.__dict__ = {**defaults, **values}
            if factories:  # a field with a default_factory that the row lacks: a fresh value, as `cls(**values)`
                row.__dict__.update((name, make()) for name, make in factories.items() if name not in values)
            row.check(here)

    @classmethod
    def _passes(cls, data: Any, plans: dict[tuple, tuple | None], checkers: dict[str, Checker]) -> bool:
        """Whether `data` passes `_values`' checks with `data` itself as the values; False where that is not known the
        fast way (a problem, or a row only `_values` takes: not a plain dict, an unknown or missing field, an open row).
        `plans` holds, per shape (the row's keys, then its values' types), `_plan`'s checks."""
        if type(data) is not dict:
            return False
        shape = (*data, *map(type, data.values()))
        plan = plans.get(shape, False)
        if plan is False:
            plan = plans[shape] = cls._plan(shape, checkers)
        if plan is None:
            return False
        for name, check, seen in plan:
            value = data[name]
            if id(value) not in seen:
                if check(value):
                    return False
                seen[id(value)] = value  # held: no other object takes its id
        return True

    @classmethod
    def _plan(cls, shape: tuple, checkers: dict[str, Checker]) -> tuple | None:
        """The checks a row of `shape` needs: (field, its checker, the ids of the values it passed) for each value whose
        type does not pass the field outright (`_outright`), in the row's order; None for a shape `_values` must see."""
        keys, kinds = shape[:len(shape) // 2], shape[len(shape) // 2:]
        if cls.OPEN or any(key not in checkers for key in keys) or any(name not in keys for name in _required(cls)):
            return None
        outright = _outrights(cls)
        return tuple((key, checkers[key], {}) for key, kind in zip(keys, kinds) if kind not in outright[key])

    @classmethod
    def _values(cls, data: Any, here: str | None, checked: dict | None) -> dict:
        """The constructor arguments of `data`: its contract fields, each checked (a list or dict in `checked` under its
        field and id: already checked, then added), and an open row's unknown keys as `extra`; InputError naming
        `here` and the field on the first problem."""
        if not isinstance(data, dict):
            raise InputError(f"{cls.__name__}: a row must be a JSON object, not {_show(data)}", path=here)
        checkers = _checkers(cls)
        unknown = [k for k in data if k not in checkers]
        if unknown and not cls.OPEN:
            raise InputError(f"not a field of {cls.__name__} (contract fields: {', '.join(cls.field_names())})",
                             path=here, field=unknown[0])
        missing = [name for name in _required(cls) if name not in data]
        if missing:
            raise InputError(f"{cls.__name__} row lacks field(s) {', '.join(map(repr, missing))}", path=here, field=missing[0])
        values = {}
        for name, value in data.items():
            check = checkers.get(name)
            if check is not None:
                key = (name, id(value)) if checked is not None and type(value) in (list, dict) else None
                if key is None or key not in checked:
                    problem = check(value)
                    if problem:
                        raise InputError(_message(problem), path=here, field=name + problem[0])
                    if key is not None:
                        checked[key] = value
                values[name] = value
        if cls.OPEN:
            values["extra"] = {k: data[k] for k in unknown}
        return values

    def check(self, where: str | None) -> None:
        """Rules across fields (subclasses); raise InputError naming `where` and the field."""

    def to_dict(self) -> dict[str, Any]:
        """The row as a JSON-ready dict: the keys of the row it was read from, in that order (a row built in
        code: contract fields in contract order, then `extra`); optional fields never set are left out."""
        present = {name: getattr(self, name) for name in self.field_names() if getattr(self, name) is not ABSENT}
        present.update(getattr(self, "extra", None) or {})
        keys = getattr(self, "_keys", ())
        out = {k: present[k] for k in keys if k in present}
        out.update((k, v) for k, v in present.items() if k not in out)
        return out

    def to_json(self, **dumps_kwargs: Any) -> str:
        return dumps(self.to_dict(), **dumps_kwargs)


def _opt() -> Any:
    return dataclasses.field(default=ABSENT)


def _extra() -> Any:
    return dataclasses.field(default_factory=dict, repr=False)


@dataclasses.dataclass
class CanonicalFact(Row):
    """Contract 1: one reported value. Dates are 'YYYY-MM-DD' ('' for `start` of an instant)."""

    company: str
    company_name: str
    scope: Literal["consolidated", "parent"]
    statement: str
    concept: str
    label: str
    value: Number
    unit: str
    start: str
    end: str
    fiscal_year: int | None
    fiscal_period: str
    form: str
    filed: str
    source: str
    tag: str

    def check(self, where: str | None) -> None:
        for name in ("start", "end", "filed"):
            text = getattr(self, name)
            if text and not _DATE.fullmatch(text):
                raise InputError(f"{text!r} is not a YYYY-MM-DD date", path=where, field=name)
        if not self.end:
            raise InputError("every fact has an end date", path=where, field="end")


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclasses.dataclass
class Sample(Row):
    """Contract 4: one synthesized FinIndices item (the field order `ledgerlm synth` writes).

    Required: what every reader needs (scorer, distill, eval callback). The rest is optional because
    rows read from the official release (evaluate/finindices/adapter.py) have no traps or trace;
    `None` there means "not known"."""

    id: str
    paradigm: Literal["single", "table"]
    messages: list[Message]
    answer: Answer
    split: str = _opt()
    axis: str | None = _opt()
    company: str | None = _opt()
    target_periods: list[str] = _opt()
    indices: list[str] = _opt()
    context_periods: list[str] = _opt()
    traps: list[Trap] = _opt()
    context_formats: list[Literal["text", "json", "tuples", "html", "markdown", "latex"]] = _opt()
    answer_format: Literal["number", "html_table", "json", "tuple_list"] = _opt()
    unit: str | None = _opt()
    decimals: int = _opt()
    hint: bool | None = _opt()
    solution: str | None = _opt()
    n_tokens: int | None = _opt()
    tokenizer: str | None = _opt()
    provenance: list[FactUsed] | dict[str, Any] = _opt()
    language: Literal["en", "zh"] = _opt()
    value_unrounded: float | list[list[float | None]] | None = _opt()

    ORDER: ClassVar[tuple[str, ...]] = (
        "id", "split", "paradigm", "axis", "company", "target_periods", "indices", "context_periods", "traps",
        "context_formats", "answer_format", "unit", "decimals", "hint", "messages", "answer", "solution",
        "n_tokens", "tokenizer", "provenance", "language", "value_unrounded")

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return cls.ORDER

    def check(self, where: str | None) -> None:
        _check_roles(self.messages, where)
        if isinstance(self.answer, str) and self.answer != DEFICIENT:
            raise InputError(f"a text answer must be exactly {DEFICIENT!r}", path=where, field="answer")
        if self.paradigm == "table" and isinstance(self.answer, (int, float)):
            raise InputError("a table item's answer is a list of rows", path=where, field="answer")
        if self.paradigm == "single" and isinstance(self.answer, list):
            raise InputError("a single item's answer is one number", path=where, field="answer")


DEFICIENT = "Insufficient information"


@dataclasses.dataclass
class TrainingRow(Row):
    """Contract 5: OpenAI `messages` ending with the assistant turn (reasoning in `reasoning_content`).
    Provenance keys (distill: id, item_id, teacher, seed, tokens, score, …) are kept in `extra`."""

    OPEN: ClassVar[bool] = True
    messages: list[Message]
    extra: dict[str, Any] = _extra()

    ROLES: ClassVar[tuple[str, ...]] = ("system", "user", "assistant")

    def check(self, where: str | None) -> None:
        _check_roles(self.messages, where)
        for i, message in enumerate(self.messages):
            if message["role"] not in self.ROLES:
                raise InputError(f"role {message['role']!r} is not one of {list(self.ROLES)}", path=where,
                                 field=f"messages[{i}].role")
        if not self.messages or self.messages[-1].get("role") != "assistant":
            raise InputError("the last message must be the assistant's", path=where, field="messages")


@dataclasses.dataclass
class EvalRecord(Row):
    """Contract 6: one row of a run's samples.jsonl (the fields every benchmark writes; the
    benchmark's own fields — answer, paradigm, task, target, … — are kept in `extra`)."""

    OPEN: ClassVar[bool] = True
    id: str
    prompt: str | list[Message] | None  # None: the run did not log prompts (lm-eval --log_samples off)
    response: str | None
    reasoning: str | None
    answer_text: str | None
    extracted: Any
    score: Number | None
    error_reason: str | None
    extra: dict[str, Any] = _extra()


def _check_roles(messages: list[Message], where: str | None) -> None:
    """Sample and training messages: role and text content (null content is for agent transcripts only)."""
    for i, message in enumerate(messages):
        for key in REQUIRED_MESSAGE_KEYS:
            if key not in message:
                raise InputError("a message needs role and content", path=where, field=f"messages[{i}].{key}")
        if not isinstance(message["content"], str):
            raise InputError("content must be a string", path=where, field=f"messages[{i}].content")


# ---------------------------------------------------------------- field checkers (built once per class)

Problem = "tuple[str, str, Any]"  # (path below the checked value, message template with {v} for the value, the value)
Checker = Callable[[Any], "Problem | None"]  # formatted only when raised; paths are built only on failure
_CACHE: dict[type, dict[str, Checker]] = {}
_REQUIRED: dict[type, tuple[str, ...]] = {}
_OUTRIGHT: dict[type, dict[str, frozenset]] = {}


def _checkers(cls: type) -> dict[str, Checker]:
    if cls not in _CACHE:
        hints = typing.get_type_hints(cls)
        _CACHE[cls] = {f.name: _checker(hints[f.name]) for f in dataclasses.fields(cls) if not f.name.startswith("_")
                       and f.name != "extra"}
    return _CACHE[cls]


def _required(cls: type) -> tuple[str, ...]:
    if cls not in _REQUIRED:
        _REQUIRED[cls] = tuple(f.name for f in dataclasses.fields(cls)
                               if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)
    return _REQUIRED[cls]


def _outrights(cls: type) -> dict[str, frozenset]:
    """Per field of `cls`: the exact types its checker accepts outright (`_outright`)."""
    if cls not in _OUTRIGHT:
        hints = typing.get_type_hints(cls)
        _OUTRIGHT[cls] = {name: _outright(hints[name]) for name in _checkers(cls)}
    return _OUTRIGHT[cls]


def _message(problem: Problem) -> str:
    path, template, value = problem
    return template.replace("{v}", _show(value))


def _name(tp: Any) -> str:
    if tp is type(None):
        return "null"
    return {str: "a string", int: "an integer", float: "a number", bool: "true/false", list: "a list",
            dict: "an object"}.get(tp, getattr(tp, "__name__", str(tp)))


_PLAIN = {str: {str}, bool: {bool}, type(None): {type(None)}, int: {int}, float: {int, float}}


def _outright(tp: Any) -> frozenset:
    """The exact types whose every value fits the annotation `tp` (a float takes ints too; bool is never an int or
    float here): a checker's answer for them is known, so containers test `type(value) in` this set instead of calling
    it; anything else (subclasses, containers, literals, errors) goes to the checker."""
    if typing.get_origin(tp) in (Union, types.UnionType):
        return frozenset(t for a in typing.get_args(tp) for t in _PLAIN.get(a, ()))
    return frozenset(_PLAIN.get(tp, ()))


def _checker(tp: Any) -> Checker:
    """A function that checks a JSON value against the annotation `tp`: None when it fits, else a Problem whose
    path is relative to the value ("" = the value itself, "[2].value" = inside it; the caller prefixes the field)."""
    if tp is Any:
        return lambda value: None
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (Union, types.UnionType):
        options = [_checker(a) for a in args]
        label = _describe_union(args)
        # one set lookup first, the options one by one (subclasses, containers, errors) only when that fails
        fast = _outright(tp)

        def check_union(value: Any):
            if type(value) in fast:
                return None
            problems = []
            for option in options:
                problem = option(value)
                if problem is None:
                    return None
                problems.append(problem)
            deepest = max(problems, key=lambda p: len(p[0]))  # a nested problem names its inner field
            return deepest if deepest[0] else ("", "{v} is not " + label, value)
        return check_union
    if origin is Literal:
        allowed = args
        text = f"{{v}} is not one of {list(allowed)}"
        return lambda value: None if value in allowed and isinstance(value, str) == isinstance(allowed[0], str) \
            else ("", text, value)
    if origin is list:
        item = _checker(args[0]) if args else _checker(Any)
        item_fast = _outright(args[0]) if args else frozenset()
        fits = _all_fit(args[0]) if args else None

        def check_list(value: Any):
            if not isinstance(value, list):
                return "", "{v} is not a list", value
            if fits is not None and fits(value):
                return None
            for i, element in enumerate(value):
                if type(element) in item_fast:  # list[str] and the like: no call per element
                    continue
                problem = item(element)
                if problem:
                    return (f"[{i}]{problem[0]}", *problem[1:])
            return None
        return check_list
    if origin is dict:
        item = _checker(args[1]) if args else _checker(Any)

        def check_dict(value: Any):
            if not isinstance(value, dict):
                return "", "{v} is not an object", value
            for key, element in value.items():
                problem = item(element)
                if problem:
                    return (f".{key}{problem[0]}", *problem[1:])
            return None
        return check_dict
    if typing.is_typeddict(tp):
        hints = typing.get_type_hints(tp)
        fields = {k: _checker(v) for k, v in hints.items()}
        fast = {k: _outright(v) for k, v in hints.items()}  # per key: the exact types its checker accepts outright
        required = tuple(k for k in hints if k in tp.__required_keys__)  # declared order: the same key named every run
        unknown_text = f"unknown key of a {tp.__name__} (known: {', '.join(fields)})"

        def check_typeddict(value: Any):
            if not isinstance(value, dict):
                return "", "{v} is not an object (" + tp.__name__ + ")", value
            for key in required:
                if key not in value:
                    return f".{key}", f"missing key of a {tp.__name__}", None
            for key, element in value.items():
                if type(element) in fast.get(key, ()):  # a plain value of a known key (provenance: every key)
                    continue
                check = fields.get(key)
                if check is None:
                    return f".{key}", unknown_text, None
                problem = check(element)
                if problem:
                    return (f".{key}{problem[0]}", *problem[1:])
            return None
        return check_typeddict
    if tp is float:  # JSON has one number type: 3 is a valid float; true is not
        return lambda value: None if isinstance(value, (int, float)) and not isinstance(value, bool) \
            else ("", "{v} is not a number", value)
    if tp is int:
        return lambda value: None if isinstance(value, int) and not isinstance(value, bool) \
            else ("", "{v} is not an integer", value)
    if tp is type(None):
        return lambda value: None if value is None else ("", "{v} is not null", value)
    if isinstance(tp, type):
        text = "{v} is not " + _name(tp)
        return lambda value: None if isinstance(value, tp) else ("", text, value)
    raise TypeError(f"contracts: no checker for annotation {tp!r}")  # a programming error, caught by tests


def _all_fit(tp: Any) -> Callable[[list], bool] | None:
    """A test that every element of a list fits the annotation `tp`, in C passes over the list instead of a check per
    element; False is "not known" (the elements are then checked one by one). For `tp` whose values some exact types
    settle (list[str]: `_outright`), a Literal of strings (context formats) and a TypedDict whose keys are all required
    and each settled by its value's type (`FactUsed`: the list's types, lengths, then each key's values' types); None
    for any other annotation."""
    kinds = _outright(tp)
    if kinds:
        return lambda value: kinds.issuperset(map(type, value))
    if typing.get_origin(tp) is Literal and all(type(a) is str for a in typing.get_args(tp)):
        allowed, just_str = frozenset(typing.get_args(tp)), {str}
        return lambda value: just_str.issuperset(map(type, value)) and allowed.issuperset(value)
    if not typing.is_typeddict(tp):
        return None
    hints = typing.get_type_hints(tp)
    kinds_per_key = tuple(_outright(v) for v in hints.values())
    if set(hints) != tp.__required_keys__ or not all(kinds_per_key):
        return None
    getters = tuple(map(operator.itemgetter, hints))
    just_dicts, width = {dict}, {len(hints)}  # a plain dict of len(hints) keys holding each of them: no other key

    def fits(value: list) -> bool:
        if set(map(type, value)) != just_dicts or set(map(len, value)) != width:
            return False
        columns = map(map, getters, itertools.repeat(value))  # per key, its values (KeyError: a key is missing)
        try:
            return all(map(frozenset.issuperset, kinds_per_key, map(map, itertools.repeat(type), columns)))
        except KeyError:
            return False
    return fits


def _describe(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is list:
        return "a list"
    if origin is dict or typing.is_typeddict(tp):
        return "an object"
    if origin is Literal:
        return f"one of {list(typing.get_args(tp))}"
    if origin in (Union, types.UnionType):
        return _describe_union(typing.get_args(tp))
    return _name(tp)


def _describe_union(args: tuple) -> str:
    """'a number or null' (int next to float says nothing more: JSON has one number type)."""
    args = tuple(a for a in args if not (a is int and float in args))
    return " or ".join(dict.fromkeys(_describe(a) for a in args))


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------- the one JSONL reader / writer

_SURROGATE = re.compile("[\ud800-\udfff]")
_LONG = 512  # a string at least this long is escaped apart from its row (a prompt, a solution; 4096 -> 512: the 9,331 rows of
# --num 10000 0.651 -> 0.610 s CPU, min of 5: solutions of 512-4095 characters, shared by the variants, escaped once)
_HOLE = "\x00ledgerlm-hole\x00"  # a value's place in a row skeleton (JSON writes NUL as \u0000)
_HOLE_JSON = json.dumps(_HOLE).encode()
_HOLE_TEXT = _HOLE_JSON[1:-1]  # the placeholder's JSON between its quotes: a long string's escape goes in between
_CONTROL = bytes(c for c in range(0x20) if c != 0x0A)  # what JSON escapes as well as newline, quote and backslash
_QUOTE, _NEWLINE = b'"', b"\n"
# json.dumps(ensure_ascii=False) without a new encoder per call, nor its check for circular references (a row parsed
# from JSON or built by a generator holds none; a circular one raises RecursionError instead of ValueError)
_ENCODER = json.JSONEncoder(ensure_ascii=False, check_circular=False)
Pieces = dict[int, tuple[Any, bytes]]  # id(value) -> (value, its JSON as UTF-8): the values a batch of rows shares


def _clean(text: str) -> str:
    """`text` with lone surrogates (the only text UTF-8 refuses) as U+FFFD: one C pass, ~4x faster than a regex scan."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def _utf8(text: str) -> bytes:
    """`text` as UTF-8, lone surrogates as U+FFFD (cleaned only when encoding refuses them: one pass otherwise)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def _escaped_utf8(text: str) -> bytes:
    """What `json.dumps(text, ensure_ascii=False)` writes between the quotes, as UTF-8, lone surrogates as U+FFFD.
    Prose (newlines, no other control character) is escaped by byte replaces on its UTF-8: C scans that cost about
    half of json's per-character escape of a long non-ASCII string; anything else takes json's escape."""
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        raw = None
    if raw is None or len(raw.translate(None, _CONTROL)) != len(raw):
        return _utf8(json.encoder.encode_basestring(text)[1:-1])
    if b"\\" in raw:  # a search (memchr) is cheaper than a replace that finds nothing (a count)
        raw = raw.replace(b"\\", b"\\\\")
    if b'"' in raw:
        raw = raw.replace(b'"', b'\\"')
    return raw.replace(b"\n", b"\\n")


def _is_long(value: Any) -> bool:
    return type(value) is str and len(value) >= _LONG


def _piece(value: Any, pieces: Pieces) -> bytes:
    """The JSON of `value` (a list the batch shares; a long string: what goes between its quotes, so its bytes are
    never copied to add them) as UTF-8, made once per object in `pieces` (which holds the object too, so no other
    object can take its id while the entry exists)."""
    entry = pieces.get(id(value))
    if entry is None:
        body = _escaped_utf8(value) if type(value) is str else _utf8(_ENCODER.encode(value))
        entry = pieces[id(value)] = (value, body)
    return entry[1]


def _line(data: dict, out: list[bytes], pieces: Pieces, shared: frozenset[int] = frozenset(),
          shown: Sequence[str] = ()) -> bool:
    """Append the UTF-8 JSON of `data` (keys in insertion order) to `out`: the row without its long strings (message
    contents, a solution) and without the lists whose id is in `shared` (used by several rows of a batch: an item's
    variants share their provenance) dumped once, each of those values made by `_piece` (a message content that shows
    texts of `shown`: by `_composed`) and spliced in at its placeholder. False (nothing appended) when a placeholder
    would be ambiguous (the row itself holds one)."""
    holes: list = []  # the values cut out (or a content's escaped pieces), in the order json writes their placeholders
    skeleton = dict(data)  # a copy (C): only the values cut out are set again
    for key, value in data.items():
        kind = type(value)  # one look-up: a number, a flag or null is neither cut out nor looked into
        if kind is str:
            if len(value) >= _LONG:
                holes.append(value)
                skeleton[key] = _HOLE
        elif kind is list:
            if key == "messages":
                skeleton[key] = _messages(value, holes, pieces, shown)
            elif id(value) in shared:
                holes.append(value)
                skeleton[key] = _HOLE
    parts = _utf8(_ENCODER.encode(skeleton)).split(_HOLE_TEXT)  # every match is inside one JSON string
    if len(parts) != len(holes) + 1:
        return False
    part = parts[0]
    for value, after in zip(holes, parts[1:]):
        if type(value) is tuple:  # a message content's escaped pieces (`_composed`), between the skeleton's quotes
            out.append(part)
            out += value
            part = after
            continue
        if type(value) is str:  # the skeleton's quotes stay around the escaped text
            out.append(part)
            part = after
        else:  # a list replaces the placeholder's quotes too
            out.append(part[:-1])
            part = after[1:]
        out.append(_piece(value, pieces))
    out.append(part)
    return True


def _messages(messages: list, holes: list, pieces: Pieces, shown: Sequence[str]) -> list:
    """`messages` with each long content cut out (appended to `holes`: the content, or its escaped pieces where it
    shows texts of `shown`) and a placeholder in its place."""
    out = []
    for m in messages:
        if type(m) is dict and _is_long(m.get("content")):
            holes.append(_composed(m["content"], shown, pieces) if shown else m["content"])
            m = {**m, "content": _HOLE}
        out.append(m)
    return out


def _composed(text: str, shown: Sequence[str], pieces: Pieces) -> str | tuple[bytes, ...]:
    """`_escaped_utf8(text)` as pieces: each of `shown` (texts `text` shows in order that other rows of the batch show
    too: the head an item's prompts share) escaped once per batch by `_piece`, the text around them escaped here.
    JSON escapes character by character, so the pieces' bytes are those of the whole text; `text` itself (escaped
    whole) when one is not found after the one before it. A text right where the previous one ends (a prompt's head
    at 0) is found by one comparison: `str.find` preprocesses its whole needle on every call."""
    out, pos = [], 0
    for block in shown:
        start = pos if text.startswith(block, pos) else text.find(block, pos)
        if start < 0:
            return text
        if start > pos:
            out.append(_escaped_utf8(text[pos:start]))
        out.append(_piece(block, pieces))
        pos = start + len(block)
    if pos < len(text):
        out.append(_escaped_utf8(text[pos:]))
    return tuple(out)


def dumps_lines(rows: list[dict[str, Any] | Row], *, whole: bool = False) -> bytes:
    """JSONL of `rows` as UTF-8 bytes: `b"".join(line_pieces(rows, whole=whole))`."""
    return b"".join(line_pieces(rows, whole=whole))


def line_pieces(rows: list[dict[str, Any] | Row], *, whole: bool = False, sizes: list[int] | None = None,
                ends: list[int] | None = None, shown: Sequence[Sequence[str]] | None = None) -> list[bytes]:
    """JSONL of `rows` as UTF-8 bytes, a line each: the bytes of `dumps(row) + "\n"` for every row, built without a
    str of the whole row (each piece is encoded once), and a long string or a list of objects or lists that several
    rows hold (the same object: an item's variants share their solution and provenance) dumped once per call
    (callgrind over 1,000 synth rows in batches of 43: 871 M instructions without sharing, 821 M with; sharing short
    lists of strings too, 855 M: a separate encode costs more than it saves). Rows must not change during the call.
    `whole=True` dumps each row in one piece: for small rows (shard metas: 0.16 -> 0.10 s CPU for 5,600) cutting
    costs more than it saves. Returned as the pieces (`dumps_lines` joins them): a file writer hands them to
    `os.writev` instead of copying a batch into one bytes object first; `sizes` (a list) gets each line's byte length,
    newline included, and `ends` the index in the pieces after each line's last piece (row i is pieces[ends[i-1]:ends[i]]).
    `shown[i]`: texts row i's long message contents show, in order, that other rows show too (synth: the head of the
    prompt an item's variants share), each escaped once per call (`_composed`)."""
    data = [row.to_dict() if isinstance(row, Row) else row for row in rows]
    if whole:
        lines = [_utf8(_ENCODER.encode(row)) + _NEWLINE for row in data]
        if sizes is not None:
            sizes += map(len, lines)
        if ends is not None:
            ends += range(1, len(lines) + 1)
        return lines
    seen, shared = set(), set()  # ids of the lists of objects or lists that more than one row holds
    for row in data:
        for value in row.values() if type(row) is dict else ():
            if type(value) is list and value and type(value[0]) in (dict, list):
                (shared if id(value) in seen else seen).add(id(value))
    out: list[bytes] = []
    pieces: Pieces = {}
    start = 0
    for i, row in enumerate(data):
        if type(row) is not dict or not _line(row, out, pieces, shared, shown[i] if shown else ()):
            out.append(_utf8(_ENCODER.encode(row)))
        out.append(_NEWLINE)
        if sizes is not None:
            sizes.append(sum(map(len, out[start:])))
        start = len(out)
        if ends is not None:
            ends.append(start)
    return out


def dumps(row: dict[str, Any] | Row, *, sort_keys: bool = False, compact: bool = False) -> str:
    """One JSONL line (without the newline): UTF-8 text as is, lone surrogates (not encodable) as U+FFFD.
    One json.dumps: cutting long strings out (`_line`) pays only for bytes (`dumps_lines`); for a str it measured
    no faster (0.39-0.44 vs 0.40-0.43 s CPU for 1,832 synth rows)."""
    data = row.to_dict() if isinstance(row, Row) else row
    separators = (",", ":") if compact else None
    return _clean(json.dumps(data, ensure_ascii=False, sort_keys=sort_keys, separators=separators))


_UNDECODED = re.compile("[\udc80-\udcff]")  # surrogateescape's stand-ins for bytes that are not UTF-8


def iter_jsonl(path: str | Path, row_type: type[R] | Callable[[dict, str], Any] | None = None, *,
               numbered: bool = False) -> Iterator[Any]:
    """Rows of a JSONL file, one per non-blank line: dicts, `row_type` instances (a Row class: validated with
    `from_dict`), or whatever a function `row_type(data, where)` returns (`where` = "FILE line N");
    `(line number, row)` pairs with `numbered=True`. A line that is not UTF-8, not JSON, or not a valid row,
    raises InputError naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such file", path=str(path))
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:  # a bad byte: its line, not a traceback
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            bad = None if line.isascii() else _UNDECODED.search(line)
            if bad:
                raise InputError(f"line {line_no} is not UTF-8 text (byte 0x{ord(bad.group()) - 0xDC00:02x} at column "
                                 f"{bad.start() + 1})", path=str(path))
            try:
                data = json.loads(line)
            except json.JSONDecodeError as err:
                raise InputError(f"line {line_no} is not JSON ({err.msg})", path=str(path)) from None
            if isinstance(row_type, type) and issubclass(row_type, Row):
                row = row_type.from_dict(data, f"{path} line {line_no}")
            elif not isinstance(data, dict):
                raise InputError(f"line {line_no} is not a JSON object", path=str(path))
            else:
                row = data if row_type is None else row_type(data, f"{path} line {line_no}")
            yield (line_no, row) if numbered else row


def read_jsonl(path: str | Path, row_type: type[R] | Callable[[dict, str], Any] | None = None) -> list[Any]:
    """All rows of a JSONL file (see `iter_jsonl`)."""
    return list(iter_jsonl(path, row_type))


def write_jsonl(path: str | Path, rows: Iterable[dict[str, Any] | Row], *, sort_keys: bool = False) -> Path:
    """Write one JSON object per line, atomically: a temp file in the same folder, fsync, rename.
    A failure (a row that cannot be serialized, a full disk) leaves the previous file, or none."""
    path = Path(path)
    with atomic_open(path) as handle:
        for row in rows:
            handle.write(dumps(row, sort_keys=sort_keys) + "\n")
    return path


def append_jsonl(handle: typing.TextIO, rows: Iterable[dict[str, Any] | Row], row_type: type[Row] | None = None, *,
                 where: str = "", transform: Callable[[str], str] | None = None) -> int:
    """Append rows to an open JSONL file (a run's log): each row validated as `row_type` (`from_dict` -> `to_dict`,
    an InputError names `where` and the row's id), serialized by `dumps`, optionally passed through `transform`
    (e.g. redaction), then ONE write and a flush — a killed process leaves whole batches and at most one torn last
    line, which readers that resume skip. Nothing is written when a row is invalid. Returns the number of rows."""
    lines = []
    for row in rows:
        if row_type is not None and not isinstance(row, Row):
            ident = row.get("id") if isinstance(row, dict) else None
            row = row_type.from_dict(row, f"{where} (id {ident!r})" if where else f"id {ident!r}")
        lines.append(dumps(row) + "\n")
    text = "".join(lines)
    if text:
        handle.write(transform(text) if transform else text)
        handle.flush()
    return len(lines)


ROW_TYPES: dict[str, type[Row]] = {"fact": CanonicalFact, "sample": Sample, "training": TrainingRow, "eval": EvalRecord}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ledgerlm.contracts",
                                     description="Validate JSONL files against a contract row type.")
    parser.add_argument("files", nargs="+", help="JSONL files")
    parser.add_argument("--as", dest="row_type", choices=sorted(ROW_TYPES), required=True,
                        help="fact (contract 1), sample (4), training (5), eval (6: samples.jsonl)")
    args = parser.parse_args(argv)
    for name in args.files:
        try:
            n = sum(1 for _ in iter_jsonl(name, ROW_TYPES[args.row_type]))
        except InputError as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        print(f"{name}: {n} valid {ROW_TYPES[args.row_type].__name__} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
