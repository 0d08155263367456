"""The framework's runtime: runs a profile's plugins at each extension point (``framework``),
their batch form over the NodeTable, score sums, results checking, waiting pods and timing.
Plugins never import it: they implement the protocols of ``kubesched.framework``."""
