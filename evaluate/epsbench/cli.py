"""`ledgerlm epsbench`: the calculator and the schema builder from the command line.

    ledgerlm epsbench calc --schema evaluate/epsbench/release/ticker_schemas_v4/GOOGL_2026Q1.json \
        --drivers '{"revenues_yoy": 0.19}' --json
    ledgerlm epsbench build-schema --company GOOGL --quarter 2026Q1 --out GOOGL_2026Q1.json
    ledgerlm epsbench build-instances --companies GOOGL NVDA --quarters 2026Q1 2026Q4 --out schemas/
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ledgerlm.errors import InputError, LedgerError
from ledgerlm.evaluate.epsbench.calculator import calculate, load_schema
from ledgerlm.evaluate.epsbench.schema_builder import build_schema, load_store


def _drivers(text: str) -> dict:
    """A JSON object, or a file holding one (a record's `fundamental_predictions` also works)."""
    source = "--drivers"
    path = Path(text)
    looks_inline = text.lstrip().startswith("{")
    if not looks_inline and path.is_file():
        text, source = path.read_text(encoding="utf-8"), str(path)
    elif not looks_inline and (text.endswith(".json") or "/" in text or "\\" in text):
        raise InputError("drivers file not found" if not path.exists() else "drivers path is a folder, not a file", path=text)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"not a JSON object or a readable file ({err.msg})", path=source) from None
    if isinstance(value, dict) and isinstance(value.get("fundamental_predictions"), dict):
        value = value["fundamental_predictions"]
    if not isinstance(value, dict):
        raise InputError("drivers must be a JSON object of driver name -> number", path=source)
    return {k: (v.get("value") if isinstance(v, dict) else v) for k, v in value.items()}


def calc_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ledgerlm epsbench calc", description="drivers -> EPS through one schema")
    parser.add_argument("--schema", required=True, help="a ticker_schemas_v4 JSON file")
    parser.add_argument("--drivers", default="{}", help="JSON object or file: driver name -> value (omitted drivers keep their defaults)")
    parser.add_argument("--json", action="store_true", help='print {"eps", "nodes": {...}}')
    args = parser.parse_args(argv)
    schema = load_schema(args.schema)
    nodes = calculate(schema, _drivers(args.drivers))
    if args.json:
        print(json.dumps({"eps": nodes["eps"], "nodes": nodes}, indent=2, allow_nan=False))  # nodes are finite (calculate checks)
    else:
        width = max(map(len, schema.formulas))
        for name in schema.formulas:
            print(f"{name:<{width}}  {nodes[name]:,.4f}")
    return 0


def build_schema_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ledgerlm epsbench build-schema", description="an EPSBench schema from SEC facts")
    parser.add_argument("--company", required=True, help="ticker, CIK or exact entity name")
    parser.add_argument("--quarter", required=True, help="target fiscal quarter, e.g. 2026Q1")
    parser.add_argument("--source", nargs="*", default=None, help="fact files (default: the embedded SEC data)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    schema = build_schema(load_store(args.source), args.company, args.quarter)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(schema, indent=2), encoding="utf-8")
    print(f"wrote {args.out}: {len(schema['variables_baseline'])} leaves, {len(schema['prediction_schema'])} drivers")
    return 0


def build_instances_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ledgerlm epsbench build-instances", description="schemas for many companies/quarters")
    parser.add_argument("--companies", nargs="+", required=True)
    parser.add_argument("--quarters", nargs="+", required=True, help="target fiscal quarters; pairs that cannot be built are reported and skipped")
    parser.add_argument("--source", nargs="*", default=None)
    parser.add_argument("--out", required=True, help="folder for <TICKER>_<FQ>.json files")
    args = parser.parse_args(argv)
    store, out = load_store(args.source), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    built = 0
    for company in args.companies:
        for quarter in args.quarters:
            try:
                schema = build_schema(store, company, quarter)
            except LedgerError as err:  # InputError or NotDerivable: report and go on
                print(f"skip {company} {quarter}: {err}")
                continue
            (out / f"{schema['ticker']}_{quarter}.json").write_text(json.dumps(schema, indent=2), encoding="utf-8")
            built += 1
    print(f"built {built} schema(s) in {out}")
    return 0


COMMANDS = {"calc": calc_main, "build-schema": build_schema_main, "build-instances": build_instances_main}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: ledgerlm epsbench {{{','.join(COMMANDS)}}} [options]")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
