"""SIGTERM/SIGINT while the main thread holds the watch hub's lock
(kubesched/server/apiserver/server.py, ``_Uvicorn.handle_exit``).

uvicorn installs ``handle_exit`` with ``signal.signal``, so CPython runs it on the main
thread between two bytecodes of whatever that thread was doing. A CI run once caught the
main thread (the event loop) inside ``WatchHub.remove`` -- a watch stream closing, the hub's
lock held -- when SIGTERM arrived; the handler's shutdown then called ``close_all``, which
waits for that same lock: serve never stopped (faulthandler's stacks showed exactly this).

Here the test's own thread plays the main thread: it holds the hub's lock and calls the
handler itself, as the interrupted thread would. The handler must return at once (the lock
is not reentrant: it cannot be taken there; the shutdown's work now runs on the event loop,
from uvicorn's shutdown), and the shutdown must complete once the lock is released, ending
the open watch and the server. Real server on a free port, in this process.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path

from kubesched.server.apiserver.server import ApiServer, ServeOptions


def test_a_signal_that_interrupts_a_holder_of_the_hubs_lock_still_shuts_the_server_down(tmp_path: Path) -> None:
    server = ApiServer(ServeOptions(data_dir=tmp_path / "data", port=0))
    thread = server.start_in_thread()
    try:
        hub = server.store.hub
        watcher = hub.new_watcher(["pods"], [], server.store.rv)
        returned = threading.Event()

        def interrupted_main_thread() -> None:
            with hub._lock:  # as in WatchHub.remove, where the signal came
                server._server.handle_exit(signal.SIGTERM, None)
                returned.set()

        holder = threading.Thread(target=interrupted_main_thread, daemon=True)
        holder.start()
        holder.join(10)
        # before the fix the handler waited for the lock its own thread held: forever
        assert returned.is_set(), "the signal handler blocked on the watch hub's lock"
        assert server.state.stopping.wait(10), "shutdown did not begin after the lock was released"
        thread.join(20)
        assert not thread.is_alive(), "the server did not stop"
        watcher.get(10)  # returns once the shutdown has closed it
        assert watcher.closed, "the open watch was not ended by the shutdown"
        assert hub.count() == 0
    finally:
        server.stop()
