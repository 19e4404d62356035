"""`ledgerlm indices`: list the index registry (id, name, formula, result kind, accepted periods, source).

    ledgerlm indices --family liquidity --axis domain
    python -m ledgerlm.synth.indices.listing --json
"""
from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console
from rich.table import Table

from ledgerlm.errors import InputError
from ledgerlm.synth.indices.compute import default_registry
from ledgerlm.synth.indices.registry import AXES, PERIOD_KINDS


def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ledgerlm indices", description="List the index registry: id, name, formula, "
                                "result kind, accepted periods, source (filter by family and axis).")
    p.add_argument("--family", action="append", help="registry family (file name), e.g. profitability; repeatable")
    p.add_argument("--axis", action="append", help="domain | caliber | temporal+caliber | temporal+domain; repeatable")
    p.add_argument("--json", action="store_true", help="one JSON list instead of a table")
    return p


def index_rows(families: list[str] | None = None, axes: list[str] | None = None) -> list[dict]:
    """The listing's rows; an unknown family or axis is an InputError naming the known ones."""
    registry = default_registry()
    known_families = sorted({ix.family for ix in registry.values()})
    for name, given, known in (("family", families, known_families), ("axis", axes, list(AXES))):
        bad = sorted(set(given or ()) - set(known))
        if bad:
            raise InputError(f"unknown {name} {', '.join(bad)}; known: {', '.join(known)}", field=f"--{name}")
    rows = []
    for ix in registry.values():
        if (families and ix.family not in families) or (axes and ix.axis not in axes):
            continue
        rows.append({"id": ix.id, "name": ix.name_en, "name_zh": ix.name_zh, "family": ix.family, "axis": ix.axis,
                     "formula": ix.formula, "result": ix.result,
                     "periods": list(getattr(ix, "periods", None) or PERIOD_KINDS),
                     "applies_to": list(getattr(ix, "applies_to", None) or ()), "source": ix.source})
    return rows


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    rows = index_rows(args.family, args.axis)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return 0
    table = Table(title=f"{len(rows)} indices", title_justify="left")
    for column in ("id", "name", "formula", "result", "periods", "source"):
        table.add_column(column, overflow="fold")
    for r in rows:
        table.add_row(r["id"], r["name"], r["formula"], r["result"], " ".join(r["periods"]), r["source"])
    Console(width=200).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
