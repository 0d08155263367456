"""Log records rate-limited per message (kubesched.cli.lograte): BURST (5) of a message per
PERIOD (10 s), then nothing until the period ends; the next record says how many were dropped.
Other messages pass meanwhile."""

from __future__ import annotations

import logging

from kubesched.cli.lograte import RateLimit


def record(msg: str, level: int = logging.ERROR) -> logging.LogRecord:
    return logging.LogRecord("asyncio", level, __file__, 1, msg, None, None)


def test_a_flood_of_one_message_is_cut_and_counted() -> None:
    now = [0.0]
    limit = RateLimit(burst=5, period=10.0, clock=lambda: now[0])
    passed = [limit.filter(record("accept failed")) for _ in range(1000)]
    assert passed.count(True) == 5 and passed[:5] == [True] * 5
    assert limit.filter(record("another failure"))  # other messages are not held back
    now[0] = 10.0
    r = record("accept failed")
    assert limit.filter(r)
    assert r.getMessage() == "accept failed [995 more like this dropped in the last 10 s]"
