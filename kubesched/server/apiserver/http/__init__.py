"""HTTP: the uvicorn protocol, request bodies, content negotiation, the REST handlers,
discovery, OpenAPI, health, metrics and in-flight limits."""
