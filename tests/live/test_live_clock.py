"""The live scheduler's clock: monotonic, aligned with the wall clock, on the same epoch as
the times Coscheduling reads from the API (creation timestamps)."""

from __future__ import annotations

import time

from kubesched.framework.clock import CLOCK_EPOCH, RealClock
from kubesched.plugins.coscheduling.core import CLOCK_EPOCH as COSCHEDULING_EPOCH
from kubesched.plugins.coscheduling.core import to_clock


def test_real_clock_reads_wall_time_on_the_scheduler_epoch() -> None:
    assert CLOCK_EPOCH == COSCHEDULING_EPOCH
    clock = RealClock()
    a, b = clock.now(), clock.now()
    assert b >= a
    assert abs(clock.to_unix(a) - time.time()) < 1.0
    now_rfc3339 = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    assert abs(to_clock(now_rfc3339) - clock.now()) < 2.0  # a creation timestamp of "now" is now
