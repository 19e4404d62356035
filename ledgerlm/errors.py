"""Errors a user sees. Each names the bad value and where it came from (file, company, period, field)."""
from __future__ import annotations


class LedgerError(Exception):
    """Base class: the CLI prints these as one line, without a traceback."""


class InputError(LedgerError):
    """Bad input file or value: the message names the file and the field."""

    def __init__(self, message: str, *, path: str | None = None, field: str | None = None):
        where = []
        if path:
            where.append(f"file {path}")
        if field:
            where.append(f"field {field!r}")
        super().__init__(f"{'; '.join(where)}: {message}" if where else message)
        self.path, self.field = path, field


class NotDerivable(LedgerError):
    """A value cannot be derived from the available reports; `missing` names the reports needed."""

    def __init__(self, message: str, *, company: str = "", concept: str = "", period: str = "", missing: list[str] | None = None):
        super().__init__(message)
        self.company, self.concept, self.period = company, concept, period
        self.missing = list(missing or [])
