"""A PreBind plugin for end-to-end tests of ``kubesched run`` processes, loaded by import
path (``file_gate:FileGate``, with this directory on PYTHONPATH): a pod labelled ``gate``
is held in PreBind until the file ``<dir>/release-<pod>`` exists; while held, the file
``<dir>/held-<pod>`` holds the chosen node. ``dir`` comes from the plugin's args."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from kubesched.framework.status import SUCCESS, Status


class FileGate:
    name = "FileGate"

    def __init__(self, args: Any, handle: Any) -> None:
        self.dir = Path((args or {})["dir"])

    def pre_bind(self, state: Any, pod: Any, node_name: str) -> Status:
        if "gate" in pod.labels:
            (self.dir / f"held-{pod.name}").write_text(node_name)
            deadline = time.monotonic() + 60
            while not (self.dir / f"release-{pod.name}").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        return SUCCESS
