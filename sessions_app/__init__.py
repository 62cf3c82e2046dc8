"""Session envelopes, their revisions, and working notes kept in the envelope."""
