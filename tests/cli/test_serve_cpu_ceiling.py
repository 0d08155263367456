"""``bench --serve``'s CPU ceiling (:func:`kubesched.cli.servebench.cpu_ceiling`): the CPU one
bound pod cost, every measured process together, and the pods per second that cost allows
on the machine's cores. Expected values are computed by hand in each case."""

from __future__ import annotations

import pytest

from kubesched.cli.servebench import cpu_ceiling


def test_a_burst_of_the_size_issue_16_measures() -> None:
    # serve 11.5 s + scheduler 6.3 s + bench 1.2 s = 19.0 s for 5,000 pods: 3.8 ms a pod;
    # 2 cores give 2,000 ms of CPU a second, so at most 2,000 / 3.8 = 526.3 pods a second
    ms, ceiling = cpu_ceiling({"serve": 11.5, "scheduler_process": 6.3, "bench": 1.2}, 5000, 2)
    assert ms == pytest.approx(3.8)
    assert ceiling == pytest.approx(526.3)


def test_the_in_process_scheduler_has_no_child_figure() -> None:
    # 4.0 + 1.0 = 5.0 s for 1,000 pods: 5 ms a pod; 4 cores: 4,000 / 5 = 800 pods a second
    assert cpu_ceiling({"serve": 4.0, "scheduler_process": None, "bench": 1.0}, 1000, 4) == (5.0, 800.0)


@pytest.mark.parametrize("seconds, pods, cpus", [
    ({"serve": None, "scheduler_process": None, "bench": None}, 10, 2),  # nothing was measured
    ({"serve": 1.0}, 0, 2),  # no pod was bound
    ({"serve": 1.0}, 10, None),  # os.cpu_count() did not know
])
def test_missing_figures_give_no_ceiling(seconds: dict[str, float | None], pods: int, cpus: int | None) -> None:
    assert cpu_ceiling(seconds, pods, cpus) == (None, None)


def test_a_burst_too_short_for_a_clock_tick_has_a_cost_of_zero_and_no_ceiling() -> None:
    assert cpu_ceiling({"serve": 0.0, "scheduler_process": 0.0, "bench": 0.0}, 12, 2) == (0.0, None)
