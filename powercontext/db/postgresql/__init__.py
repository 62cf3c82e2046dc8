"""Django's PostgreSQL backend with a pool that survives a database restart.

``DATABASE_URL`` selects it (``powercontext.settings.base``) whenever psycopg's
connection pool is on; see ``base.py``.
"""
