"""Independent check of built samples: parse the numbers back out of the rendered prompt text (all six
representations, via `parse_rendered`), recompute every answer from those parsed numbers alone, and
confirm every deficiency item is not derivable from what the prompt shows.

    ledgerlm fidelity out/synth            # prints agree / disagree counts; exit 1 on any problem

The facts are loaded from the sources recorded in the dataset's manifest.json (`config.sources`: empty
means the embedded SEC sample), so a dataset built with `ledgerlm synth --source F` is checked against F;
`--source` overrides the manifest.

The recomputation builds a store that holds *only* the parsed prompt values (the source store lends
its fiscal calendar — dates, not numbers) and runs the registry formula on it; the answer is then
scaled and rounded as the row says and compared with the row's `answer` text-for-text.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.progress import track

from ledgerlm.contracts import Sample, iter_jsonl
from ledgerlm.errors import InputError, LedgerError, NotDerivable
from ledgerlm.synth.finindices import storecache
from ledgerlm.synth.finindices.answers import INSUFFICIENT, answer_text
from ledgerlm.synth.finindices.contexts import STATEMENT_SEP
from ledgerlm.synth.indices.compute import compute
from ledgerlm.synth.indices.registry import load_registry
from ledgerlm.synth.statements.periods import parse_report
from ledgerlm.synth.statements.render import parse_rendered

BLOCK_HEADER = re.compile(r"^=== (?:Document|文件) \d+ ===$", re.M)
BLOCKS_END = re.compile(r"^=== (?:End of documents|文件结束) ===$", re.M)


def prompt_blocks(user: str) -> list[str]:
    """The shown reports' texts, in order, cut at the document headers."""
    end = BLOCKS_END.search(user)
    body = user[: end.start()] if end else user
    heads = list(BLOCK_HEADER.finditer(body))
    return [body[h.end(): (heads[i + 1].start() if i + 1 < len(heads) else len(body))].strip() for i, h in enumerate(heads)]


def parsed_cells(row: dict) -> dict[tuple[str, str, str], float]:
    """(scope, concept, report label) -> value, from the prompt text alone."""
    user = next(m["content"] for m in row["messages"] if m["role"] == "user")
    blocks = prompt_blocks(user)
    if len(blocks) != len(row["context_formats"]):
        raise ValueError(f"{row['id']}: {len(blocks)} documents in the prompt, {len(row['context_formats'])} formats recorded")
    cells = {}
    for text, fmt in zip(blocks, row["context_formats"]):
        for part in text.split(STATEMENT_SEP.strip()):
            stmt = parse_rendered(part.strip(), fmt)
            report = parse_report(stmt["period"]).label
            for item in stmt["items"]:
                if item.get("concept") and item.get("value") is not None:
                    cells[(stmt["scope"], item["concept"], report)] = float(item["value"])
    return cells


def prompt_store(store, company: str, cells: dict):
    """A FactStore view that sees only `cells` (values parsed from the prompt) for `company`."""
    return store.with_reported_values(company, cells)


@dataclass
class Report:
    checked: int = 0
    agree: int = 0
    deficiency_checked: int = 0
    problems: list[str] = field(default_factory=list)


def check_row(row: dict, store, registry) -> str | None:
    """None when the row's answer is recomputed exactly from its prompt; else what went wrong."""
    cells = parsed_cells(row)
    for fact in row["provenance"]:
        got = cells.get(("consolidated", fact["concept"], fact["period"]))
        if got is None or got != fact["value"]:
            return f"{row['id']}: fact {fact['concept']} {fact['period']} = {fact['value']} shown as {got}"
    view = prompt_store(store, row["company"], cells)
    if row["answer"] == INSUFFICIENT:
        try:
            compute(view, row["company"], row["indices"][0], row["target_periods"][0], registry=registry)
        except NotDerivable:
            return None
        return f"{row['id']}: deficiency item is derivable from the prompt"
    got = []
    for index_id in row["indices"]:
        line = []
        for period in row["target_periods"]:
            try:
                v = compute(view, row["company"], index_id, period, registry=registry)
            except LedgerError as err:
                return f"{row['id']}: {index_id} {period} not computable from the prompt: {err}"
            line.append(answer_text(v.value, v.result, row["unit"] if v.result == "currency" else "units", row["decimals"]))
        got.append(line)
    want = [[row["answer"]]] if row["paradigm"] == "single" else row["answer"]
    if [[float(x) for x in line] for line in got] != [[float(x) for x in line] for line in want]:
        return f"{row['id']}: recomputed {got} != answer {want}"
    return None


def check_rows(rows, store, registry) -> Report:
    """`store`: a FactStore, or a function company -> FactStore (the builder's `store_for`)."""
    store_for = store if callable(store) else (lambda company: store)
    report = Report()
    for row in rows:
        report.checked += 1
        report.deficiency_checked += row["answer"] == INSUFFICIENT
        problem = check_row(row, store_for(row["company"]), registry)
        if problem is None:
            report.agree += 1
        else:
            report.problems.append(problem)
    return report


def manifest_sources(data: Path) -> list[str] | None:
    """The sources a dataset was built from, as its manifest records them (None = the embedded sample)."""
    path = data / "manifest.json"
    if not path.is_file():
        raise InputError("no manifest.json: not a `ledgerlm synth` dataset folder (or pass --source)", path=str(path))
    try:
        config = json.loads(path.read_text(encoding="utf-8"))["config"]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as err:
        raise InputError(f"manifest.json has no readable config ({type(err).__name__}: {err})", path=str(path)) from None
    sources = config.get("sources") if isinstance(config, dict) else None
    if sources is not None and (not isinstance(sources, list) or not all(isinstance(s, str) for s in sources)):
        raise InputError(f"config.sources is {str(sources)[:60]!r}, not a list of paths", path=str(path), field="config.sources")
    sources = sources or None
    for src in sources or ():
        if not Path(src).exists():
            raise InputError(f"the dataset was built from {src!r}, which is not there now: run from the folder the "
                             "dataset was built in, or pass --source", path=str(path), field="config.sources")
    return sources


def read_rows(data: Path) -> list[dict]:
    files = [data / f"{split}.jsonl" for split in ("train", "dev", "test")] if data.is_dir() else [data]
    if not any(f.is_file() for f in files):
        raise InputError("no train/dev/test.jsonl here: give a dataset folder built by `ledgerlm synth`", path=str(data))
    return [sample.to_dict() for f in files if f.is_file() for sample in iter_jsonl(f, Sample)]  # contract 4, typed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ledgerlm fidelity", description=__doc__.splitlines()[0])
    parser.add_argument("data", help="dataset folder (train/dev/test.jsonl + manifest.json) built by `ledgerlm synth`")
    parser.add_argument("--source", action="append", dest="sources",
                        help="the facts the dataset was built from (default: the sources in its manifest.json)")
    parser.add_argument("--show", type=int, default=20, help="problems to print (default 20)")
    args = parser.parse_args(argv)
    data = Path(args.data)
    sources = args.sources or manifest_sources(data)
    rows = read_rows(data)
    stores, registry = storecache.company_stores(sources), load_registry()
    missing = sorted({r["company"] for r in rows} - set(stores))
    if missing:
        where = ", ".join(sources) if sources else "the embedded SEC sample"
        raise InputError(f"companies {missing} of the dataset are not in {where}; pass the sources it was built from "
                         "with --source", path=str(data))
    report = check_rows(_progress(rows), stores.__getitem__, registry)
    print(f"checked {report.checked}, agree {report.agree}, deficiency items {report.deficiency_checked}, problems {len(report.problems)}")
    for problem in report.problems[: args.show]:
        print("  " + problem)
    return 0 if not report.problems else 1


def _progress(rows: list[dict]):
    """Rows with a rich progress bar on stderr (one line when stderr is not a terminal)."""
    yield from track(rows, description="fidelity", console=Console(stderr=True), transient=True)


if __name__ == "__main__":
    sys.exit(main())
