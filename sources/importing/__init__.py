"""Importing a PowerContext 1.4.1 reference database (spec/access.md 2).

``reference`` reads the reference's SQLite file; ``plan`` compares it with this
registry without writing; ``writer`` writes what is new and verifies it. The
command is ``manage.py import_powercontext``.
"""
