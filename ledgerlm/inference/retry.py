"""The one retry policy for remote requests (the openai backend, and so every openai: distill teacher).

    python -c "from ledgerlm.inference.retry import parse_retry_after; print(parse_retry_after('Wed, 21 Oct 2015 07:28:00 GMT', now=1445412470.0))"

`RetryPolicy.delay(attempt, rng, retry_after)`: the wait before retry number `attempt + 1`.
Without a Retry-After header it is exponential backoff with jitter, `min(cap, base * 2**attempt)`
times a factor drawn uniformly from [0.5, 1.5] (so simultaneous failures do not retry in step),
never above `cap`. A Retry-After header wins when present, as delta-seconds ("120") or as an
HTTP-date ("Wed, 21 Oct 2015 07:28:00 GMT", RFC 9110 §10.2.3; a date in the past means 0), and is
also capped at `cap` so a hostile server cannot stall a run. Which failures are retried is the
caller's decision (the openai backend: 408/429/5xx, timeouts, dropped connections).
"""
from __future__ import annotations

import email.utils
import math
import random
import time
from dataclasses import dataclass
from datetime import timezone


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 6  # retries after the first attempt
    base: float = 1.0  # seconds before the first retry (before jitter)
    cap: float = 60.0  # no wait is ever longer

    def __post_init__(self) -> None:
        if self.max_retries < 0 or not self.base >= 0 or not self.cap >= 0:
            raise ValueError(f"retry policy needs max_retries >= 0, base >= 0, cap >= 0; got {self}")

    def backoff(self, attempt: int, rng: random.Random) -> float:
        """Exponential backoff with jitter for retry number `attempt + 1` (attempt counts from 0)."""
        nominal = min(self.cap, self.base * 2.0 ** min(attempt, 64))
        return min(self.cap, nominal * rng.uniform(0.5, 1.5))

    def delay(self, attempt: int, rng: random.Random, retry_after: str | None = None, *, now: float | None = None) -> float:
        """Seconds to wait: the server's Retry-After when it sent a usable one, else `backoff`; at most `cap`."""
        told = parse_retry_after(retry_after, now=now)
        return min(self.cap, told) if told is not None else self.backoff(attempt, rng)


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header value: delta-seconds or an HTTP-date; None if unusable."""
    if value is None or not str(value).strip():
        return None
    value = str(value).strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000" or no zone: HTTP dates are UTC
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
