"""Plugin sets kept with kubesched but outside the in-tree set, laid out as
kubernetes-sigs/scheduler-plugins lays out its own: one package per set, each plugin
referenced from a KubeSchedulerConfiguration by import path
(``kubesched.contrib.gpushare:FGDScore``), exactly as a user's own plugins are.
"""
