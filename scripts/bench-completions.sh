#!/usr/bin/env bash
# CPU per completion: a load run (scripts/load-run.sh --cpu: 1 000 users, 20 000 alarms, a
# 5 000-alarm spike minute, each fire completed 200 ms later) and the CPU seconds every process
# of the suite but the load generator used from the spike's instant to 10 s after it, divided by
# the spike's alarms. Each of those is one fire (pushed to every member), one completion
# (HTTP request → transaction → events) and its fan-out pushes, so the figure is the cost of a
# whole completion round including its fire. BENCH_FIRES_ONLY=1 first runs the same load with no
# completions (--complete-share 0) and also prints the difference: the completion alone.
#   scripts/bench-completions.sh [chronirctl load options…]
set -euo pipefail
cd "$(dirname "$0")/.."
window_cpu() {
    # Busy CPU seconds of the suite (its services and PostgreSQL) in [+0 s, +10 s] of .run/load/cpu.txt.
    python3 - <<'PY'
import re
line = next(l for l in open(".run/load/cpu.txt") if l.startswith("[ +0.0 s, +10.0 s]"))
cpu = {k: float(v) for k, v in re.findall(r"(\w+) (\d+\.\d+)", line.split("idle")[1].split(None, 1)[1])}
print(sum(v for k, v in cpu.items() if k not in ("chronirctl", "other")))
PY
}
spike_alarms() { python3 -c "import json; print(json.load(open('.run/load/report.json'))['spike'])"; }
base=""
if [ "${BENCH_FIRES_ONLY:-0}" = 1 ]; then
    scripts/load-run.sh --cpu -- --complete-share 0 "$@" > .run/bench-completions-fires.txt
    base=$(window_cpu)
    echo "fires only: $base CPU-s in the 10 s after the spike"
fi
scripts/load-run.sh --cpu -- "$@"
cpu=$(window_cpu)
n=$(spike_alarms)
python3 - "$cpu" "$n" "$base" <<'PY'
import sys
cpu, n, base = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
print(f"suite CPU (services and PostgreSQL), spike to +10 s: {cpu:.2f} CPU-s for {n} alarms")
print(f"CPU per fire + completion + fan-out: {1000 * cpu / n:.2f} ms")
if base:
    print(f"CPU per completion alone (minus the fires-only run's {float(base):.2f} CPU-s): {1000 * (cpu - float(base)) / n:.2f} ms")
PY
