"""Explanations of scheduling attempts: the record of one attempt as the scheduler observed
it (``attempt``), the bounded store ``run`` and ``serve`` keep them in (``store``), and the
kube-scheduler-simulator result annotations derived from them (``kssresults``)."""
