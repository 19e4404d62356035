"""RateLimiter: in-flight bound, request spacing, and the tokens-per-minute bucket with usage correction."""
from __future__ import annotations

import asyncio
import time

import pytest

from ledgerlm.inference.ratelimit import RateLimiter


def test_in_flight_never_exceeds_concurrency():
    async def go():
        limiter = RateLimiter(3)

        async def request():
            async with limiter.slot():
                await asyncio.sleep(0.01)

        await asyncio.gather(*(request() for _ in range(20)))
        return limiter

    limiter = asyncio.run(go())
    assert limiter.max_in_flight == 3 and limiter.in_flight == 0


def test_rps_spaces_request_starts():
    starts = []

    async def go():
        limiter = RateLimiter(10, rps=50)

        async def request():
            async with limiter.slot():
                starts.append(time.monotonic())

        await asyncio.gather(*(request() for _ in range(11)))

    asyncio.run(go())
    assert starts[-1] - starts[0] >= 10 / 50 * 0.95
    # start i is scheduled no earlier than i / rps after the first (a late wake-up may shorten the
    # next gap on a loaded machine, but never lets a start run ahead of its slot)
    assert all(t - starts[0] >= i / 50 - 0.002 for i, t in enumerate(starts))


def test_tokens_per_minute_bucket_waits_and_settle_refunds_unused_tokens():
    async def go():
        limiter = RateLimiter(1000, tpm=2000)  # 2000 tokens a minute: a 10-token request refills in 0.3 s
        t0 = time.monotonic()
        for _ in range(200):  # the full bucket
            async with limiter.slot(10):
                pass
        drained = time.monotonic() - t0
        async with limiter.slot(10):
            pass
        waited = time.monotonic() - t0 - drained
        limiter.settle(10, 0)  # the request used nothing: its 10 tokens come back
        t1 = time.monotonic()
        async with limiter.slot(10):
            pass
        return drained, waited, time.monotonic() - t1

    drained, waited, refunded = asyncio.run(go())
    assert drained < 0.25 and waited >= 0.25 and refunded < 0.05


@pytest.mark.parametrize("kwargs", [{"concurrency": 0}, {"concurrency": 1, "rps": 0}, {"concurrency": 1, "tpm": -5}])
def test_bad_limits_are_refused(kwargs):
    with pytest.raises(ValueError):
        RateLimiter(**kwargs)
