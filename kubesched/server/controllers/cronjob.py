"""The CronJob controller: Jobs created on a cron schedule, on the server's clock.

As upstream's ``pkg/controller/cronjob`` (``cronjob_controllerv2.go``, ``utils.go``):

* the schedule is read by ``croniter`` (the maintained Python cron parser: standard five
  fields, ``@hourly``-style macros, ranges, steps and names, DST-aware in a time zone),
  in ``spec.timeZone`` when set, else UTC (the controller manager's local zone);
* the most recent scheduled time after ``status.lastScheduleTime`` (else the CronJob's
  creation) and not after now is the one to run; older missed times are skipped, as
  upstream; with ``startingDeadlineSeconds`` a time older than the deadline is not run
  (event ``MissSchedule``); more than 100 missed times gives the ``TooManyMissedTimes``
  warning;
* ``suspend: true`` creates nothing; ``concurrencyPolicy`` ``Forbid`` skips a run while a
  Job is active (event ``JobAlreadyActive``), ``Replace`` deletes the active Jobs first;
* the Job is named ``<cronjob>-<scheduled time in minutes since the epoch>`` (so a run
  is never created twice), carries the template's labels and annotations plus
  ``batch.kubernetes.io/cronjob-scheduled-timestamp``, a controller reference to the
  CronJob, and the template's spec;
* status: ``active`` (references to running Jobs), ``lastScheduleTime``,
  ``lastSuccessfulTime``; finished Jobs (condition ``Complete`` or ``Failed``) leave
  ``active`` (event ``SawCompletedJob``) and the oldest beyond
  ``successfulJobsHistoryLimit``/``failedJobsHistoryLimit`` are deleted;
* the CronJob is queued again for its next scheduled time.

Jobs are created through the API as ``jobs.batch``; the manager runs this controller only
when the server serves that resource.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from kubesched.server.apiserver.errors import ApiError
from kubesched.server.apiserver.registry.registry import Registry
from kubesched.server.controllers.base import (
    Controller, condition, controller_ref, deleting, meta, parse_time, timestamp, uid_of,
)
from kubesched.server.controllers.events import NORMAL, WARNING, EventRecorder
from kubesched.server.controllers.informer import Informer, Key, Obj
from kubesched.server.controllers.podmaking import CJ_KIND, cronjob_job, cronjob_job_name

log = logging.getLogger(__name__)

JOBS = "jobs.batch"
MAX_MISSED = 100


def job_finished(job: Obj) -> str | None:
    """"Complete" or "Failed" when the Job has that condition True (``IsJobFinished``)."""
    for kind in ("Complete", "Failed"):
        c = condition(job, kind)
        if c is not None and c.get("status") == "True":
            return kind
    return None


def zone_of(cj: Obj) -> dt.tzinfo:
    tz = (cj.get("spec") or {}).get("timeZone")
    if not tz:
        return dt.timezone.utc
    try:
        return ZoneInfo(str(tz))
    except (ZoneInfoNotFoundError, ValueError):
        return dt.timezone.utc


def schedule_times(schedule: str, tz: dt.tzinfo, earliest: float, now: float) -> tuple[float | None, int, float]:
    """(most recent scheduled time in (earliest, now] or None, how many there were
    (counted up to MAX_MISSED + 1), the next scheduled time after now)."""
    it = croniter(schedule, dt.datetime.fromtimestamp(earliest, tz))
    last: float | None = None
    count = 0
    while True:
        t = float(it.get_next(float))
        if t > now:
            return last, count, t
        last, count = t, count + 1
        if count > MAX_MISSED:  # skip ahead: only the latest one before now matters
            back = croniter(schedule, dt.datetime.fromtimestamp(now, tz))
            last = float(back.get_prev(float))
            return last, count, float(croniter(schedule, dt.datetime.fromtimestamp(now, tz)).get_next(float))


job_name = cronjob_job_name


class CronJobController(Controller[Key]):
    name = "cronjob-controller"

    def __init__(self, registry: Registry, cronjobs: Informer, jobs: Informer, recorder: EventRecorder,
                 *, workers: int = 1) -> None:
        super().__init__(workers)
        self.registry = registry
        self.cronjobs = cronjobs
        self.jobs = jobs
        self.recorder = recorder
        cronjobs.add_handler(self._on_cronjob)
        jobs.add_handler(self._on_job)

    def _on_cronjob(self, old: Obj | None, new: Obj | None) -> None:
        obj = new or old
        assert obj is not None
        self.queue.add((str(meta(obj).get("namespace") or ""), str(meta(obj).get("name"))))

    def _on_job(self, old: Obj | None, new: Obj | None) -> None:
        for job in (old, new):
            ref = controller_ref(job) if job is not None else None
            if job is not None and ref is not None and ref.get("kind") == CJ_KIND:
                self.queue.add((str(meta(job).get("namespace") or ""), str(ref.get("name"))))

    def owned_jobs(self, cj: Obj) -> list[Obj]:
        ns = str(meta(cj).get("namespace") or "")
        return [j for j in self.jobs.objects(ns)
                if (controller_ref(j) or {}).get("uid") == uid_of(cj)]

    # -- sync ---------------------------------------------------------------------------------
    def sync(self, key: Key) -> None:
        cj = self.cronjobs.get(*key)
        if cj is None or deleting(cj):
            return
        now = self.registry.clock()
        jobs = self.owned_jobs(cj)
        status = dict(cj.get("status") or {})
        active = self._reconcile_active(cj, status, jobs)
        self._clean_history(cj, jobs)
        next_time = self._maybe_run(key, cj, status, active, now)
        self._write_status(key, cj, status)
        if next_time is not None:
            self.queue.add_after(key, max(next_time - now, 0.0) + 0.1)

    def _reconcile_active(self, cj: Obj, status: dict[str, Any], jobs: list[Obj]) -> list[Obj]:
        by_uid = {uid_of(j): j for j in jobs}
        active: list[Obj] = []
        refs = []
        for ref in status.get("active") or []:
            job = by_uid.get(str(ref.get("uid")))
            if job is None:
                continue  # deleted by someone: forget it
            finished = job_finished(job)
            if finished is None:
                refs.append(ref)
                active.append(job)
                continue
            self.recorder.event(cj, NORMAL, "SawCompletedJob",
                                f"Saw completed job: {meta(job).get('name')}, condition: {finished}")
            if finished == "Complete":
                done = (job.get("status") or {}).get("completionTime")
                old = parse_time(status.get("lastSuccessfulTime")) or 0.0
                if done and (parse_time(done) or 0.0) >= old:
                    status["lastSuccessfulTime"] = done
        listed = {str(r.get("uid")) for r in refs}
        for job in jobs:  # an owned Job not yet in active (our own write not seen yet)
            if uid_of(job) not in listed and job_finished(job) is None and not deleting(job):
                refs.append(self._ref(job))
                active.append(job)
        if refs:
            status["active"] = refs
        else:
            status.pop("active", None)
        return active

    def _clean_history(self, cj: Obj, jobs: list[Obj]) -> None:
        spec = cj.get("spec") or {}
        for kind, limit_key in (("Complete", "successfulJobsHistoryLimit"), ("Failed", "failedJobsHistoryLimit")):
            limit = spec.get(limit_key)
            if limit is None:
                continue
            done = sorted((j for j in jobs if job_finished(j) == kind and not deleting(j)),
                          key=lambda j: ((j.get("status") or {}).get("startTime") or "", meta(j).get("name") or ""))
            for job in done[:max(len(done) - int(limit), 0)]:
                self._delete_job(cj, job)

    def _maybe_run(self, key: Key, cj: Obj, status: dict[str, Any], active: list[Obj], now: float) -> float | None:
        spec = cj.get("spec") or {}
        schedule = str(spec.get("schedule") or "")
        tz = zone_of(cj)
        earliest = parse_time(status.get("lastScheduleTime")) or parse_time(meta(cj).get("creationTimestamp")) or now
        deadline = spec.get("startingDeadlineSeconds")
        if isinstance(deadline, int):
            earliest = max(earliest, now - deadline)
        try:
            scheduled, missed, next_time = schedule_times(schedule, tz, earliest, now)
        except (ValueError, KeyError) as exc:
            self.recorder.event(cj, WARNING, "InvalidSchedule", f"invalid schedule: {schedule}: {exc}")
            return None
        if spec.get("suspend") or scheduled is None:
            return next_time
        if missed > MAX_MISSED:
            self.recorder.event(cj, WARNING, "TooManyMissedTimes", "too many missed start times. Set or decrease "
                                ".spec.startingDeadlineSeconds or check clock skew")
        if isinstance(deadline, int) and scheduled + deadline < now:
            self.recorder.event(cj, WARNING, "MissSchedule", "Missed scheduled time to start a job: "
                                f"{dt.datetime.fromtimestamp(scheduled, tz).isoformat()}")
            return next_time
        name = job_name(key[1], scheduled)
        if any(meta(j).get("name") == name for j in active):
            return next_time
        policy = spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and active:
            self.recorder.event(cj, NORMAL, "JobAlreadyActive", "Not starting job because prior execution is "
                                "running and concurrency policy is Forbid")
            return next_time
        if policy == "Replace":
            for job in active:
                self._delete_job(cj, job)
            status.pop("active", None)
        created = self._create_job(cj, name, scheduled, tz)
        if created is not None:
            status["active"] = [r for r in status.get("active") or [] if r.get("name") != name] + [self._ref(created)]
            self.expect(key, self.jobs, created)
        status["lastScheduleTime"] = timestamp(scheduled)
        return next_time

    def _create_job(self, cj: Obj, name: str, scheduled: float, tz: dt.tzinfo) -> Obj | None:
        ns = str(meta(cj).get("namespace") or "")
        job = cronjob_job(cj, scheduled, tz)
        try:
            created = self.registry.create(JOBS, ns, job)
        except ApiError as exc:
            if exc.reason == "AlreadyExists":
                return None
            self.recorder.event(cj, WARNING, "FailedCreate", f"Error creating job: {exc.message}")
            raise
        self.recorder.event(cj, NORMAL, "SuccessfulCreate", f"Created job {name}")
        return created

    def _delete_job(self, cj: Obj, job: Obj) -> None:
        m = meta(job)
        try:
            self.registry.delete(JOBS, m.get("namespace"), str(m.get("name")),
                                 {"propagationPolicy": "Background", "preconditions": {"uid": m.get("uid")}})
        except ApiError as exc:
            if exc.code not in (404, 409):
                raise
            return
        self.recorder.event(cj, NORMAL, "SuccessfulDelete", f"Deleted job {m.get('name')}")

    @staticmethod
    def _ref(job: Obj) -> dict[str, Any]:
        m = meta(job)
        return {"kind": "Job", "namespace": m.get("namespace"), "name": m.get("name"), "uid": m.get("uid"),
                "apiVersion": "batch/v1", "resourceVersion": m.get("resourceVersion")}

    def _write_status(self, key: Key, cj: Obj, status: dict[str, Any]) -> None:
        if status == (cj.get("status") or {}):
            return
        new = dict(cj)
        new["status"] = status
        out = self.registry.update("cronjobs.batch", key[0], key[1], new, subresource="status")
        self.expect(key, self.cronjobs, out)
