"""The scheduler ``kubesched serve`` runs inside, built from a scheduler configuration; here so
that ``serve`` and the child process of ``--scheduler-process`` (:mod:`.serve_process`) build it
the same way."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kubesched.api.errors import KubeschedError

if TYPE_CHECKING:
    from kubesched.config import SchedulerConfig
    from kubesched.live import LiveOptions, SchedulerComponent

SERVE_QPS, SERVE_BURST = 5000.0, 5000


def load_scheduler_config(path: str | None) -> "SchedulerConfig":
    from kubesched.config import load_config
    from kubesched.plugins.registry import in_tree_registry

    return load_config(path, in_tree_registry())


def build_scheduler(config_path: str | None, config: "SchedulerConfig", kubeconfig: Path,
                    options: "LiveOptions | None" = None) -> "SchedulerComponent":
    """The scheduler inside: a LiveScheduler that talks to this server over HTTP through
    the kubeconfig it wrote, with the same client code as against a real cluster."""
    from kubesched.cli.render import document_text
    from kubesched.cluster.kube import KubeClient
    from kubesched.live import LiveOptions, LiveScheduler, SchedulerComponent

    cc = config.client_connection
    # Without a --config, the scheduler inside is throttled as upstream's scheduler_perf
    # throttles the scheduler it runs beside its own API server (5,000 qps and burst), not
    # at kube-scheduler's 50 qps default, which would cap binds at ~50 pods/s. A config
    # file's clientConnection is used as written.
    qps, burst = (cc.qps, cc.burst) if config_path else (SERVE_QPS, SERVE_BURST)
    client = KubeClient.connect(str(kubeconfig), qps=qps, burst=burst)
    try:
        live = LiveScheduler(config, client, options or LiveOptions())
    except KubeschedError as exc:  # a profile that cannot be built: name the file it came from
        raise KubeschedError(f"{config_path}: {exc}" if config_path else str(exc)) from exc

    def ready(s: LiveScheduler) -> None:
        print(f"kubesched scheduler running (profiles: {', '.join(s.profiles)}; "
              f"{len(s.nodes)} nodes, {len(s.pods)} pods)", flush=True)

    return SchedulerComponent(live, on_ready=ready, explain_text=document_text)
