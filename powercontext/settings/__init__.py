"""Settings split by environment: ``base`` holds everything, the others adjust it."""
