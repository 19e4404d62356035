"""Contract rows (ledgerlm/contracts.py): real outputs parse and re-serialize byte for byte; bad rows name file:line + field.

    python -m pytest tests/test_contracts.py -q

The round trips read what the commands write: a small `ledgerlm synth` run (every row a Sample) and the
samples.jsonl of an oracle `ledgerlm eval` on it (every row an EvalRecord); facts from a real loader
(the embedded TSM companyfacts file) as CanonicalFact rows.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledgerlm import cli
from ledgerlm.contracts import (CanonicalFact, EvalRecord, Sample, TrainingRow, dumps, iter_jsonl, read_jsonl,
                                write_jsonl)
from ledgerlm.errors import InputError

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("contracts") / "ds"
    assert cli.main(["synth", "--out", str(out), "--num", "24", "--seed", "7", "--no-progress"]) == 0
    return out


@pytest.fixture(scope="module", params=["--log_samples", None], ids=["log_samples", "no_prompts"])
def oracle_run(request, dataset, tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("contracts") / "oracle"
    flags = [request.param] if request.param else []
    assert cli.main(["eval", "--model", "oracle", "--tasks", "finindices", "--data", str(dataset),
                     "--output_path", str(run), *flags]) == 0
    return run


def _lines(path: Path) -> list[str]:
    return [line.rstrip("\n") for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_every_synth_row_is_a_sample_and_reserializes_to_the_same_json(dataset):
    total = 0
    for split in ("train", "dev", "test"):
        lines = _lines(dataset / f"{split}.jsonl")
        rows = read_jsonl(dataset / f"{split}.jsonl", Sample)
        assert len(rows) == len(lines)
        for row, line in zip(rows, lines):
            assert row.to_json() == line  # same keys, same order, same number text
            assert row.split == split and row.paradigm in ("single", "table")
        total += len(rows)
    assert total == json.loads((dataset / "manifest.json").read_text())["counts"]["total"] > 0


def test_oracle_eval_samples_are_eval_records_and_reserialize(oracle_run, dataset):
    path = oracle_run / "samples.jsonl"
    lines = _lines(path)
    records = read_jsonl(path, EvalRecord)
    assert len(records) == len(lines) == len(_lines(dataset / "test.jsonl"))
    assert [r.to_json() for r in records] == lines
    assert all(r.score == 1 for r in records)  # the oracle answers with the worked solution
    assert all("answer" in r.extra for r in records)  # FinIndices' own fields travel in `extra`


def test_written_rows_read_back_equal(dataset, tmp_path):
    rows = read_jsonl(dataset / "dev.jsonl", Sample)
    out = write_jsonl(tmp_path / "copy.jsonl", rows)
    assert read_jsonl(out, Sample) == rows
    assert out.read_text(encoding="utf-8") == (dataset / "dev.jsonl").read_text(encoding="utf-8")


def test_training_rows_from_samples_and_distill_provenance_round_trip():
    row = {"messages": [{"role": "user", "content": "Revenue growth?"},
                        {"role": "assistant", "content": "Final answer: 3.1", "reasoning_content": "(a-b)/b"}],
           "id": "x#0", "teacher": "openai:m", "tokens": {"prompt": 5, "completion": 9}, "score": 1}
    parsed = TrainingRow.from_dict(row, "rows.jsonl line 1")
    assert parsed.extra["teacher"] == "openai:m" and parsed.to_dict() == row
    assert list(parsed.to_dict()) == list(row)


def test_canonical_facts_from_a_real_loader():
    from ledgerlm.synth.statements.facts import FACT_COLUMNS
    from ledgerlm.synth.statements.sources import load_facts

    assert list(CanonicalFact.field_names()) == FACT_COLUMNS
    df = load_facts([str(REPO / "synth/data/sec/companyfacts/CIK0001046179_TSM.json.gz")])[FACT_COLUMNS]
    records = df.astype(object).where(df.notna(), None).to_dict(orient="records")
    facts = [CanonicalFact.from_dict(r, f"TSM row {i}") for i, r in enumerate(records)]
    assert len(facts) == len(df) > 100
    assert {f.company for f in facts} == {"TSM"} and all(f.to_dict() == r for f, r in zip(facts, records))
    with pytest.raises(InputError, match=r"TSM row 0; field 'end'"):
        CanonicalFact.from_dict({**records[0], "end": "31/12/2023"}, "TSM row 0")


SAMPLE = {"id": "s1", "paradigm": "single", "axis": "domain", "hint": True, "answer_format": "number", "decimals": 2,
          "messages": [{"role": "user", "content": "Net margin of AAPL, FY2023?"}], "answer": 25.31, "solution": "…"}


BAD_SAMPLE_FIELDS = [
    ({"extra_key": 1}, "extra_key", "not a field of Sample"),
    ({"id": None}, "id", "null is not a string"),
    ({"paradigm": "tables"}, "paradigm", "is not one of"),
    ({"decimals": True}, "decimals", "true is not an integer"),
    ({"hint": "yes"}, "hint", '"yes" is not'),
    ({"messages": [{"role": "user", "content": 3}]}, "messages[0].content", "3 is not a string"),
    ({"messages": [{"role": "analyst", "content": "x"}]}, "messages[0].role", "is not one of"),
    ({"messages": [{"content": "x"}]}, "messages[0].role", "needs role and content"),
    ({"traps": [{"kind": "distractor", "detail": "x"}]}, "traps[0].kind", "is not one of"),
    ({"provenance": [{"concept": "revenue", "period": "FY2023", "value": 1.0}]}, "provenance[0].source", "missing key"),
    # keys and list items of plain types pass on one type test; everything else still reaches the full checker
    ({"provenance": [{"concept": "r", "period": "FY2023", "value": 1, "source": "x"},
                     {"concept": "r", "period": "FY2023", "value": True, "source": "x"}]}, "provenance[1].value", "true is not"),
    ({"provenance": [{"concept": "r", "period": "FY2023", "value": 1.0, "source": "x", "unit": "USD"}]}, "provenance[0].unit",
     "unknown key of a FactUsed"),
    ({"target_periods": ["FY2023", 2024]}, "target_periods[1]", "2024 is not a string"),
    ({"answer": "n/a"}, "answer", "exactly 'Insufficient information'"),
    ({"answer": [[1.0]]}, "answer", "a single item's answer is one number"),
    ({"context_formats": ["pdf"]}, "context_formats[0]", "is not one of"),
]


@pytest.mark.parametrize("change, field, says", BAD_SAMPLE_FIELDS)
def test_bad_sample_fields_name_file_line_and_field(tmp_path, change, field, says):
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps(SAMPLE) + "\n\n" + json.dumps({**SAMPLE, **change}) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_jsonl(path, Sample)
    message = str(err.value)
    assert f"{path} line 3" in message and f"field {field!r}" in message and says in message, message
    assert "\n" not in message


@pytest.mark.parametrize("change, field, says", BAD_SAMPLE_FIELDS)
def test_check_rows_raises_what_from_dict_raises_and_checks_a_shared_value_once(change, field, says, monkeypatch):
    """A batch check (synth shards) names the same row and field as `from_dict`; a bad value several rows hold (the
    same object) fails on the first of them, and a bad copy in a later row is still found."""
    good = [dict(SAMPLE) for _ in range(3)]
    Sample.check_rows(good, lambda row: "gen")
    bad = {**SAMPLE, **change}
    for rows in ([good[0], dict(bad), dict(bad)],  # the bad value shared by two rows
                 [good[0], good[1], json.loads(json.dumps(bad))]):  # a fresh copy after rows that share the good ones
        names = {id(row): f"gen row {i}" for i, row in enumerate(rows)}
        with pytest.raises(InputError) as err:
            Sample.check_rows(rows, lambda row: names[id(row)])
        with pytest.raises(InputError) as expected:
            Sample.from_dict(rows[1 if rows[1] is not good[1] else 2], f"gen row {1 if rows[1] is not good[1] else 2}")
        assert str(err.value) == str(expected.value) and says in str(err.value) and f"field {field!r}" in str(err.value)


def test_check_rows_checks_a_list_several_rows_share_once(monkeypatch):
    from ledgerlm import contracts

    provenance = [{"concept": "r", "period": "FY2023", "value": 1.0, "source": "x"}]
    rows = [dict(SAMPLE, id=f"s{i}", provenance=provenance) for i in range(4)]
    calls = []
    checkers = dict(contracts._checkers(Sample))
    inner = checkers["provenance"]
    checkers["provenance"] = lambda value: calls.append(id(value)) or inner(value)
    monkeypatch.setitem(contracts._CACHE, Sample, checkers)
    Sample.check_rows(rows, lambda row: row["id"])
    assert calls == [id(provenance)]
    Sample.check_rows(rows + [dict(SAMPLE, id="s9", provenance=list(provenance))], lambda row: row["id"])
    assert len(calls) == 3  # a new call checks again; an equal but separate list is checked on its own


def test_check_rows_checks_a_value_under_each_field_that_holds_it():
    """A value passed under one field is not taken as checked under another: rows of one shape share their checks, the
    object memo is per field (a list of periods is not a list of traps)."""
    periods = ["FY2023"]
    rows = [dict(SAMPLE, id="s1", target_periods=periods), dict(SAMPLE, id="s2", target_periods=periods, traps=periods)]
    with pytest.raises(InputError) as err:
        Sample.check_rows(rows, lambda row: row["id"])
    with pytest.raises(InputError) as expected:
        Sample.from_dict(rows[1], "s2")
    assert str(err.value) == str(expected.value) and "field 'traps[0]'" in str(err.value)


FACT = {"concept": "r", "period": "FY2023", "value": 1.0, "source": "x"}


@pytest.mark.parametrize("change, field", [
    ({"provenance": [FACT, {"concept": "r", "period": "FY2023", "value": 1.0, "unit": "x"}]}, "provenance[1].source"),
    ({"provenance": [FACT, FACT, dict(FACT, concept=None)]}, "provenance[2].concept"),
    ({"context_formats": ["json", "json "]}, "context_formats[1]"),
    ({"context_periods": ["FY2023", None]}, "context_periods[1]"),
    ({"paradigm": "table", "answer": [[1.0, "x"], [2.0, [3]]]}, "answer[1][1]"),
])
def test_check_rows_finds_one_bad_element_among_plain_ones(change, field):
    """A list whose elements are checked in passes over the whole list (plain values, context formats, provenance) is
    still checked element by element when one of them does not fit: the same error as `from_dict`."""
    bad = {**SAMPLE, **change}
    with pytest.raises(InputError) as err:
        Sample.check_rows([dict(SAMPLE), bad], lambda row: "gen row 1")
    with pytest.raises(InputError) as expected:
        Sample.from_dict(bad, "gen row 1")
    assert str(err.value) == str(expected.value) and f"field {field!r}" in str(err.value), str(err.value)


def test_missing_required_field_and_broken_lines(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({k: v for k, v in SAMPLE.items() if k != "answer"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 1; field 'answer': Sample row lacks field\(s\) 'answer'"):
        read_jsonl(path, Sample)
    path.write_text('{"id": 1\n', encoding="utf-8")
    with pytest.raises(InputError, match="line 1 is not JSON"):
        read_jsonl(path, Sample)
    path.write_text("[1, 2]\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 1 is not a JSON object"):
        read_jsonl(path)
    with pytest.raises(InputError, match="no such file"):
        read_jsonl(tmp_path / "absent.jsonl")
    with pytest.raises(InputError, match=r"field 'messages': the last message must be the assistant's"):
        TrainingRow.from_dict({"messages": [{"role": "user", "content": "q"}]}, "t.jsonl line 9")


def test_absent_optional_fields_stay_absent_and_new_rows_use_contract_order():
    parsed = Sample.from_dict(SAMPLE)
    assert parsed.to_dict() == SAMPLE and "traps" not in parsed.to_dict()
    built = Sample(id="b", paradigm="table", messages=[{"role": "user", "content": "q"}], answer=[[1.0, None]], split="dev")
    assert list(built.to_dict()) == ["id", "split", "paradigm", "messages", "answer"]


def test_write_is_atomic_a_failing_row_leaves_the_old_file(tmp_path):
    path = write_jsonl(tmp_path / "out.jsonl", [SAMPLE])
    before = path.read_bytes()
    with pytest.raises(TypeError):
        write_jsonl(path, [SAMPLE, {"id": object()}])
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]  # no temp file left behind


def test_lone_surrogates_become_replacement_characters(tmp_path):
    row = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "bad \ud800 text"}]}
    path = write_jsonl(tmp_path / "t.jsonl", [TrainingRow.from_dict(row)])
    assert next(iter_jsonl(path, TrainingRow)).messages[1]["content"] == "bad \ufffd text"
    assert dumps({"a": "é"}) == '{"a": "é"}'


def test_train_reads_a_synth_dataset_through_the_contracts(dataset):
    from ledgerlm.train.data import read_rows, read_samples

    rows = read_rows(dataset, "train")
    samples = read_samples(dataset, "train")
    assert len(rows) == len(samples) == len(_lines(dataset / "train.jsonl"))
    assert all(r["messages"][-1]["content"] == s["solution"] for r, s in zip(rows, samples))


def test_synth_refuses_to_write_a_row_that_breaks_contract_4():
    from ledgerlm.synth.finindices.shards import sample_line

    assert json.loads(sample_line(SAMPLE)) == SAMPLE
    with pytest.raises(InputError, match=r"generated sample 's1'; field 'decimals': \"2\" is not an integer"):
        sample_line({**SAMPLE, "decimals": "2"})


@pytest.mark.slow
def test_macrolens_eval_records_reserialize(tmp_path):
    """Another benchmark's rows (float scores, its own fields in `extra`): MacroLens naive baseline on the fixture."""
    run = tmp_path / "ml"
    assert cli.main(["eval", "--model", "baseline:naive", "--tasks", "macrolens_t1,macrolens_t6", "--data", "fixture",
                     "--limit", "4", "--output_path", str(run)]) == 0
    files = sorted(run.glob("*/samples.jsonl"))
    assert len(files) == 2
    for path in files:
        records = read_jsonl(path, EvalRecord)
        assert records and [r.to_json() for r in records] == _lines(path)
        assert all(isinstance(r.score, float) for r in records if r.error_reason is None)


# ---------------------------------------------------------------- property: any contract-valid row round-trips
from hypothesis import given, settings, strategies as st  # noqa: E402

_text = st.text(max_size=20)
_number = st.one_of(st.integers(-10**12, 10**12), st.floats(allow_nan=False, allow_infinity=False))
_messages = st.lists(st.fixed_dictionaries({"role": st.sampled_from(["system", "user"]), "content": _text}), min_size=1, max_size=3)
_single = st.fixed_dictionaries({"id": _text, "paradigm": st.just("single"), "messages": _messages,
                                 "answer": st.one_of(_number, st.just("Insufficient information"))},
                                optional={"decimals": st.integers(0, 6), "hint": st.one_of(st.booleans(), st.none()),
                                          "traps": st.lists(st.fixed_dictionaries({"kind": st.sampled_from(
                                              ["distractor_period", "parent_distractor", "deficiency"]), "detail": _text})),
                                          "context_formats": st.lists(st.sampled_from(["text", "json", "html", "latex"]))})
_table = st.fixed_dictionaries({"id": _text, "paradigm": st.just("table"), "messages": _messages,
                                "answer": st.lists(st.lists(st.one_of(_number, st.none()), min_size=1), min_size=1)},
                               optional={"answer_format": st.sampled_from(["html_table", "json", "tuple_list"])})


@settings(max_examples=150, deadline=None)
@given(st.one_of(_single, _table))
def test_any_valid_sample_round_trips(row):
    parsed = Sample.from_dict(row, "gen line 1")
    assert parsed.to_dict() == row and list(parsed.to_dict()) == list(row)
    assert parsed.to_json() == json.dumps(row, ensure_ascii=False)


@settings(max_examples=100, deadline=None)
@given(st.one_of(_single, _table), st.sampled_from(["id", "paradigm", "messages", "decimals", "hint"]),
       st.one_of(st.just([1]), st.just({"a": 1}), st.just(2.5)))
def test_a_wrongly_typed_field_is_named(row, field, value):
    with pytest.raises(InputError) as err:
        Sample.from_dict({**row, field: value}, "gen line 7")
    assert "gen line 7" in str(err.value) and f"field '{field}" in str(err.value)


def test_numbered_rows_carry_their_file_line(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(SAMPLE) + "\n\n" + json.dumps({**SAMPLE, "id": "s2"}) + "\n", encoding="utf-8")
    assert [(n, s.id) for n, s in iter_jsonl(path, Sample, numbered=True)] == [(1, "s1"), (3, "s2")]


_paragraph = st.text(alphabet=st.sampled_from(list("ab \n\n\"\\\t\x00\x1fé中\ud800\udfff")), max_size=30)


@settings(max_examples=100, deadline=None)
@given(st.lists(_paragraph, min_size=1, max_size=8), st.sampled_from(["", "content", "solution"]),
       st.sampled_from([{}, {"sort_keys": True}, {"compact": True}]), st.booleans())
def test_long_strings_serialize_as_one_json_dumps(paragraphs, placeholder, options, long_solution):
    """`dumps` escapes long strings (message contents, a solution) apart from the row and splices them into a skeleton
    dumped with placeholders: the line is the one `json.dumps` writes (lone surrogates as U+FFFD), also when the row
    holds the placeholder text (in a message or in a long or short solution)."""
    import re

    from ledgerlm import contracts

    hole = contracts._HOLE
    content = "\n\n".join(paragraphs) + "x" * contracts._LONG + "\n\n".join(reversed(paragraphs))
    solution = "\n\n".join(reversed(paragraphs)) + "y" * contracts._LONG if long_solution else "sol"
    row = {**SAMPLE, "messages": [{"role": "system", "content": "s"},
                                  {"role": "user", "content": (hole if placeholder == "content" else "") + content}],
           "solution": (hole if placeholder == "solution" else "") + solution}
    separators = (",", ":") if options.get("compact") else None
    expected = re.sub("[\ud800-\udfff]", "\ufffd", json.dumps(row, ensure_ascii=False, sort_keys=bool(options.get("sort_keys")),
                                                                separators=separators))
    assert dumps(row, **options) == expected
    if not options:
        assert contracts.dumps_lines([row, row]) == (expected + "\n").encode("utf-8") * 2


def test_a_record_missing_several_keys_names_the_first_declared_one():
    """The missing key named is the first in the TypedDict's declared order, whatever the hash seed (it was the first
    in a frozenset's order: 'period', 'value' or 'source' in other processes)."""
    import subprocess
    import sys

    code = ("from ledgerlm.contracts import Sample\n"
            "try:\n    Sample.from_dict({'id': 's', 'paradigm': 'single', 'messages': [], 'answer': 1,"
            " 'provenance': [{'source': 's'}]}, 'w')\n"
            "except Exception as e:\n    print(e)\n")
    for seed in ("0", "1"):  # the old frozenset order named period (seed 0) and value (seed 1)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**__import__("os").environ, "PYTHONHASHSEED": seed}).stdout
        assert "field 'provenance[0].concept': missing key of a FactUsed" in out, out
