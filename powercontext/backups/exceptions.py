"""Errors of the backups app."""


class BackupFailed(Exception):
    """The backup was not written; the message says why and what to do."""
