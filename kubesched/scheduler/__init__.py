"""The scheduler: the scheduling and binding cycles (upstream ``pkg/scheduler``), and the
informer event handlers that feed its cache and queue."""
