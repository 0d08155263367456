"""The web UI in a real browser (Debian's chromium, driven by Playwright; no browser is
ever downloaded) over a real ``kubesched serve``: the cluster page, a pod that cannot fit
created from the YAML editor, its why message and per-node table, deleting it, and a
configuration change whose effect shows in the next pod's scores.

The expected scores are computed by hand from upstream's formulas
(pkg/scheduler/framework/plugins/noderesources/least_allocated.go and
most_allocated.go): per resource ``(allocatable - requested) * 100 / allocatable``
(LeastAllocated, the default) or ``requested * 100 / allocatable`` (MostAllocated), in
int64 (truncating), then the weighted mean over cpu and memory (weight 1 each), again
truncated. ``requested`` is the node's requests plus the incoming pod's.

Screenshots of each page go to $KUBESCHED_ARTIFACTS (default build/screenshots/);
docs/screenshots/ holds a copy for the README.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_harness import TINY, scheduling
from serve_harness import REPO, Server, eventually, started

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
SHOTS = Path(os.environ.get("KUBESCHED_ARTIFACTS") or REPO / "build" / "screenshots")
WAIT = 30_000  # ms: generous, the machine may be loaded

pytestmark = pytest.mark.slow

POD = """apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: default
spec:
  containers:
  - name: app
    image: registry.example/app:1
    resources:
      requests: {{cpu: "{cpu}", memory: 1Gi}}
"""

MOST_ALLOCATED = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - {name: cpu, weight: 1}
        - {name: memory, weight: 1}
"""


@pytest.fixture
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is not installed (.ci/run installs Debian's chromium)")
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    for s in started(tmp_path, *TINY):
        yield scheduling(s)


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def create_from_editor(page: Any, text: str) -> None:
    page.click("a[data-nav=create]")
    page.fill("[data-testid=yaml]", text)
    page.click("[data-testid=create]")


def open_pod(page: Any, base: str, name: str) -> None:
    page.goto(f"{base}/#/pod/default/{name}")
    page.wait_for_selector(f"h1:text-is('Pod default/{name}')", timeout=WAIT)
    page.wait_for_selector("[data-testid=explain]", timeout=WAIT)


def fit_score(page: Any, node: str) -> str:
    row = page.locator("[data-testid=score-table] .r", has=page.locator(f"[data-col=node]:text-is('{node}'), "
                                                                          f"[data-col=node]:text-is('{node} ★')"))
    return str(row.locator("[data-col=NodeResourcesFit]").inner_text()).strip()


def test_the_web_ui_end_to_end(browser: Any, server: Server) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    base = server.url
    page.goto(base + "/")

    # the cluster: both nodes with their allocation bars
    nodes = page.locator("[data-testid=nodes-table] .r")
    nodes.nth(1).wait_for(timeout=WAIT)
    assert nodes.locator("[data-col=node]").all_inner_texts() == ["node-01", "node-02"]
    assert nodes.first.locator("[data-col=cpu]").inner_text() == "0 / 4"
    assert nodes.first.locator("[data-col=memory]").inner_text() == "0 / 8Gi"
    shot(page, "cluster")

    # a pod that cannot fit, from the YAML editor: its why message and per-node table
    create_from_editor(page, POD.format(name="huge", cpu="100"))
    page.wait_for_selector("[data-testid=create-results] .result-ok", timeout=WAIT)
    assert page.inner_text("[data-testid=create-results]") == "pod/default/huge created"
    shot(page, "create")
    page.click("[data-testid=create-results] a")
    why = page.locator("[data-testid=pod-why]")
    why.wait_for(timeout=WAIT)
    # upstream's FitError message with DefaultPreemption's suffix, for 2 nodes short of cpu
    assert why.inner_text() == ("0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
                                "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    page.wait_for_selector("[data-testid=filter-table] .r >> nth=1", timeout=WAIT)
    rows = page.locator("[data-testid=filter-table] .r")
    assert rows.locator("[data-col=node]").all_inner_texts() == ["node-01", "node-02"]
    # more cpu than the node has at all: unresolvable (noderesources/fit.go), hence the suffix above
    assert rows.locator("[data-col=verdict]").all_inner_texts() == ["NodeResourcesFit (UnschedulableAndUnresolvable)"] * 2
    assert rows.locator("[data-col=reasons]").all_inner_texts() == ["Insufficient cpu"] * 2
    shot(page, "pod-pending")

    # the pending list and the queue show it, the events too
    page.click("a[data-nav=pending]")
    pending = page.locator("[data-testid=pending-table] .r")
    pending.first.wait_for(timeout=WAIT)
    assert pending.first.locator("[data-col=pod]").inner_text() == "default/huge"
    assert pending.first.locator("[data-col=why]").inner_text().startswith("0/2 nodes are available: 2 Insufficient cpu.")
    shot(page, "pending")
    page.click("a[data-nav=queue]")
    page.wait_for_selector("[data-testid=queue-unschedulable]", timeout=WAIT)
    assert "unschedulable: 1" in page.inner_text("[data-testid=queue-counts]")
    shot(page, "queue")
    page.click("a[data-nav=events]")
    page.wait_for_selector("[data-testid=events-table] .r [data-col=reason]:text-is('FailedScheduling')", timeout=WAIT)
    shot(page, "events")

    # a pod that fits, under the default LeastAllocated: on an empty 4-cpu, 8Gi node a pod of
    # 1 cpu and 1Gi scores cpu (4000-1000)*100/4000 = 75, memory (8Gi-1Gi)*100/8Gi = 87 (87.5
    # truncated), NodeResourcesFit = (75 + 87) / 2 = 81
    create_from_editor(page, POD.format(name="first", cpu="1"))
    page.wait_for_selector("[data-testid=create-results] .result-ok", timeout=WAIT)
    eventually(lambda: server.request("GET", "/api/v1/namespaces/default/pods/first")[1]["spec"].get("nodeName"))
    open_pod(page, base, "first")
    page.wait_for_selector("[data-testid=score-table] .r >> nth=1", timeout=WAIT)
    assert page.inner_text("[data-testid=explain-result]") == "Scheduled"
    assert fit_score(page, "node-01") == "81" and fit_score(page, "node-02") == "81"
    first_node = server.request("GET", "/api/v1/namespaces/default/pods/first")[1]["spec"]["nodeName"]
    other = "node-02" if first_node == "node-01" else "node-01"
    chosen = page.locator("[data-testid=score-table] .r.chosen [data-col=node]").inner_text()
    assert chosen == f"{first_node} ★"
    shot(page, "pod-scores")

    # a bad configuration: the validation error shown, the old configuration kept
    page.click("a[data-nav=config]")
    page.wait_for_selector("[data-testid=config-yaml]", timeout=WAIT)
    page.fill("[data-testid=config-yaml]", MOST_ALLOCATED.replace("MostAllocated", "MostAllocatedPlease"))
    page.click("[data-testid=apply-config]")
    page.wait_for_selector("[data-testid=config-result] .result-bad", timeout=WAIT)
    bad = page.inner_text("[data-testid=config-result]")
    assert bad.startswith("the submitted configuration") and "MostAllocatedPlease" in bad
    assert "the running configuration was kept." in bad
    # MostAllocated: the scheduler restarts with it
    page.fill("[data-testid=config-yaml]", MOST_ALLOCATED)
    page.click("[data-testid=apply-config]")
    page.wait_for_selector("[data-testid=config-result] .result-ok", timeout=WAIT)
    assert page.inner_text("[data-testid=config-result]") == "scheduler restarted with profiles default-scheduler"
    shot(page, "config")

    # the next pod's scores change: 1 cpu and 1Gi more on the node that holds "first" is
    # cpu 2000*100/4000 = 50, memory 2Gi*100/8Gi = 25, (50 + 25) / 2 = 37; on the empty node
    # cpu 1000*100/4000 = 25, memory 1Gi*100/8Gi = 12 (12.5 truncated), (25 + 12) / 2 = 18
    create_from_editor(page, POD.format(name="second", cpu="1"))
    page.wait_for_selector("[data-testid=create-results] .result-ok", timeout=WAIT)
    eventually(lambda: server.request("GET", "/api/v1/namespaces/default/pods/second")[1]["spec"].get("nodeName"))
    open_pod(page, base, "second")
    page.wait_for_selector("[data-testid=score-table] .r >> nth=1", timeout=WAIT)
    assert fit_score(page, first_node) == "37" and fit_score(page, other) == "18"
    shot(page, "pod-scores-most-allocated")

    # delete the pod that cannot fit, from its page
    open_pod(page, base, "huge")
    page.once("dialog", lambda d: d.accept())
    page.click("[data-testid=delete-pod]")
    page.wait_for_url("**/#/pods", timeout=WAIT)
    eventually(lambda: server.request("GET", "/api/v1/namespaces/default/pods/huge")[0] == 404)
    rows = page.locator("[data-testid=pods-table] .r [data-col=pod]")
    eventually(lambda: rows.all_inner_texts() == ["default/first", "default/second"])

    # live updates: a pod created elsewhere (here through the API) appears without a reload
    page.click("a[data-nav=pending]")
    page.wait_for_selector("[data-testid=pending-table]", timeout=WAIT)
    server.request("POST", "/api/v1/namespaces/default/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "from-kubectl"},
        "spec": {"containers": [{"name": "a", "image": "x", "resources": {"requests": {"cpu": "64"}}}]}})
    page.wait_for_selector("[data-testid=pending-table] .r [data-col=pod]:text-is('default/from-kubectl')",
                           timeout=WAIT)
    # and deleted from the YAML editor, as kubectl delete -f
    page.click("a[data-nav=create]")
    page.fill("[data-testid=yaml]", POD.format(name="from-kubectl", cpu="64"))
    page.click("[data-testid=delete-yaml]")
    page.wait_for_selector("[data-testid=create-results] .result-ok", timeout=WAIT)
    assert page.inner_text("[data-testid=create-results]") == "pod/default/from-kubectl deleted"
    eventually(lambda: server.request("GET", "/api/v1/namespaces/default/pods/from-kubectl")[0] == 404)
    page.click("a[data-nav=nodes]")
    page.wait_for_selector("[data-testid=nodes-table] .r >> nth=1", timeout=WAIT)
    page.wait_for_timeout(4500)  # a few metric samples for the charts in the screenshot
    shot(page, "cluster-after")
    assert errors == []
