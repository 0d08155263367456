"""Clocks of the simulator; they live in :mod:`kubesched.framework.clock`, shared with the
live scheduler."""

from __future__ import annotations

from kubesched.framework.clock import Clock, RealClock, VirtualClock

__all__ = ["Clock", "RealClock", "VirtualClock"]
