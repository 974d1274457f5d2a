#!/usr/bin/env python3
"""CPU time per process of the suite around an instant (a load run's spike minute).

    scripts/cpu-window.py INSTANT_UNIX_SECONDS [SECONDS_AFTER=10]

Waits until one second before the instant, reads /proc every 100 ms until SECONDS_AFTER past it,
and prints, per window, the CPU seconds each process group used (postgres, each service,
chronirctl, other) and how much of the machine stayed idle. A window whose busy seconds equal
its wall time × cores was CPU-bound. A last line adds what processes that exited within the
window used (PostgreSQL's autovacuum workers, closed backends), which the windows leave out.
Linux only (reads /proc)."""
import os
import sys
import time

NAMES = ("accounts", "alarms", "scheduler", "notifications", "invitations", "billing", "gateway", "chronirctl", "postgres")
HZ = os.sysconf("SC_CLK_TCK")


def sample():
    groups = {}
    pids = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            comm = open(f"/proc/{pid}/comm").read().strip()
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        name = next((n for n in NAMES if comm.startswith(n)), "other")
        used = (int(fields[11]) + int(fields[12])) / HZ
        groups[name] = groups.get(name, 0) + used
        pids[pid] = (name, used)
    cpu = list(map(int, open("/proc/stat").readline().split()[1:]))
    return {"t": time.time(), "groups": groups, "pids": pids, "idle": (cpu[3] + cpu[4]) / HZ}


def main():
    instant = float(sys.argv[1])
    after = float(sys.argv[2]) if len(sys.argv) > 2 else 10
    while time.time() < instant - 1:
        time.sleep(0.05)
    rows = []
    while time.time() < instant + after:
        rows.append(sample())
        time.sleep(0.1)

    def nearest(t):
        return min(rows, key=lambda r: abs(r["t"] - t))

    cores = os.cpu_count() or 1
    edges = [-1, 0, 0.5, 1, 1.5, 2, 3, 4, 6, after]
    edges = sorted({e for e in edges if e <= after})
    windows = list(zip(edges, edges[1:])) + [(0, after)]
    print(f"CPU seconds by process around {time.strftime('%H:%M:%S', time.gmtime(instant))} UTC ({cores} cores)")
    for lo, hi in windows:
        a, b = nearest(instant + lo), nearest(instant + hi)
        # Per process: what it used between a and b (all of it when it started in the window).
        # A process that exited in the window (a PostgreSQL backend whose connection closed)
        # drops out of b and its last stretch is not counted; summing per group instead made a
        # group's total fall and read as 0.
        used = {}
        for pid, (name, cpu) in b["pids"].items():
            before = a["pids"].get(pid)
            used[name] = used.get(name, 0.0) + max(0.0, cpu - (before[1] if before and before[0] == name else 0.0))
        wall = b["t"] - a["t"]
        parts = " ".join(f"{k} {v:.2f}" for k, v in sorted(used.items(), key=lambda kv: -kv[1]) if v >= 0.005)
        print(f"[{lo:+5.1f} s, {hi:+5.1f} s]  wall {wall:5.2f}  busy {sum(used.values()):5.2f}  idle {b['idle'] - a['idle']:5.2f}   {parts}")
    # The processes the windows above leave out: those that exited before the window's end
    # (PostgreSQL's autovacuum workers, backends of closed connections), up to their last sample.
    a, b = nearest(instant), nearest(instant + after)
    last = {}
    for r in rows:
        if a["t"] <= r["t"] <= b["t"]:
            for pid, v in r["pids"].items():
                if pid not in b["pids"]:
                    last[pid] = v
    gone = {}
    for pid, (name, cpu) in last.items():
        before = a["pids"].get(pid)
        gone[name] = gone.get(name, 0.0) + max(0.0, cpu - (before[1] if before and before[0] == name else 0.0))
    parts = " ".join(f"{k} {v:.2f}" for k, v in sorted(gone.items(), key=lambda kv: -kv[1]) if v >= 0.005) or "none"
    print(f"exited within [+0.0 s, {after:+.1f} s] (not in the lines above): {parts}")


if __name__ == "__main__":
    main()
