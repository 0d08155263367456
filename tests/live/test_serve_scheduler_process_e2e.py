"""``kubesched serve --scheduler-process``: the scheduler inside serve as a child process
against the server's URL. It decides as the in-process scheduler does (the example
cluster placed as ``kubesched simulate`` places it), it is a separate process, and it
never outlives serve: SIGTERM stops both cleanly, SIGKILL of serve ends the child too
(its stdin pipe closes), so no orphan keeps binding."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from live_harness import eventually
from serve_harness import Server
from test_serve_scheduler_e2e import EXAMPLE, SCHEDULER_ONLY, pods, scheduler_running, simulated

pytestmark = pytest.mark.slow


def children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        out += [int(c) for c in (task / "children").read_text().split()]
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def alive(pid: int) -> bool:
    """Running (a zombie waiting for its new parent to reap it has exited)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def scheduler_children(server: Server) -> list[int]:
    assert server.proc is not None
    return [c for c in children(server.proc.pid) if "kubesched.cli.serve_process" in cmdline(c)]


def scheduler_child(server: Server) -> int:
    """The one scheduler process serve started (it is started with the server's components)."""
    found = eventually(lambda: scheduler_children(server), timeout=60)
    assert len(found) == 1, found
    return int(found[0])


def test_example_cluster_placed_as_simulate_places_it(spawn: Callable[..., Server], tmp_path: Path) -> None:
    server = spawn(*SCHEDULER_ONLY, "--scheduler-process")
    eventually(lambda: scheduler_running(server), timeout=60)
    scheduler_child(server)
    docs = [d for d in yaml.safe_load_all(EXAMPLE.read_text()) if d]
    pending = [d for d in docs if d["kind"] == "Pod" and not d["spec"].get("nodeName")]
    cluster = [d for d in docs if d not in pending]
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump_all(cluster))
    (tmp_path / "pending.yaml").write_text(yaml.safe_dump_all(pending))
    server.kubectl("apply", "-f", str(tmp_path / "cluster.yaml"))
    time.sleep(1.0)  # the scheduler's informers see every node before the first pending pod
    server.kubectl("apply", "-f", str(tmp_path / "pending.yaml"))
    placed, _ = simulated()
    assert placed
    got = eventually(lambda: (p := pods(server, "-A")) and all(p[k]["spec"].get("nodeName") for k in placed)
                     and p, timeout=60)
    assert {k: got[k]["spec"]["nodeName"] for k in placed} == placed
    assert server.stop(signal.SIGTERM) == 0


def test_sigterm_stops_the_child_and_sigkill_does_not_leave_it_behind(spawn: Callable[..., Server]) -> None:
    server = spawn("--nodes", "2", "--scheduler-process")
    eventually(lambda: scheduler_running(server), timeout=60)
    child = scheduler_child(server)
    assert server.stop(signal.SIGTERM) == 0
    assert not alive(child)  # serve waits for it before it exits

    server.start()
    child = scheduler_child(server)
    server.stop(signal.SIGKILL)
    eventually(lambda: not alive(child), timeout=60)


def test_a_bad_configuration_is_an_error_before_serving(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "profiles:\n- schedulerName: default-scheduler\n  plugins:\n    score:\n      enabled:\n"
                   "      - name: NoSuchPlugin\n")
    out = subprocess.run([sys.executable, "-m", "kubesched.cli.main", "serve", "--data-dir", str(tmp_path / "d"),
                          "--port", "0", "--scheduler-process", "--config", str(bad)],
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 2
    assert f'{bad}:8: profiles[0].plugins.score.enabled[0].name: plugin "NoSuchPlugin" does not exist' in out.stderr
    assert "Traceback" not in out.stderr
