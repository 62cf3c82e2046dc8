#!/usr/bin/env bash
# `make bench`: this service and the reference PowerContext 1.4.1 server, side by
# side, on this machine, with the same load generator and the same workloads.
#
# What one run does (docs/performance.md explains the method and the figures):
#   1. installs wrk from Debian if it is missing (loudly), and the reference
#      server from PyPI into the git-ignored .venv-bench-ref if it is missing;
#      checks that Redis answers at $BENCH_REDIS_URL (exits, saying so, if not);
#   2. creates a fresh PostgreSQL database ($BENCH_DB, dropped first if it
#      exists), migrates ours into it, mints a '*:admin' token;
#   3. starts ours the way production runs it (python -m powercontext.serve: granian,
#      settings.production, DEBUG off, auth on, connection pool on, rate limits
#      on and shared through Redis - configured explicitly, at $BENCH_LIMIT_RATE
#      for writes and reads, so they are checked on every request but never
#      refuse one), the reference (clean environment, its embedded SQLite under
#      var/bench/RUN, auth disabled), and the baseline (below), all on 127.0.0.1;
#   4. compare phase: runs every workload at every concurrency against ours and
#      the reference, and new working notes against the baseline, one server
#      under load at a time (bench/drive.py); one extra run with two wrk threads
#      to show wrk is not the bottleneck; alternating rounds at c=16 of ours'
#      new notes through REST and through MCP and the baseline's (bench/paired.py:
#      the comparisons the targets read); pgbench with the capture transaction's
#      shape (bench/pgbench.py);
#   5. limits phase (docs/api.md): new working notes at c=1 and c=16 with
#      ours' rate limits on, and again after a restart with every limit 'off',
#      each pair back to back (on c=1, off c=1, off c=16, on c=16); ours is
#      restarted with limits on if scale follows;
#   6. the scale phase (ours only, bench/scale.py): seeds one scope with
#      manage.py seed_sources in stages (10k, then 1M Sources), VACUUM ANALYZE,
#      records the query plans (bench/explain.py) and measures every read and
#      write at each stage, then compares the stages;
#   6b. the bundles phase (bench/bundles.py): one scope of BENCH_BUNDLE_SIZE
#      Sources (1000000) exported over HTTP by one worker, verified offline and
#      restored into a fresh database: records/s both ways, the worker's peak RSS
#      over its baseline (port BENCH_BUNDLE_PORT, 18804); bench/results/RUN/bundles.json;
#   7. prints the tables and target checks (bench/report.py, scale.py report)
#      and writes bench/results/RUN/;
#   8. stops everything it started, by recorded PID, and removes the baseline's
#      worktree (trap on EXIT).
#
# The baseline is this service at BENCH_BASELINE_REV (default 6a02b6a, the commit
# before the capture path was re-cut for speed): checked out with `git worktree add --detach` under
# var/bench/RUN/baseline, migrated into its own fresh database ($BENCH_BASE_DB),
# started with the server it shipped - its launcher (python -m powercontext.serve)
# or, before decision 0044, gunicorn with its own gunicorn.conf.py, which needs
# gunicorn installed in .venv (no longer a dependency) - and the same production
# settings (and the same rate-limit settings) from this checkout's .venv through
# bench/isolated.py, which keeps this checkout's editable install from supplying
# modules the old revision lacks.
#
# Phases: BENCH_PHASES ("compare limits scale bundles"). `compare` brings `limits` along
# whenever it measures ours: the targets' acceptance command is BENCH_PHASES=compare
# make bench, and its report includes the limits check. `scale` alone measures
# ours with limits on.
#
# Knobs (environment): BENCH_PHASES, BENCH_SECONDS (15), BENCH_PRESEED (20000 Sources
# seeded into ours and the baseline before they are measured), BENCH_WARMUP (3s),
# BENCH_CONNECTIONS ("1 16"), BENCH_PAIRED_ROUNDS (5; 0: none) and
# BENCH_PAIRED_SECONDS (8: each leg of the alternating rounds), BENCH_WORKLOADS ("working_notes replays content
# scope_get mcp_working_notes"), BENCH_OURS_WORKLOADS (a subset for ours; default all),
# BENCH_SERVERS ("ref baseline ours"), BENCH_OUR_PORT (18801), BENCH_REF_PORT
# (18802), BENCH_BASE_PORT (18803), BENCH_BASELINE_REV (6a02b6a; "none": no
# baseline), BENCH_BASE_DB ($BENCH_DB"_base"), BENCH_REDIS_URL
# (redis://127.0.0.1:6379/14), BENCH_LIMIT_RATE (1000000/s: the write and read
# limits while on), BENCH_SCALE_SIZES ("10000 1000000": Sources in the scope at
# each stage, increasing), BENCH_SCALE_SECONDS (10), BENCH_SCALE_CONNECTIONS
# ("1 16"), BENCH_SCALE_OPERATIONS (default all, see bench/scale_requests.py),
# BENCH_PG (postgres://postgres@127.0.0.1:5432), BENCH_DB (pc_bench_run),
# BENCH_MAINT_DB (postgres: an existing database to connect to while creating
# BENCH_DB), BENCH_QUIET_PATIENCE (30: seconds each run waits for other
# processes to leave the CPUs), BENCH_INPROCESS_ROUNDS (30) and
# BENCH_INPROCESS_REQUESTS (200: the in-process comparison with the baseline,
# bench/inprocess_compare.py), and for ours and the baseline
# POWERCONTEXT_WORKERS, POWERCONTEXT_THREADS, POWERCONTEXT_WORKER_MAX_RSS,
# POWERCONTEXT_DB_POOL and POWERCONTEXT_DB_POOL_MIN/_MAX.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

PHASES=${BENCH_PHASES:-"compare limits scale bundles"}
SECONDS_PER_RUN=${BENCH_SECONDS:-15}
PRESEED=${BENCH_PRESEED:-20000}
WARMUP=${BENCH_WARMUP:-3s}
CONNECTIONS=${BENCH_CONNECTIONS:-"1 16"}
PAIRED_ROUNDS=${BENCH_PAIRED_ROUNDS:-5}
PAIRED_SECONDS=${BENCH_PAIRED_SECONDS:-8}
WORKLOADS=${BENCH_WORKLOADS:-"working_notes replays content scope_get mcp_working_notes"}
BASE_REV=${BENCH_BASELINE_REV:-6a02b6a}
SERVERS=${BENCH_SERVERS:-"ref baseline ours"}
[[ " $PHASES " == *" compare "* ]] || SERVERS=ours
[ "$BASE_REV" = none ] && SERVERS=${SERVERS//baseline/}
# `compare` brings `limits` along whenever it measures ours (see above).
if [[ " $PHASES " == *" compare "* && " $PHASES " != *" limits "* && " $SERVERS " == *" ours "* ]]; then
  PHASES="$PHASES limits"
fi
NEED_OURS=no
if [[ " $SERVERS " == *" ours "* || " $PHASES " == *" limits "* || " $PHASES " == *" scale "* ]]; then
  NEED_OURS=yes
fi
LIMIT_CONNECTIONS="1 16"
SCALE_SIZES=${BENCH_SCALE_SIZES:-"10000 1000000"}
OURS_WORKLOADS=${BENCH_OURS_WORKLOADS:-$WORKLOADS}
OUR_PORT=${BENCH_OUR_PORT:-18801}
REF_PORT=${BENCH_REF_PORT:-18802}
BASE_PORT=${BENCH_BASE_PORT:-18803}
PG=${BENCH_PG:-postgres://postgres@127.0.0.1:5432}
DB=${BENCH_DB:-pc_bench_run}
BASE_DB=${BENCH_BASE_DB:-${DB}_base}
REDIS_URL=${BENCH_REDIS_URL:-redis://127.0.0.1:6379/14}
LIMIT_RATE=${BENCH_LIMIT_RATE:-1000000/s}
MAINT_DB=${BENCH_MAINT_DB:-postgres}
PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
REF_VENV=$ROOT/.venv-bench-ref
REF_SPEC='powercontext[server,cli]==1.4.1'

RUN_ID=$(date -u +%Y%m%dT%H%M%SZ)
RESULTS=$ROOT/bench/results/$RUN_ID
STATE=$ROOT/var/bench/$RUN_ID
OUR_URL=http://127.0.0.1:$OUR_PORT
REF_URL=http://127.0.0.1:$REF_PORT
BASE_URL=http://127.0.0.1:$BASE_PORT
BASE_DIR=$STATE/baseline
BASE_SHA=""
BASE_WORKTREE=""  # set once the baseline's worktree exists; removed on exit
STARTED_PIDS=()

say() { echo ">>> bench: $*" >&2; }

stop_pid() {
  local pid=$1
  kill -0 "$pid" 2>/dev/null || return 0
  say "stopping pid $pid"
  kill -TERM "$pid"
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  if kill -0 "$pid" 2>/dev/null; then
    say "pid $pid ignored SIGTERM for 15 s; sending SIGKILL"
    kill -KILL "$pid"
  fi
}

stop_started() {
  local pid
  for pid in "${STARTED_PIDS[@]}"; do stop_pid "$pid"; done
}

cleanup() {
  stop_started
  STARTED_PIDS=()
  if [ -n "$BASE_WORKTREE" ]; then
    say "removing the baseline's worktree $BASE_WORKTREE"
    git -C "$ROOT" worktree remove --force "$BASE_WORKTREE" ||
      say "could not remove $BASE_WORKTREE; remove it with git worktree remove --force"
    BASE_WORKTREE=""
  fi
}
trap cleanup EXIT
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

ensure_redis() {  # ours counts its rate limits in Redis; without it they fail open
  "$ROOT/.venv/bin/python" bench/redisstats.py "$REDIS_URL" && return 0
  say "************************************************************"
  say "no Redis answers at $REDIS_URL: the bench runs ours with its rate limits"
  say "in Redis. Start one, or point BENCH_REDIS_URL at one (redis://HOST:PORT/DB)."
  say "************************************************************"
  exit 1
}

port_free() {
  if curl -s --noproxy '*' -o /dev/null --max-time 2 "http://127.0.0.1:$1/"; then
    say "port $1 already answers; choose another (BENCH_OUR_PORT / _REF_PORT / _BASE_PORT)"
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
# Rate limits on, through Redis, high enough never to refuse: the bench measures
# what checking them costs. The limits phase appends LIMITS_OFF (the last wins).
LIMITS_ON=(
  POWERCONTEXT_CACHE_URL="$REDIS_URL"
  POWERCONTEXT_RATE_LIMIT_WRITE="$LIMIT_RATE"
  POWERCONTEXT_RATE_LIMIT_READ="$LIMIT_RATE"
  POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES=30/min
)
LIMITS_OFF=(
  POWERCONTEXT_RATE_LIMIT_WRITE=off
  POWERCONTEXT_RATE_LIMIT_READ=off
  POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES=off
)
SECRET_KEY=$("$ROOT/.venv/bin/python" -c 'import secrets; print(secrets.token_urlsafe(50))')
COMMON_ENV=(
  env -i PATH=/usr/bin:/bin HOME="$STATE" LANG=C.UTF-8
  POWERCONTEXT_ENV_FILE=  # this configuration only, never a developer's .env
  DJANGO_SETTINGS_MODULE=powercontext.settings.production
  DJANGO_SECURE_SSL_REDIRECT=false
  DJANGO_ALLOWED_HOSTS=127.0.0.1
  DJANGO_SECRET_KEY="$SECRET_KEY"
  "${LIMITS_ON[@]}"
)
for knob in POWERCONTEXT_WORKERS POWERCONTEXT_THREADS POWERCONTEXT_WORKER_MAX_RSS \
            POWERCONTEXT_DB_POOL POWERCONTEXT_DB_POOL_MIN POWERCONTEXT_DB_POOL_MAX; do
  if [ -n "${!knob:-}" ]; then COMMON_ENV+=("$knob=${!knob}"); fi
done
OUR_ENV=(
  "${COMMON_ENV[@]}"
  DATABASE_URL="$PG/$DB"
  DJANGO_STATIC_ROOT="$STATE/static"
  POWERCONTEXT_BIND="127.0.0.1:$OUR_PORT"
)

fresh_database() {  # fresh_database NAME: dropped first if it exists
  psql -X -q -v ON_ERROR_STOP=1 "$PG/$MAINT_DB" \
    -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -c "CREATE DATABASE $1" >/dev/null
}

prepare_ours() {
  say "creating database $DB (dropped first if it exists) and migrating"
  fresh_database "$DB"
  "${OUR_ENV[@]}" "$ROOT/.venv/bin/python" manage.py migrate --noinput -v 0
  "${OUR_ENV[@]}" "$ROOT/.venv/bin/python" manage.py collectstatic --noinput -v 0
  OUR_TOKEN=$("${OUR_ENV[@]}" "$ROOT/.venv/bin/python" manage.py createtoken \
    --name bench --grant '*:admin' 2>/dev/null | tail -n 1)
  preseed "$DB" "${OUR_ENV[@]}" "$ROOT/.venv/bin/python" manage.py
}

# A database as a running service has one, not an empty one: BENCH_PRESEED Sources in
# a scope of their own, then VACUUM ANALYZE, so that no server is measured against
# tables the planner believes empty (run 20261202T022830Z, without it: PostgreSQL
# spent 1.06 ms per new note in the first runs, 0.47 ms in later ones).
preseed() {  # preseed DB COMMAND...: COMMAND runs manage.py for that database
  local db=$1; shift
  [ "$PRESEED" -gt 0 ] || return 0
  say "seeding $PRESEED Sources into $db, then VACUUM ANALYZE"
  "$@" seed_sources "$PRESEED" --create-scope "bench preseed" --prefix "pre-" \
    --no-progress >/dev/null
  psql -X -q -v ON_ERROR_STOP=1 "$PG/$db" -c "VACUUM ANALYZE" >/dev/null
}

start_ours() {  # start_ours on|off|exact LOG-NAME: rate limits on (Redis), off,
  # or on with every request asking Redis (POWERCONTEXT_RATE_LIMIT_LEASE_MAX=1)
  local limits=()
  [ "$1" = off ] && limits=("${LIMITS_OFF[@]}")
  [ "$1" = exact ] && limits=(POWERCONTEXT_RATE_LIMIT_LEASE_MAX=1)
  port_free "$OUR_PORT"
  (cd "$ROOT" && exec "${OUR_ENV[@]}" "${limits[@]}" "$ROOT/.venv/bin/python" \
    -m powercontext.serve) >"$STATE/$2.log" 2>&1 &
  OUR_PID=$!  # the subshell execs env, env execs python: the launcher's PID
  STARTED_PIDS+=("$OUR_PID")
  wait_for "$OUR_URL/health/ready" "$OUR_PID" "$STATE/$2.log"
  say "ours (rate limits $1): granian pid $OUR_PID on $OUR_URL" \
    "($(pgrep -P "$OUR_PID" | wc -l) workers), log $2.log"
}

restart_ours() {  # restart_ours on|off LOG-NAME
  local pid kept=()
  stop_pid "$OUR_PID"
  # Forget the stopped PID: the system may give it to someone else's process.
  for pid in "${STARTED_PIDS[@]}"; do [ "$pid" = "$OUR_PID" ] || kept+=("$pid"); done
  STARTED_PIDS=("${kept[@]}")
  start_ours "$@"
}

# --- the baseline: this service at BENCH_BASELINE_REV, the same settings ----------
BASE_ENV=(
  "${COMMON_ENV[@]}"
  DATABASE_URL="$PG/$BASE_DB"
  DJANGO_STATIC_ROOT="$STATE/baseline-static"
  POWERCONTEXT_BIND="127.0.0.1:$BASE_PORT"
)

in_baseline() {  # in_baseline PROGRAM ARGS...: run on the baseline's code only
  (cd "$BASE_DIR" && exec "${BASE_ENV[@]}" "$ROOT/.venv/bin/python" \
    "$ROOT/bench/isolated.py" "$@")
}

start_baseline() {
  BASE_SHA=$(git -C "$ROOT" rev-parse --verify --quiet "$BASE_REV^{commit}") ||
    { say "BENCH_BASELINE_REV=$BASE_REV is not a revision of this repository"; exit 1; }
  say "baseline: checking out $BASE_REV ($BASE_SHA) in $BASE_DIR"
  git -C "$ROOT" worktree add --quiet --detach "$BASE_DIR" "$BASE_SHA"
  BASE_WORKTREE=$BASE_DIR
  local imported
  imported=$(in_baseline manage.py shell -c 'import powercontext; print(powercontext.__file__)' 2>"$STATE/baseline-setup.log" | tail -n 1) ||
    { say "the baseline does not load with $ROOT/.venv; see $STATE/baseline-setup.log"; exit 1; }
  if [[ "$imported" != "$BASE_DIR/"* ]]; then
    say "the baseline imported powercontext from $imported, not from $BASE_DIR"; exit 1
  fi
  say "creating database $BASE_DB (dropped first if it exists) and migrating the baseline"
  fresh_database "$BASE_DB"
  in_baseline manage.py migrate --noinput -v 0 >>"$STATE/baseline-setup.log" 2>&1 ||
    { say "migrating the baseline failed; see $STATE/baseline-setup.log"; exit 1; }
  in_baseline manage.py collectstatic --noinput -v 0 >>"$STATE/baseline-setup.log" 2>&1
  BASE_TOKEN=$(in_baseline manage.py createtoken --name bench --grant '*:admin' \
    2>>"$STATE/baseline-setup.log" | tail -n 1)
  preseed "$BASE_DB" in_baseline manage.py
  port_free "$BASE_PORT"
  # The server the baseline shipped: its launcher, or (before decision 0044) its own
  # gunicorn.conf.py, named with -c and read in its own directory: an older
  # revision found it in the working directory, a newer one insists on -c.
  local server=(-m powercontext.serve)
  if [ ! -f "$BASE_DIR/powercontext/serve.py" ]; then
    [ -x "$ROOT/.venv/bin/gunicorn" ] || {
      say "the baseline $BASE_REV is served by gunicorn, which is not in .venv:" \
        "$ROOT/.venv/bin/pip install gunicorn==27.0.1, or BENCH_BASELINE_REV=none"
      exit 1
    }
    server=("$ROOT/.venv/bin/gunicorn" -c "$BASE_DIR/gunicorn.conf.py"
      powercontext.wsgi:application)
  fi
  (
    cd "$BASE_DIR"
    exec "${BASE_ENV[@]}" "$ROOT/.venv/bin/python" "$ROOT/bench/isolated.py" \
      "${server[@]}"
  ) >"$STATE/baseline.log" 2>&1 &
  BASE_PID=$!  # the subshell execs env, env execs python, which runs the server
  STARTED_PIDS+=("$BASE_PID")
  wait_for "$BASE_URL/health/ready" "$BASE_PID" "$STATE/baseline.log"
  say "baseline: ${server[0]} pid $BASE_PID on $BASE_URL ($(pgrep -P "$BASE_PID" | wc -l) workers)"
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

# How many requests one Redis decision may take on SERVER (the service's own
# Rate.lease at LIMIT_RATE, under the default maximum): 1 for the exact run and for
# servers without our limits.
lease_of() {
  case $1 in
    ours|ours_limits_on) "$ROOT/.venv/bin/python" -c '
import sys
from powercontext.rates import LEASE_MAX_DEFAULT, parse_rate
print(parse_rate(sys.argv[1]).lease(LEASE_MAX_DEFAULT))' "$LIMIT_RATE" ;;
    *) echo 1 ;;
  esac
}

drive() {  # drive SERVER WORKLOAD CONNECTIONS WRK_THREADS [OUT [SECONDS]]
  local url=$OUR_URL token=${OUR_TOKEN:-} pid=${OUR_PID:-}
  local out=${5:-$RESULTS/run-$1-$2-c$3-t$4.json} seconds=${6:-$SECONDS_PER_RUN}
  case $1 in
    ref) url=$REF_URL token="" pid=$REF_PID ;;
    baseline) url=$BASE_URL token=$BASE_TOKEN pid=$BASE_PID ;;
  esac
  # Every run counts Redis's CPU as its own group, and the scripts Redis ran.
  "$ROOT/.venv/bin/python" bench/drive.py --server "$1" --base-url "$url" \
    --token "$token" --server-pid "$pid" --workload "$2" --connections "$3" \
    --threads "$4" --duration "${seconds}s" --warmup "$WARMUP" \
    --quiet-patience "${BENCH_QUIET_PATIENCE:-30}" --redis-url "$REDIS_URL" \
    --limit-lease "$(lease_of "$1")" --out "$out"
}

mkdir -p "$RESULTS" "$STATE"
ensure_wrk
[[ $NEED_OURS = yes || " $SERVERS " == *" baseline "* ]] && ensure_redis
[[ " $SERVERS " == *" ref "* ]] && ensure_reference
if [ $NEED_OURS = yes ]; then prepare_ours; start_ours on ours; fi
[[ " $SERVERS " == *" ref "* ]] && start_reference
[[ " $SERVERS " == *" baseline "* ]] && start_baseline
BASE_DESC="not run"
[ -n "$BASE_SHA" ] && BASE_DESC="${BASE_SHA:0:12} (BENCH_BASELINE_REV=$BASE_REV), its own database, the same settings"
GRANIAN_VERSION=$("$ROOT/.venv/bin/python" -c 'import granian; print(granian.__version__)')
DEFAULT_THREADS=$(cd "$ROOT" && .venv/bin/python -c 'from powercontext import shape; print(shape.DEFAULT_THREADS)')
CONNECTIONS_DESC="one persistent connection per thread"
case ${POWERCONTEXT_DB_POOL:-false} in
  true|on|yes|1) CONNECTIONS_DESC="a pool of up to ${POWERCONTEXT_DB_POOL_MAX:-8} per worker" ;;
esac
MAX_RSS_DESC="the memory budget's share of a worker"
[ -n "${POWERCONTEXT_WORKER_MAX_RSS:-}" ] && MAX_RSS_DESC="$POWERCONTEXT_WORKER_MAX_RSS MiB"
cat >"$RESULTS/config.json" <<EOF
{"seconds_per_run": $SECONDS_PER_RUN, "warmup": "$WARMUP",
 "ours": "granian $GRANIAN_VERSION (WSGI), workers=${POWERCONTEXT_WORKERS:-CPUs + 1}, threads=${POWERCONTEXT_THREADS:-$DEFAULT_THREADS}, runtime st, worker max RSS=$MAX_RSS_DESC, database connections: $CONNECTIONS_DESC",
 "limits": "write and read $LIMIT_RATE per principal in $REDIS_URL, up to $(lease_of ours) requests per Redis decision; ours_limits_exact: every request asks Redis; ours_limits_off: off",
 "baseline": "$BASE_DESC",
 "alternating rounds": "$PAIRED_ROUNDS rounds at c=16, ${PAIRED_SECONDS}s per leg",
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
        # The baseline answers one question: our CPU per new working note before.
        if [ "$server" = baseline ] && [ "$workload" != working_notes ]; then
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
  for server in $SERVERS; do
    if [ "$server" != baseline ]; then drive "$server" "$check_workload" 16 2; fi
  done

  [[ " $SERVERS " == *" ours "* ]] && paired_rounds

  if [[ " $SERVERS " == *" ours "* ]]; then
    "$ROOT/.venv/bin/python" bench/pgbench.py --db-url "$PG/$DB" --clients 16 \
      --duration "$SECONDS_PER_RUN" --out "$RESULTS/pgbench.json"
  fi
  # The application's own CPU per new note, ours and the baseline's in alternating
  # rounds (the servers are idle meanwhile): the CPU target (bench/targets.py).
  if [[ " $SERVERS " == *" ours "* && " $SERVERS " == *" baseline "* ]]; then
    say "in-process CPU per new note, ours and the baseline in alternating rounds"
    "${COMMON_ENV[@]}" "$ROOT/.venv/bin/python" bench/inprocess_compare.py \
      --baseline-dir "$BASE_DIR" --ours-db "$PG/$DB" --baseline-db "$PG/$BASE_DB" \
      --rounds "${BENCH_INPROCESS_ROUNDS:-30}" -n "${BENCH_INPROCESS_REQUESTS:-200}" \
      --out "$RESULTS/inprocess.json"
  fi
}

# Alternating rounds at c=16: in each round, ours' new notes through REST, the same
# notes through MCP (when ours runs mcp_working_notes) and the baseline's new notes
# (when it runs), one after the other, the order rotating from round to round. This
# machine's speed drifts by tens of percent over minutes: legs seconds apart share
# the drift, so the medians of the per-round ratios are the comparisons the targets
# read, and the spread of ours' own REST rounds is the run-to-run noise
# (bench/paired.py). Records go to $RESULTS/paired/.
paired_rounds() {
  local round leg server workload legs=("ours working_notes")
  [[ " $OURS_WORKLOADS " == *" mcp_working_notes "* ]] && legs+=("ours mcp_working_notes")
  [[ " $SERVERS " == *" baseline "* ]] && legs+=("baseline working_notes")
  [ "$PAIRED_ROUNDS" -gt 0 ] || return 0
  say "alternating rounds at c=16: ${PAIRED_ROUNDS} x [${legs[*]}], ${PAIRED_SECONDS}s each"
  for round in $(seq 1 "$PAIRED_ROUNDS"); do
    for leg in $(seq 0 $((${#legs[@]} - 1))); do
      read -r server workload <<<"${legs[$(((leg + round - 1) % ${#legs[@]}))]}"
      drive "$server" "$workload" 16 1 \
        "$RESULTS/paired/round-$round-$server-$workload.json" "$PAIRED_SECONDS"
    done
  done
}

limits_phase() {  # new notes with rate limits on (Redis) and off (docs/api.md)
  # Each concurrency is measured on and off back to back, alternating which comes
  # first (on c=1, off c=1, off c=16, on c=16): two restarts, and no pair is split
  # by minutes of other runs while the machine's other load comes and goes. Then
  # "exact": limits on with every request asking Redis (no lease), as any limit
  # under 50/s runs - the upper bound of what the limits cost.
  local connections mode=on
  say "limits phase: new working notes at c=[$LIMIT_CONNECTIONS], rate limits on, off and exact"
  for connections in $LIMIT_CONNECTIONS; do
    drive "ours_limits_$mode" working_notes "$connections" 1
    if [ $mode = on ]; then mode=off; else mode=on; fi
    restart_ours $mode "ours-limits-$mode-c$connections"
    drive "ours_limits_$mode" working_notes "$connections" 1
  done
  restart_ours exact ours-limits-exact
  mode=exact
  for connections in $LIMIT_CONNECTIONS; do
    drive ours_limits_exact working_notes "$connections" 1
  done
  if [ $mode != on ] && [[ " $PHASES " == *" scale "* ]]; then
    restart_ours on ours-scale
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
      --redis-url "$REDIS_URL" \
      --db-url "$PG/$DB" --scope "$scope" --out-dir "$RESULTS" \
      --connections "${BENCH_SCALE_CONNECTIONS:-1 16}" \
      --duration "${BENCH_SCALE_SECONDS:-10}s" \
      --quiet-patience "${BENCH_QUIET_PATIENCE:-30}" \
      --operations "${BENCH_SCALE_OPERATIONS:-}"
  done
}

[[ " $PHASES " == *" compare "* ]] && compare_phase
[[ " $PHASES " == *" limits "* ]] && limits_phase
[[ " $PHASES " == *" scale "* ]] && scale_phase
if [[ " $PHASES " == *" bundles "* ]]; then
  say "bundles phase: export, verify and restore of ${BENCH_BUNDLE_SIZE:-1000000} Sources"
  BENCH_PG="$PG" "$ROOT/.venv/bin/python" bench/bundles.py \
    --size "${BENCH_BUNDLE_SIZE:-1000000}" --port "${BENCH_BUNDLE_PORT:-18804}" \
    --out "$RESULTS/bundles.json"
fi

cleanup
if [[ " $PHASES " == *" compare "* || " $PHASES " == *" limits "* ]]; then
  "$ROOT/.venv/bin/python" bench/report.py "$RESULTS" --db-url "$PG/$MAINT_DB" \
    --server-logs "$STATE"
fi
if [[ " $PHASES " == *" scale "* ]]; then
  "$ROOT/.venv/bin/python" bench/scale.py report "$RESULTS"
fi
say "server logs and the reference's data are under $STATE"
