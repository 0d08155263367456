"""Explanations of scheduling attempts: the record of one attempt as the scheduler observed
it (``attempt``), the bounded store ``run`` and ``serve`` keep them in (``store``), and the
kube-scheduler-simulator result annotations derived from them (``kssresults``).

The package is also callable: ``kubesched.explain(pod, *sources, ...)`` is the Python API's
:func:`kubesched.python_api.explain` (this package's name is the API's, so the package
forwards the call; it is looked up at call time, keeping this layer free of the outer one).
"""

import importlib
import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return importlib.import_module("kubesched.python_api").explain(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
