"""Cross-app HTTP plumbing: errors, request ids, authentication, cursors."""
