"""SEC companyfacts JSON (one company, or the bulk companyfacts.zip) -> canonical facts (contract 1).

    python -m ledgerlm.synth.statements.companyfacts synth/data/sec/companyfacts/CIK0000320193_AAPL.json.gz

Periods come from each fact's `start`/`end` only (a 10-K repeats comparatives under its own fy/fp,
which end up in `fiscal_year`/`fiscal_period` as the *filing's* focus). Every value keeps its
accession number (`source`), `form` and `filed`, so restatements and point-in-time views are
resolved later by `facts.select_latest`. `company` is the ticker from a file named
`CIK##########_TICKER.json[.gz]`, else from the ticker-map snapshot
`synth/data/sec/company_tickers.json`, else the CIK.
"""
from __future__ import annotations

import json
import re
import sys
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # annotations only: functions that build or read frames import pandas (a warm synth run never does)
    import pandas as pd

from ledgerlm.errors import InputError
from ledgerlm.synth.statements import sanity
from ledgerlm.synth.statements.facts import conform, empty_facts, normalize_unit, read_bytes
from ledgerlm.synth.statements.taxonomy import concept_info, tag_concepts
from ledgerlm.synth.statements.tag_labels import tag_label

SEC_DIR = Path(__file__).resolve().parents[1] / "data" / "sec"
TICKER_MAP = SEC_DIR / "company_tickers.json"
TAXONOMIES = ("us-gaap", "ifrs-full", "dei")
_FILENAME = re.compile(r"^CIK(\d{10})(?:_([A-Za-z0-9.\-]+))?\.json(?:\.gz)?$")


@lru_cache(maxsize=4)
def ticker_map(path: str = str(TICKER_MAP)) -> dict[int, tuple[str, str]]:
    """CIK -> (ticker, title) from an SEC `company_tickers.json` (the first ticker listed wins)."""
    with open(path, encoding="utf-8") as fh:
        rows = json.load(fh).values()
    out: dict[int, tuple[str, str]] = {}
    for row in rows:
        out.setdefault(int(row["cik_str"]), (str(row["ticker"]), str(row["title"])))
    return out


def company_from_filename(path: str | Path) -> tuple[int, str | None] | None:
    """(cik, ticker or None) from `CIK0000320193_AAPL.json.gz`; None when the name has no CIK."""
    match = _FILENAME.match(Path(path).name)
    return (int(match.group(1)), match.group(2)) if match else None


def company_code(cik: int, ticker: str | None = None) -> str:
    """The `company` value: the given ticker, else the snapshot's, else the CIK as digits."""
    if ticker:
        return ticker.upper()
    known = ticker_map().get(int(cik))
    return known[0] if known else str(int(cik))


def parse_companyfacts(doc: dict, source: str, *, ticker: str | None = None, include_unmapped: bool = False) -> pd.DataFrame:
    """Facts of one decoded companyfacts document. Only tags mapped by the taxonomy unless include_unmapped."""
    if not isinstance(doc, dict) or not isinstance(doc.get("facts"), dict):
        raise InputError("not an SEC companyfacts document (no 'facts' object)", path=source, field="facts")
    sanity.check_companyfacts_doc(doc, source, TAXONOMIES, None if include_unmapped else lambda t, g: bool(tag_concepts(t, g)))  # one-line errors
    if "cik" not in doc:
        raise InputError("companyfacts document has no 'cik'", path=source, field="cik")
    company = company_code(int(doc["cik"]), ticker)
    name = str(doc.get("entityName", ""))
    cols: dict[str, list] = {k: [] for k in ("statement", "concept", "label", "value", "unit", "start", "end",
                                             "fiscal_year", "fiscal_period", "form", "filed", "source", "tag")}
    for taxonomy, tags in doc["facts"].items():
        if taxonomy not in TAXONOMIES:
            continue
        for tag, spec in tags.items():
            mapped = tag_concepts(taxonomy, tag)
            if not mapped and not include_unmapped:
                continue
            targets = [(c, concept_info(c).statement) for c, _ in mapped] or [("", "")]
            if not isinstance(spec, dict) or not isinstance(spec.get("units"), dict):
                raise InputError(f"tag {taxonomy}:{tag} has no 'units' object", path=source, field=f"facts.{taxonomy}.{tag}.units")
            label = str(spec.get("label") or tag_label(taxonomy, tag))  # IFRS companyfacts carry no labels
            for unit, facts in spec["units"].items():
                unit = normalize_unit(unit)
                for i, fact in enumerate(facts):
                    try:
                        end, val = fact["end"], float(fact["val"])
                    except (KeyError, TypeError, ValueError):
                        raise InputError(f"fact #{i} of {taxonomy}:{tag} [{unit}] lacks a numeric 'val' or an 'end'",
                                         path=source, field=f"facts.{taxonomy}.{tag}.units.{unit}[{i}]") from None
                    for concept, statement in targets:
                        cols["statement"].append(statement)
                        cols["concept"].append(concept)
                        cols["label"].append(label)
                        cols["value"].append(val)
                        cols["unit"].append(unit)
                        cols["start"].append(fact.get("start", ""))
                        cols["end"].append(end)
                        cols["fiscal_year"].append(fact.get("fy"))
                        cols["fiscal_period"].append(fact.get("fp") or "")
                        cols["form"].append(fact.get("form") or "")
                        cols["filed"].append(fact.get("filed") or "")
                        cols["source"].append(fact.get("accn") or source)
                        cols["tag"].append(f"{taxonomy}:{tag}")
    if not cols["value"]:
        return empty_facts()
    cols.update(company=company, company_name=name, scope="consolidated")
    return sanity.check_facts(conform(cols), source)


def _decode(data: bytes, source: str) -> dict:
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(f"invalid JSON ({err})", path=source, field="json") from None
    except ValueError as err:  # e.g. an integer of more than 4300 digits
        raise InputError(f"invalid JSON ({str(err)[:120]})", path=source, field="json") from None
    except RecursionError:
        raise InputError("invalid JSON (nested too deeply)", path=source, field="json") from None


def load_companyfacts(path: str | Path, *, include_unmapped: bool = False) -> pd.DataFrame:
    """Facts of one companyfacts file (.json or .json.gz)."""
    named = company_from_filename(path)
    doc = _decode(read_bytes(path), str(path))
    return parse_companyfacts(doc, str(path), ticker=named[1] if named else None, include_unmapped=include_unmapped)


def iter_companyfacts_zip(path: str | Path, ciks: set[int] | list[int] | None = None, *,
                          include_unmapped: bool = False) -> Iterator[pd.DataFrame]:
    """Stream SEC's bulk companyfacts.zip member by member (no unpacking); one frame per company.

    `ciks` restricts to those companies (the member name carries the CIK, so others are not decoded).
    """
    with open_zip(path) as archive:
        for member in zip_members(archive, ciks):
            yield read_zip_member(archive, member, path, include_unmapped=include_unmapped)


def open_zip(path: str | Path) -> zipfile.ZipFile:
    """The archive, or an InputError naming the file."""
    try:
        return zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as err:
        raise InputError(f"not a readable zip archive ({err})", path=str(path), field="zip") from None


def zip_members(archive: zipfile.ZipFile, ciks: set[int] | list[int] | None = None) -> list[str]:
    """The names of the archive's companyfacts members (CIK##########[_TICKER].json), in archive order."""
    wanted = {int(c) for c in ciks} if ciks is not None else None
    out = []
    for member in archive.infolist():
        named = company_from_filename(member.filename.rsplit("/", 1)[-1])
        if member.is_dir() or named is None or (wanted is not None and named[0] not in wanted):
            continue
        out.append(member.filename)
    return out


def read_zip_member(archive: zipfile.ZipFile, member: str, path: str | Path, *, include_unmapped: bool = False) -> pd.DataFrame:
    """One member's facts (`zip_members` names it); a damaged member is an InputError naming `path!member`."""
    named = company_from_filename(member.rsplit("/", 1)[-1])
    where = f"{path}!{member}"
    try:
        data = archive.read(member)
    except (OSError, zipfile.BadZipFile, EOFError) as err:
        raise InputError(f"damaged zip member ({err})", path=where, field="zip") from None
    return parse_companyfacts(_decode(data, where), where, ticker=named[1] if named else None, include_unmapped=include_unmapped)


def main(argv: list[str] | None = None) -> int:
    for path in argv if argv is not None else sys.argv[1:]:
        df = load_companyfacts(path)
        print(f"{path}: {len(df)} facts, {df['concept'].nunique()} concepts, companies {sorted(df['company'].unique())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
