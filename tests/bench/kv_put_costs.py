#!/usr/bin/env python3
"""Where a KV put's time and work go, from the pods' own metrics (see README.md, "Where an RF 3
put's time goes").

Runs `elfin kv bench` (puts only) against a cluster started with `elfin kv cluster start`,
scrapes every pod's /metrics before and after, and prints one line per hop of a put with the
mean time the pods measured for it (elfin_request_time_seconds: the requester's view, so each
hop includes everything after it), then the work per put: messages between pods, Raft messages
and ticks the partition actors took, partitions woken, WAL appends, and the pods' CPU.

  kv_put_costs.py --elfin BUILD/services/elfin/elfin --dir CLUSTER_DIR [--clients 16]
                  [--seconds 10] [--keys 10000] [--fill]
--fill writes every key once first (so every shard exists), as kv_side_by_side.sh does.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import urllib.request


def scrape(url):
    values = {}
    for line in urllib.request.urlopen(url, timeout=10).read().decode().splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^(\S+?)(\{.*\})?\s+(\S+)$", line)
        if m:
            values[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return values


def cpu_ticks(pids):
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime + stime
    return total


def delta(before, after, pattern):
    """The sum over the pods of the metrics whose name matches `pattern`, after - before."""
    out = 0.0
    for url in after:
        for key, value in after[url].items():
            if re.search(pattern, key):
                out += value - before[url].get(key, 0.0)
    return out


def mean_us(before, after, labels):
    total = delta(before, after, r"^elfin_request_time_seconds_sum\{" + labels)
    count = delta(before, after, r"^elfin_request_time_seconds_count\{" + labels)
    return (total / count * 1e6 if count else float("nan")), count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--elfin", required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--keys", type=int, default=10000)
    parser.add_argument("--fill", action="store_true")
    args = parser.parse_args()

    pods = sorted(n for n in os.listdir(args.dir) if re.fullmatch(r"pod-\d+\.pid", n))
    pids = [open(os.path.join(args.dir, n)).read().strip() for n in pods]
    urls = ["http://" + line.split()[-1] + "/metrics" for line in open(os.path.join(args.dir, "metrics")) if line.strip()]
    bench = [args.elfin, "kv", "bench", "--dir", args.dir, "--clients", str(args.clients), "--mix", "0:100",
             "--keys", str(args.keys), "--json"]
    if args.fill:
        subprocess.run(bench + ["--sequential", "--ops", str(args.keys), "--node", "3000"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    load = open("/proc/loadavg").read().split()[0]
    before = {u: scrape(u) for u in urls}
    cpu_before = cpu_ticks(pids)
    run = subprocess.run(bench + ["--duration", str(args.seconds), "--node", "4000"], check=True,
                         capture_output=True, text=True)
    cpu_after = cpu_ticks(pids)
    after = {u: scrape(u) for u in urls}
    result = json.loads(run.stdout)["result"]
    puts = result["ops"]
    seconds = result["seconds"]
    lat = result["latency_ns"]

    propose, n_propose = mean_us(before, after, r'actor_group="kv",message="Propose"')
    forward, n_forward = mean_us(before, after, r'actor_group="kv",message="ShardRequest"')
    wal, n_wal = mean_us(before, after, r'actor_group="partitions",message="AppendBatch"')
    hops = [
        ("client_put", lat["mean"] / 1e3, puts,
         "the client's put (elfin kv bench): light node, TCP, the pod, back; p50 %.0f us, p99 %.0f us"
         % (lat["p50"] / 1e3, lat["p99"] / 1e3)),
        ("front_to_other_front", forward, n_forward,
         "a front's ShardRequest to the leader's pod's front (the client's pod does not lead the shard)"),
        ("front_to_partition", propose, n_propose,
         "a front's Propose to its local partition leader: append, replicate, WAL on a majority, commit, apply"),
        ("partition_to_wal", wal, n_wal, "a replica's AppendBatch to its WAL actor, answered once fdatasynced"),
    ]
    for name, us, count, what in hops:
        print(f"bench=kv case=put_costs hop={name} mean_us={us:.0f} per_put={count / max(puts, 1):.2f} what=\"{what}\"")

    pod_peers = "|".join(str(n) for n in range(1, len(pids) + 1))

    def per_put(pattern):
        return delta(before, after, pattern) / max(puts, 1)

    work = {
        "pod_to_pod_messages": per_put(r'^elfin_network_sent_messages_total\{.*peer="(' + pod_peers + ')"'),
        "raft_messages_stepped": per_put(r'^elfin_message_handling_time_seconds_count\{actor_group="partitions",message="RaftMessage"'),
        "ticks": per_put(r'^elfin_message_handling_time_seconds_count\{actor_group="partitions",message="Tick"'),
        "wakes": per_put(r'^elfin_message_handling_time_seconds_count\{actor_group="partitions",message="Unwatch"'),
        "wal_appends": per_put(r'^elfin_message_handling_time_seconds_count\{actor_group="wal",message="AppendBatch"'),
    }
    cpu_us = (cpu_after - cpu_before) / os.sysconf("SC_CLK_TCK") * 1e6 / max(puts, 1)
    print("bench=kv case=put_costs puts_per_s={:.0f} p50_us={:.0f} p99_us={:.0f} pods={} {} pod_cpu_us_per_put={:.0f} "
          "load1_before={} load1_after={}".format(
              puts / seconds, lat["p50"] / 1e3, lat["p99"] / 1e3, len(pids),
              " ".join(f"{k}_per_put={v:.2f}" for k, v in work.items()), cpu_us, load,
              open("/proc/loadavg").read().split()[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
