"""Scopes and the Source registry: capture, working notes, reads, audit, evidence."""
