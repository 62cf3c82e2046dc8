#!/usr/bin/env bash
# What `make test` and `make test-browser` need on this machine, set up before they
# run, so that the README's one command works on a fresh Debian host:
#
#   tests/host_setup.sh test      the suite's tools (below) and Redis on 127.0.0.1:6379
#   tests/host_setup.sh browser   Debian's chromium for the audit console's tests
#   tests/host_setup.sh typescript  node and npm for the TypeScript client's tests
#
# Missing Debian packages are installed when this runs as root, announced on
# stderr; otherwise it stops at once and prints the one command to run. Nothing
# is compiled any more (granian comes as a wheel), so neither a compiler nor
# Python's headers are needed.
set -euo pipefail
mode=${1:?usage: tests/host_setup.sh test|typescript|browser}

need_debs=()
have() { command -v "$1" >/dev/null 2>&1 || [[ -x "/usr/sbin/$1" ]]; }
if [[ $mode == test ]]; then
    for tool in curl openssl; do
        have "$tool" || need_debs+=("$tool")
    done
    # tests/deploy follow docs/deploying.md on this machine: nginx in front of
    # the server, pg_dump/pg_restore/createdb for the backup, /bin/kill for the
    # unit's ExecReload.
    have nginx || need_debs+=(nginx)
    have pg_restore || need_debs+=(postgresql-client-15)
    [[ -x /bin/kill ]] || need_debs+=(procps)
    # tests/robustness starts throwaway PostgreSQL 15 clusters (initdb, pg_ctl)
    # as the postgres user through runuser.
    [[ -x /usr/lib/postgresql/15/bin/initdb ]] || need_debs+=(postgresql-15)
    have runuser || need_debs+=(util-linux)
    # tests/scaling runs the capture races through a real PgBouncer in
    # transaction mode.
    have pgbouncer || need_debs+=(pgbouncer)
    # Rate-limit counters live in Redis (docs/operations.md); the live tests
    # start a private redis-server of their own.
    have redis-server || need_debs+=(redis-server)
    # make test ends with make test-typescript (clients/typescript): Node's test
    # runner and npm ci. Debian 12's nodejs is 18.19, new enough for the client.
    { have node && have npm; } || need_debs+=(nodejs npm)
elif [[ $mode == typescript ]]; then
    { have node && have npm; } || need_debs+=(nodejs npm)
elif [[ $mode == browser ]]; then
    # The audit console's browser tests drive Debian's Chromium, never a
    # downloaded browser.
    [[ -x ${CHROMIUM:-/usr/bin/chromium} ]] || need_debs+=(chromium)
else
    echo "tests/host_setup.sh: unknown mode $mode (test, typescript or browser)" >&2
    exit 2
fi
# The make target the user typed (the message's "then make ... again").
target=test
[[ $mode == test ]] || target=test-$mode

if ((${#need_debs[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        echo ">>> make $target needs Debian packages this machine lacks: ${need_debs[*]}" >&2
        echo ">>> run this once as root, then make $target again:" >&2
        echo "    apt-get update && apt-get install -y ${need_debs[*]}" >&2
        exit 1
    fi
    echo ">>> make $target: INSTALLING missing Debian packages as root: ${need_debs[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
        "${need_debs[@]}"
    echo ">>> make $target: installed ${need_debs[*]}" >&2
fi

if [[ $mode == test ]] && ! (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then
    echo ">>> make test: nothing answers on 127.0.0.1:6379; starting redis-server there" >&2
    redis-server --bind 127.0.0.1 --port 6379 --save '' --appendonly no --daemonize yes
fi
