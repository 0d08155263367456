"""How many explanations ``run`` and ``serve`` keep (``--explain-attempts-per-pod``,
``--explain-max-attempts``), apart from the store so the command line can show the defaults
without importing the scheduler."""

DEFAULT_PER_POD = 5
DEFAULT_MAX_ATTEMPTS = 1000
