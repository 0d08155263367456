"""Recordings of a live cluster: ``kubesched record`` writes them (:mod:`.recorder`),
``kubesched replay --trace`` and ``serve --from`` read them (:mod:`.reader`); the format is
in :mod:`.format` and docs/record-replay.md."""
