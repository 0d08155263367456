"""Server-side printing: the ``meta.k8s.io/v1`` Tables ``kubectl get`` shows, per kind."""
