#!/usr/bin/env bash
# `make bench`: this service and the reference PowerContext 1.4.1 server, side by
# side, on this machine, with the same load generator and the same workloads.
#
# What one run does (docs/performance.md explains the method and the figures):
#   1. installs wrk from Debian if it is missing (loudly), and the reference
#      server from PyPI into the git-ignored .venv-bench-ref if it is missing;
#   2. creates a fresh PostgreSQL database ($BENCH_DB, dropped first if it
#      exists), migrates ours into it, mints a '*:admin' token;
#   3. starts ours the way production runs it (gunicorn + gunicorn.conf.py,
#      settings.production, DEBUG off, auth on, connection pool on) and the
#      reference (clean environment, its embedded SQLite under var/bench/RUN,
#      auth disabled), both on 127.0.0.1 only;
#   4. runs every workload at every concurrency against both (bench/drive.py),
#      one extra run with two wrk threads to show wrk is not the bottleneck, and
#      pgbench with the capture transaction's shape (bench/pgbench.py);
#   5. the scale phase (ours only, bench/scale.py): seeds one scope with
#      manage.py seed_sources in stages (10k, then 1M Sources), VACUUM ANALYZE,
#      records the query plans (bench/explain.py) and measures every read and
#      write at each stage, then compares the stages;
#   6. prints the tables (bench/report.py, scale.py report) and writes
#      bench/results/RUN/;
#   7. stops everything it started, by recorded PID (trap on EXIT).
#
# Knobs (environment): BENCH_PHASES ("compare scale"), BENCH_SECONDS (15),
# BENCH_WARMUP (3s), BENCH_CONNECTIONS
# ("1 16"), BENCH_WORKLOADS ("working_notes replays content scope_get"),
# BENCH_OURS_WORKLOADS (a subset for ours; default all), BENCH_SERVERS
# ("ref ours"), BENCH_OUR_PORT (18801),
# BENCH_REF_PORT (18802), BENCH_SCALE_SIZES ("10000 1000000": Sources in the scope
# at each stage, increasing), BENCH_SCALE_SECONDS (10), BENCH_SCALE_CONNECTIONS
# ("1 16"), BENCH_SCALE_OPERATIONS (default all, see bench/scale.py), BENCH_PG (postgres://postgres@127.0.0.1:5432),
# BENCH_DB (pc_bench_run), BENCH_MAINT_DB (postgres: an existing database to
# connect to while creating BENCH_DB), BENCH_QUIET_PATIENCE (30: seconds each run
# waits for other processes to leave the CPUs), and for ours POWERCONTEXT_WORKERS,
# POWERCONTEXT_THREADS, POWERCONTEXT_MAX_REQUESTS, POWERCONTEXT_DB_POOL and
# POWERCONTEXT_DB_POOL_MIN/_MAX.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

PHASES=${BENCH_PHASES:-"compare scale"}
SECONDS_PER_RUN=${BENCH_SECONDS:-15}
WARMUP=${BENCH_WARMUP:-3s}
CONNECTIONS=${BENCH_CONNECTIONS:-"1 16"}
WORKLOADS=${BENCH_WORKLOADS:-"working_notes replays content scope_get"}
SERVERS=${BENCH_SERVERS:-"ref ours"}
[[ " $PHASES " == *" compare "* ]] || SERVERS=ours
SCALE_SIZES=${BENCH_SCALE_SIZES:-"10000 1000000"}
OURS_WORKLOADS=${BENCH_OURS_WORKLOADS:-$WORKLOADS}
OUR_PORT=${BENCH_OUR_PORT:-18801}
REF_PORT=${BENCH_REF_PORT:-18802}
PG=${BENCH_PG:-postgres://postgres@127.0.0.1:5432}
DB=${BENCH_DB:-pc_bench_run}
MAINT_DB=${BENCH_MAINT_DB:-postgres}
PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
REF_VENV=$ROOT/.venv-bench-ref
REF_SPEC='powercontext[server,cli]==1.4.1'

RUN_ID=$(date -u +%Y%m%dT%H%M%SZ)
RESULTS=$ROOT/bench/results/$RUN_ID
STATE=$ROOT/var/bench/$RUN_ID
OUR_URL=http://127.0.0.1:$OUR_PORT
REF_URL=http://127.0.0.1:$REF_PORT
STARTED_PIDS=()

say() { echo ">>> bench: $*" >&2; }

stop_started() {
  local pid
  for pid in "${STARTED_PIDS[@]}"; do
    kill -0 "$pid" 2>/dev/null || continue
    say "stopping pid $pid"
    kill -TERM "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$pid" 2>/dev/null; then
      say "pid $pid ignored SIGTERM for 15 s; sending SIGKILL"
      kill -KILL "$pid"
    fi
  done
}
trap stop_started EXIT
trap 'exit 130' INT TERM

ensure_wrk() {
  command -v wrk >/dev/null 2>&1 && return 0
  say "************************************************************"
  say "wrk is not installed: installing Debian's 'wrk' package now"
  say "(apt-get update && apt-get install -y wrk)"
  say "************************************************************"
  apt-get update -qq && apt-get install -y -qq wrk
  command -v wrk >/dev/null 2>&1 || { say "wrk could not be installed"; exit 1; }
}

ensure_reference() {
  [ -f "$REF_VENV/.installed" ] && return 0
  say "installing the reference server ($REF_SPEC) from PyPI into $REF_VENV"
  "$PYTHON" -m venv "$REF_VENV"
  "$REF_VENV/bin/pip" install --quiet --upgrade pip >"$STATE/ref-install.log" 2>&1
  "$REF_VENV/bin/pip" install --quiet "$REF_SPEC" >>"$STATE/ref-install.log" 2>&1 ||
    { say "installing the reference failed; see $STATE/ref-install.log"; exit 1; }
  touch "$REF_VENV/.installed"
}

port_free() {
  if curl -s --noproxy '*' -o /dev/null --max-time 2 "http://127.0.0.1:$1/"; then
    say "port $1 already answers; choose another (BENCH_OUR_PORT / BENCH_REF_PORT)"
    exit 1
  fi
}

wait_for() {  # wait_for URL PID LOG: until URL answers 200, or the process dies
  for _ in $(seq 1 120); do
    if [ "$(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' "$1")" = 200 ]; then
      return 0
    fi
    kill -0 "$2" 2>/dev/null || { say "server died; last lines of $3:"; tail -20 "$3" >&2; exit 1; }
    sleep 0.5
  done
  say "$1 did not answer 200 within 60 s; see $3"; exit 1
}

# --- our service, production settings -------------------------------------------
OUR_ENV=(
  env -i PATH=/usr/bin:/bin HOME="$STATE" LANG=C.UTF-8
  POWERCONTEXT_ENV_FILE=  # this configuration only, never a developer's .env
  DJANGO_SETTINGS_MODULE=powercontext.settings.production
  DJANGO_SECURE_SSL_REDIRECT=false
  DJANGO_ALLOWED_HOSTS=127.0.0.1
  DATABASE_URL="$PG/$DB"
  DJANGO_STATIC_ROOT="$STATE/static"
  POWERCONTEXT_BIND="127.0.0.1:$OUR_PORT"
)
for knob in POWERCONTEXT_WORKERS POWERCONTEXT_THREADS POWERCONTEXT_MAX_REQUESTS \
            POWERCONTEXT_DB_POOL POWERCONTEXT_DB_POOL_MIN POWERCONTEXT_DB_POOL_MAX; do
  if [ -n "${!knob:-}" ]; then OUR_ENV+=("$knob=${!knob}"); fi
done

start_ours() {
  say "creating database $DB (dropped first if it exists) and migrating"
  psql -X -q -v ON_ERROR_STOP=1 "$PG/$MAINT_DB" \
    -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB" >/dev/null
  OUR_ENV+=(DJANGO_SECRET_KEY="$("$ROOT/.venv/bin/python" -c \
    'import secrets; print(secrets.token_urlsafe(50))')")
  "${OUR_ENV[@]}" "$ROOT/.venv/bin/python" manage.py migrate --noinput -v 0
  "${OUR_ENV[@]}" "$ROOT/.venv/bin/python" manage.py collectstatic --noinput -v 0
  OUR_TOKEN=$("${OUR_ENV[@]}" "$ROOT/.venv/bin/python" manage.py createtoken \
    --name bench --grant '*:admin' 2>/dev/null | tail -n 1)
  port_free "$OUR_PORT"
  "${OUR_ENV[@]}" "$ROOT/.venv/bin/gunicorn" -c "$ROOT/gunicorn.conf.py" powercontext.wsgi:application \
    >"$STATE/ours.log" 2>&1 &
  OUR_PID=$!  # env execs gunicorn: this is the master's PID
  STARTED_PIDS+=("$OUR_PID")
  wait_for "$OUR_URL/health/ready" "$OUR_PID" "$STATE/ours.log"
  say "ours: gunicorn pid $OUR_PID on $OUR_URL ($(pgrep -P "$OUR_PID" | wc -l) workers)"
}

start_reference() {
  mkdir -p "$STATE/ref/home" "$STATE/ref/workspace"
  port_free "$REF_PORT"
  # Clean environment, no .env discovery; data (SQLite) under POWERCONTEXT_HOME.
  (
    cd "$STATE/ref/workspace"
    exec env -i PATH=/usr/bin:/bin HOME="$STATE/ref/home" LANG=C.UTF-8 \
      POWERCONTEXT_HOME="$STATE/ref/home" \
      POWERCONTEXT_SERVER_ACCESS_MODE=disabled \
      POWERCONTEXT_SERVER_METRICS_ENABLED=false \
      "$REF_VENV/bin/powercontext" server run --no-env-file \
      --host 127.0.0.1 --port "$REF_PORT"
  ) >"$STATE/ref.log" 2>&1 &
  REF_PID=$!  # the subshell execs env, env execs the server
  STARTED_PIDS+=("$REF_PID")
  wait_for "$REF_URL/health/live" "$REF_PID" "$STATE/ref.log"
  say "reference: pid $REF_PID on $REF_URL"
}

drive() {  # drive SERVER WORKLOAD CONNECTIONS WRK_THREADS
  local url=$OUR_URL token=${OUR_TOKEN:-} pid=${OUR_PID:-}
  if [ "$1" = ref ]; then url=$REF_URL token="" pid=$REF_PID; fi
  "$ROOT/.venv/bin/python" bench/drive.py --server "$1" --base-url "$url" \
    --token "$token" --server-pid "$pid" --workload "$2" --connections "$3" \
    --threads "$4" --duration "${SECONDS_PER_RUN}s" --warmup "$WARMUP" \
    --quiet-patience "${BENCH_QUIET_PATIENCE:-30}" \
    --out "$RESULTS/run-$1-$2-c$3-t$4.json"
}

mkdir -p "$RESULTS" "$STATE"
ensure_wrk
[[ " $SERVERS " == *" ref "* ]] && ensure_reference
[[ " $SERVERS " == *" ours "* ]] && start_ours
[[ " $SERVERS " == *" ref "* ]] && start_reference
cat >"$RESULTS/config.json" <<EOF
{"seconds_per_run": $SECONDS_PER_RUN, "warmup": "$WARMUP",
 "ours": "$("$ROOT/.venv/bin/gunicorn" --version), workers=${POWERCONTEXT_WORKERS:-CPUs + 1}, threads=${POWERCONTEXT_THREADS:-3}, max_requests=${POWERCONTEXT_MAX_REQUESTS:-gunicorn.conf.py}, pool max=${POWERCONTEXT_DB_POOL_MAX:-8}",
 "reference": "$REF_SPEC, SQLite, access mode disabled"}
EOF

compare_phase() {
  say "running: workloads [$WORKLOADS] x connections [$CONNECTIONS] x servers [$SERVERS], ${SECONDS_PER_RUN}s each"
  local workload connections server
  for workload in $WORKLOADS; do
    for connections in $CONNECTIONS; do
      for server in $SERVERS; do
        if [ "$server" = ours ] && [[ " $OURS_WORKLOADS " != *" $workload "* ]]; then
          continue
        fi
        drive "$server" "$workload" "$connections" 1
      done
    done
  done
  # Same run with two wrk threads: if wrk limited the one-thread figure, this one
  # would be higher (the CPU column shows wrk's own share as well).
  local check_workload=working_notes
  [[ " $SERVERS " == *" ours "* ]] && check_workload=${OURS_WORKLOADS%% *}
  for server in $SERVERS; do drive "$server" "$check_workload" 16 2; done

  if [[ " $SERVERS " == *" ours "* ]]; then
    "$ROOT/.venv/bin/python" bench/pgbench.py --db-url "$PG/$DB" --clients 16 \
      --duration "$SECONDS_PER_RUN" --out "$RESULTS/pgbench.json"
  fi
}

scale_phase() {  # one scope, grown stage by stage; every operation at each stage
  local seeded=0 size scope="" target=()
  say "scale phase: stages [$SCALE_SIZES] Sources"
  for size in $SCALE_SIZES; do
    if [ "$size" -le "$seeded" ]; then
      say "BENCH_SCALE_SIZES must increase ($size after $seeded)"; exit 1
    fi
    if [ -z "$scope" ]; then target=(--create-scope "bench scale $RUN_ID"); else target=(--scope "$scope"); fi
    say "seeding $((size - seeded)) Sources (stage $size)"
    scope=$("${OUR_ENV[@]}" "$ROOT/.venv/bin/python" manage.py seed_sources \
      "$((size - seeded))" "${target[@]}" --prefix "s$size-" | tail -n 1)
    seeded=$size
    psql -X -q -v ON_ERROR_STOP=1 "$PG/$DB" -c "VACUUM ANALYZE" >/dev/null
    "${OUR_ENV[@]}" "$ROOT/.venv/bin/python" bench/explain.py --scope "$scope" \
      >"$RESULTS/plans-$size.md" 2>"$STATE/explain-$size.log"
    "$ROOT/.venv/bin/python" bench/scale.py measure --stage "$size" \
      --base-url "$OUR_URL" --token "$OUR_TOKEN" --server-pid "$OUR_PID" \
      --db-url "$PG/$DB" --scope "$scope" --out-dir "$RESULTS" \
      --connections "${BENCH_SCALE_CONNECTIONS:-1 16}" \
      --duration "${BENCH_SCALE_SECONDS:-10}s" \
      --quiet-patience "${BENCH_QUIET_PATIENCE:-30}" \
      --operations "${BENCH_SCALE_OPERATIONS:-}"
  done
}

[[ " $PHASES " == *" compare "* ]] && compare_phase
[[ " $PHASES " == *" scale "* ]] && scale_phase

stop_started
STARTED_PIDS=()
if [[ " $PHASES " == *" compare "* ]]; then
  "$ROOT/.venv/bin/python" bench/report.py "$RESULTS" --db-url "$PG/$MAINT_DB"
fi
if [[ " $PHASES " == *" scale "* ]]; then
  "$ROOT/.venv/bin/python" bench/scale.py report "$RESULTS"
fi
say "server logs and the reference's data are under $STATE"
