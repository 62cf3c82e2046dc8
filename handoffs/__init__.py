"""Evidence resolution and handoff artifacts (spec/handoff.md sections 1 and 2)."""
