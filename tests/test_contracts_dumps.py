"""Row lines as bytes (ledgerlm/contracts.py `dumps_lines`, `dumps`): the bytes of one json.dumps(ensure_ascii=False).

    python -m pytest tests/test_contracts_dumps.py -q

`dumps_lines` cuts long strings (prompts, solutions) and lists several rows share out of a row, dumps the rest once
and splices the pieces back in at placeholders; long strings are escaped on their UTF-8 bytes. These tests hold it
to the plain writer on rows made to break that: lone surrogates, control characters, quotes and backslashes, a
placeholder's own text inside the row (values, keys, after an escaped quote), non-BMP characters, shared objects.
"""
from __future__ import annotations

import json
import re

from hypothesis import given, settings, strategies as st

from ledgerlm import contracts
from ledgerlm.contracts import Sample, dumps, dumps_lines

_SURROGATE = re.compile("[\ud800-\udfff]")
# characters the escapes treat differently: JSON escapes, the placeholder's NUL, surrogates (lone and paired),
# a non-BMP character, U+2028 (json leaves it as is), DEL, CJK
_TRICKY = list('ab \n\t\r\x00\x01\x08\x0c\x1f\x7f"\\/é中\u2028\ud800\udc00\udfff\U0001f600') + ["\n\n", contracts._HOLE]
_pieces = st.lists(st.sampled_from(_TRICKY) | st.text(max_size=5), max_size=12).map("".join)
_any_text = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40)


def _plain(row) -> bytes:
    """The reference: one json.dumps, lone surrogates as U+FFFD (what UTF-8 cannot hold)."""
    return _SURROGATE.sub("\ufffd", json.dumps(row, ensure_ascii=False)).encode("utf-8")


def _long(text: str) -> str:
    """`text` at both ends of a string long enough to be cut out of its row."""
    return text + "x" * contracts._LONG + text


@settings(max_examples=150, deadline=None)
@given(_pieces | _any_text)
def test_escaped_utf8_is_json_escape(text):
    assert contracts._escaped_utf8(text) == _plain(text)[1:-1]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(_pieces, _pieces, _pieces, st.booleans()), min_size=1, max_size=3), _pieces)
def test_rows_with_tricky_long_and_short_strings_are_one_json_dumps(specs, key):
    """Long and short prompts and solutions built from tricky pieces, a tricky extra key (the placeholder text as a
    key too); the line equals json.dumps whether or not the placeholder path could be taken (it is taken whenever
    the row holds no placeholder text)."""
    rows = []
    for system, user, solution, long_solution in specs:
        rows.append({"id": system, "messages": [{"role": "system", "content": system},
                                                {"role": "user", "content": _long(user), key: user}],
                     key: [user, {"k": solution}], "solution": _long(solution) if long_solution else solution})
    assert dumps_lines(rows) == dumps_lines(rows, whole=True) == b"".join(_plain(row) + b"\n" for row in rows)
    for whole in (False, True):  # the pieces a shard writer gets, and each line's length
        sizes = []
        assert b"".join(contracts.line_pieces(rows, whole=whole, sizes=sizes)) == dumps_lines(rows)
        assert sizes == [len(_plain(row)) + 1 for row in rows]
    assert [dumps(row).encode("utf-8") for row in rows] == [_plain(row) for row in rows]
    for row, spec in zip(rows, specs):
        if not any(contracts._HOLE in text for text in (key, *spec[:3])):
            assert contracts._line(row, [], {})


def test_a_placeholder_after_an_escaped_quote_falls_back_to_the_plain_writer():
    """A string ending in '"' + placeholder text escapes to the placeholder's JSON (the escaped quote's '"', the
    string's closing quote): the count check sees one piece too many and the row is dumped in one piece."""
    row = {"a": 'x"' + contracts._HOLE, "messages": [{"role": "user", "content": _long("p")}], "solution": _long("s")}
    assert contracts._HOLE_JSON in _plain(row).replace(_plain(_long("p")), b"")
    assert dumps_lines([row]) == _plain(row) + b"\n"
    assert dumps(row).encode("utf-8") == _plain(row)


def test_shared_solution_and_provenance_are_written_into_every_row():
    """An item's variants share their solution and provenance (the same objects): made once, written in each row;
    a row with its own solution and provenance gets its own."""
    solution, provenance = _long("step\n\"1\"\t"), [{"concept": "c", "period": "FY2020", "value": 1.5, "source": "s"}]
    rows = [{"id": f"r{i}", "messages": [{"role": "user", "content": _long(f"q{i}")}], "solution": solution,
             "provenance": provenance, "periods": ["FY2020"]} for i in range(3)]
    rows.append({**rows[0], "solution": _long("other"), "provenance": [{**provenance[0], "value": None}]})
    assert dumps_lines(rows) == b"".join(_plain(row) + b"\n" for row in rows)


def test_generated_rows_write_the_bytes_of_sample_line(tmp_path):
    """Rows as the generator makes them (a small synth run read back): `encoded_lines` writes the bytes
    `sample_line` does, and the meta lines are the plain dumps of `_meta`."""
    from ledgerlm import cli
    from ledgerlm.synth.finindices import shards

    out = tmp_path / "ds"
    assert cli.main(["synth", "--out", str(out), "--num", "12", "--seed", "3", "--no-progress"]) == 0
    rows = [json.loads(line) for line in (out / "train.jsonl").read_text(encoding="utf-8").splitlines()]
    pieces, metas = shards.encoded_lines(rows)
    lines = b"".join(pieces)
    assert lines == (out / "train.jsonl").read_bytes()
    assert lines == "".join(shards.sample_line(row) + "\n" for row in rows).encode("utf-8")
    sizes = [len(line) for line in lines.splitlines(keepends=True)]
    assert metas == b"".join(_plain(shards._meta(row, size)) + b"\n" for row, size in zip(rows, sizes))
    assert [Sample.from_dict(json.loads(line)).to_dict() for line in lines.splitlines()] == rows


def test_a_bad_generated_row_stops_the_shard_naming_sample_and_field():
    import pytest

    from ledgerlm.errors import InputError
    from ledgerlm.synth.finindices import shards

    good = {"id": "s1", "paradigm": "single", "messages": [{"role": "user", "content": _long("q")}], "answer": 1.5,
            "provenance": [{"concept": "c", "period": "FY2020", "value": 1.0, "source": "s"}]}
    bad = {**good, "id": "s2", "provenance": [*good["provenance"], {"concept": "c", "period": "FY2021", "value": "1",
                                                                    "source": "s"}]}
    assert b"".join(shards.encoded_lines([good])[0]) == _plain(good) + b"\n"
    with pytest.raises(InputError, match=r"generated sample 's2'; field 'provenance\[1\]\.value': \"1\" is not a number"):
        shards.encoded_lines([good, bad])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(_pieces, _pieces, _pieces), min_size=1, max_size=3),
       st.lists(st.sampled_from(["head", "start", "middle", "rest", "stray", "empty"]), max_size=4), st.booleans())
def test_texts_several_rows_show_write_the_bytes_of_json_dumps(specs, picks, long_rest):
    """Prompts written as the escapes of the texts they show (a head two rows share, texts inside it, after it, not in
    it at all, empty) and of the text around them: tricky characters (escapes, lone halves of a surrogate pair, CJK)
    at every boundary; a text missing from a prompt writes it whole."""
    rows, shown = [], []
    for start, middle, rest in specs:
        head = _long(start + middle)
        texts = {"head": head, "start": start, "middle": middle, "rest": rest, "stray": "\ud800" + middle + "\x00",
                 "empty": ""}
        for tail in (rest, rest + "\n" + (_long(start) if long_rest else start)):
            rows.append({"id": start, "messages": [{"role": "system", "content": middle},
                                                   {"role": "user", "content": head + tail}], "solution": rest})
            shown.append([texts[pick] for pick in picks])
    expected = b"".join(_plain(row) + b"\n" for row in rows)
    sizes = []
    assert b"".join(contracts.line_pieces(rows, shown=shown, sizes=sizes)) == expected
    assert sizes == [len(_plain(row)) + 1 for row in rows]


def test_a_head_two_rows_show_is_escaped_once(monkeypatch):
    """An item's variants start with the same head (one str): `line_pieces` escapes it once for both rows, and the
    text after it for each."""
    head = _long("Documents: 中\t\"q\"\\")
    rows = [{"id": f"r{i}", "messages": [{"role": "user", "content": f"{head}\nhint {i}"}]} for i in range(2)]
    escaped = []
    monkeypatch.setattr(contracts, "_escaped_utf8", lambda text: escaped.append(text) or _plain(text)[1:-1])
    assert contracts.dumps_lines(rows) == b"".join(contracts.line_pieces(rows, shown=[(head,), (head,)]))
    assert len(escaped) == 2 + 3 and escaped[2:] == [head, "\nhint 0", "\nhint 1"]
