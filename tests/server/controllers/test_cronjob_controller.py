"""The CronJob controller on a fake clock over a real registry (``pkg/controller/cronjob``:
``cronjob_controllerv2.go`` ``syncCronJob``, ``utils.go`` ``mostRecentScheduleTime`` and
``getJobName``), checking only the Job objects it creates, updates and deletes: a Job
resource is registered in this test's own resource table (``batch/v1`` Jobs and their
controller are another branch's), and Jobs are finished by hand.

T0 = 1 800 000 000 s = 2027-01-15T08:00:00Z, a minute boundary (30 000 000 minutes), so
``*/5 * * * *`` fires at T0 + 300 k and the Job for T0 + 300 is ``<cronjob>-30000005``."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.apiserver.registry.resources import RESOURCES, Resource, ResourceTable, Subresource
from kubesched.server.controllers.base import timestamp
from kubesched.server.controllers.cronjob import CronJobController, job_name, schedule_times
from kubesched.server.controllers.events import EventRecorder
from kubesched.server.controllers.informer import Informer, wait_synced
from kubesched.server.store import Store

T0 = 1_800_000_000.0
JOB = Resource("batch", "v1", "jobs", "Job", True, (), ("all",),
               (Subresource("status", "Job", "batch", "v1", ("get", "patch", "update")),))


def test_schedule_times_and_names() -> None:
    utc = dt.timezone.utc
    # (T0, T0 + 11 min]: */5 fires at +5 and +10; the latest is run, the next is +15
    assert schedule_times("*/5 * * * *", utc, T0, T0 + 660) == (T0 + 600, 2, T0 + 900)
    assert schedule_times("*/5 * * * *", utc, T0, T0 + 299) == (None, 0, T0 + 300)
    # 08:00 UTC is 09:00 in Europe/Paris (winter): "0 9 * * *" there fires at T0 exactly, so the next is a day later
    assert schedule_times("0 9 * * *", ZoneInfo("Europe/Paris"), T0 - 1, T0 + 1) == (T0, 1, T0 + 86400)
    assert schedule_times("@hourly", utc, T0, T0 + 3600 * 250)[1] == 101  # counting stops past 100 missed
    assert job_name("backup", T0 + 300) == "backup-30000005"


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> float:
        return self.t


Env = tuple[Registry, CronJobController, Clock]


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    clock = Clock()
    store = Store(tmp_path / "db")
    reg = Registry(store, clock=clock, table=ResourceTable(RESOURCES + (JOB,)))
    reg.bootstrap()
    cjs, jobs = Informer(reg, "cronjobs.batch"), Informer(reg, "jobs.batch")
    ctl = CronJobController(reg, cjs, jobs, EventRecorder(reg, "cronjob-controller"))
    for inf in (cjs, jobs):
        inf.start()
    assert wait_synced([cjs, jobs])
    yield reg, ctl, clock
    for inf in (cjs, jobs):
        inf.stop()
    store.close()


def _cronjob(reg: Registry, name: str, **spec: Any) -> None:
    reg.create("cronjobs.batch", "default", {"metadata": {"name": name}, "spec": {
        "schedule": "*/5 * * * *", **spec,
        "jobTemplate": {"metadata": {"labels": {"team": "a"}}, "spec": {"template": {"spec": {
            "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}}}}}})


def _sync(env: Env, name: str, at: float) -> dict[str, Any]:
    reg, ctl, clock = env
    clock.t = at
    rv = reg.store.list("batch/cronjobs").rv
    ctl.cronjobs.wait_for(rv)
    ctl.jobs.wait_for(rv)
    ctl.sync(("default", name))
    return dict(reg.get("cronjobs.batch", "default", name).get("status") or {})


def _jobs(reg: Registry) -> list[str]:
    return sorted(j["metadata"]["name"] for j in reg.list("jobs.batch", "default")["items"]
                  if not j["metadata"].get("deletionTimestamp"))


def _finish(reg: Registry, name: str, kind: str, at: float) -> None:
    job = reg.get("jobs.batch", "default", name)
    job["status"] = {"startTime": job["metadata"]["creationTimestamp"],
                     "conditions": [{"type": kind, "status": "True"}]}
    if kind == "Complete":
        job["status"]["completionTime"] = timestamp(at)
    reg.update("jobs.batch", "default", name, job, subresource="status")


def _reasons(reg: Registry) -> list[str]:
    return [e["reason"] for e in reg.list("events", "default")["items"]]


def test_runs_on_schedule_once_per_time(env: Env) -> None:
    reg = env[0]
    _cronjob(reg, "backup")
    assert _sync(env, "backup", T0 + 10) == {} and _jobs(reg) == []
    st = _sync(env, "backup", T0 + 301)
    assert _jobs(reg) == ["backup-30000005"]
    job = reg.get("jobs.batch", "default", "backup-30000005")
    assert job["metadata"]["labels"] == {"team": "a"}
    assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == "2027-01-15T08:05:00Z"
    ref = job["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["controller"]) == ("CronJob", "backup", True)
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox"
    assert st["lastScheduleTime"] == "2027-01-15T08:05:00Z"
    assert [a["name"] for a in st["active"]] == ["backup-30000005"]
    _sync(env, "backup", T0 + 302)  # same scheduled time: nothing new
    assert _jobs(reg) == ["backup-30000005"]
    assert "SuccessfulCreate" in _reasons(reg)

    _finish(reg, "backup-30000005", "Complete", T0 + 320)
    st = _sync(env, "backup", T0 + 330)
    assert "active" not in st and st["lastSuccessfulTime"] == "2027-01-15T08:05:20Z"
    assert "SawCompletedJob" in _reasons(reg)


def test_allow_forbid_replace(env: Env) -> None:
    reg = env[0]
    _cronjob(reg, "allow")
    _cronjob(reg, "forbid", concurrencyPolicy="Forbid")
    _cronjob(reg, "replace", concurrencyPolicy="Replace")
    for name in ("allow", "forbid", "replace"):
        _sync(env, name, T0 + 301)
        _sync(env, name, T0 + 601)  # the first Job is still active
    assert _jobs(reg) == ["allow-30000005", "allow-30000010", "forbid-30000005", "replace-30000010"]
    assert "JobAlreadyActive" in _reasons(reg) and "SuccessfulDelete" in _reasons(reg)
    st = reg.get("cronjobs.batch", "default", "forbid")["status"]
    assert st["lastScheduleTime"] == "2027-01-15T08:05:00Z"  # the skipped run is not recorded


def test_suspend_missed_times_and_history(env: Env) -> None:
    reg = env[0]
    _cronjob(reg, "paused", suspend=True)
    assert _sync(env, "paused", T0 + 3600) == {} and _jobs(reg) == []
    # 250 hours of missed runs: one Job, for the latest time only, and the warning
    _cronjob(reg, "late", schedule="@hourly", successfulJobsHistoryLimit=1, failedJobsHistoryLimit=0)
    _sync(env, "late", T0 + 3600 * 250 + 5)
    assert _jobs(reg) == [job_name("late", T0 + 3600 * 250)]
    assert "TooManyMissedTimes" in _reasons(reg)
    first = _jobs(reg)[0]
    _finish(reg, first, "Complete", T0 + 3600 * 250 + 10)
    _sync(env, "late", T0 + 3600 * 251 + 5)
    second = job_name("late", T0 + 3600 * 251)
    _finish(reg, second, "Complete", T0 + 3600 * 251 + 10)
    _sync(env, "late", T0 + 3600 * 252 + 5)
    third = job_name("late", T0 + 3600 * 252)
    _finish(reg, third, "Failed", T0 + 3600 * 252 + 10)
    _sync(env, "late", T0 + 3600 * 252 + 20)
    _sync(env, "late", T0 + 3600 * 252 + 30)
    # one successful Job kept (the newest), no failed one
    assert _jobs(reg) == [second]


def test_a_bad_schedule_is_refused_at_the_api(env: Env) -> None:
    with pytest.raises(ApiError) as err:
        _cronjob(env[0], "bad", schedule="61 * * * *")
    assert err.value.code == 422 and "spec.schedule" in err.value.message
    with pytest.raises(ApiError) as err:
        _cronjob(env[0], "tz", schedule="TZ=UTC 0 * * * *")
    assert "use timeZone field instead" in err.value.message
