"""Evidence resolution and handoff artifacts (docs/api.md)."""
