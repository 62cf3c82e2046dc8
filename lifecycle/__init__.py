"""The lifecycle of Sources and sessions (docs/api.md): session close, legal
holds, purge and redaction with tombstones."""
