"""The embedded control plane of ``kubesched serve``: a Kubernetes-compatible API server
(``apiserver/``) over a SQLite store (``store/``), the controllers kube-controller-manager
runs (``controllers/``), and simulated nodes (``nodes/``: kubelets, heartbeats, node
lifecycle).

Layers, outermost first: ``nodes`` -> ``controllers`` -> ``apiserver`` -> ``store``. Nothing
here imports the scheduling core (``scheduler``, ``framework``, ``plugins``, ``cache``,
``queue``): the scheduler reaches this cluster as it reaches any other, through the API
(``.importlinter`` keeps both true).
"""
