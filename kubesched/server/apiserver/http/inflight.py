"""The in-flight limits' defaults (kube-apiserver's ``--max-requests-inflight`` and
``--max-mutating-requests-inflight``, and serve's ``--max-watches``), apart from the limiter
(:mod:`.limits`) so the command line can show them without importing the server."""

DEFAULT_MAX_READONLY = 400  # --max-requests-inflight
DEFAULT_MAX_MUTATING = 200  # --max-mutating-requests-inflight
DEFAULT_MAX_WATCHES = 10_000
