"""Suite-wide set-up.

cel-python (DynamicResources' CEL, imported when the DRA plugin is first built) raises
Python's recursion limit when it is imported. Hypothesis refuses a test during which the
limit changes, so a property test that happens to build the default profile first would fail
when run alone. Importing the CEL module once here, before any test runs, keeps every test's
outcome independent of the order the tests run in.
"""

import kubesched.plugins.dynamicresources.cel  # noqa: F401
