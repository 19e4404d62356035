"""Balance sheets assembled from several filings: lines an older presentation adds to the latest one are withheld
where the arithmetic proves they are counted twice.

    python -m ledgerlm.synth.statements.sheets            # what the embedded data withholds, per company and date

A report's balance lines are the latest filed value of each line (facts.select_latest), so a line the latest
balance sheet at a date (the filing its total assets come from) does not show is filled from another filing of the
same date. Where the later filing reclassified, the filled line is counted twice: Apple's FY2018 10-K folds FY2017's
accrued expenses (25,744 M) into "other current liabilities" and goodwill and intangibles (8,015 M) into "other
non-current assets", so the FY2017 sheet showed current liabilities of 126,558 M under a total of 100,814 M;
Alphabet's FY2023 10-K folds FY2022's inventory (2,670 M) into other current assets (seed-6061 helper audit).

`withhold_conflicting_fills(index)`: for each balance sheet and each section (current / non-current assets,
current / non-current liabilities), the section's disjoint face lines (SECTIONS: lines a filer never nests in another
of the list) are added; where they exceed the section total by more than `TOLERANCE` and leaving out the lines one
other filing supplied brings them within it, every balance line that filing supplied at that date is withheld:
it is a fact of another presentation, not 0 and not a line of this one. The store refuses a withheld line as a missing
report (so no "a line not shown counts as 0" rule reads it as 0). Lines the filer nests (taxes payable within accrued
liabilities, right-of-use assets within other assets) are not in SECTIONS, so a sheet that only nests proves nothing.
"""
from __future__ import annotations

import sys

from ledgerlm.synth.statements.factindex import FactIndex

# section total -> lines that are disjoint parts of it on every filer's face statement
SECTIONS = {
    "current_assets": ("cash", "short_term_investments", "notes_receivable", "accounts_receivable", "prepayments",
                       "other_receivables", "inventory", "contract_assets", "other_current_assets"),
    "noncurrent_assets": ("long_term_investments", "ppe_net", "intangible_assets", "goodwill", "other_noncurrent_assets"),
    "current_liabilities": ("short_term_debt", "accounts_payable", "accrued_liabilities", "deferred_revenue",
                            "other_current_liabilities", "current_portion_long_term_debt"),
    "noncurrent_liabilities": ("long_term_debt", "other_noncurrent_liabilities"),
}
TOLERANCE = 1e-3  # of the section total: rounding of the filed lines never reaches it
_SECTION_CONCEPTS = frozenset(SECTIONS).union(*SECTIONS.values(), {"total_assets"})


def withhold_conflicting_fills(index: FactIndex) -> None:
    """Move the balance lines `_conflicting` proves counted twice from `index.cells` to `index.withheld` (the reason as
    value). One pass over the cells: balance lines grouped by sheet (company, scope, report)."""
    cells = index.cells
    sheets: dict[tuple, dict[str, tuple]] = {}
    for key, cell in cells.items():
        if cell.statement == "balance" or key[2] in _SECTION_CONCEPTS:
            sheets.setdefault((key[0], key[1], key[3]), {})[key[2]] = (key, cell)
    for (company, scope, report), lines in sheets.items():
        total = lines.get("total_assets")
        if total is None:
            continue
        sheet = total[1].source
        for source, section in _conflicting(lines, sheet):
            for concept, (key, cell) in lines.items():
                if cell.source == source and cell.value != 0 and key in cells:  # a 0 line counts nothing twice
                    index.withheld[key] = (
                        f"{company}: {concept} of the {report.label} balance sheet comes from filing {source}, whose lines "
                        f"make the {section.replace('_', ' ')} of the balance sheet of {sheet} (the latest at that date) "
                        f"exceed their total: a line of another presentation of that date, withheld")
                    del cells[key]


def _conflicting(lines: dict[str, tuple], sheet: str) -> list[tuple[str, str]]:
    """(filing, section) pairs of one sheet (`lines`: concept -> (key, cell)): another filing whose lines make the
    section exceed its total (see module doc)."""
    found = []
    for total, parts in SECTIONS.items():
        top = lines.get(total)
        if top is None or top[1].source != sheet:
            continue
        parts_shown = [lines[part][1] for part in parts if part in lines and lines[part][1].unit == top[1].unit]
        limit = top[1].value + TOLERANCE * abs(top[1].value)
        shown = sum(c.value for c in parts_shown)
        if shown <= limit:
            continue
        by_source: dict[str, float] = {}
        for c in parts_shown:
            if c.source != sheet:
                by_source[c.source] = by_source.get(c.source, 0.0) + c.value
        found += [(source, total) for source, added in by_source.items() if shown - added <= limit]
    return list(dict.fromkeys(found))


def main(argv: list[str] | None = None) -> int:
    from ledgerlm.synth.statements.store import FactStore

    store = FactStore.from_sources(argv or None)
    by_reason: dict[tuple[str, str, str], list[str]] = {}
    for key, why in store.index.withheld.items():
        by_reason.setdefault((key[0], key[3].label, why), []).append(key[2])
    for (company, report, why), lines in sorted(by_reason.items()):
        print(f"{company} {report}: {', '.join(sorted(lines))}\n  {why}")
    sheets = {(c, r) for c, r, _ in by_reason}
    print(f"{len(store.index.withheld)} lines withheld at {len(sheets)} balance sheets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
