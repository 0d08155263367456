"""Per-kind behaviour of the registry (upstream ``pkg/registry/*/strategy.go``): defaulting,
validation, update rules, one module per API group or family of kinds."""
