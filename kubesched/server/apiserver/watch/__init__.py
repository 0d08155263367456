"""Watches: Kubernetes watch semantics over the store's change log, and their HTTP streams."""
