"""Explanations of scheduling attempts: the record of one attempt as the scheduler observed
it (``attempt``) and the observer that records it (``recorder``), the bounded store ``run`` and ``serve`` keep them in (``store``), the
kube-scheduler-simulator result annotations derived from them (``kssresults``); for a pod
still pending, every plugin that rejects each node with its evidence (``blockers``,
``evidence``) and the changes that make it schedule, each checked by the scheduler
(``fixes``, ``fixes_pod``, ``fixes_cluster``, through the ``whatif`` protocol)."""
