"""Database plumbing shared by the project (a PostgreSQL backend for the pool)."""
