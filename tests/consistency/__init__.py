"""Linearizability of the service's histories under faults (docs/reliability.md)."""
