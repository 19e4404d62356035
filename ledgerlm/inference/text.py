"""Text hygiene at the inference boundary: lone surrogates and credentials in URLs.

    python -c "from ledgerlm.inference.text import redact_text; print(redact_text('http://u:pw@h/v1?api_key=x'))"

`clean_text` replaces lone surrogates (a model's `"\\ud800"` escape, not encodable as UTF-8) with
U+FFFD; `redact_text` replaces the credentials of every URL in a text (user:password@ and
secret-looking query values) with ***. Run files (`ledgerlm.evaluate.runfiles`) use the same two.
"""
from __future__ import annotations

import re

_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@\"']+@")
_URL_SECRET = re.compile(r"(?i)([?&][^=&\s\"']*(?:key|token|secret|password|auth|sig)[^=&\s\"']*=)[^&\s\"']+")
_SURROGATE = re.compile("[\ud800-\udfff]")


def redact_text(text: str) -> str:
    """Credentials of every URL in `text` (user:password@, secret-looking query values) replaced by ***."""
    if "://" not in text:
        return text
    return _URL_SECRET.sub(r"\1***", _URL_USERINFO.sub(r"\1***@", text))


def clean_text(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)
