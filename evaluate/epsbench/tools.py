"""The agent's point-in-time tools: filing sections, the prior-quarter transcript, news, the calculator.

    python -c "from ledgerlm.evaluate.epsbench.tools import Toolbox; help(Toolbox)"

Documents come from a user-supplied folder laid out like the release's document store:
    DOCS/filings/<TICKER>/financial_report/<TICKER>_<FORM>_<FILED>_Q<n>_<YYYY>/<section>.md
    DOCS/filings/<TICKER>/earnings_call_transcript/<CALL-DATE>_<TICKER>_Q<n>_<YYYY>_Earnings_Call_Transcript.txt
    DOCS/news/<TICKER>.jsonl   (or DOCS/news.jsonl with a `ticker` field): {"date", "title", "text", "url"?}
Point-in-time gate (paper App. B.2-B.3): only documents dated <= the cutoff are readable; news must
also be dated >= news_window_start; every target-quarter document is blocked. A blocked or missing
request returns {"error": ...} to the model, never silence.
Every path the model names is confined: a section or filing argument with a path separator, `..`,
a NUL or a drive/absolute prefix is refused, and every file read must resolve (symlinks followed)
to a plain file directly inside its own folder under DOCS — a symlink out of a folder (to a blocked
filing or anywhere else on disk) is refused. Each refusal is logged (`requests_blocked` and the
`ledgerlm.evaluate.epsbench.tools` logger).
"""
from __future__ import annotations

import json
import logging
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledgerlm.errors import InputError
from ledgerlm.evaluate.epsbench.calculator import Schema, calculate, operating_node, pretax_node
from ledgerlm.evaluate.epsbench.release import Instance

INFORMATION = ("full", "filings", "news", "none")
CHUNK_CHARS = 15000  # characters per read, as the release's tool server pages documents
_FOLDER_RE = re.compile(r"_(\d{4}-\d{2}-\d{2})_Q([1-4])_(\d{4})$")
_TRANSCRIPT_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})_.*_Q([1-4])_(\d{4})_")
_WORD_RE = re.compile(r"[a-z0-9]+")
_PLAIN_NAME = re.compile(r"[^/\\\x00:]{1,200}")
log = logging.getLogger(__name__)


def _inside(path: Path, folder: Path) -> bool:
    """True when `path` resolves (symlinks followed) to an existing file directly inside `folder` (resolved)."""
    try:
        real = path.resolve(strict=True)
        return real.is_file() and real.parent == folder.resolve(strict=True) and real.name == path.name
    except (OSError, RuntimeError):  # missing, a symlink loop, a permission error
        return False


def _quarter(q: str, year: str) -> str:
    return f"{year}Q{q}"


def prior_quarter(fq: str) -> str:
    year, q = int(fq[:4]), int(fq[-1])
    return f"{year - 1}Q4" if q == 1 else f"{year}Q{q - 1}"


def _page(text: str, offset: int, chunk: int) -> dict[str, Any]:
    offset = max(0, int(offset))
    part = text[offset:offset + chunk]
    nxt = offset + len(part)
    return {"content": part, "offset": offset, "total_length": len(text), "has_more": nxt < len(text),
            "next_offset": nxt if nxt < len(text) else None}


@dataclass
class Documents:
    """The point-in-time view of one instance's documents (None root = no documents)."""

    root: Path | None
    instance: Instance
    chunk_chars: int = CHUNK_CHARS
    requests_blocked: list[str] = field(default_factory=list)

    def _company(self) -> Path | None:
        return self.root / "filings" / self.instance.ticker if self.root else None

    def _blocked(self, what: str, date: str, quarter: str | None) -> str | None:
        reasons = []
        if quarter == self.instance.fiscal_quarter:
            reasons.append(f"is for the target quarter {quarter}")
        if date > self.instance.cutoff:
            reasons.append(f"is dated {date}, after the information cutoff {self.instance.cutoff}")
        if not reasons:
            return None
        reason = f"{what} {' and '.join(reasons)}, and cannot be read"
        self.requests_blocked.append(reason)
        return reason

    def _refuse(self, what: str) -> dict[str, str]:
        """Log and refuse a request that names a path outside the document store."""
        reason = f"{what} is outside the document store and cannot be read"
        self.requests_blocked.append(reason)
        log.warning("epsbench %s: refused tool path: %s", self.instance.id, reason)
        return {"error": reason}

    def _readable(self, date: str, quarter: str) -> bool:
        return quarter != self.instance.fiscal_quarter and date <= self.instance.cutoff

    def filings(self) -> list[dict[str, str]]:
        company = self._company()
        folder = company / "financial_report" if company else None
        out = []
        for path in sorted(folder.iterdir()) if folder and folder.is_dir() else []:
            match = _FOLDER_RE.search(path.name)
            if path.is_dir() and match and not path.is_symlink():  # a symlinked folder may point at a blocked filing
                out.append({"filing": path.name, "filed": match.group(1), "fiscal_quarter": _quarter(match.group(2), match.group(3)), "path": path})
        return out

    def list_filings(self) -> dict[str, Any]:
        if self.root is None:
            return {"error": "no filings are available in this run"}
        shown, withheld = [], 0
        for f in self.filings():
            if not self._readable(f["filed"], f["fiscal_quarter"]):
                withheld += 1
                continue
            sections = sorted(p.stem for p in f["path"].glob("*.md"))
            shown.append({"filing": f["filing"], "filed": f["filed"], "fiscal_quarter": f["fiscal_quarter"], "sections": sections})
        return {"filings": shown, "withheld_after_cutoff_or_target": withheld}

    def read_filing(self, filing: str, section: str, offset: int = 0) -> dict[str, Any]:
        for what, name in (("filing", filing), ("section", section)):
            if not _PLAIN_NAME.fullmatch(name) or name in (".", "..") or name.startswith("~"):
                return self._refuse(f"{what} {name[:200]!r}")
        matches = [f for f in self.filings() if f["filing"] == filing or f["fiscal_quarter"] == filing]
        matches.sort(key=lambda f: (self._readable(f["filed"], f["fiscal_quarter"]), f["filed"]))  # latest readable last
        match = matches[-1] if matches else None
        if match is None:
            return {"error": f"no filing {filing!r} for {self.instance.ticker}; call list_filings first"}
        if reason := self._blocked(f"filing {match['filing']}", match["filed"], match["fiscal_quarter"]):
            return {"error": reason}
        path = match["path"] / f"{section}.md"
        if not path.is_file():
            return {"error": f"filing {match['filing']} has no section {section!r}"}
        if not _inside(path, match["path"]):
            return self._refuse(f"section {section!r} of {match['filing']} (a link to {_target(path)})")
        return {"filing": match["filing"], "section": section, **_page(path.read_text(encoding="utf-8", errors="ignore"), offset, self.chunk_chars)}

    def read_transcript(self, quarter: str | None = None, offset: int = 0) -> dict[str, Any]:
        quarter = quarter or prior_quarter(self.instance.fiscal_quarter)
        company = self._company()
        folder = company / "earnings_call_transcript" if company else None
        for path in sorted(folder.glob("*.txt")) if folder and folder.is_dir() else []:
            match = _TRANSCRIPT_RE.match(path.name)
            if match and _quarter(match.group(2), match.group(3)) == quarter:
                if not _inside(path, folder):
                    return self._refuse(f"transcript {path.name!r} (a link to {_target(path)})")
                if reason := self._blocked(f"the {quarter} earnings-call transcript", match.group(1), quarter):
                    return {"error": reason}
                return {"quarter": quarter, "call_date": match.group(1), **_page(path.read_text(encoding="utf-8", errors="ignore"), offset, self.chunk_chars)}
        if quarter == self.instance.fiscal_quarter:
            self.requests_blocked.append(f"target-quarter transcript {quarter}")
            return {"error": f"the {quarter} transcript is for the target quarter and cannot be read"}
        return {"error": f"no earnings-call transcript for {self.instance.ticker} {quarter}"}

    def news(self) -> list[dict[str, Any]]:
        if self.root is None:
            return []
        rows = []
        for path in (self.root / "news" / f"{self.instance.ticker}.jsonl", self.root / "news.jsonl"):
            if path.is_file():
                for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if line.strip():
                        try:
                            rows.append(json.loads(line))
                        except json.JSONDecodeError as err:
                            raise InputError(f"line {n} is not JSON ({err.msg})", path=str(path)) from None
        return [r for r in rows if str(r.get("ticker", self.instance.ticker)).upper() == self.instance.ticker]

    def search_news(self, query: str, max_results: int = 5) -> dict[str, Any]:
        if self.root is None:
            return {"error": "no news is available in this run"}
        start, cutoff = self.instance.news_window_start, self.instance.cutoff
        terms = Counter(_WORD_RE.findall(str(query).lower()))
        hits, withheld = [], 0
        for row in self.news():
            date = str(row.get("date", ""))[:10]
            if not (start <= date <= cutoff):
                withheld += 1
                continue
            words = Counter(_WORD_RE.findall(f"{row.get('title', '')} {row.get('text', '')}".lower()))
            score = sum(min(words[t], 3) for t in terms)
            if score:
                hits.append((score, date, row))
        hits.sort(key=lambda h: (-h[0], h[1]))
        return {"query": query, "window": [start, cutoff], "withheld_outside_window": withheld,
                "results": [{"date": d, "title": r.get("title", ""), "url": r.get("url"), "text": str(r.get("text", ""))[:2000]}
                            for _, d, r in hits[:max(1, min(int(max_results), 20))]]}


TOOL_SPECS = {
    "list_filings": ("List the company's filings readable at the cutoff, with their sections.", {}),
    "read_filing": ("Read one section of a filing (use list_filings for names). Long sections are paged: "
                    "call again with offset=next_offset while has_more is true.",
                    {"filing": {"type": "string", "description": "filing folder name or its fiscal quarter, e.g. 2025Q4"},
                     "section": {"type": "string"}, "offset": {"type": "integer", "default": 0}}),
    "read_transcript": ("Read an earnings-call transcript (default: the prior quarter's call).",
                        {"quarter": {"type": "string", "description": "fiscal quarter such as 2025Q4"},
                         "offset": {"type": "integer", "default": 0}}),
    "search_news": ("Search news published between the previous call and the cutoff.",
                    {"query": {"type": "string"}, "max_results": {"type": "integer", "default": 5}}),
    "calculate_eps": ("Run the shared accounting calculator on driver values; returns EPS and key subtotals.",
                      {"drivers": {"type": "object", "description": "driver name -> number (see prediction_schema)"}}),
}
_NEEDS = {"list_filings": "filings", "read_filing": "filings", "read_transcript": "filings", "search_news": "news"}


def _target(path: Path) -> str:
    try:
        return str(path.resolve())
    except (OSError, RuntimeError):
        return "an unresolvable path"


class Toolbox:
    """Tools for one instance under one information condition (full | filings | news | none)."""

    def __init__(self, schema: Schema, instance: Instance, docs_root: str | Path | None, information: str = "full",
                 chunk_chars: int = CHUNK_CHARS):
        if information not in INFORMATION:
            raise InputError(f"information must be one of {INFORMATION}", field="information")
        self.schema, self.information = schema, information
        self.docs = Documents(Path(docs_root) if docs_root else None, instance, chunk_chars)
        allowed = {"full": {"filings", "news"}, "filings": {"filings"}, "news": {"news"}, "none": set()}[information]
        self.names = [n for n in TOOL_SPECS if _NEEDS.get(n) is None or _NEEDS[n] in allowed]
        self.last_calc: dict[str, Any] | None = None
        self.calls = 0

    def specs(self) -> list[dict[str, Any]]:
        """OpenAI function-tool specs for the tools this condition allows."""
        out = []
        for name in self.names:
            description, props = TOOL_SPECS[name]
            required = [k for k, v in props.items() if "default" not in v and k != "quarter"]
            out.append({"type": "function", "function": {"name": name, "description": description,
                                                         "parameters": {"type": "object", "properties": props, "required": required}}})
        return out

    def call(self, name: str, arguments: Any) -> dict[str, Any]:
        """Run one tool; any bad request comes back as {"error": ...}."""
        self.calls += 1
        if name not in self.names:
            return {"error": f"unknown or disabled tool {name!r}; available: {self.names}"}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except json.JSONDecodeError as err:
                return {"error": f"arguments are not valid JSON ({err.msg})"}
        if not isinstance(arguments, dict):
            return {"error": "arguments must be a JSON object"}
        try:
            if name == "calculate_eps":
                return self.calculate(arguments.get("drivers", arguments))
            if name == "list_filings":
                return self.docs.list_filings()
            if name == "read_filing":
                return self.docs.read_filing(str(arguments["filing"]), str(arguments["section"]), int(arguments.get("offset", 0)))
            if name == "read_transcript":
                return self.docs.read_transcript(arguments.get("quarter"), int(arguments.get("offset", 0)))
            return self.docs.search_news(str(arguments["query"]), int(arguments.get("max_results", 5)))
        except KeyError as err:
            return {"error": f"missing argument {err.args[0]!r}"}
        except (TypeError, ValueError) as err:
            return {"error": f"bad argument: {err}"}

    def calculate(self, drivers: Any) -> dict[str, Any]:
        if not isinstance(drivers, dict):
            return {"error": "drivers must be an object of driver name -> number"}
        values = {k: (v.get("value") if isinstance(v, dict) else v) for k, v in drivers.items()}
        try:
            nodes = calculate(self.schema, values)
        except InputError as err:
            return {"error": str(err).replace(self.schema.path, self.schema.id)}
        key = {"eps": nodes["eps"]}
        for node in (operating_node(self.schema.formulas), pretax_node(self.schema.formulas)):
            if node:
                key[node] = nodes[node]
        self.last_calc = {"drivers": values, "key_metrics": key}
        return {"key_metrics": key, "detail": {k: round(v, 6) for k, v in nodes.items() if k in self.schema.formulas}}
