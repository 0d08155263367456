"""``run_pre_bind_pre_flights``: the table of upstream v1.35
``pkg/scheduler/framework/runtime/framework_test.go`` ``TestPreBindPreFlightPlugins``
(statuses and messages). VolumeBinding's own PreBindPreFlight is tested in
``tests/plugins/test_volumebinding.py``."""

from __future__ import annotations

import pytest

from kubesched.api.objects import Pod
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.runtime.bindpoints import BindingPoints
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.testing.wrappers import make_pod


class _Plugin:
    def __init__(self, name: str, code: Code) -> None:
        self.name, self.code = name, code

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status(self.code, ("injected status",) if self.code != Code.Success else ())

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return SUCCESS


class _NoPreFlight:
    name = "Legacy"

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return SUCCESS


def _run(*plugins: object) -> Status:
    points = BindingPoints()
    points.pre_bind_plugins = list(plugins)  # type: ignore[arg-type]
    return points.run_pre_bind_pre_flights(CycleState(), make_pod().name("p").obj(), "")


@pytest.mark.parametrize("plugins, code, message", [
    ((), Code.Skip, ""),  # Skip when there's no PreBind Plugin
    ((_Plugin("TestPlugin1", Code.Skip), _Plugin("TestPlugin2", Code.Success)), Code.Success, ""),
    ((_Plugin("TestPlugin1", Code.Skip), _Plugin("TestPlugin2", Code.Skip)), Code.Skip, ""),
    ((_Plugin("TestPlugin1", Code.Skip), _Plugin("TestPlugin2", Code.Error)), Code.Error,
     'running PreBindPreFlight "TestPlugin2": injected status'),
    ((_Plugin("TestPlugin", Code.Unschedulable),), Code.Error,
     'PreBindPreFlight TestPlugin returned "Unschedulable", which is unsupported. '
     "It is supposed to return Success, Skip, or Error status"),
])
def test_pre_bind_pre_flights_table(plugins: tuple[object, ...], code: Code, message: str) -> None:
    st = _run(*plugins)
    assert st.code == code
    assert st.message == message


def test_a_plugin_without_pre_flight_is_taken_to_have_work() -> None:
    """Go's nil status is Success: a PreBind plugin written before PreBindPreFlight existed."""
    assert _run(_Plugin("A", Code.Skip), _NoPreFlight()).code == Code.Success
