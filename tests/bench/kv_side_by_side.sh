#!/usr/bin/env bash
# The KV service side by side with Redis and etcd on this machine (see README.md, "KV side by
# side"): starts the servers on loopback with their data under one directory, runs bench_kv for
# each case, stops everything.
#
#   rf1_vs_redis   `elfin kv cluster start --count 1` (one pod: replication factor 1) next to
#                  redis-server --appendonly yes --appendfsync always; then redis-benchmark's own
#                  figures (SET/GET, same clients and value size) as a second reference line
#   rf3_vs_etcd    `elfin kv cluster start --count 3` (RF 3) next to a 3-member etcd cluster
#   hops_rf1/_rf3  after each, the cost per hop of a put on the same elfin cluster (bench_kv --case hops_*)
#
# Durability: fsync before the answer everywhere: elfin's WAL fdatasyncs a batch before it is
# acknowledged (on every replica of RF 3), Redis fsyncs its AOF before replying (appendfsync
# always), etcd fdatasyncs its WAL per Raft batch on every member (its default).
#
#   tests/bench/kv_side_by_side.sh [--build DIR] [--clients C] [--seconds S] [--reps R]
#                                  [--value-size B] [--keys K] [--case rf1_vs_redis|rf3_vs_etcd]
#                                  [--shards S]   (elfin's shard count, default 1024 as shipped)
#                                  [--light-nodes L] (light nodes elfin's clients share, default 1;
#                                                     0: one per client)
# Data goes under $ELFIN_BENCH_KV_DIR (default: the temporary directory), removed at the end.
# Needs redis-server, redis-tools (redis-benchmark), etcd-server and etcd-client (etcdctl).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build="$here/../../build-bench"
clients=16
seconds=10
reps=3
value_size=256
keys=10000
shards=1024
light_nodes=1
only=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --value-size) value_size=$2; shift 2 ;;
    --keys) keys=$2; shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    --light-nodes) light_nodes=$2; shift 2 ;;
    --case) only=$2; shift 2 ;;
    *) echo "kv_side_by_side.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
elfin="$build/services/elfin/elfin"
bench_kv="$build/tests/bench/bench_kv"
for program in "$elfin" "$bench_kv"; do
  [[ -x "$program" ]] || { echo "kv_side_by_side.sh: $program not built (cmake --build $build --target bench_kv)" >&2; exit 2; }
done
for tool in redis-server redis-cli redis-benchmark etcd etcdctl; do
  command -v "$tool" >/dev/null || { echo "kv_side_by_side.sh: $tool is not installed" >&2; exit 2; }
done

root=$(mktemp -d "${ELFIN_BENCH_KV_DIR:-${TMPDIR:-/tmp}}/elfin-kv-side-by-side-XXXXXX")
etcd_pids=()
cleanup() {
  "$elfin" kv cluster stop --dir "$root/elfin" >/dev/null 2>&1 || true
  [[ -f "$root/redis.pid" ]] && kill "$(cat "$root/redis.pid")" 2>/dev/null || true
  for pid in "${etcd_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${etcd_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$root"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# A base port with `count` free ports after it.
free_base() {
  local count=$1
  for _ in $(seq 50); do
    local base
    base=$(free_port)
    local ok=1
    for ((i = 1; i < count; i++)); do
      python3 -c "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1',$((base + i))))" 2>/dev/null || ok=0
    done
    [[ $ok == 1 && $base -lt 60000 ]] && { echo "$base"; return; }
  done
  echo "kv_side_by_side.sh: no free ports" >&2; exit 1
}
wait_for() {  # wait_for SECONDS COMMAND...: until COMMAND succeeds
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || { echo "kv_side_by_side.sh: timed out waiting for: $*" >&2; return 1; }
    sleep 0.2
  done
}

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs));" \
     "uptime:$(uptime | sed 's/.*load average/ load average/')"
echo "# elfin $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?'), $(grep -m1 CMAKE_BUILD_TYPE "$build/CMakeCache.txt" | cut -d= -f2);" \
     "$(redis-server --version | cut -d' ' -f1-3); etcd $(etcd --version | head -1 | awk '{print $3}')"
echo "# data under $root, fsync before every acknowledgement on all sides;" \
     "$clients clients, one request at a time each, value $value_size B, keys bench:NNNNNNNN (14 B) over $keys, uniform; elfin: $shards shards"

if [[ -z "$only" || "$only" == rf1_vs_redis ]]; then
  base=$(free_base 1)
  redis_port=$(free_port)
  "$elfin" kv cluster start --dir "$root/elfin" --count 1 --base-port "$base" --shards "$shards" >/dev/null
  mkdir -p "$root/redis"
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$root/redis" --appendonly yes --appendfsync always \
               --save '' --daemonize yes --pidfile "$root/redis.pid" --logfile "$root/redis.log"
  wait_for 10 redis-cli -p "$redis_port" ping
  "$bench_kv" --case rf1_vs_redis --elfin-pods "tcp://127.0.0.1:$base" --redis "127.0.0.1:$redis_port" \
              --clients "$clients" --value-size "$value_size" --keys "$keys" --seconds "$seconds" --reps "$reps" \
              --light-nodes "$light_nodes" --data-dir "$root" --elfin-pids "$(cat "$root/elfin/pod-1.pid")" --peer-pids "$(cat "$root/redis.pid")"
  # redis-benchmark: the same clients and value size; -r: random keys over the key space.
  requests=$((clients * 2000))
  redis-benchmark -p "$redis_port" -c "$clients" -d "$value_size" -r "$keys" -n "$requests" -t set,get --csv 2>/dev/null |
    awk -F, -v c="$clients" -v d="$value_size" -v l="$(cut -d' ' -f1 /proc/loadavg)" 'NR > 1 {
      gsub(/"/, ""); printf "bench=kv case=redis_benchmark_%s redis_ops_per_s=%s redis_p50_us=%.0f redis_p99_us=%.0f clients=%s value_size=%s load1=%s\n",
      tolower($1), $2, $5 * 1000, $7 * 1000, c, d, l }'
  "$bench_kv" --case hops_rf1 --elfin-pods "tcp://127.0.0.1:$base" --value-size "$value_size" --data-dir "$root" \
              --first-node 9000
  "$elfin" kv cluster stop --dir "$root/elfin" >/dev/null
  kill "$(cat "$root/redis.pid")"; rm -f "$root/redis.pid"
  rm -rf "$root/elfin" "$root/redis"
fi

if [[ -z "$only" || "$only" == rf3_vs_etcd ]]; then
  base=$(free_base 3)
  "$elfin" kv cluster start --dir "$root/elfin" --count 3 --base-port "$base" --shards "$shards" >/dev/null
  cluster=""; endpoints=""
  declare -a client_ports peer_ports
  for m in 1 2 3; do client_ports[m]=$(free_port); peer_ports[m]=$(free_port); done
  for m in 1 2 3; do
    cluster+="${cluster:+,}m$m=http://127.0.0.1:${peer_ports[m]}"
    endpoints+="${endpoints:+,}http://127.0.0.1:${client_ports[m]}"
  done
  for m in 1 2 3; do
    etcd --name "m$m" --data-dir "$root/etcd-$m" \
         --listen-client-urls "http://127.0.0.1:${client_ports[m]}" --advertise-client-urls "http://127.0.0.1:${client_ports[m]}" \
         --listen-peer-urls "http://127.0.0.1:${peer_ports[m]}" --initial-advertise-peer-urls "http://127.0.0.1:${peer_ports[m]}" \
         --initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token elfin-bench \
         --log-level error >"$root/etcd-$m.log" 2>&1 &
    etcd_pids+=($!)
  done
  wait_for 30 etcdctl --endpoints "$endpoints" endpoint health
  "$bench_kv" --case rf3_vs_etcd --elfin-pods "tcp://127.0.0.1:$base,tcp://127.0.0.1:$((base + 1)),tcp://127.0.0.1:$((base + 2))" \
              --etcd "$endpoints" --clients "$clients" --value-size "$value_size" --keys "$keys" --seconds "$seconds" \
              --reps "$reps" --light-nodes "$light_nodes" --data-dir "$root" \
              --elfin-pids "$(cat "$root/elfin/pod-1.pid"),$(cat "$root/elfin/pod-2.pid"),$(cat "$root/elfin/pod-3.pid")" \
              --peer-pids "$(IFS=,; echo "${etcd_pids[*]}")"
  "$bench_kv" --case hops_rf3 --elfin-pods "tcp://127.0.0.1:$base,tcp://127.0.0.1:$((base + 1)),tcp://127.0.0.1:$((base + 2))" \
              --value-size "$value_size" --data-dir "$root" --first-node 9000
fi
