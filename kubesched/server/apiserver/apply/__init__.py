"""Server-side apply: field ownership (``metadata.managedFields``) and the apply merge.

Why a package of its own: kube-apiserver tracks, for every object, which manager owns
which field (structured-merge-diff), and both apply (PATCH ``application/apply-patch+yaml``)
and ordinary writes (create, update, patch from other managers) feed the same bookkeeping.

* :mod:`.schema`: which lists are associative (and by which keys), sets or atomic, and
  which maps are atomic: the facts SSA needs from the types' OpenAPI schemas;
* :mod:`.fieldpath`: field paths, field sets and their ``fieldsV1`` encoding;
* :mod:`.merge`: merging an applied configuration into a live object, comparing two
  objects, removing fields;
* :mod:`.managed`: the managed-fields entries, the Apply and Update operations and
  upstream's 409 conflict error.
"""

from kubesched.server.apiserver.apply.managed import apply_to, track_update

__all__ = ["apply_to", "track_update"]
