"""``manage.py`` commands of the session envelope app."""
