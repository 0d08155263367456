"""DynamicResources (resource.k8s.io/v1): the plugin (``plugin.py``), the structured
allocator (``allocator.py``) and CEL device selectors behind one module (``cel.py``)."""
