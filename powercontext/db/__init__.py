"""Database plumbing shared by the project (a PostgreSQL backend whose connections
are checked before reuse and waited for on a restart, with prepared statements)."""
