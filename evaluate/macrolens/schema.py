"""The MacroLens column mapping (`columns.yaml`): logical names used by the code <-> release columns.

    python -m ledgerlm.evaluate.macrolens.schema --check runs/macrolens_fixture

Everything else in this package uses logical names; `to_logical` renames a release table on load and
`to_release` does the inverse (used by the fixture writer), so a renamed release column is a one-line
change in `columns.yaml`.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd
import yaml

from ledgerlm.errors import InputError

COLUMNS_FILE = Path(__file__).with_name("columns.yaml")
PANEL_GROUPS = ("keys", "ohlcv", "statement_fields", "fundamentals", "derived_ratios", "market_cap_blacklist", "macro", "scenario_flags")
SIDE_TABLES = ("static", "scenarios", "filings", "news", "properties")
GRANULARITIES = ("daily", "weekly", "monthly")


@dataclass(frozen=True)
class Schema:
    hub_id: str
    tables: dict[str, dict[str, str]]
    groups: dict[str, dict[str, str]]
    path: str

    def group(self, name: str) -> dict[str, str]:
        """Logical -> release names of one group (`statement_fields`, `derived_ratios`, `filings`, ...)."""
        if name not in self.groups:
            raise InputError(f"no column group {name!r} (have {sorted(self.groups)})", path=self.path)
        return self.groups[name]

    def panel_columns(self) -> dict[str, str]:
        """Logical -> release names of every panel column the code uses."""
        out: dict[str, str] = {}
        for g in PANEL_GROUPS:
            out.update(self.groups[g])
        return out

    def table_columns(self, table: str) -> dict[str, str]:
        return self.panel_columns() if table.startswith("panel_") else self.group(table)

    def to_logical(self, df: pd.DataFrame, table: str, *, required: tuple[str, ...] = ()) -> pd.DataFrame:
        """Rename release columns to logical names; unmapped columns are kept as they are.
        `required` logical names must be present, else an InputError names the release column and table."""
        mapping = self.table_columns(table)
        missing = [f"{mapping[k]!r} (logical {k!r})" for k in required if mapping[k] not in df.columns]
        if missing:
            raise InputError(f"table {table!r} lacks column(s) {', '.join(missing)}; fix {COLUMNS_FILE.name}", path=self.path)
        return df.rename(columns={v: k for k, v in mapping.items() if v in df.columns})

    def to_release(self, df: pd.DataFrame, table: str) -> pd.DataFrame:
        mapping = self.table_columns(table)
        return df.rename(columns={k: v for k, v in mapping.items() if k in df.columns})


@lru_cache(maxsize=4)
def load_schema(path: str | None = None) -> Schema:
    path = str(path or COLUMNS_FILE)
    with open(path, encoding="utf-8") as fh:
        raw = yaml.safe_load(fh)
    unknown = set(raw) - {"hub_id", "tables", *PANEL_GROUPS, *SIDE_TABLES}
    if unknown:
        raise InputError(f"unknown top-level keys {sorted(unknown)}", path=path)
    groups = {k: dict(raw[k]) for k in (*PANEL_GROUPS, *SIDE_TABLES)}
    return Schema(hub_id=raw["hub_id"], tables=raw["tables"], groups=groups, path=path)


def check(folder: str, schema: Schema | None = None) -> list[str]:
    """Problems with a local release copy: missing files or mapped columns (empty list = all good)."""
    schema = schema or load_schema()
    problems = []
    for table, spec in schema.tables.items():
        file = Path(folder) / spec["file"]
        if not file.is_file():
            problems.append(f"{file}: missing")
            continue
        have = set(pd.read_parquet(file).columns)
        expected = schema.table_columns(table).values()
        problems += [f"{file}: no column {c!r}" for c in expected if c not in have]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", metavar="FOLDER", required=True, help="local release folder of Parquet files")
    args = parser.parse_args(argv)
    problems = check(args.check)
    print("\n".join(problems) if problems else f"{args.check}: every mapped column present")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())


from ledgerlm.synth.macrolens_t3 import FIELD_CONCEPTS  # noqa: E402  (the 11 fields -> canonical concepts)


# Invariant (iii): the share count times the close shown at ladder step A IS the market cap (the T2/T5
# target), so the valuation tasks never show it (tests/test_macrolens_leakage.py finds the product otherwise).
VALUATION_EXCLUDED = ("shares_outstanding",)


def input_features(task: str, schema: Schema | None = None) -> list[str]:
    """Logical names of the tabular fundamentals a task may show (ladder step B).
    Never any market-cap blacklist column; T2/T5 never the share count; T5 additionally drops the 11 derived ratios."""
    schema = schema or load_schema()
    keys = [*schema.group("statement_fields"), *schema.group("fundamentals")]
    if task != "T5":
        keys += list(schema.group("derived_ratios"))
    banned = set(schema.group("market_cap_blacklist")) | (set(VALUATION_EXCLUDED) if task in ("T2", "T5") else set())
    return [k for k in keys if k not in banned]
