#!/usr/bin/env python3
"""The soak's verdict (scripts/soak.sh): reads what the run left in its directory and prints
the fault table, every problem found, and the last line

    soak: planned P, delivered D, lost L, duplicated U, early E, misrouted M, late T,
          faults F (C classes), recovered R, recovery p50 X s, p99 Y s

    scripts/soak_verdict.py DIR LOAD_STATUS LATE_BOUND_SECONDS

Exit 0 when nothing was lost, repeated, early, misrouted or late, every episode recovered, the
load's own check passed (LOAD_STATUS 0) and the database checks found nothing; 1 otherwise.
Every count is per receiver and per id (chronirctl load's audit), never a difference of totals.
"""
import json
import os
import sys


def percentile(values, p):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))]


def went_back(path):
    """(key, earlier, later) for every head or checkpoint that went back between samples."""
    last, out = {}, []
    if not os.path.exists(path):
        return out
    for line in open(path):
        parts = line.split()
        if len(parts) != 5:
            continue
        t, kind, schema, stream, value = parts
        key = (kind, schema, stream)
        v = int(value)
        if key in last and v < last[key][1]:
            out.append((key, last[key], (int(t), v)))
        last[key] = (int(t), v)
    return out


def main():
    out, load_status, late_bound = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    problems = []
    try:
        r = json.load(open(f"{out}/report.json"))
    except (OSError, ValueError) as e:
        r = None
        problems.append(f"no load report ({e})")
    p = r["pushes"] if r else {}
    a = (r or {}).get("audit") or {}
    fire, comp = a.get("fire", {}), a.get("completion", {})
    planned = fire.get("expected", 0) + comp.get("expected", 0)
    delivered = fire.get("received", 0) + comp.get("received", 0)
    lost = fire.get("lost", 0) + comp.get("lost", 0) + a.get("otherRowsNotOnStream", 0) + a.get("plannedNotAccepted", 0)
    duplicated = a.get("repeatedFrames", 0) + fire.get("unexpected", 0) + comp.get("unexpected", 0)
    early = p.get("earlyFirePushes", 0)
    misrouted = a.get("misrouted", 0) + a.get("outOfOrderFrames", 0)
    latest = (r or {}).get("fireLatenessMs", {}).get("max", 0.0) / 1000
    late = sum(1 for m in (r or {}).get("byMinute", []) if m["max"] / 1000 > late_bound)
    if r and not a:
        problems.append("the load report has no audit: nothing was judged per receiver")
    if r and planned == 0:
        problems.append("nothing was planned")
    if late:
        problems.append(f"{late} due minutes had a fire later than {late_bound:.0f} s (latest {latest:.1f} s)")
    if load_status != 0:
        reasons = [l.strip() for l in open(f"{out}/progress.log") if "load check failed" in l] if os.path.exists(f"{out}/progress.log") else []
        problems.append(f"chronirctl load exited {load_status}" + (f": {reasons[-1]}" if reasons else ""))

    # Episodes: class recovery-seconds|unrecovered victim stage
    episodes = [l.split() for l in open(f"{out}/recovery.txt") if l.strip()] if os.path.exists(f"{out}/recovery.txt") else []
    scheduled = sum(1 for l in open(f"{out}/schedule.txt") if l.strip()) if os.path.exists(f"{out}/schedule.txt") else 0
    skipped = [e for e in episodes if e[1] == "skipped"]
    for e in skipped:
        print(f"  note: the {e[0]} episode of {e[2]} ({e[3]}) was skipped: this machine does not allow it", file=sys.stderr)
    episodes = [e for e in episodes if e[1] != "skipped"]
    scheduled -= len(skipped)
    if len(episodes) != scheduled:
        problems.append(f"{scheduled} episodes scheduled, {len(episodes)} ran to the end")
    unrecovered = [e for e in episodes if e[1] == "unrecovered"]
    for e in unrecovered:
        problems.append(f"{e[0]} of {e[2]} ({e[3]}) did not recover within 60 s")
    times = [float(e[1]) for e in episodes if e[1] != "unrecovered"]
    by_class = {}
    for e in episodes:
        by_class.setdefault(e[0], []).append(e)
    if episodes:
        print(f"  {'class':9} {'episodes':>8} {'recovered':>9} {'p50 s':>7} {'p99 s':>7} {'max s':>7}  victims", file=sys.stderr)
    for c, es in sorted(by_class.items()):
        ok = [float(e[1]) for e in es if e[1] != "unrecovered"]
        victims = ", ".join(sorted({e[2] for e in es}))
        print(f"  {c:9} {len(es):8} {len(ok):9} {percentile(ok, 50):7.1f} {percentile(ok, 99):7.1f} {max(ok) if ok else 0:7.1f}  {victims}",
              file=sys.stderr)

    for key, (t0, v0), (t1, v1) in went_back(f"{out}/positions.txt"):
        problems.append(f"{key[0]} {key[1]}/{key[2]} went back from {v0} to {v1} between {t0} and {t1}")
    if os.path.exists(f"{out}/db-problems.txt"):
        problems += [f"database: {l.strip()}" for l in open(f"{out}/db-problems.txt") if l.strip()]
    if r:
        for e in a.get("examples", [])[:8]:
            print(f"  audit: {e}", file=sys.stderr)
    for prob in problems:
        print(f"  problem: {prob}", file=sys.stderr)
    print(f"soak: planned {planned}, delivered {delivered}, lost {lost}, duplicated {duplicated}, early {early}, "
          f"misrouted {misrouted}, late {late}, faults {len(episodes)} ({len(by_class)} classes), "
          f"recovered {len(episodes) - len(unrecovered)}, recovery p50 {percentile(times, 50):.1f} s, p99 {percentile(times, 99):.1f} s")
    ok = not problems and lost == 0 and duplicated == 0 and early == 0 and misrouted == 0 and late == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
