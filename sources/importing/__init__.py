"""Importing a PowerContext 1.4.1 reference database (docs/migrating.md).

``reference`` reads the reference's SQLite file; ``checks`` checks the whole
file against itself by the API's rules before anything else; ``plan`` compares
it with this registry without writing; ``writer`` writes what is new and
verifies it, in one transaction. The command is ``manage.py import_powercontext``.
"""
