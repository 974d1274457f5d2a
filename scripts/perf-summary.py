#!/usr/bin/env python3
"""Summarises a system-wide `perf record -g` of the suite per process.

    perf script -i perf.data -F comm,pid,tid,ip,sym | scripts/perf-summary.py PIDS_DIR [TOP=25]

PIDS_DIR holds the suite's `<service>.pid` files (`.run/pids`). Prints each process's share of
the samples, then for each service its top frames by inclusive share (a frame counted once per
sample), leaving out the runtime, NIO, libc and kernel frames that every process shares so the
frames of the project's own code stand out (demangled with `swift demangle` when it is on PATH)."""
import collections
import os
import re
import sys

pids_dir = sys.argv[1]
top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
names = {}
for f in os.listdir(pids_dir):
    if f.endswith(".pid"):
        try:
            names[int(open(os.path.join(pids_dir, f)).read().strip())] = f[:-4]
        except ValueError:
            pass
SHARED = re.compile(r"NIO|Channel|Selector|Socket\.|tcp_|ip_|swift::|_raw_|^do_|sys_|dispatch|thread|Loop|skb|softirq|xmit|^__|"
                    r"net_rx|process_backlog|exit_to|wake|sysvec|fdget|fput|finish_task|getCache|^destroy|^outlined|Dictionary|Array|"
                    r"Thread|partial apply|thunk|swift_|entry_|unknown|protocol witness|^\$ss|schedule|irq|futex|epoll|poll|"
                    r"KeyedEncodingContainer|KeyedDecodingContainer|ContainerBox|malloc|free|memmove|memcpy|vfs_|ksys_|sock_")
samples = collections.Counter()
inclusive = collections.defaultdict(collections.Counter)
current, seen = None, set()
for line in sys.stdin:
    if not line.strip():
        current = None
        continue
    if not line.startswith((" ", "\t")):
        m = re.match(r"\s*(\S.*?)\s+(\d+)/(\d+)", line)
        if not m:
            current = None
            continue
        comm, pid = m.group(1), int(m.group(2))
        current = names.get(pid) or ("postgres" if "postgres" in comm else "idle" if pid == 0 else "chronirctl/other")
        samples[current] += 1
        seen = set()
        continue
    if current is None:
        continue
    parts = line.strip().split(None, 1)
    sym = re.sub(r"\s*\(.*\)$", "", re.sub(r"\+0x[0-9a-f]+", "", parts[1] if len(parts) > 1 else "?"))
    if sym not in seen:
        seen.add(sym)
        inclusive[current][sym] += 1
# Demangle every Swift symbol seen at once (swift demangle reads them on stdin), when available.
import shutil
import subprocess
if shutil.which("swift"):
    symbols = sorted({s for c in inclusive.values() for s in c})
    out = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(symbols), capture_output=True, text=True).stdout.split("\n")
    if len(out) >= len(symbols):
        plain = dict(zip(symbols, out))
        for name in inclusive:
            demangled = collections.Counter()
            for sym, k in inclusive[name].items():
                demangled[plain[sym]] = max(demangled[plain[sym]], k)
            inclusive[name] = demangled
total = sum(samples.values()) or 1
print("share of samples by process")
for name, n in samples.most_common():
    print(f"  {name:18s} {100 * n / total:5.1f} %")
for name, n in samples.most_common():
    if name in ("idle", "postgres", "chronirctl/other"):
        continue
    print(f"\n{name} ({100 * n / total:.1f} % of samples): top frames of its own code, inclusive")
    shown = 0
    for sym, k in inclusive[name].most_common():
        if SHARED.search(sym):
            continue
        print(f"  {100 * k / n:5.1f} %  {sym[:150]}")
        shown += 1
        if shown == top:
            break
