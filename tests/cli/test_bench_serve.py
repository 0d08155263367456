"""``kubesched bench --serve``: the end-to-end benchmark through a real ``kubesched serve``
(tiny sizes here: what it reports and that it checks durability, never its speed)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubesched.cli.main", "bench", "--serve", *args],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("mode", [(), ("--serve-in-process",)], ids=["scheduler-process", "in-process"])
def test_every_pod_acknowledged_bound_and_still_bound_after_sigkill(mode: tuple[str, ...]) -> None:
    out = bench("--nodes", "2", "--pods", "12", "--clients", "3", "-o", "json", *mode)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["scheduler"] == ("in-process" if mode else "process")
    assert (res["nodes"], res["pods"], res["clients"]) == (2, 12, 3)
    assert (res["acknowledged"], res["create_errors"], res["bound_seen_by_watch"]) == (12, 0, 12)
    assert (res["after_sigkill_missing"], res["after_sigkill_moved_or_unbound"]) == (0, 0)
    assert res["ok"] is True
    assert res["kubernetesVersion"] == "1.34"  # tests/conftest.py pins the default release
    assert res["pods_per_second"] > 0 and res["first_create_to_last_bind_seconds"] > 0
    cpu = res["cpu_seconds_during_burst"]  # from /proc: serve, its scheduler child, this bench
    assert set(cpu) == {"serve", "scheduler_process", "bench"}
    assert cpu["serve"] >= 0 and cpu["bench"] > 0  # serve in clock ticks: a tiny burst may round to 0
    assert (cpu["scheduler_process"] is None) if mode else (cpu["scheduler_process"] >= 0)
    assert res["load_average_1m"] >= 0
    known = sum(v for v in cpu.values() if v is not None)  # the ceiling is derived from the same figures
    if known > 0:
        assert res["cpu_ms_per_pod"] == pytest.approx(known / 12 * 1000, abs=0.001)
        assert res["cpu_bound_pods_per_second"] == pytest.approx(res["cpus"] * 1000 / res["cpu_ms_per_pod"], rel=0.01)


@pytest.mark.parametrize("args, message", [
    (("--pods", "0"), "bench --serve: --nodes, --pods and --clients must be positive"),
    (("--clients", "-1"), "bench --serve: --nodes, --pods and --clients must be positive"),
    (("--scale", "0.5"), "bench --serve: --init-pods and --scale go with --workload"),
], ids=["no-pods", "negative-clients", "scale"])
def test_bad_sizes_are_one_line_errors(args: tuple[str, ...], message: str) -> None:
    out = bench(*args)
    assert out.returncode == 2
    assert message in out.stderr and "Traceback" not in out.stderr
