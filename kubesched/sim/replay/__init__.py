"""Trace replay on the virtual clock (``kubesched replay``): :mod:`.trace` loads the
workload, :mod:`.engine` runs it through the real scheduler, :mod:`.metrics` keeps the
series."""
