"""The web UI: a page over the running scheduler and its cluster.

``serve`` mounts it at ``/`` (read-write: create and delete objects from YAML, change the
scheduler's configuration); ``run --ui`` mounts it beside its health and metrics
endpoints, read-only. The page itself is plain HTML, CSS and ES modules in ``static/``
(no build step, nothing from npm): it reads the JSON endpoints of :mod:`.routes`, the
explain document of ``/debug/explain/<ns>/<pod>`` and the Prometheus text of
``/metrics``, and refreshes on the Server-Sent Events of ``/ui/watch/changes``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute

from kubesched.ui.actions import ConfigHolder
from kubesched.ui.routes import UiContext, authorizes_itself, routes
from kubesched.ui.views import Views

if TYPE_CHECKING:
    from kubesched.server.apiserver.registry.registry import Registry
    from kubesched.live.component import SchedulerComponent
    from kubesched.live.scheduler import LiveScheduler

__all__ = ["ServeUi", "run_routes"]


class ServeUi:
    """The UI inside ``serve``: its routes exist before the server (they are part of its
    app); the registry and the scheduler are attached once they exist (:meth:`attach`)."""

    def __init__(self, config_text: str) -> None:
        self._component: "SchedulerComponent | None" = None
        self._config_text = config_text
        self.ctx = UiContext(Views(self._live), writable=True)

    def _live(self) -> "LiveScheduler | None":
        return self._component.live if self._component is not None else None

    def routes(self) -> list[BaseRoute]:
        from kubesched.server.apiserver import errors as E
        from kubesched.server.apiserver.http.handlers import status_response

        async def not_found(request: Request) -> Response:  # what `/` answered before the UI
            return status_response(E.not_found_path())

        return routes(self.ctx, fallback=not_found)

    @staticmethod
    def authorizes_itself(path: str) -> bool:
        """Whether the UI's route for ``path`` authorizes each request itself, as the
        calling user (:func:`.routes.authorizes_itself`); the API server's authorizer then
        leaves the request to it."""
        return authorizes_itself(path)

    def attach(self, registry: "Registry", component: "SchedulerComponent | None",
               stopping: threading.Event) -> None:
        self._component = component
        self.ctx.registry = registry
        self.ctx.config = ConfigHolder(self._live, self._config_text,
                                       component.restart if component is not None else None)
        self.ctx.stopping = stopping


def run_routes(live: "Callable[[], LiveScheduler | None]", config_text: str = "") -> list[BaseRoute]:
    """The read-only UI of ``run --ui`` over the replica's current scheduler."""
    return routes(UiContext(Views(live), config=ConfigHolder(live, config_text)))
