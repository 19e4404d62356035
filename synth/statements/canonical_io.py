"""Canonical facts (contract 1 columns) as CSV or Parquet, for users who bring their own data.

    python -m ledgerlm.synth.statements.canonical_io facts.csv      # validate and summarise

Reading validates every column (a bad value is an InputError naming the file, row and field);
writing goes to a temporary file renamed into place, so a failed write leaves nothing behind.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: functions that build or read frames import pandas (a warm synth run never does)
    import pandas as pd

from ledgerlm.atomic import atomic_path
from ledgerlm.errors import InputError
from ledgerlm.synth.statements import sanity
from ledgerlm.synth.statements.facts import FACT_COLUMNS, check_facts_frame, open_text

CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz")
PARQUET_SUFFIXES = (".parquet", ".pq")


def is_canonical_file(path: str | Path) -> bool:
    name = str(path).lower()
    return name.endswith(CSV_SUFFIXES + PARQUET_SUFFIXES)


def read_canonical(path: str | Path) -> pd.DataFrame:
    """Facts from a canonical CSV (.csv/.tsv, optionally .gz) or Parquet file."""
    import pandas as pd

    where, name = str(path), str(path).lower()
    if name.endswith(PARQUET_SUFFIXES):
        try:
            df = pd.read_parquet(path)
        except (OSError, ValueError) as err:
            raise InputError(f"not a readable Parquet file ({err})", path=where, field="parquet") from None
        for col in ("start", "end", "filed"):
            if col in df and pd.api.types.is_datetime64_any_dtype(df[col]):
                df[col] = df[col].dt.strftime("%Y-%m-%d").fillna("")
    elif name.endswith(CSV_SUFFIXES):
        sep = "\t" if ".tsv" in name else ","
        try:
            df = pd.read_csv(open_text(path), sep=sep, dtype=str, keep_default_na=False)
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
            raise InputError(f"not a readable CSV table ({str(err).splitlines()[0]})", path=where, field="rows") from None
        if not isinstance(df.index, pd.RangeIndex):  # pandas reads a first data row longer than the header as index columns
            raise InputError(f"row 1 has {df.index.nlevels} field(s) more than the {len(df.columns)} of the header", path=where, field="rows")
    else:
        raise InputError("unknown file type (expected .csv, .tsv, .parquet)", path=where, field="suffix")
    return sanity.check_facts(check_facts_frame(df, where), where)


def write_canonical(df: pd.DataFrame, path: str | Path) -> Path:
    """Write facts (contract 1 columns, in order) as CSV or Parquet, atomically."""
    path = Path(path)
    df = check_facts_frame(df, str(path))[FACT_COLUMNS]
    with atomic_path(path) as tmp:
        if str(path).lower().endswith(PARQUET_SUFFIXES):
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False, compression="gzip" if path.suffix == ".gz" else None)
    return path


def main(argv: list[str] | None = None) -> int:
    for path in argv if argv is not None else sys.argv[1:]:
        df = read_canonical(path)
        print(f"{path}: {len(df)} facts, companies {sorted(df['company'].unique())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
