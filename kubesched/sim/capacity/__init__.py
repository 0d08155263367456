"""The capacity questions of the what-if workbench (``kubesched capacity``): how many more
copies of a pod fit (:mod:`.fit`), which nodes to add so the pending pods schedule
(:mod:`.plan`, shapes from :mod:`.catalogue`), which nodes can be drained (:mod:`.drain`).
Every answer is a run of the real scheduler (:mod:`.common`)."""
