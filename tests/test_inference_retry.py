"""The one retry policy: Retry-After as seconds and as an HTTP date, jitter bounds, the cap, and the
openai backend waiting what a server's HTTP-date Retry-After asks.

    python -m pytest tests/test_inference_retry.py -q
"""
from __future__ import annotations

import email.utils
import random
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # openai_stub_server
from openai_stub_server import StubServer  # noqa: E402

from ledgerlm.inference.backends import make_backend  # noqa: E402
from ledgerlm.inference.retry import RetryPolicy, parse_retry_after  # noqa: E402
from ledgerlm.inference.sampling import GenerationParams  # noqa: E402

NOW = 1445412480.0  # Wed, 21 Oct 2015 07:28:00 GMT (RFC 9110's example date)


@pytest.mark.parametrize("value, seconds", [
    ("120", 120.0), ("0", 0.0), (" 1.5 ", 1.5),
    ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),  # now
    ("Wed, 21 Oct 2015 07:29:30 GMT", 90.0),  # 90 s ahead
    ("Wed, 21 Oct 2015 07:27:00 GMT", 0.0),  # in the past: retry now
    ("Wed, 21 Oct 2015 09:28:00 +0200", 0.0),  # a zone offset is honoured
    ("Wed, 21 Oct 2015 07:28:10 -0000", 10.0),  # "-0000": no zone given, read as UTC
])
def test_retry_after_seconds_and_http_dates(value, seconds):
    assert parse_retry_after(value, now=NOW) == pytest.approx(seconds)


@pytest.mark.parametrize("value", [None, "", "soon", "-5", "nan", "inf", "Wed, 99 Foo 2015"])
def test_unusable_retry_after_is_none(value):
    assert parse_retry_after(value, now=NOW) is None


def test_an_http_date_matches_the_clock():
    ahead = email.utils.formatdate(time.time() + 30, usegmt=True)  # what a server writes
    assert 28.0 <= parse_retry_after(ahead) <= 30.0


def test_jitter_bounds_and_cap():
    policy = RetryPolicy(max_retries=12, base=0.5, cap=20.0)
    rng = random.Random(1)
    for attempt in range(12):
        nominal = min(20.0, 0.5 * 2**attempt)
        waits = [policy.backoff(attempt, rng) for _ in range(400)]
        assert all(0.5 * nominal <= w <= min(20.0, 1.5 * nominal) for w in waits), attempt
        assert max(waits) - min(waits) > 0.4 * nominal  # really jittered (spread 0.5x nominal even at the cap)
    assert policy.delay(3, rng, "7") == 7.0  # Retry-After wins over backoff ...
    assert policy.delay(3, rng, "3600") == 20.0  # ... but never beyond the cap
    assert policy.delay(3, rng, "Wed, 21 Oct 2015 07:28:05 GMT", now=NOW) == pytest.approx(5.0)
    assert 2.0 <= policy.delay(2, rng, "garbage") <= 3.0  # unusable header: backoff (nominal 2 s)
    assert RetryPolicy(base=1.0, cap=60.0).backoff(10_000, rng) <= 60.0  # no overflow on huge attempts
    with pytest.raises(ValueError):
        RetryPolicy(max_retries=-1)


def test_openai_backend_honours_an_http_date_retry_after(monkeypatch):
    """The backend hands the raw header to the policy: an HTTP date 2 s ahead makes it wait ~2 s
    (with backoff_base 0.01 and no header the retry would come after ~10 ms)."""
    waits = []
    import ledgerlm.inference.backends.openai_compat as oc

    real_sleep = oc.asyncio.sleep

    async def record_sleep(seconds):
        waits.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(oc.asyncio, "sleep", record_sleep)
    date = email.utils.formatdate(time.time() + 2, usegmt=True)
    with StubServer(script=[{"status": 429, "retry_after": date}, {"status": 503}]) as server:
        sampler = make_backend("openai:m", base_url=server.url, max_retries=3, backoff_base=0.01, backoff_max=30)
        [completion] = sampler.generate([[{"role": "user", "content": "x"}]], GenerationParams(max_tokens=4))
    assert completion.error is None and sampler.retries_done == 2
    assert 0.5 <= waits[0] <= 2.0 and waits[1] <= 0.03, waits  # the date has 1 s resolution; then backoff 0.02 s x jitter
