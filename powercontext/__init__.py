"""The powercontext Django project: settings, URL routing, cross-app HTTP plumbing."""
