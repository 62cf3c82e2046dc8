"""Management commands of the session envelope app."""
