#!/usr/bin/env bash
# Which server serves this service fastest: alternating A/B rounds of wrk on new
# working notes (bench/wrk/working_notes.lua) at c=16 and c=1, against one
# PostgreSQL database, one server under load at a time (decisions 0035 and 0044).
#
# Servers (AB_SERVERS, default "gthread granian"):
#   granian  this checkout as production runs it (python -m powercontext.serve:
#            granian's WSGI interface)
#   granian-WxT  the same with W workers of T threads (granian-3x2): shapes compared
#   SERVER@VAR=VALUE[@VAR=VALUE...]  a granian arm with settings changed in its
#            environment (granian@POWERCONTEXT_DB_POOL=false): settings compared
#   gthread  gunicorn's stock gthread worker, as served before decision 0044
#            (BENCH_GTHREAD_REV, default f6083c8, with its own gunicorn.conf.py)
#   shipped  the custom gunicorn worker of decision 0035's comparison
#            (BENCH_SHIPPED_REV, default 4bc01e8)
# The two gunicorn arms are kept for comparison only: each runs from a `git
# worktree` of its commit with this checkout's .venv (bench/isolated.py), and needs
# gunicorn, no longer a dependency, installed there (pip install gunicorn==27.0.1).
# AB_WORKLOADS ("working_notes"; also "mcp_working_notes", the same note as an MCP
# tools/call, reported as NAME/mcp) names what each server is measured on.
# Each round runs every server on each workload once at c=16 and once at c=1; the
# order of the servers is reversed
# every other round, so a drift in the machine's load (other processes share it)
# falls on every server alike. Figures per run go to $OUT/runs.tsv; the summary
# (medians, and medians of each round's ratio to the first server) is printed.
#
# Knobs: AB_ROUNDS (10), AB_SECONDS (10), AB_WORKLOADS (working_notes), AB_WARMUP (2), AB_WORKERS (3),
# AB_THREADS (3), AB_PRESEED (5000), AB_PORT_BASE (18510), AB_PG
# (postgres://postgres@127.0.0.1:5432), AB_DB (pc_server_ab), AB_REDIS_URL
# (redis://127.0.0.1:6379/13).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ROUNDS=${AB_ROUNDS:-10}
SECONDS_PER_RUN=${AB_SECONDS:-10}
WARMUP=${AB_WARMUP:-2}
SERVERS=(${AB_SERVERS:-gthread granian})
WORKLOADS=(${AB_WORKLOADS:-working_notes})
# The status each workload's requests answer (an MCP tool call: 200).
declare -A EXPECT=([working_notes]=202 [mcp_working_notes]=200)
declare -A REV=([shipped]=${BENCH_SHIPPED_REV:-4bc01e8} [gthread]=${BENCH_GTHREAD_REV:-f6083c8})
PORT_BASE=${AB_PORT_BASE:-18510}
PG=${AB_PG:-postgres://postgres@127.0.0.1:5432}
DB=${AB_DB:-pc_server_ab}
REDIS_URL=${AB_REDIS_URL:-redis://127.0.0.1:6379/13}
WORKERS=${AB_WORKERS:-3}
THREADS=${AB_THREADS:-3}
RUN=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$ROOT/var/server-ab/$RUN
mkdir -p "$OUT"
say() { echo ">>> $*" >&2; }
if [[ " ${SERVERS[*]} " =~ " "(shipped|gthread)" " ]] && [ ! -x "$ROOT/.venv/bin/gunicorn" ]; then
  say "gunicorn is not in .venv (no longer a dependency of the service):" \
    "$ROOT/.venv/bin/pip install gunicorn==27.0.1, or AB_SERVERS=granian"
  exit 1
fi

PIDS=()
cleanup() {
  local pid name
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  for name in shipped gthread; do
    if [ -d "$OUT/$name" ]; then git -C "$ROOT" worktree remove --force "$OUT/$name"; fi
  done
}
trap cleanup EXIT

ENV=(
  env -i PATH=/usr/bin:/bin HOME="$OUT" LANG=C.UTF-8 POWERCONTEXT_ENV_FILE=
  DJANGO_SETTINGS_MODULE=powercontext.settings.production
  DJANGO_SECURE_SSL_REDIRECT=false DJANGO_ALLOWED_HOSTS=127.0.0.1
  DJANGO_SECRET_KEY="$("$ROOT/.venv/bin/python" -c 'import secrets; print(secrets.token_urlsafe(50))')"
  DATABASE_URL="$PG/$DB" DJANGO_STATIC_ROOT="$OUT/static"
  POWERCONTEXT_CACHE_URL="$REDIS_URL" POWERCONTEXT_RATE_LIMIT_WRITE=1000000/s
  POWERCONTEXT_RATE_LIMIT_READ=1000000/s POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES=30/min
  POWERCONTEXT_WORKERS="$WORKERS" POWERCONTEXT_THREADS="$THREADS"
)

say "fresh database $DB, migrated, $((${AB_PRESEED:-5000})) Sources seeded"
psql -X -q -v ON_ERROR_STOP=1 "$PG/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" \
  -c "CREATE DATABASE $DB" >/dev/null
"${ENV[@]}" "$ROOT/.venv/bin/python" manage.py migrate --noinput -v 0
"${ENV[@]}" "$ROOT/.venv/bin/python" manage.py collectstatic --noinput -v 0
TOKEN=$("${ENV[@]}" "$ROOT/.venv/bin/python" manage.py createtoken --name ab \
  --grant '*:admin' 2>/dev/null | tail -n 1)
"${ENV[@]}" "$ROOT/.venv/bin/python" manage.py seed_sources "${AB_PRESEED:-5000}" \
  --create-scope "ab preseed" --prefix "pre-" --no-progress >/dev/null
psql -X -q "$PG/$DB" -c "VACUUM ANALYZE" >/dev/null

start() {  # start NAME PORT
  local log=$OUT/$1.log
  case $1 in
    shipped|gthread)
      git -C "$ROOT" worktree add --quiet --detach "$OUT/$1" "${REV[$1]}"
      (cd "$OUT/$1" && exec "${ENV[@]}" POWERCONTEXT_BIND="127.0.0.1:$2" \
        "$ROOT/.venv/bin/python" "$ROOT/bench/isolated.py" "$ROOT/.venv/bin/gunicorn" \
        -c "$OUT/$1/gunicorn.conf.py" powercontext.wsgi:application) >"$log" 2>&1 &
      ;;
    granian|granian-*x*|granian@*)
      # granian-WxT: W workers of T threads (the shape), else AB_WORKERS x AB_THREADS;
      # each suffix @VAR=VALUE sets one more variable.
      local shape=() extra=() workers threads server=${1%%@*}
      if [[ $server == granian-* ]]; then
        IFS=x read -r workers threads <<<"${server#granian-}"
        shape=(POWERCONTEXT_WORKERS="$workers" POWERCONTEXT_THREADS="$threads")
      fi
      if [[ $1 == *@* ]]; then IFS=@ read -ra extra <<<"${1#*@}"; shape+=("${extra[@]}"); fi
      (cd "$ROOT" && exec "${ENV[@]}" "${shape[@]}" POWERCONTEXT_BIND="127.0.0.1:$2" \
        POWERCONTEXT_SERVER_LOG_LEVEL=warning "$ROOT/.venv/bin/python" \
        -m powercontext.serve) >"$log" 2>&1 &
      ;;
  esac
  PIDS+=($!)
  for _ in $(seq 1 120); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$2/health/ready")" = 200 ] && return 0
    sleep 0.5
  done
  say "$1 did not start; see $log"; exit 1
}

declare -A PORT SCOPE
i=0
for name in "${SERVERS[@]}"; do
  PORT[$name]=$((PORT_BASE + i)); i=$((i + 1))
  start "$name" "${PORT[$name]}"
  SCOPE[$name]=$(curl -s -X POST "http://127.0.0.1:${PORT[$name]}/v1/scopes" \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    -d "{\"title\": \"ab $name\", \"summary\": \"server A/B\", \"idempotency_key\": \"ab-$RUN-$name\"}" | "$ROOT/.venv/bin/python" -c \
    'import json, sys; print(json.load(sys.stdin)["scope_id"])')
  say "$name on port ${PORT[$name]}, scope ${SCOPE[$name]}"
done

measure() {  # measure NAME WORKLOAD CONNECTIONS ROUND: one wrk run; prints "rps p50_ms p99_ms"
  local name=$1 workload=$2 c=$3 env=(BENCH_WRK_DIR="$ROOT/bench/wrk"
    BENCH_SCOPE="${SCOPE[$1]}" BENCH_TOKEN="$TOKEN" BENCH_EXPECT="${EXPECT[$2]}")
  env "${env[@]}" BENCH_NONCE="$RUN-$name-$workload-$c-$4w" wrk -t1 -c"$c" -d"${WARMUP}s" \
    -s "$ROOT/bench/wrk/$workload.lua" "http://127.0.0.1:${PORT[$name]}" >/dev/null
  env "${env[@]}" BENCH_NONCE="$RUN-$name-$workload-$c-$4" wrk -t1 -c"$c" \
    -d"${SECONDS_PER_RUN}s" -s "$ROOT/bench/wrk/$workload.lua" \
    "http://127.0.0.1:${PORT[$name]}" | EXPECTED="${EXPECT[$2]}" "$ROOT/.venv/bin/python" -c '
import json, os, sys
for line in sys.stdin:
    if line.startswith("BENCH_JSON "):
        result = json.loads(line[len("BENCH_JSON "):])
        bad = {k: v for k, v in result["statuses"].items() if k != os.environ["EXPECTED"]}
        errors = {k: v for k, v in result["errors"].items() if v}
        assert not bad and not errors, result
        seconds = result["duration_us"] / 1e6
        latency = result["latency_us"]
        print(result["requests"] / seconds, latency["p50"] / 1000, latency["p99"] / 1000)'
}

printf 'round\tserver\tconnections\trps\tp50_ms\tp99_ms\n' >"$OUT/runs.tsv"
for round in $(seq 1 "$ROUNDS"); do
  order=("${SERVERS[@]}")
  if [ $((round % 2)) = 0 ]; then
    order=(); for ((j=${#SERVERS[@]}-1; j>=0; j--)); do order+=("${SERVERS[$j]}"); done
  fi
  for name in "${order[@]}"; do
    for workload in "${WORKLOADS[@]}"; do
      label=$name
      [ "$workload" = working_notes ] || label=$name/${workload%_working_notes}
      for c in 16 1; do
        read -r rps p50 p99 < <(measure "$name" "$workload" "$c" "$round")
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$label" "$c" "$rps" "$p50" "$p99" >>"$OUT/runs.tsv"
        say "round $round $label c=$c: $rps/s p50 ${p50} ms p99 ${p99} ms"
      done
    done
  done
done
"$ROOT/.venv/bin/python" "$ROOT/bench/server_ab_report.py" "$OUT/runs.tsv" | tee "$OUT/summary.txt"
