"""`ledgerlm fetch sec` against a local HTTP server on 127.0.0.1 that replays the embedded files."""
from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pytest

from ledgerlm.errors import InputError, LedgerError
from ledgerlm.synth.statements import fetch, sources
from ledgerlm.synth.statements.companyfacts import load_companyfacts

SEC = sources.DEFAULT_DATA_DIR


class Recorded(BaseHTTPRequestHandler):
    """Serves /files/company_tickers.json and /api/xbrl/companyfacts/CIK##########.json."""

    routes: dict[str, bytes] = {}
    fail_first: dict[str, int] = {}  # path -> 429 answers still to give
    seen: list[tuple[str, str]] = []

    def do_GET(self):  # noqa: N802
        self.seen.append((self.path, self.headers.get("User-Agent", "")))
        if self.fail_first.get(self.path, 0) > 0:
            self.fail_first[self.path] -= 1
            self.send_response(429)
            self.send_header("Retry-After", "0")
            self.end_headers()
            return
        body = self.routes.get(self.path)
        self.send_response(200 if body is not None else 404)
        self.end_headers()
        self.wfile.write(body or b"")

    def log_message(self, *args):
        pass


@pytest.fixture()
def server():
    Recorded.routes = {"/files/company_tickers.json": (SEC / "company_tickers.json").read_bytes()}
    for path in (SEC / "companyfacts").glob("*.json.gz"):
        Recorded.routes[f"/api/xbrl/companyfacts/{path.name[:13]}.json"] = gzip.decompress(path.read_bytes())
    Recorded.fail_first, Recorded.seen = {"/api/xbrl/companyfacts/CIK0001045810.json": 1}, []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorded)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _args(base, out):
    return ["sec", "--tickers", "AAPL,nvda", "--out", str(out), "--data-url", base, "--tickers-url", f"{base}/files/company_tickers.json"]


def test_fetch_downloads_retries_and_caches(server, tmp_path, monkeypatch):
    monkeypatch.setenv("SEC_USER_AGENT", "ledgerlm tests test@example.com")
    out = tmp_path / "sec"
    assert fetch.main(_args(server, out)) == 0
    files = sorted(p.name for p in out.glob("*.json"))
    assert files == ["CIK0000320193_AAPL.json", "CIK0001045810_NVDA.json"]
    assert not list(out.glob(".*.tmp"))
    assert all(ua == "ledgerlm tests test@example.com" for _, ua in Recorded.seen)
    nvda_calls = [p for p, _ in Recorded.seen if p.endswith("CIK0001045810.json")]
    assert len(nvda_calls) == 2  # one 429, then success
    fetched = load_companyfacts(out / "CIK0001045810_NVDA.json")
    embedded = load_companyfacts(SEC / "companyfacts" / "CIK0001045810_NVDA.json.gz")
    pd.testing.assert_frame_equal(fetched, embedded)
    # second run: everything from the cache, no request reaches the server
    n = len(Recorded.seen)
    assert fetch.main(_args(server, out)) == 0
    assert len(Recorded.seen) == n
    # fetched files load through the generic loader (the .cache folder is skipped)
    assert set(sources.load_facts([str(out)])["company"]) == {"AAPL", "NVDA"}


def test_fetch_requires_user_agent(server, tmp_path, monkeypatch):
    monkeypatch.delenv("SEC_USER_AGENT", raising=False)
    with pytest.raises(InputError, match="SEC_USER_AGENT"):
        fetch.main(_args(server, tmp_path / "x"))
    assert Recorded.seen == [] and not (tmp_path / "x").exists()


def test_fetch_unknown_ticker_and_rate_limit(server, tmp_path):
    sleeps = []
    client = fetch.SecClient("ua test@example.com", None, max_per_second=10, sleep=sleeps.append)
    with pytest.raises(InputError, match="ZZZZ"):
        fetch.fetch_companyfacts(["ZZZZ"], tmp_path, client, data_url=server, tickers_url=f"{server}/files/company_tickers.json")
    for _ in range(3):
        client.get(f"{server}/files/company_tickers.json")
    assert sleeps and max(sleeps) <= 0.1 + 1e-9  # spaced to <= 10 requests per second
    with pytest.raises(LedgerError, match="HTTP 404"):
        client.get(f"{server}/nope")
    client.close()
