"""The preemption machinery behind the DefaultPreemption PostFilter plugin.

Upstream keeps it in ``pkg/scheduler/framework/preemption`` (the Evaluator) and in
``plugins/defaultpreemption`` (victim selection); here it is split by concern:

- ``args``: DefaultPreemptionArgs with upstream's defaults and validation;
- ``gosort``: Go's ``sort.Slice`` (pdqsort), because upstream sorts victims with an
  unstable sort and equally important victims must come out in upstream's order;
- ``ordering``: pod importance, start times, and the choice among candidate nodes;
- ``pdb``: PodDisruptionBudget accounting (which victims would violate a budget);
- ``victims``: SelectVictimsOnNode, the dry run on one node;
- ``evaluator``: eligibility, the dry run over nodes, the failure message, the choice.
"""
