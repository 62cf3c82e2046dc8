"""The servers a `make bench` run measures, by the ``server`` label of
bench/drive.py's records: ``ref`` the reference 1.4.1, ``ours`` this service with
rate limits on through Redis, ``baseline`` this service at BENCH_BASELINE_REV, and
the limits phase's ``ours_limits_on``, ``ours_limits_off`` and ``ours_limits_exact``.
"""

# Server labels, in the order tables show them.
SERVERS = (
    "ref",
    "baseline",
    "ours",
    "ours_limits_on",
    "ours_limits_off",
    "ours_limits_exact",
)
# Servers whose rate limits are on, in Redis: a script per request, or per lease
# (the run's ``limit_lease``) under the bench's high limit.
LIMITS_ON = ("ours", "ours_limits_on", "ours_limits_exact")
# A run during which other processes used more than this many cores is flagged.
NOISY_CORES = 0.2
