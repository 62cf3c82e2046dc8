"""Backups of the embedded SQLite database (PostgreSQL: pg_dump, docs/deploying.md)."""
