#!/usr/bin/env bash
# Fails if a node a test started outlived it: a process of this build's `elfin run <topology>`
# whose topology file is gone (the test removed its directory, so nobody will stop it). Waits a
# few seconds for nodes still shutting down, then names each orphan with its log's last lines and
# kills it, so that one leak does not pile up over runs.
# Usage: no_orphan_nodes.sh <path of the elfin binary>
set -u
elfin="$1"
# The binary's path as a literal in pgrep's regular expression.
pattern=$(printf '%s' "$elfin" | sed 's/[][\\.*^$+?(){}|]/\\&/g')

orphans() {
  local pid
  for pid in $(pgrep -f -x "$pattern run .*" || true); do
    # The cmdline is NUL-separated: elfin, run, <topology>, ...
    local topology
    topology=$(tr '\0' '\n' < "/proc/$pid/cmdline" 2>/dev/null | sed -n 3p)
    [[ -n "$topology" && ! -e "$topology" ]] && echo "$pid"
  done
}

for _ in $(seq 1 100); do
  [[ -z "$(orphans)" ]] && exit 0
  sleep 0.1
done
for pid in $(orphans); do
  echo "orphaned node: pid $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null)"
  echo "  its log ($(readlink "/proc/$pid/fd/1" 2>/dev/null)), last lines:"
  tail -n 5 "/proc/$pid/fd/1" 2>/dev/null | sed 's/^/    /'
  kill -KILL "$pid" 2>/dev/null
done
exit 1
