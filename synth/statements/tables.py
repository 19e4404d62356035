"""Statement tables in HTML (lxml) and LaTeX `tabular` blocks -> canonical facts.

    python -m ledgerlm.synth.statements.tables report.html --company 600000

A statement table is a label column plus period columns, as the FinIndices paper extracts them
from annual reports. Understood:
- labels in English or Chinese (taxonomy.map_label; rows that map to no concept are dropped,
  rows without numbers are section headings); a label's trailing footnote reference ('(1)', '(a)', '*',
  '†', a <sup>) is dropped first;
- the SEC layout with '$' in a cell of its own: when a row's cells do not sit under the header's
  columns (a header without colspan), currency-symbol cells are dropped and the values put under the
  header's columns in order; a row whose values still do not line up is an error naming the row;
- unit headers anywhere in the caption, the header rows or the text just before the table:
  单位：元 / 千元 / 万元 / 百万元 / 亿元, 美元, "in millions", "(in thousands, except per share)";
  per-share rows are never scaled; share counts follow "shares in thousands" or an "except ...
  share" clause;
- numbers with thousands separators, parenthesised negatives, and —, –, -, empty = missing;
- period headers (several header rows are joined per column): "FY2023", "FY2023Q3YTD",
  "2023-12-31", "2023年12月31日", "2023年度", "2023年1-6月", "Three months ended July 1, 2023",
  "Year ended September 30, 2023", "December 31, 2023", an explicit "2022-09-25 to 2023-09-30".
  Without the company's fiscal calendar, "FYyyyy" means the calendar year and "N months ended D"
  starts N months before D (+1 day); pass `period_dates={"FY2023": ("2022-09-25", "2023-09-30")}`
  for exact dates. A single date heads a balance (instant); in an income or cash-flow table it
  means the twelve months ended that date.
- company, statement and scope from the caller, else the table's data-* attributes, else the
  caption ("(AAPL)", "（600000）", 合并/母公司, balance sheet/资产负债表 ...), else the file name.
"""
from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: functions that build or read frames import pandas (a warm synth run never does)
    import pandas as pd

from ledgerlm.errors import InputError
from ledgerlm.synth.statements import sanity
from ledgerlm.synth.statements.facts import conform, empty_facts, read_bytes
from ledgerlm.synth.statements.taxonomy import concept_info, map_label

MISSING = {"", "—", "–", "-", "－", "−", "——", "--", "n/a", "na", "nm", "*"}
MONTHS = {m: i for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}
WORD_MONTHS = {"one": 1, "three": 3, "six": 6, "nine": 9, "twelve": 12, "3": 3, "6": 6, "9": 9, "12": 12}
STATEMENT_WORDS = [
    ("balance", ("balance sheet", "financial position", "资产负债表")),
    ("cashflow", ("cash flow", "现金流量表")),
    ("equity", ("changes in equity", "stockholders' equity statement", "所有者权益变动表", "股东权益变动表")),
    ("income", ("income statement", "statement of operations", "statements of operations", "profit or loss", "income", "利润表", "损益表")),
]


@dataclass
class RawTable:
    """A table as text cells: caption, header rows, body rows, data-* attributes, nearby text."""
    caption: str = ""
    header: list[list[str]] = field(default_factory=list)
    body: list[list[str]] = field(default_factory=list)
    attrs: dict = field(default_factory=dict)
    context: str = ""
    filled: list[list[str]] = field(default_factory=list)  # header + body rows with spanned slots repeating their cell (HTML)


@dataclass(frozen=True)
class PeriodHeader:
    label: str
    start: str
    end: str
    fiscal_year: int | None
    fiscal_period: str


@dataclass(frozen=True)
class UnitHeader:
    currency: str | None
    scale: float
    share_scale: float | None  # None: same as `scale`


# ---------------------------------------------------------------- cells: numbers and units
def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", str(text))).strip()


def parse_amount(text: str) -> float | None:
    """'1,234' -> 1234.0; '(1,234)' -> -1234.0; '—' / '-' / '' -> None; ValueError if not a number."""
    raw = unicodedata.normalize("NFKC", str(text)).strip()
    if raw.lower() in MISSING or raw in ("—", "–", "－"):
        return None
    s = re.sub(r"(US\$|NT\$|RMB|HK\$|[$¥￥€£]|\s)", "", raw)
    negative = False
    if s.startswith("(") and s.endswith(")"):
        negative, s = True, s[1:-1]
    if s.startswith(("-", "−")) and len(s) > 1:
        negative, s = not negative, s[1:]
    s = s.replace(",", "")
    if s.lower() in MISSING:
        return None
    if not re.fullmatch(r"\d+(\.\d+)?|\.\d+", s):
        raise ValueError(f"not a number: {text!r}")
    value = float(s)
    return -value if negative else value


def is_amount(text: str) -> bool:
    try:
        return parse_amount(text) is not None
    except ValueError:
        return False


_CN_SCALES = [("亿元", 1e8), ("百万元", 1e6), ("万元", 1e4), ("千元", 1e3), ("元", 1.0)]
_EN_SCALES = [("billion", 1e9), ("million", 1e6), ("thousand", 1e3)]


def parse_unit_header(text: str) -> UnitHeader | None:
    """Currency and scale from a unit header ('单位：万元', '(In millions, except per share amounts)')."""
    t = _clean(text)
    low = t.lower()
    currency = None
    if "美元" in t or "us$" in low or "usd" in low or "u.s. dollar" in low or "$" in t and "nt$" not in low and "hk$" not in low:
        currency = "USD"
    elif "nt$" in low or "twd" in low or "新台币" in t or "新臺幣" in t:
        currency = "TWD"
    elif "hk$" in low or "港元" in t or "hkd" in low:
        currency = "HKD"
    elif "人民币" in t or "rmb" in low or "cny" in low or "元" in t:
        currency = "CNY"
    scale = None
    if "单位" in t or re.search(r"(亿|百万|万|千)(人民币|美|港|新台币)?元", t):
        unit_part = t.split("单位", 1)[-1]
        for cur_word in ("人民币", "美元", "港元", "新台币", "新臺幣"):
            unit_part = unit_part.replace(cur_word, "元" if cur_word.endswith("元") else "")
        for word, factor in _CN_SCALES:
            if word in unit_part:
                scale = factor
                break
    if scale is None:
        m = re.search(r"\bin (billions|millions|thousands)\b|\b(billions|millions|thousands) of\b|\bin (billion|million|thousand)s?\b", low)
        if m:
            word = next(g for g in m.groups() if g)
            scale = next(f for w, f in _EN_SCALES if word.startswith(w))
    if scale is None and currency is None:
        return None
    share_scale = None
    shares_in = re.search(r"shares?[^.;)]*?(?:reflected |are |stated |)in (thousands|millions)", low)
    if shares_in:
        share_scale = 1e3 if shares_in.group(1) == "thousands" else 1e6
    elif "除外" in t and ("股数" in t or "股份数" in t):
        share_scale = 1.0
    elif re.search(r"except[^)]*shares?\b", low) and not re.search(r"except[^)]*per[ -]share\)?$", low.strip(" )")) or re.search(r"except[^)]*(number of shares|share data|share counts|shares)", low):
        share_scale = 1.0
    return UnitHeader(currency, scale if scale is not None else 1.0, share_scale)


# ---------------------------------------------------------------- period headers
def _iso(y: int, m: int, d: int) -> str:
    return f"{y:04d}-{m:02d}-{d:02d}"


def _months_before(end: str, months: int) -> str:
    import pandas as pd

    ts = pd.Timestamp(end) + pd.Timedelta(days=1) - pd.DateOffset(months=months)
    return ts.strftime("%Y-%m-%d")


def _find_date(text: str) -> str | None:
    t = text
    if m := re.search(r"(\d{4})-(\d{1,2})-(\d{1,2})", t):
        return _iso(int(m[1]), int(m[2]), int(m[3]))
    if m := re.search(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日", t):
        return _iso(int(m[1]), int(m[2]), int(m[3]))
    if m := re.search(r"([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2}),?\s+(\d{4})", t):
        if m[1].lower() in MONTHS:
            return _iso(int(m[3]), MONTHS[m[1].lower()], int(m[2]))
    if m := re.search(r"(\d{1,2})\s+([A-Za-z]{3})[a-z]*\.?,?\s+(\d{4})", t):
        if m[2].lower() in MONTHS:
            return _iso(int(m[3]), MONTHS[m[2].lower()], int(m[1]))
    return None


_FY = re.compile(r"\bFY\s?(\d{4})(Q[1-4]TTM|Q[1-4]YTD|Q[1-4]|H1)?\b", re.I)


def parse_period_header(text: str, statement: str = "", period_dates: dict | None = None) -> PeriodHeader | None:
    """start/end of a period column header, or None when the text names no period."""
    import pandas as pd

    t = _clean(text)
    if not t:
        return None
    fy = _FY.search(t)
    label = f"FY{fy[1]}{(fy[2] or '').upper()}" if fy else t
    if period_dates and label in period_dates:
        start, end = period_dates[label]
        return PeriodHeader(label, start or "", end, int(fy[1]) if fy else None, _fiscal_period(fy))
    if m := re.search(r"(\d{4}-\d{2}-\d{2})\s*(?:to|–|—|-|~|/|至)\s*(\d{4}-\d{2}-\d{2})", t):
        return PeriodHeader(label, m[1], m[2], int(fy[1]) if fy else int(m[2][:4]), _fiscal_period(fy))
    if fy:
        year, part = int(fy[1]), (fy[2] or "").upper()
        if part.endswith("TTM"):
            q = int(part[1])
            end = pd.Timestamp(_iso(year, 3 * q, 1)) + pd.offsets.MonthEnd(0)
            return PeriodHeader(label, _months_before(end.strftime("%Y-%m-%d"), 12), end.strftime("%Y-%m-%d"), year, part)
        quarters = {"": (0, 4), "H1": (0, 2)}.get(part) or ((int(part[1]) - 1, 1) if len(part) == 2 else (0, int(part[1])))
        first, n = quarters
        start = _iso(year, 3 * first + 1, 1)
        end = (pd.Timestamp(_iso(year, 3 * (first + n), 1)) + pd.offsets.MonthEnd(0)).strftime("%Y-%m-%d")
        return PeriodHeader(label, start, end, year, _fiscal_period(fy))
    low = t.lower()
    if m := re.search(r"(one|three|six|nine|twelve|3|6|9|12)[ -]months?\s+ended", low):
        end = _find_date(t)
        if end:
            return PeriodHeader(t, _months_before(end, WORD_MONTHS[m[1]]), end, int(end[:4]), "")
    if re.search(r"(fiscal )?years?\s+ended", low) and (end := _find_date(t)):
        return PeriodHeader(t, _months_before(end, 12), end, int(end[:4]), "FY")
    if m := re.search(r"(\d{4})\s*年\s*(?:1|一)\s*[-—–至~]\s*(\d{1,2})\s*月", t):
        year, last = int(m[1]), int(m[2])
        end = (pd.Timestamp(_iso(year, last, 1)) + pd.offsets.MonthEnd(0)).strftime("%Y-%m-%d")
        return PeriodHeader(t, _iso(year, 1, 1), end, year, {3: "Q1", 6: "H1", 9: "Q3YTD", 12: "FY"}.get(last, ""))
    if m := re.search(r"(\d{4})\s*年\s*半年度", t):
        return PeriodHeader(t, _iso(int(m[1]), 1, 1), _iso(int(m[1]), 6, 30), int(m[1]), "H1")
    if m := re.search(r"(\d{4})\s*年度", t):
        return PeriodHeader(t, _iso(int(m[1]), 1, 1), _iso(int(m[1]), 12, 31), int(m[1]), "FY")
    end = _find_date(t)
    if end:
        if statement in ("income", "cashflow"):
            return PeriodHeader(t, _months_before(end, 12), end, int(end[:4]), "FY")
        return PeriodHeader(t, "", end, int(end[:4]), "")
    if m := re.fullmatch(r"(\d{4})\s*年?", t):
        year = int(m[1])
        if statement == "balance":
            return PeriodHeader(t, "", _iso(year, 12, 31), year, "")
        return PeriodHeader(t, _iso(year, 1, 1), _iso(year, 12, 31), year, "FY")
    return None


def _fiscal_period(fy) -> str:
    if not fy:
        return ""
    return (fy[2] or "FY").upper()


# ---------------------------------------------------------------- reading tables
MAX_COLSPAN, MAX_ROWSPAN = 1000, 65534  # the HTML spec's limits; a larger span is an error, not a 186 MB table
MAX_COLUMNS = 1000


def _span(cell, name: str, limit: int, source: str, where: str) -> int:
    raw = str(cell.get(name, "1") or "1").strip()
    if not raw.isdigit():
        return 1  # browsers read a malformed span as 1
    span = int(raw) if len(raw) < 12 else limit + 1
    if span > limit:
        raise InputError(f"{where}: {name}={raw[:20]} exceeds the HTML limit of {limit}", path=source, field=name)
    return max(span, 1) if name == "colspan" else span  # rowspan=0: to the end of the row group


def _grid(trs, source: str, where: str) -> tuple[list[list[str]], list[list[str]]]:
    """The HTML table model of one row group: every cell at its row and column after `rowspan` and
    `colspan`. Returns (cells, filled): in `cells` a spanned slot is "" (one value, not two); in
    `filled` it repeats the spanning cell's text (header rows: "Three months ended" over two dates)."""
    cells_out: list[list[str]] = []
    filled_out: list[list[str]] = []
    carried: dict[int, list] = {}  # column -> [text, rows still covered]
    n_rows = len(trs)
    for r, tr in enumerate(trs):
        row: dict[int, str] = {}
        full: dict[int, str] = {}
        after: dict[int, list] = {}  # what covers the next row
        for col, (text, left) in carried.items():
            row[col], full[col] = "", text
            if left > 1:
                after[col] = [text, left - 1]
        col = 0
        for cell in tr.xpath("./th|./td"):
            while col in row:
                col += 1
            # a label's footnote reference (<sup>1</sup>) is no part of the label
            text = _clean(_SUPERSCRIPTS.sub("", "".join(cell.xpath(_LABEL_TEXT))) if col == 0 else cell.text_content())
            colspan = _span(cell, "colspan", MAX_COLSPAN, source, where)
            rowspan = _span(cell, "rowspan", MAX_ROWSPAN, source, where)
            rowspan = n_rows - r if rowspan == 0 else min(rowspan, n_rows - r)
            if col + colspan > MAX_COLUMNS:
                raise InputError(f"{where}: the table is over {MAX_COLUMNS} columns wide", path=source, field="colspan")
            for k in range(colspan):
                row[col + k], full[col + k] = (text if k == 0 else ""), text
                if rowspan > 1:
                    after[col + k] = [text, rowspan - 1]
            col += colspan
        width = max(row, default=-1) + 1
        cells_out.append([row.get(c, "") for c in range(width)])
        filled_out.append([full.get(c, "") for c in range(width)])
        carried = after
    return cells_out, filled_out


def read_html_tables(text: str, source: str = "<html>") -> list[RawTable]:
    """Every <table> in an HTML document or fragment, as RawTable (rowspan/colspan per the HTML table model)."""
    from lxml import etree  # imported here: synth renders tables, only parsing them needs lxml
    from lxml import html as lxml_html

    if not text.strip():
        return []
    try:
        doc = lxml_html.fromstring(text)
    except (etree.ParserError, ValueError):
        return []
    tables = [doc] if doc.tag == "table" else doc.xpath("//table")
    out = []
    for n, table in enumerate(tables, 1):
        caption = table.find("caption")
        caption_text = _clean(caption.text_content()) if caption is not None else ""
        where = f"table {n} ({caption_text[:60] or 'no caption'})"
        context = []
        prev = table.getprevious()
        for _ in range(3):
            if prev is None:
                break
            context.insert(0, _clean(prev.text_content()))
            prev = prev.getprevious()
        header_rows, header_filled = _grid(table.xpath("./thead/tr"), source, where)
        body_rows, body_filled = [], []
        groups = table.xpath("./tbody") or [table]
        for group in groups:  # each row group spans on its own; bare <tr> directly under <table> form one group
            rows, filled = _grid(group.xpath("./tr"), source, where)
            body_rows += rows
            body_filled += filled
        if groups[0] is not table:
            rows, filled = _grid(table.xpath("./tr"), source, where)
            body_rows += rows
            body_filled += filled
        attrs = {k[5:]: v for k, v in table.attrib.items() if k.startswith("data-")}
        out.append(RawTable(caption_text, header_rows, body_rows, attrs, " ".join(context), header_filled + body_filled))
    return out


_LATEX_ESCAPES = [(r"\&", "&"), (r"\%", "%"), (r"\$", "$"), (r"\_", "_"), (r"\#", "#"), ("~", " "), (r"\textendash", "–"), (r"\textemdash", "—"), ("---", "—"), ("--", "–")]


def _latex_text(cell: str, source: str = "<latex>") -> list[str]:
    """Plain text of one LaTeX cell; a \\multicolumn{n} spans n columns (n <= MAX_COLSPAN, else InputError)."""
    span = 1
    if m := re.match(r"\s*\\multicolumn\{(\d+)\}\{[^}]*\}\{(.*)\}\s*$", cell, re.S):
        span, cell = (int(m[1]) if len(m[1]) < 12 else MAX_COLSPAN + 1), m[2]
        if span > MAX_COLSPAN:
            raise InputError(f"\\multicolumn{{{m[1][:20]}}} exceeds the limit of {MAX_COLSPAN} columns", path=source, field="multicolumn")
    for _ in range(3):
        cell = re.sub(r"\\(?:textbf|textit|emph|text|mathrm|hspace\*?|makecell|underline)\{([^{}]*)\}", r"\1", cell)
    for old, new in _LATEX_ESCAPES:
        cell = cell.replace(old, new)
    cell = re.sub(r"\\(?:quad|qquad|hfill|,|;|!)", " ", cell)
    cell = cell.replace("$", "").replace("{", "").replace("}", "")
    return [_clean(cell)] + [""] * (span - 1)


def read_latex_tables(text: str, source: str = "<latex>") -> list[RawTable]:
    """Every tabular block (with the surrounding table's \\caption) as RawTable."""
    out = []
    for m in re.finditer(r"\\begin\{(tabular\*?|tabularx|longtable)\}(.*?)\\end\{\1\}", text, re.S):
        body = m.group(2)
        body = re.sub(r"^\s*(\{[^{}]*\}\s*)?\{[^{}]*(\{[^{}]*\}[^{}]*)*\}", "", body, count=1)  # column spec
        before = text[max(0, m.start() - 1500):m.start()]
        env_start = before.rfind(r"\begin{table")
        window = before[env_start:] if env_start >= 0 else before[-400:]
        after = text[m.end():m.end() + 400]
        caption = re.search(r"\\caption\{(.*?)\}\s*(?:\\label|\n|$)", window + after[:after.find(r"\end{table")] if r"\end{table" in after else window, re.S)
        comments = " ".join(re.findall(r"^\s*%(.*)$", window, re.M))
        body = re.sub(r"(?<!\\)%.*$", "", body, flags=re.M)
        body = re.sub(r"\\(toprule|midrule|bottomrule|hline|endhead|endfoot|endfirsthead|endlastfoot)(\[[^\]]*\])?", "", body)
        body = re.sub(r"\\cline\{[^}]*\}|\\cmidrule(\([^)]*\))?\{[^}]*\}", "", body)
        rows = []
        for line in re.split(r"\\\\(?:\[[^\]]*\])?", body):
            if not line.strip():
                continue
            cells = []
            for cell in re.split(r"(?<!\\)&", line):
                cells += _latex_text(cell, source)
            rows.append(cells)
        caption_text = _latex_text(caption.group(1))[0] if caption else ""
        context = _clean(re.sub(r"\\[a-zA-Z]+\*?(\[[^\]]*\])?(\{[^{}]*\})?", " ", window.replace(caption.group(0), "") if caption else window))
        out.append(RawTable(caption_text, [], rows, {}, (context + " " + comments).strip()))
    return out


# ---------------------------------------------------------------- tables -> facts
def _split_header(raw: RawTable) -> tuple[list[list[str]], list[list[str]]]:
    rows = raw.header + raw.body
    for i, row in enumerate(rows):
        if i >= len(raw.header) and len(row) > 1 and row[0] and any(is_amount(c) for c in row[1:]):
            return rows[:i], rows[i:]
    return rows, []


def statement_from_text(text: str) -> str | None:
    low = _clean(text).lower()
    for statement, words in STATEMENT_WORDS:
        if any(w in low for w in words):
            return statement
    return None


def company_from_text(text: str) -> str | None:
    if m := re.search(r"[(（]\s*([A-Z][A-Z0-9.\-]{0,9}|\d{4,6}(?:\.[A-Z]{2})?)\s*[)）]", text):
        return m[1]
    for part in re.split(r"\s+[—–|·-]\s+", text):
        if re.fullmatch(r"[A-Z][A-Z0-9.\-]{0,9}", part.strip()):
            return part.strip()
    return None


def scope_from_text(text: str) -> str | None:
    low = text.lower()
    if "母公司" in text and "归属于母公司" not in text or re.search(r"\bparent(?:[- ]company| only)\b|\bscope: ?parent\b|\bparent\b\)?$", low):
        return "parent"
    if "合并" in text or "consolidated" in low:
        return "consolidated"
    return None


# a label cell's text without footnote references: <sup>, or EDGAR's styled superscript span
_SUPERSCRIPTS = re.compile("[\u00b9\u00b2\u00b3\u2070-\u2079]+")  # 'Revenue¹' (before NFKC makes it 'Revenue1')
_LABEL_TEXT = (".//text()[not(ancestor::sup) and not(ancestor::*[contains(translate(@style, ' ', ''), 'vertical-align:super')])]")
# 'Revenue (1)', '(a)', '(ii)', '(Note 3)', '[1]', '*', '†', '¹'
_FOOTNOTE = re.compile(r"\s*(?:[(（](?:\d{1,2}|[a-zA-Z]|[ivx]{1,4}|[Nn]otes?\s+\d{1,2}[a-z]?)[)）]|\[\d{1,2}\]|[*†‡§]+|[¹²³⁴⁵⁶⁷⁸⁹⁰]+)$")


def row_label(text: str) -> str:
    """A row label without its trailing footnote references, so 'Revenue (1)' maps as 'Revenue' does."""
    for _ in range(3):
        text = _FOOTNOTE.sub("", text).strip()
    return text


_CURRENCY_ONLY = re.compile(r"(US\$|NT\$|HK\$|RMB|[$¥￥€£])")


def _misaligned(row: list[str], header_rows: list[list[str]], heads: dict[int, str], periods: dict) -> bool:
    """A body row whose cells do not sit under the header's columns: text beyond the header's last
    column, or a currency-symbol cell ('$', the SEC layout) in a period column of its own (the header
    gives the symbol and its number no shared, spanned column, so the number would land in the next period)."""
    if not header_rows:
        return False
    header_width = max(len(r) for r in header_rows)
    if any(c and not _CURRENCY_ONLY.fullmatch(c) for c in row[header_width:]):
        return True
    return any(_CURRENCY_ONLY.fullmatch(c) and col in periods and heads.get(col) != heads.get(col + 1)
               for col, c in enumerate(row) if col)


def _realigned(row: list[str], header_rows: list[list[str]], heads: dict[int, str], source: str) -> list[str]:
    """`row` with currency-symbol and empty cells dropped (a lone ')' closes the number before it) and the remaining cells put, in order, under the
    header's columns (a spanned header is one column); InputError naming the row when the counts differ."""
    header_width = max(len(r) for r in header_rows)
    slots: list[int] = []  # first column of each header column (a run of equal, non-empty header text)
    for col in range(1, header_width):
        if heads.get(col) and (not slots or heads[slots[-1]] != heads[col]):
            slots.append(col)
    kept: list[str] = []
    for cell in row[1:]:
        if cell == ")" and kept and kept[-1].startswith("("):  # SEC: '(50' and ')' in two cells
            kept[-1] += ")"
        elif cell and not _CURRENCY_ONLY.fullmatch(cell):
            kept.append(cell)
    if len(kept) != len(slots):
        shown = ", ".join(repr(c) for c in kept[:8])
        raise InputError(f"row {row[0]!r}: its value cells ({shown}) do not line up with the {len(slots)} header column(s) "
                         f"{[heads[c] for c in slots][:8]!r}; which value belongs to which period is ambiguous", path=source, field=row[0])
    out = [row[0]] + [""] * (max(len(row), header_width) - 1)
    for col, cell in zip(slots, kept):
        out[col] = cell
    return out


_EXPENSE_SIGNED = re.compile(r"[(（]\s*(?:income|gain|profit)s?\s*[)）]\s*(?:expense|loss)", re.IGNORECASE)
_OPEN_NEGATIVE = re.compile(r"\(\s*[$¥€£]?\s*[\d,]*\.?\d+")


def _joined_negatives(row: list[str]) -> list[str]:
    """A negative split over two cells as EDGAR writes it ('(189' then ')') joined into one cell '(189)'."""
    if ")" not in row[1:]:
        return row
    row = list(row)
    for i in range(1, len(row) - 1):
        if row[i + 1].strip() == ")" and _OPEN_NEGATIVE.fullmatch(row[i].strip()):
            row[i], row[i + 1] = row[i].strip() + ")", ""
    return row


def table_facts(raw: RawTable, source: str, *, company: str | None = None, company_name: str = "", statement: str | None = None,
                scope: str | None = None, currency: str | None = None, scale: float | None = None,
                period_dates: dict | None = None, form: str = "", filed: str = "") -> pd.DataFrame:
    """Contract-1 rows of one statement table (rows whose label maps to a concept)."""
    import pandas as pd

    header_rows, body = _split_header(raw)
    if raw.filled:  # a header cell spanning columns heads each of them (a spanned body cell stays one value)
        header_rows = raw.filled[: len(header_rows)]
    texts = " ".join([raw.caption, raw.context, *(" ".join(r) for r in header_rows)])
    statement = statement or raw.attrs.get("statement") or statement_from_text(raw.caption + " " + raw.context)
    if statement is None:  # fall back to the concepts the rows name
        found = [concept_info(c).statement for c in (map_label(row_label(r[0])) for r in body if r) if c]
        statement = max(set(found), key=found.count) if found else "income"
    width = max((len(r) for r in header_rows + body), default=0)
    periods: dict[int, PeriodHeader] = {}
    heads: dict[int, str] = {}  # column -> its joined header text
    for col in range(1, width):
        joined = heads[col] = " ".join(r[col] for r in header_rows if col < len(r) and r[col])
        if raw.attrs.get("period") and not joined:
            joined = raw.attrs["period"]
        parsed = parse_period_header(joined, statement, period_dates)
        if parsed is not None:
            periods[col] = parsed
    if not periods:
        seen = [" ".join(r) for r in header_rows][:2]
        raise InputError(f"table {raw.caption or '(no caption)'!r} has no period header (found {seen!r})", path=source, field="header")
    unit = parse_unit_header(raw.attrs.get("unit", "") + " " + texts) or UnitHeader(None, 1.0, None)
    cur = currency or unit.currency or raw.attrs.get("currency") or "USD"
    factor = float(scale if scale is not None else raw.attrs.get("scale") or unit.scale)
    share_factor = unit.share_scale if unit.share_scale is not None else factor
    company = company or raw.attrs.get("company") or company_from_text(raw.caption + " " + raw.context) or Path(source).name.split(".")[0]
    scope = scope or raw.attrs.get("scope") or scope_from_text(raw.caption + " " + raw.context) or "consolidated"
    body = [_joined_negatives(row) for row in body]
    # the SEC layout ('$' cells the header does not span) holds for the whole table: every row is put under the
    # header's columns, so a row without '$' cells (blank years) is placed or refused, never read column by column
    sec_layout = bool(header_rows) and any(row and _misaligned(row, header_rows, heads, periods) for row in body)
    rows = []
    for r_index, row in enumerate(body):
        label = row_label(row[0]) if row else ""
        if not label:
            continue
        sign = -1 if _EXPENSE_SIGNED.search(row[0]) else 1  # 'Other (income) expense, net': a positive figure is an expense
        row = [label, *row[1:]]
        concept = map_label(row[0])
        if concept is None:
            continue
        info = concept_info(concept)
        if sign < 0 and not any(w in concept for w in ("income", "gain", "profit")):
            sign = 1  # the concept itself is expense-signed: the label's reading is its own
        if sec_layout:  # (no row is misaligned otherwise: `sec_layout` asked each of them)
            row = _realigned(row, header_rows, heads, source)
        for col, period in periods.items():
            cell = row[col] if col < len(row) else ""
            try:
                value = parse_amount(cell)
            except ValueError:
                raise InputError(f"row {row[0]!r}, column {period.label!r}: {cell!r} is not a number", path=source, field=row[0]) from None
            if value is None:
                continue
            value = sign * value
            if info.kind == "per_share":
                value, unit_name = value, f"{cur}/share"
            elif info.kind == "shares":
                value, unit_name = value * share_factor, "shares"
            else:
                value, unit_name = value * factor, cur
            start = "" if info.kind in ("stock",) or (info.kind == "shares" and info.statement == "balance") else period.start
            if info.kind == "stock" and period.start and statement != "balance":
                start = ""
            rows.append((info.statement, concept, row[0], value, unit_name, start, period.end, period.fiscal_year, period.fiscal_period, row[0]))
    if not rows:
        return empty_facts()
    df = pd.DataFrame(rows, columns=["statement", "concept", "label", "value", "unit", "start", "end", "fiscal_year", "fiscal_period", "tag"])
    df["company"], df["company_name"], df["scope"] = company, company_name or raw.attrs.get("company-name", ""), scope
    df["form"], df["filed"], df["source"] = form, filed, source
    return sanity.check_facts(conform(df), source)


def load_tables_text(text: str, source: str, *, fmt: str = "html", **meta) -> pd.DataFrame:
    """Facts of every statement table in an HTML ('html') or LaTeX ('latex') text."""
    import pandas as pd

    raws = read_html_tables(text, source) if fmt == "html" else read_latex_tables(text, source)
    if not raws:
        raise InputError(f"no {'<table>' if fmt == 'html' else 'tabular'} found", path=source, field="table")
    frames = [table_facts(raw, source, **meta) for raw in raws]
    return pd.concat(frames, ignore_index=True)


def load_table_file(path: str | Path, **meta) -> pd.DataFrame:
    """Facts of an .html/.htm or .tex file (optionally .gz)."""
    data = read_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("gb18030", errors="replace")
    fmt = "latex" if ".tex" in Path(path).name.lower() else "html"
    return load_tables_text(text, str(path), fmt=fmt, **meta)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ledgerlm.synth.statements.tables", description="statement tables -> canonical facts")
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--company")
    args = parser.parse_args(argv)
    for path in args.paths:
        try:
            df = load_table_file(path, company=args.company)
        except InputError as err:  # one line, as `ledgerlm synth` prints it
            print(f"{parser.prog}: error: {err}", file=sys.stderr)
            return 1
        print(df[["company", "scope", "statement", "concept", "label", "value", "unit", "start", "end"]].to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
