"""XBRL instance documents (`*_htm.xml`, plain or .gz) -> canonical facts, with lxml.

    python -m ledgerlm.synth.statements.xbrl synth/data/sec/xbrl/aapl-20230930_htm.xml.gz

Contexts give the period (instant -> start '', duration -> start/end) and dimensions; facts
whose context has no dimensions are the consolidated totals, facts whose only dimension is
`dei:LegalEntityAxis = srt:ParentCompanyMember` are parent-only (scope=parent), and every other
dimensional fact is dropped. Units: measures (iso4217:USD -> USD, shares) and divides
(USD/shares -> USD/share). `decimals` picks the most precise of duplicate facts. dei gives the
company (TradingSymbol, EntityCentralIndexKey, EntityRegistrantName), the form (DocumentType)
and the filing's fiscal focus (DocumentFiscalYearFocus / DocumentFiscalPeriodFocus). An instance
carries neither labels nor a filing date: `label` is the concept's English label and `filed`
is '' unless the caller passes it.
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
from ledgerlm.synth.statements.facts import conform, empty_facts, normalize_unit, read_bytes
from ledgerlm.synth.statements.taxonomy import concept_info, standard_taxonomy, tag_concepts

XBRLI = "{http://www.xbrl.org/2003/instance}"
XBRLDI = "{http://xbrl.org/2006/xbrldi}"
PARENT_DIMENSION = ("LegalEntityAxis", "ParentCompanyMember")


def taxonomy_of(namespace: str) -> str | None:
    """'us-gaap' / 'ifrs-full' / 'dei' from a namespace URI; None for company extensions."""
    if "fasb.org/us-gaap" in namespace:
        return "us-gaap"
    if "xbrl.ifrs.org" in namespace:
        return "ifrs-full"
    if "xbrl.sec.gov/dei" in namespace:
        return "dei"
    return None


def _local(name: str) -> str:
    return name.rsplit("}", 1)[-1].rsplit(":", 1)[-1]


def _contexts(root, source: str) -> dict[str, tuple[str, str, str | None]]:
    """context id -> (start, end, scope or None for a dimensional context we drop)."""
    out = {}
    for ctx in root.iter(f"{XBRLI}context"):
        cid = ctx.get("id")
        period = ctx.find(f"{XBRLI}period")
        if period is None:
            raise InputError(f"context {cid!r} has no period", path=source, field="context.period")
        instant = period.findtext(f"{XBRLI}instant")
        start, end = ("", instant) if instant else (period.findtext(f"{XBRLI}startDate"), period.findtext(f"{XBRLI}endDate"))
        if not end or start is None:
            raise InputError(f"context {cid!r} has neither an instant nor a start/end date", path=source, field="context.period")
        members = [(_local(m.get("dimension", "")), _local((m.text or "").strip())) for m in ctx.iter(f"{XBRLDI}explicitMember", f"{XBRLDI}typedMember")]
        scope = "consolidated" if not members else ("parent" if members == [PARENT_DIMENSION] else None)
        out[cid] = (start.strip()[:10], end.strip()[:10], scope)
    return out


def _units(root) -> dict[str, str]:
    out = {}
    for unit in root.iter(f"{XBRLI}unit"):
        divide = unit.find(f"{XBRLI}divide")
        if divide is not None:
            num = divide.findtext(f"{XBRLI}unitNumerator/{XBRLI}measure") or ""
            den = divide.findtext(f"{XBRLI}unitDenominator/{XBRLI}measure") or ""
            out[unit.get("id")] = normalize_unit(f"{_local(num.strip())}/{_local(den.strip())}")
        else:
            out[unit.get("id")] = normalize_unit(_local((unit.findtext(f"{XBRLI}measure") or "").strip()))
    return out


def _precision(decimals: str | None) -> float:
    if decimals is None or decimals.strip().upper() == "INF":
        return float("inf")
    try:
        return float(decimals)
    except ValueError:
        return float("-inf")


def load_xbrl(path: str | Path, *, filed: str = "", source: str | None = None) -> pd.DataFrame:
    """Canonical facts of one XBRL instance document (consolidated and parent-only facts)."""
    import pandas as pd
    from lxml import etree

    where = str(path)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True, remove_comments=True)
    try:
        root = etree.fromstring(read_bytes(path), parser)
    except etree.XMLSyntaxError as err:
        raise InputError(f"not well-formed XML ({err})", path=where, field="xml") from None
    if _local(root.tag) != "xbrl":
        raise InputError(f"root element is <{_local(root.tag)}>, not an XBRL instance <xbrl>", path=where, field="xbrl")
    contexts, units = _contexts(root, where), _units(root)
    base = "ifrs-full" if any(taxonomy_of(ns or "") == "ifrs-full" for ns in root.nsmap.values()) else "us-gaap"
    dei: dict[str, str] = {}
    rows = []
    for el in root:
        if not isinstance(el.tag, str) or el.get("contextRef") is None:
            continue
        ns, name = el.tag[1:].split("}", 1) if el.tag.startswith("{") else ("", el.tag)
        taxonomy = taxonomy_of(ns)
        if taxonomy is None:  # an extension element named as a standard one is read as it (shared with FSDS)
            taxonomy = standard_taxonomy(None, name, base)
        ctx = el.get("contextRef")
        if ctx not in contexts:
            raise InputError(f"fact {taxonomy or 'ext'}:{name} refers to unknown context {ctx!r}", path=where, field="contextRef")
        if taxonomy == "dei":
            dei.setdefault(name, (el.text or "").strip())
            continue
        mapped = tag_concepts(taxonomy, name) if taxonomy else []
        start, end, scope = contexts[ctx]
        if not mapped or scope is None or el.get("{http://www.w3.org/2001/XMLSchema-instance}nil") == "true":
            continue
        unit_ref = el.get("unitRef")
        if unit_ref not in units:
            raise InputError(f"fact {taxonomy}:{name} refers to unknown unit {unit_ref!r}", path=where, field="unitRef")
        try:
            value = float((el.text or "").strip())
        except ValueError:
            raise InputError(f"fact {taxonomy}:{name} (context {ctx}) has non-numeric value {el.text!r}", path=where, field=f"{taxonomy}:{name}") from None
        for concept, _ in mapped:
            rows.append((scope, concept, value, units[unit_ref], start, end, f"{taxonomy}:{name}", _precision(el.get("decimals"))))
    if not rows:
        return empty_facts()
    df = pd.DataFrame(rows, columns=["scope", "concept", "value", "unit", "start", "end", "tag", "_precision"])
    df = df.sort_values("_precision", ascending=False, kind="stable").drop_duplicates(["scope", "concept", "unit", "start", "end", "tag"])
    cik = dei.get("EntityCentralIndexKey", "")
    company = (dei.get("TradingSymbol") or (company_code(int(cik)) if cik.isdigit() else "")).upper()
    df = df.drop(columns="_precision").sort_index()
    df["statement"] = df["concept"].map(lambda c: concept_info(c).statement)
    df["label"] = df["concept"].map(lambda c: concept_info(c).label_en)
    df["company"], df["company_name"] = company or Path(where).name, dei.get("EntityRegistrantName", "")
    df["fiscal_year"], df["fiscal_period"] = dei.get("DocumentFiscalYearFocus") or None, dei.get("DocumentFiscalPeriodFocus", "")
    df["form"], df["filed"], df["source"] = dei.get("DocumentType", ""), filed, source or Path(where).name
    return sanity.check_facts(conform(df), where)


def main(argv: list[str] | None = None) -> int:
    for path in argv if argv is not None else sys.argv[1:]:
        df = load_xbrl(path)
        print(f"{path}: {len(df)} facts, company {df['company'].iloc[0] if len(df) else '-'}, form {df['form'].iloc[0] if len(df) else '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
