"""Value checks every loader runs before facts reach the store: bad data is a one-line error.

    python -m ledgerlm.synth.statements.sanity facts.csv     # load a source and report what the checks found

`check_facts(df, source)` (called by the companyfacts, FSDS, XBRL, canonical CSV/Parquet and
statement-table loaders on their contract-1 frame) refuses, naming file, company, period and field:
- values that are NaN, ±Inf (`1e999` parses as Inf) or beyond ±1e20 (no filer reports that much);
- a negative share count (unit `shares` on a mapped concept);
- a period whose start is after its end, a missing end, or a date that is not YYYY-MM-DD;
- a unit that is neither an ISO 4217 currency, `<CUR>/share`, `shares` nor `pure` on a mapped concept.
`check_companyfacts_doc(doc, source)` checks the shape of an SEC companyfacts document first
(`cik` a number, each taxonomy an object of tags, `units` an object of lists of facts, every
`val` a JSON number — `true` is not one), so a malformed document is one error, not a traceback.
`currency_mixups(facts)` is a `validate` finding: within one company, statement and period, a
concept reported only in a currency that is not the one the statement's other lines use (EUR
revenue beside USD costs would give a meaningless USD gross margin). On the embedded SEC data
(TSM files TWD and USD side by side) it finds nothing.
"""
from __future__ import annotations

import math
import re
import sys
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # annotations only: functions that build or read frames import pandas (a warm synth run never does)
    import pandas as pd

from ledgerlm.errors import InputError
from ledgerlm.synth.statements.facts import MAX_YEAR, MIN_YEAR  # `fy` is a four-digit year (a huge one overflowed Int64 in pandas)

MAX_ABS_VALUE = 1e20
# ISO 4217 active currency codes (plus CNH, the offshore renminbi some filers use).
CURRENCIES = frozenset("""
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF
CLP CNH CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG
HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD
MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF
SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU
UZS VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW ZWL
""".split())
_DATE = r"\d{4}-\d{2}-\d{2}"


def known_unit(unit: str) -> bool:
    """A contract-1 unit: a currency, currency per share, shares or pure."""
    if unit in ("shares", "pure"):
        return True
    base = unit[:-6] if unit.endswith("/share") else unit
    return base in CURRENCIES


def _where(df: pd.DataFrame, mask: pd.Series) -> tuple[str, str, str, int]:
    """(company, period, field, count) of the first row where `mask` holds."""
    row = df[mask].iloc[0]
    period = f"{row['start']}..{row['end']}" if row["start"] else str(row["end"]) or "(no date)"
    field = row["concept"] or row["tag"] or row["label"] or "value"
    if row["tag"] and row["tag"] != field:
        field = f"{field} ({row['tag']})"
    return str(row["company"]), period, field, int(mask.sum())


def _fail(df: pd.DataFrame, mask: pd.Series, what: str, source: str) -> None:
    company, period, field, count = _where(df, mask)
    more = f" (and {count - 1} more row(s))" if count > 1 else ""
    raise InputError(f"company {company}, period {period}: {what(df[mask].iloc[0])}{more}", path=source, field=field)


def check_facts(df: pd.DataFrame, source: str) -> pd.DataFrame:
    """`df` unchanged when every row passes; else InputError naming file, company, period and field."""
    import numpy as np
    import pandas as pd

    if df.empty:
        return df
    values = df["value"].to_numpy(dtype="float64", copy=False)
    finite = np.isfinite(values)
    if not finite.all():
        _fail(df, pd.Series(~finite, index=df.index), lambda r: f"value {r['value']} is not a finite number", source)
    huge = np.abs(values) > MAX_ABS_VALUE
    if huge.any():
        _fail(df, pd.Series(huge, index=df.index), lambda r: f"value {r['value']:.3g} is implausibly large (limit ±{MAX_ABS_VALUE:.0e})", source)
    mapped = df["concept"] != ""
    negative = mapped & (df["unit"] == "shares") & (df["value"] < 0)
    if negative.any():
        _fail(df, negative, lambda r: f"negative share count {r['value']:,.0f}", source)
    start, end = df["start"].astype(str), df["end"].astype(str)
    bad_date = (end == "") | ~end.str.fullmatch(_DATE) | ((start != "") & ~start.str.fullmatch(_DATE))
    if bad_date.any():
        _fail(df, bad_date, lambda r: f"dates {r['start']!r}..{r['end']!r} are not YYYY-MM-DD (an end date is required)", source)
    parsed_start = pd.to_datetime(start.where(start != "", end), errors="coerce", format="%Y-%m-%d")
    parsed_end = pd.to_datetime(end, errors="coerce", format="%Y-%m-%d")
    invalid = parsed_start.isna() | parsed_end.isna()
    if invalid.any():
        _fail(df, invalid, lambda r: f"dates {r['start']!r}..{r['end']!r} are not calendar dates", source)
    backwards = parsed_start > parsed_end
    if backwards.any():
        _fail(df, backwards, lambda r: f"period starts {r['start']} after it ends {r['end']}", source)
    units = df.loc[mapped, "unit"].unique()
    unknown = [u for u in units if not known_unit(str(u))]
    if unknown:
        _fail(df, mapped & df["unit"].isin(unknown), lambda r: f"unknown unit {r['unit']!r} (expected a currency code, "
              "CUR/share, shares or pure)", source)
    return df


# ---------------------------------------------------------------- companyfacts document shape
def _bad(source: str, field: str, what: str) -> InputError:
    return InputError(what, path=source, field=field)


def check_companyfacts_doc(doc: Any, source: str, taxonomies: tuple[str, ...] = ("us-gaap", "ifrs-full", "dei"),
                           wanted: Callable[[str, str], bool] | None = None) -> None:
    """Raise one InputError for the first malformed part of an SEC companyfacts document.
    `wanted(taxonomy, tag)`: only those tags' facts are checked one by one (the loader reads no others)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("facts"), dict):
        raise _bad(source, "facts", "not an SEC companyfacts document (no 'facts' object)")
    cik = doc.get("cik")
    if isinstance(cik, bool) or not (isinstance(cik, int) and 0 < cik < 10**10 or isinstance(cik, str) and re.fullmatch(r"\d{1,10}", cik) and int(cik) > 0):
        raise _bad(source, "cik", f"cik {str(cik)[:40]!r} ({type(cik).__name__}) is not a CIK number")
    name = doc.get("entityName", "")
    if name is not None and not isinstance(name, str):
        raise _bad(source, "entityName", f"entityName is a {type(name).__name__}, not text")
    for taxonomy, tags in doc["facts"].items():
        if taxonomy not in taxonomies:
            continue
        if not isinstance(tags, dict):
            raise _bad(source, f"facts.{taxonomy}", f"taxonomy {taxonomy} is a {type(tags).__name__}, not an object of tags")
        for tag, spec in tags.items():
            where = f"facts.{taxonomy}.{tag}"
            if not isinstance(spec, dict) or not isinstance(spec.get("units"), dict):
                raise _bad(source, f"{where}.units", f"tag {taxonomy}:{tag} has no 'units' object")
            if wanted is not None and not wanted(taxonomy, tag):
                continue
            for unit, facts in spec["units"].items():
                if not isinstance(facts, list):
                    raise _bad(source, f"{where}.units.{unit}", f"units {unit!r} of {taxonomy}:{tag} is a {type(facts).__name__}, not a list of facts")
                for i, fact in enumerate(facts):
                    if type(fact) is dict and type(fact.get("val")) in (int, float) and type(fact.get("end")) is str \
                            and -MAX_ABS_VALUE <= fact["val"] <= MAX_ABS_VALUE:  # the usual fact: the full check only when this fails
                        fy = fact.get("fy")
                        if type(fact.get("start", "")) is str and (fy is None or type(fy) is int and MIN_YEAR <= fy <= MAX_YEAR):
                            continue
                    _check_fact(fact, source, f"{where}.units.{unit}[{i}]", f"{taxonomy}:{tag} [{unit}] fact #{i}")


def _check_fact(fact: Any, source: str, field: str, what: str) -> None:
    if not isinstance(fact, dict):
        raise _bad(source, field, f"{what} is a {type(fact).__name__}, not an object")
    val = fact.get("val")
    if isinstance(val, bool) or not isinstance(val, (int, float)):
        raise _bad(source, field, f"{what}: val {str(val)[:40]!r} ({type(val).__name__}) is not a JSON number")
    if isinstance(val, int) and abs(val) > MAX_ABS_VALUE or isinstance(val, float) and not (math.isfinite(val) and abs(val) <= MAX_ABS_VALUE):
        shown = f"{len(str(abs(val)))}-digit number" if isinstance(val, int) else repr(val)
        raise _bad(source, field, f"{what} (period {fact.get('start', '')}..{fact.get('end', '')}): val {shown} is not a finite number within ±{MAX_ABS_VALUE:.0e}")
    for key in ("end", "start", "filed", "form", "accn", "fp"):
        if key in fact and fact[key] is not None and not isinstance(fact[key], str):
            raise _bad(source, field, f"{what}: {key} {str(fact[key])[:40]!r} is not text")
    if not isinstance(fact.get("end"), str):
        raise _bad(source, field, f"{what} has no 'end' date")
    fy = fact.get("fy")
    if fy is not None and (isinstance(fy, bool) or not isinstance(fy, int) or not MIN_YEAR <= fy <= MAX_YEAR):
        raise _bad(source, field, f"{what}: fy {str(fy)[:40]!r} is not a year")


# ---------------------------------------------------------------- validate finding
def currency_mixups(facts: pd.DataFrame) -> list[dict]:
    """Lines of a statement reported only in a currency other than the one its other lines use."""
    money = facts[(facts["concept"] != "") & facts["unit"].isin(CURRENCIES)]
    out = []
    if money.empty:
        return out
    for (company, statement, start, end), grp in money.groupby(["company", "statement", "start", "end"], sort=True):
        counts = grp["unit"].value_counts()
        if len(counts) < 2:
            continue
        major = counts.index[0]
        for concept, units in grp.groupby("concept")["unit"].agg(lambda u: sorted(set(u))).items():
            if major not in units:
                period = f"{start}..{end}" if start else str(end)
                out.append({"concept": concept, "unit": "/".join(units), "source": ",".join(sorted(set(grp.loc[grp["concept"] == concept, "source"]))),
                            "problem": f"mixed currencies: {company} {statement} {period}: {concept} only in {'/'.join(units)} "
                                       f"while the statement's other lines are in {major}"})
    return out


def main(argv: list[str] | None = None) -> int:
    from ledgerlm.synth.statements.sources import load_raw_facts  # here, not at the top: sources -> companyfacts -> sanity

    args = argv if argv is not None else sys.argv[1:]
    facts = load_raw_facts(args or None)  # every loader runs check_facts
    mixups = currency_mixups(facts)
    print(f"{len(facts)} facts pass the value checks; {len(mixups)} mixed-currency line(s)")
    for m in mixups[:20]:
        print("  " + m["problem"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
