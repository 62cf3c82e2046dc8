"""The lifecycle of Sources and sessions (spec/handoff.md 3): session close, legal
holds, purge and redaction with tombstones."""
