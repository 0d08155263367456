"""The registry: Kubernetes API semantics over the store (create, get, list, update, patch,
delete, subresources, graceful deletion), for HTTP and in-process callers."""
