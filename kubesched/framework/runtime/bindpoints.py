"""The extension points after a node is chosen (Reserve, Unreserve, Permit, PreBind, Bind,
PostBind), as upstream's ``RunReservePluginsReserve`` ... ``RunPostBindPlugins`` run them:
a part of :class:`~kubesched.framework.runtime.framework.Framework`."""

from __future__ import annotations

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interface import BindPlugin, PermitPlugin, PostBindPlugin, PreBindPlugin, ReservePlugin
from kubesched.framework.runtime.metrics import PointObserver, timed_point
from kubesched.framework.runtime.results import as_permit, as_status, call as _call, error as _error
from kubesched.framework.status import SUCCESS, Code, Status


class BindingPoints:
    """Runs the plugins of the points after the choice of a node, in order."""

    reserve_plugins: list[ReservePlugin]
    permit_plugins: list[PermitPlugin]
    pre_bind_plugins: list[PreBindPlugin]
    bind_plugins: list[BindPlugin]
    post_bind_plugins: list[PostBindPlugin]
    observer: PointObserver | None

    # -- Reserve / Permit / Bind --------------------------------------------------------
    @timed_point("Reserve")
    def run_reserve(self, state: CycleState, pod: Pod, node: str) -> Status:
        for pl in self.reserve_plugins:
            st = as_status(_call(pl, "Reserve", pl.reserve, state, pod, node), "reserve", pl.name)
            if not st.success:
                if st.rejected:
                    return st.with_plugin(pl.name)
                return _error(f'running Reserve plugin "{pl.name}": {st.message}', pl.name)
        return SUCCESS

    @timed_point("Unreserve")
    def run_unreserve(self, state: CycleState, pod: Pod, node: str) -> None:
        for pl in reversed(self.reserve_plugins):
            _call(pl, "Unreserve", pl.unreserve, state, pod, node)

    @timed_point("Permit")
    def run_permit(self, state: CycleState, pod: Pod, node: str) -> tuple[Status, dict[str, float]]:
        """Returns the combined status and, when Wait, the timeout per waiting plugin."""
        waits: dict[str, float] = {}
        for pl in self.permit_plugins:
            st, timeout = as_permit(_call(pl, "Permit", pl.permit, state, pod, node), pl.name)
            if st.code == Code.Wait:
                waits[pl.name] = min(timeout, 15 * 60.0)
                continue
            if st.rejected:
                return st.with_plugin(pl.name), {}
            if not st.success:
                return _error(f'running Permit plugin "{pl.name}": {st.message}', pl.name), {}
        if waits:
            return Status(Code.Wait, ("one or more plugins asked to wait",)), waits
        return SUCCESS, {}

    @timed_point("PreBind")
    def run_pre_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        for pl in self.pre_bind_plugins:
            st = as_status(_call(pl, "PreBind", pl.pre_bind, state, pod, node), "pre_bind", pl.name)
            if st.code == Code.Skip:
                continue
            if st.rejected:
                return st.with_plugin(pl.name)
            if not st.success:
                return _error(f'running PreBind plugin "{pl.name}": {st.message}', pl.name)
        return SUCCESS

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node: str) -> Status:
        """Upstream ``RunPreBindPreFlights`` (1.35): Success when some PreBind plugin will do
        work for the pod on ``node``, Skip when none will, an error otherwise. A plugin without
        a ``pre_bind_pre_flight`` is taken to do work, as upstream's nil status reads."""
        result = Status(Code.Skip)
        for pl in self.pre_bind_plugins:
            fn = getattr(pl, "pre_bind_pre_flight", None)
            st = SUCCESS if fn is None else as_status(_call(pl, "PreBindPreFlight", fn, state, pod, node),
                                                      "pre_bind_pre_flight", pl.name)
            if st.success:
                result = SUCCESS
            elif st.code == Code.Error:
                return _error(f'running PreBindPreFlight "{pl.name}": {st.message}', pl.name)
            elif st.code != Code.Skip:
                return _error(f'PreBindPreFlight {pl.name} returned "{st.code.name}", which is unsupported. '
                              "It is supposed to return Success, Skip, or Error status", pl.name)
        return result

    @timed_point("Bind")
    def run_bind(self, state: CycleState, pod: Pod, node: str) -> Status:
        for pl in self.bind_plugins:
            st = as_status(_call(pl, "Bind", pl.bind, state, pod, node), "bind", pl.name)
            if st.code == Code.Skip:
                continue
            if not st.success and not st.rejected:
                return _error(f'running Bind plugin "{pl.name}": {st.message}', pl.name)
            return st.with_plugin(pl.name)
        return Status(Code.Skip)

    @timed_point("PostBind")
    def run_post_bind(self, state: CycleState, pod: Pod, node: str) -> None:
        for pl in self.post_bind_plugins:
            _call(pl, "PostBind", pl.post_bind, state, pod, node)
