"""Throughput limits for teacher requests: in-flight bound, requests per second, tokens per minute.

    python -c "from ledgerlm.inference.ratelimit import RateLimiter; print(RateLimiter(4, rps=10))"

`async with limiter.slot(estimated_tokens)` waits until a request may start: at most
`concurrency` requests in flight, starts spaced at >= 1/rps seconds, and a token bucket of `tpm`
tokens per minute (charged the estimate up front, corrected by `settle` with the real usage).
Retries on 429/5xx/timeouts live in the sampler backend, not here. All methods run on one event loop.
"""
from __future__ import annotations

import asyncio
import time
from contextlib import asynccontextmanager
from typing import AsyncIterator, Callable


class RateLimiter:
    def __init__(self, concurrency: int = 8, *, rps: float | None = None, tpm: float | None = None,
                 clock: Callable[[], float] = time.monotonic):
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if rps is not None and rps <= 0:
            raise ValueError(f"rps must be > 0, got {rps}")
        if tpm is not None and tpm <= 0:
            raise ValueError(f"tpm must be > 0, got {tpm}")
        self.concurrency, self.rps, self.tpm = concurrency, rps, tpm
        self.in_flight = 0
        self.max_in_flight = 0  # the most requests ever in flight at once (tests check the bound)
        self._gate = asyncio.Semaphore(concurrency)
        self._clock = clock
        self._next_start = clock()
        self._tokens = float(tpm or 0)  # bucket level; starts full
        self._refilled_at = clock()

    def __repr__(self) -> str:
        return f"RateLimiter(concurrency={self.concurrency}, rps={self.rps}, tpm={self.tpm})"

    @asynccontextmanager
    async def slot(self, estimated_tokens: int = 0) -> AsyncIterator[None]:
        """Hold one in-flight slot for the duration of a request."""
        async with self._gate:
            await self._wait_rps()
            await self._wait_tokens(estimated_tokens)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                yield
            finally:
                self.in_flight -= 1

    def settle(self, estimated_tokens: int, actual_tokens: int) -> None:
        """Correct the token bucket once the real usage of a request is known."""
        if self.tpm is None:
            return
        self._refill()
        charged = min(float(estimated_tokens), float(self.tpm))
        self._tokens = min(float(self.tpm), self._tokens + charged - actual_tokens)

    async def _wait_rps(self) -> None:
        if self.rps is None:
            return
        now = self._clock()
        start = max(now, self._next_start)
        self._next_start = start + 1.0 / self.rps
        if start > now:
            await asyncio.sleep(start - now)

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(float(self.tpm), self._tokens + (now - self._refilled_at) * self.tpm / 60.0)
        self._refilled_at = now

    async def _wait_tokens(self, estimated_tokens: int) -> None:
        if self.tpm is None:
            return
        need = min(float(estimated_tokens), float(self.tpm))  # a request bigger than the bucket waits for a full one
        while True:
            self._refill()
            if self._tokens >= need:
                self._tokens -= need
                return
            await asyncio.sleep((need - self._tokens) * 60.0 / self.tpm)
