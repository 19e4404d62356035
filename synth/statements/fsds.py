"""SEC Financial Statement Data Sets (sub.txt, num.txt, pre.txt, tag.txt; plain or .gz) -> canonical facts.

    python -m ledgerlm.synth.statements.fsds synth/data/sec/fsds

One quarter folder (e.g. 2009q3/) holds sub.txt + num.txt (+ pre.txt for the statement labels);
tag.txt may sit in the folder or its parent. Rules:
- `ddate` is the period end; `qtrs` 0 = instant, 1 = quarter, 2 = half year, 3 = nine months,
  4 = year; start = (ddate + 1 day) - 3*qtrs months; other qtrs values are dropped.
  (FSDS rounds ddate to a month end, so 52/53-week filers' dates are the rounded ones.)
- rows without `segments` and `coreg` are consolidated totals. Rows whose only segment is
  `LegalEntity=ParentCompany` mean two different things (FSDS readme: `coreg` NULL = the consolidated
  entity, else a co-registrant, the parent company or another entity):
  * in a multi-registrant filing (Sempra, Duke, ConEd: the filing has no undimensioned statement
    rows, each registrant's statements carry a LegalEntity member) they ARE the filer's own
    consolidated statements -> scope=consolidated (Duke FY2009 total assets 57,040 M both ways);
  * in a filing that also reports undimensioned consolidated rows they are parent-company-only
    figures (Schedule I, "condensed financial information of registrant") -> scope=parent.
  Every other dimensional or co-registrant row (subsidiary registrants, segments, equity
  components) is dropped: it is not the filer's consolidated total.
- per-share values reported in a currency unit become `CUR/share`.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: functions that build or read frames import pandas (a warm synth run never does)
    import pandas as pd

from ledgerlm.errors import InputError
from ledgerlm.synth.statements.companyfacts import company_code
from ledgerlm.synth.statements import sanity
from ledgerlm.synth.statements.facts import conform, empty_facts, normalize_unit, open_text
from ledgerlm.synth.statements.taxonomy import concept_info, extension_tag, standard_taxonomy, tag_concepts

PARENT_SEGMENT = "LegalEntity=ParentCompany"
NUM_COLUMNS = ["adsh", "tag", "version", "ddate", "qtrs", "uom", "value"]
SUB_COLUMNS = ["adsh", "cik", "name", "form", "fy", "fp", "filed"]


def find_file(folder: Path, stem: str, *, parents: int = 0) -> Path | None:
    """`stem.txt` or `stem.txt.gz` in the folder (or up to `parents` levels above)."""
    for where in [folder, *list(folder.parents)[:parents]]:
        for name in (f"{stem}.txt", f"{stem}.txt.gz"):
            if (where / name).is_file():
                return where / name
    return None


def is_fsds_folder(folder: str | Path) -> bool:
    folder = Path(folder)
    return folder.is_dir() and find_file(folder, "sub") is not None and find_file(folder, "num") is not None


def read_table(path: Path, columns: list[str]) -> pd.DataFrame:
    """A tab-separated FSDS file as strings; InputError naming a missing column."""
    import pandas as pd

    try:
        df = pd.read_csv(open_text(path), sep="\t", dtype=str, keep_default_na=False, quoting=3, on_bad_lines="error")
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise InputError(f"not a tab-separated FSDS table ({str(err).splitlines()[0]})", path=str(path), field="rows") from None
    if not isinstance(df.index, pd.RangeIndex):  # pandas reads a first data row longer than the header as index columns
        raise InputError(f"line 2 has {df.index.nlevels} field(s) more than the {len(df.columns)} of the header", path=str(path), field="rows")
    for col in columns:
        if col not in df.columns:
            raise InputError("missing column", path=str(path), field=col)
    return df


def _iso(yyyymmdd: pd.Series) -> pd.Series:
    s = yyyymmdd.str.slice(0, 8)
    return s.str.slice(0, 4) + "-" + s.str.slice(4, 6) + "-" + s.str.slice(6, 8)


def _check_dates(df: pd.DataFrame, column: str, path: Path) -> None:
    """InputError naming the file, the accession (adsh) and the field of the first `column` that is no YYYYMMDD date."""
    import pandas as pd

    text = df[column].str.strip()
    bad = pd.to_datetime(text, format="%Y%m%d", errors="coerce").isna() | ~text.str.fullmatch(r"\d{8}")
    if bad.any():
        row = df[bad].iloc[0]
        more = f" (and {int(bad.sum()) - 1} more row(s))" if bad.sum() > 1 else ""
        raise InputError(f"accession {row['adsh']}: {column} {row[column][:20]!r} is not a YYYYMMDD date{more}", path=str(path), field=column)


def _starts(ddate: pd.Series, qtrs: pd.Series) -> pd.Series:
    """Start dates by month arithmetic, computed once per distinct (ddate, qtrs)."""
    import pandas as pd

    pairs = pd.DataFrame({"d": ddate, "q": qtrs}).drop_duplicates()
    lookup = {}
    for d, q in zip(pairs["d"], pairs["q"]):
        if q == 0:
            lookup[(d, q)] = ""
        else:
            end = pd.Timestamp(f"{d[:4]}-{d[4:6]}-{d[6:8]}")
            lookup[(d, q)] = ((end + pd.Timedelta(days=1)) - pd.DateOffset(months=3 * int(q))).strftime("%Y-%m-%d")
    return pd.Series([lookup[k] for k in zip(ddate, qtrs)], index=ddate.index, dtype=object)


def _labels(folder: Path, num: pd.DataFrame) -> pd.Series:
    """As-reported label per row: pre.txt plabel, else tag.txt tlabel, else the tag."""
    import pandas as pd

    labels = pd.Series(num["tag"].to_numpy(), index=num.index, dtype=object)
    tag_path = find_file(folder, "tag", parents=1)
    if tag_path is not None:
        tags = read_table(tag_path, ["tag", "version", "tlabel"]).drop_duplicates(["tag", "version"])
        tl = num[["tag", "version"]].merge(tags[["tag", "version", "tlabel"]], how="left", on=["tag", "version"])["tlabel"]
        labels = labels.where(tl.isna().to_numpy() | (tl.to_numpy() == ""), tl.to_numpy())
    pre_path = find_file(folder, "pre")
    if pre_path is not None:
        pre = read_table(pre_path, ["adsh", "tag", "version", "plabel"]).drop_duplicates(["adsh", "tag", "version"])
        pl = num[["adsh", "tag", "version"]].merge(pre[["adsh", "tag", "version", "plabel"]], how="left", on=["adsh", "tag", "version"])["plabel"]
        labels = labels.where(pl.isna().to_numpy() | (pl.to_numpy() == ""), pl.to_numpy())
    # a presentation label's list dash or heading colon is layout, not its name: Honeywell's equity lines
    # "- additional paid-in capital", Texas Instruments' "Net cash used in financing activities:" (seed-6262 prompt audit)
    cleaned = labels.astype(str).str.replace(r"^[\s\-\u2013\u2014\u2022\u00b7]+(\w)", lambda m: m.group(1).upper(), regex=True)
    cleaned = cleaned.str.replace(r"[\s:]+$", "", regex=True)
    return cleaned.where(cleaned != "", labels)


def load_fsds(folder: str | Path) -> pd.DataFrame:
    """Canonical facts of one FSDS quarter folder (consolidated and parent-only rows)."""
    import numpy as np
    import pandas as pd

    folder = Path(folder)
    sub_path, num_path = find_file(folder, "sub"), find_file(folder, "num")
    if sub_path is None or num_path is None:
        raise InputError("an FSDS folder needs sub.txt and num.txt (plain or .gz)", path=str(folder), field="sub.txt" if sub_path is None else "num.txt")
    sub = read_table(sub_path, SUB_COLUMNS).drop_duplicates("adsh")
    num = read_table(num_path, NUM_COLUMNS)
    segments = num["segments"] if "segments" in num else pd.Series("", index=num.index)
    coreg = num["coreg"] if "coreg" in num else pd.Series("", index=num.index)
    seg = segments.str.strip().str.rstrip(";")
    plain = (seg == "") & (coreg == "")
    parent = seg == PARENT_SEGMENT
    # A filing with no undimensioned row presents each registrant under a LegalEntity member: its
    # ParentCompany rows are the filer's own consolidated statements, not parent-only ones.
    multi_registrant = ~num["adsh"].isin(set(num.loc[plain, "adsh"]))
    parent_only = parent & ~multi_registrant
    keep = plain | parent
    keep &= num["qtrs"].isin(["0", "1", "2", "3", "4"]) & (num["value"].str.strip() != "")
    num = num[keep].copy()
    num["scope"] = np.where(parent_only[keep], "parent", "consolidated")
    num["taxonomy"] = num["version"].str.split("/").str[0].where(num["version"].str.contains("/"), "custom")
    num["taxonomy"] = _standard_names(num["taxonomy"], num["tag"])
    num["element"] = num["tag"]  # the filing's own name (pre.txt / tag.txt labels), before an extension is renamed
    _read_extensions(num, sub)
    # map (taxonomy, tag) -> concepts once per distinct pair; a tag may serve several concepts
    pairs = num[["taxonomy", "tag"]].drop_duplicates()
    mapping = [(t, g, c) for t, g in zip(pairs["taxonomy"], pairs["tag"]) for c, _ in tag_concepts(t, g)]
    if not mapping:
        return empty_facts()
    num = num.merge(pd.DataFrame(mapping, columns=["taxonomy", "tag", "concept"]), on=["taxonomy", "tag"])
    values = pd.to_numeric(num["value"], errors="coerce")
    if values.isna().any():  # checked before the merges, so the error names the raw cell
        bad = num["value"][values.isna()].iloc[0]
        raise InputError(f"value {bad!r} is not a number", path=str(num_path), field="value")
    _check_dates(num, "ddate", num_path)
    num = num.merge(sub[SUB_COLUMNS], on="adsh", how="inner")
    _check_dates(num, "filed", sub_path)
    num["label"] = _labels(folder, num.assign(tag=num["element"]))
    statement = {c: concept_info(c).statement for c in num["concept"].unique()}
    per_share = {c for c in statement if concept_info(c).kind == "per_share"}
    unit = num["uom"].map(normalize_unit)
    unit = unit.where(~num["concept"].isin(per_share) | unit.str.contains("/"), unit + "/share")
    companies = {cik: company_code(int(cik)) for cik in num["cik"].unique()}
    return sanity.check_facts(conform({
        "company": num["cik"].map(companies), "company_name": num["name"], "scope": num["scope"],
        "statement": num["concept"].map(statement), "concept": num["concept"], "label": num["label"],
        "value": pd.to_numeric(num["value"]), "unit": unit,
        "start": _starts(num["ddate"], num["qtrs"].astype(int)), "end": _iso(num["ddate"]),
        "fiscal_year": pd.to_numeric(num["fy"], errors="coerce"), "fiscal_period": num["fp"],
        "form": num["form"], "filed": _iso(num["filed"]), "source": num["adsh"],
        "tag": num["taxonomy"] + ":" + num["tag"],
    }), str(num_path))


def _standard_names(taxonomy: pd.Series, tag: pd.Series) -> pd.Series:
    """`taxonomy.standard_taxonomy` per row: a filer's own element (FSDS `version` = its accession number) named
    exactly as a mapped US-GAAP element is read as that element."""
    custom = taxonomy == "custom"
    if not custom.any():
        return taxonomy
    standard = {t for t in tag[custom].unique() if standard_taxonomy(None, t, "us-gaap")}
    return taxonomy.where(~(custom & tag.isin(standard)), "us-gaap")


def _read_extensions(num: pd.DataFrame, sub: pd.DataFrame) -> None:
    """A filer's own element that taxonomy_data/extensions.yaml maps for that filer is read under taxonomy "ext" as
    "TICKER:Element" (in place): GE's "Non-recourse borrowings of consolidated securitization entities" (36,780 M at
    2010-03-31) was left out of its financial debt, and five filers' pre-tax income lines were unread."""
    custom = num["taxonomy"] == "custom"
    if not custom.any():
        return
    ciks = dict(zip(sub["adsh"], sub["cik"]))
    codes = {cik: company_code(int(cik)) for cik in set(ciks.values())}
    names = [extension_tag(codes.get(ciks.get(a), ""), t) for a, t in zip(num.loc[custom, "adsh"], num.loc[custom, "tag"])]
    hits = [n is not None for n in names]
    rows = num.index[custom][hits]
    num.loc[rows, "taxonomy"] = "ext"
    num.loc[rows, "tag"] = [n for n in names if n is not None]


def load_fsds_tree(root: str | Path) -> pd.DataFrame:
    """Every FSDS quarter folder at or under `root`."""
    import pandas as pd

    root = Path(root)
    folders = [root] if is_fsds_folder(root) else sorted(p for p in root.rglob("*") if is_fsds_folder(p))
    frames = [load_fsds(f) for f in folders]
    return pd.concat(frames, ignore_index=True) if frames else empty_facts()


def main(argv: list[str] | None = None) -> int:
    for path in argv if argv is not None else sys.argv[1:]:
        df = load_fsds_tree(path)
        print(f"{path}: {len(df)} facts, {df['company'].nunique()} companies, scopes {df['scope'].value_counts().to_dict()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
