"""Envelope routes (added with the envelope feature)."""

urlpatterns: list = []
