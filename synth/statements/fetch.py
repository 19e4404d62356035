"""`ledgerlm fetch sec`: download SEC companyfacts JSON for tickers (needs internet).

    SEC_USER_AGENT="Jane Doe jane@example.com" ledgerlm fetch sec --tickers AAPL,MSFT --out data/sec

SEC EDGAR asks every client to declare who it is: the User-Agent comes from --user-agent or the
environment variable SEC_USER_AGENT (required). Tickers resolve to CIKs through the SEC ticker
file; each company lands in OUT/CIK##########_TICKER.json (the name the loader reads the ticker
from). At most 10 requests per second; 429 and 5xx answers are retried with exponential backoff
that honours Retry-After; responses are cached (--cache) and every file is written atomically.
--max-per-second is clamped to (0, 10]: 0, negative or non-finite values are an error, more than 10
is cut to 10. A response body is read in chunks and refused past MAX_RESPONSE_BYTES after
decompression (a gzip bomb costs at most that much memory, never its full expansion).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
import time
from pathlib import Path

import httpx

from ledgerlm.atomic import atomic_open
from ledgerlm.errors import InputError, LedgerError

SEC_DATA_URL = "https://data.sec.gov"
SEC_TICKERS_URL = "https://www.sec.gov/files/company_tickers.json"
RETRYABLE = {429, 500, 502, 503, 504}
SEC_MAX_PER_SECOND = 10.0  # SEC fair-access limit
MAX_RESPONSE_BYTES = 512 << 20  # the largest companyfacts JSON is ~100 MB; a bigger body is refused


def clamp_rate(max_per_second: float) -> float:
    """A request rate in (0, 10]: above 10 is cut to SEC's limit; 0, negative or NaN is an InputError."""
    rate = float(max_per_second)
    if not rate > 0 or rate != rate:
        raise InputError(f"--max-per-second must be > 0 (SEC allows at most {SEC_MAX_PER_SECOND:g}), got {max_per_second!r}",
                         field="max-per-second")
    return min(rate, SEC_MAX_PER_SECOND)


def atomic_write(path: Path, data: bytes) -> Path:
    """Write via a temporary file in the same folder, renamed into place."""
    with atomic_open(path, "wb") as handle:
        handle.write(data)
    return path


class SecClient:
    """GET with a declared User-Agent, a request-rate cap, retries on 429/5xx and a file cache."""

    def __init__(self, user_agent: str, cache_dir: str | Path | None = None, *, max_per_second: float = 10.0,
                 retries: int = 5, backoff_s: float = 0.5, timeout_s: float = 30.0, sleep=time.sleep):
        if not user_agent or not user_agent.strip():
            raise InputError("SEC requires a User-Agent naming you (e.g. 'Jane Doe jane@example.com'): set SEC_USER_AGENT or pass --user-agent", field="SEC_USER_AGENT")
        self.client = httpx.Client(headers={"User-Agent": user_agent.strip(), "Accept-Encoding": "gzip, deflate"}, timeout=timeout_s, follow_redirects=True)
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.min_interval, self.retries, self.backoff_s, self.sleep = 1.0 / clamp_rate(max_per_second), retries, backoff_s, sleep
        self._last = 0.0
        self._lock = threading.Lock()
        self.requests = 0

    def _cache_path(self, url: str) -> Path | None:
        return self.cache_dir / re.sub(r"[^A-Za-z0-9._-]+", "_", url.split("://", 1)[-1]) if self.cache_dir else None

    def _wait_turn(self) -> None:
        with self._lock:
            delay = self._last + self.min_interval - time.monotonic()
            if delay > 0:
                self.sleep(delay)
            self._last = time.monotonic()

    def get(self, url: str, *, use_cache: bool = True) -> bytes:
        cached = self._cache_path(url)
        if use_cache and cached is not None and cached.is_file():
            return cached.read_bytes()
        for attempt in range(self.retries + 1):
            self._wait_turn()
            self.requests += 1
            try:
                with self.client.stream("GET", url) as response:
                    content = _read_capped(response, url) if response.status_code == 200 else b""
            except httpx.DecodingError as err:  # a broken gzip stream is not retried: the server sent it
                raise LedgerError(f"GET {url}: undecodable response ({err})") from None
            except httpx.TransportError as err:  # connection reset / timeout: retryable
                if attempt == self.retries:
                    raise LedgerError(f"GET {url}: {err.__class__.__name__} after {attempt + 1} tries") from None
                self.sleep(self.backoff_s * 2 ** attempt)
                continue
            if response.status_code == 200:
                if cached is not None:
                    atomic_write(cached, content)
                return content
            if response.status_code not in RETRYABLE or attempt == self.retries:
                raise LedgerError(f"GET {url}: HTTP {response.status_code} after {attempt + 1} tries")
            retry_after = response.headers.get("Retry-After", "")
            self.sleep(float(retry_after) if retry_after.replace(".", "", 1).isdigit() else self.backoff_s * 2 ** attempt)
        raise LedgerError(f"GET {url}: no answer")  # unreachable

    def close(self) -> None:
        self.client.close()


def _read_capped(response: httpx.Response, url: str) -> bytes:
    """The decompressed body, chunk by chunk; LedgerError past MAX_RESPONSE_BYTES (nothing more is inflated)."""
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise LedgerError(f"GET {url}: response over {MAX_RESPONSE_BYTES >> 20} MiB after decompression (refused)")
        chunks.append(chunk)
    return b"".join(chunks)


def resolve_tickers(tickers: list[str], ticker_file: bytes, source: str) -> dict[str, int]:
    """Ticker -> CIK from the SEC ticker file; InputError naming unknown tickers."""
    try:
        rows = json.loads(ticker_file).values()
        known = {str(r["ticker"]).upper(): int(r["cik_str"]) for r in rows}
    except (ValueError, KeyError, AttributeError, TypeError) as err:
        raise InputError(f"not an SEC ticker file ({err})", path=source, field="company_tickers") from None
    missing = [t for t in tickers if t.upper() not in known]
    if missing:
        raise InputError(f"unknown ticker(s): {', '.join(missing)}", path=source, field="tickers")
    return {t.upper(): known[t.upper()] for t in tickers}


def fetch_companyfacts(tickers: list[str], out_dir: str | Path, client: SecClient, *, data_url: str = SEC_DATA_URL,
                       tickers_url: str = SEC_TICKERS_URL) -> list[Path]:
    """Download companyfacts for each ticker into out_dir/CIK##########_TICKER.json."""
    ciks = resolve_tickers(tickers, client.get(tickers_url), tickers_url)
    written = []
    for ticker, cik in ciks.items():
        url = f"{data_url.rstrip('/')}/api/xbrl/companyfacts/CIK{cik:010d}.json"
        data = client.get(url)
        try:
            doc = json.loads(data)
        except ValueError:
            raise InputError("the answer is not JSON", path=url, field="companyfacts") from None
        if "facts" not in doc:
            raise InputError("the answer has no 'facts'", path=url, field="facts")
        written.append(atomic_write(Path(out_dir) / f"CIK{cik:010d}_{ticker}.json", data))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ledgerlm fetch", description="Download SEC companyfacts JSON (needs internet).")
    parser.add_argument("source", choices=["sec"], help="data source (only SEC EDGAR)")
    parser.add_argument("--tickers", required=True, help="comma-separated tickers, e.g. AAPL,MSFT")
    parser.add_argument("--out", required=True, help="folder for CIK##########_TICKER.json files")
    parser.add_argument("--user-agent", default=os.environ.get("SEC_USER_AGENT", ""), help="declared User-Agent (default: $SEC_USER_AGENT)")
    parser.add_argument("--cache", default=None, help="response cache folder (default: OUT/.cache)")
    parser.add_argument("--data-url", default=SEC_DATA_URL, help="companyfacts API base URL")
    parser.add_argument("--tickers-url", default=SEC_TICKERS_URL, help="SEC ticker file URL")
    parser.add_argument("--max-per-second", type=float, default=10.0, help="request-rate cap (SEC fair access: 10/s)")
    args = parser.parse_args(argv)
    tickers = [t.strip() for t in args.tickers.split(",") if t.strip()]
    client = SecClient(args.user_agent, args.cache or Path(args.out) / ".cache", max_per_second=clamp_rate(args.max_per_second))
    try:
        for path in fetch_companyfacts(tickers, args.out, client, data_url=args.data_url, tickers_url=args.tickers_url):
            print(path)
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
