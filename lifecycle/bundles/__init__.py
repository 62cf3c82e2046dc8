"""Export and restore of a scope (or one session of it) as a bundle (docs/export.md).

``format`` is the bundle's wire form and its offline checks (no database);
``export`` reads a scope in one snapshot and yields the bundle's lines;
``restore`` checks a bundle against this instance and writes it all or nothing.
The commands are ``export_scope``, ``verify_bundle`` and ``import_bundle``; the
route is ``GET /v1/scopes/{scope_id}/export`` (``lifecycle.operations``).
"""
