#!/usr/bin/env python3
"""Runs the Swift tests in lanes: the suites side by side in several test processes, then the
suites that assert time or inject faults one at a time on a quiet machine (docs/testing.md).

    scripts/test-lanes.py [--lanes N] [--filter REGEX] [--out DIR] [--serial-only | --lanes-only]

Tier 1 (lanes): N worker threads (default CHRONIR_TEST_LANES or 3) each take the longest suite
left (times from Tests/suite-times.tsv, unknown suites first) and run it in a test process of its
own, `<tests binary> --filter '^Module.Suite/'`, with a port range of the lane's own
(CHRONIR_TEST_PORTS, read by freePort) so two lanes never start services on one port. Every
test makes its own database, so lanes share only the PostgreSQL cluster.
Tier 2 (serial): the suites listed in Tests/serial-suites.txt, each in its own process, one at a
time, after the lanes have finished: they measure time, stop processes or the database, or fill
the machine, and two of them side by side would measure each other.

A suite's process that runs past CHRONIR_TEST_SUITE_DEADLINE seconds (default 900) is killed
with every process it started (its session) and counts as failed; SIGINT and SIGTERM kill the
running suites the same way. Every process writes xunit (`<out>/xunit/<suite>.xml`) and its output (`<out>/logs/<suite>.log`);
`scripts/test-times` prints the slowest suites and the tiers' totals from them. Exits 1 when any
suite failed, with the tail of each failed suite's output. The binary is built first
(`swift build --build-tests`, which `make test` does).
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def port_range() -> tuple[int, int]:
    """15000 up to just below the kernel's ephemeral range (freePort's default range)."""
    try:
        ephemeral = int(pathlib.Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral = 32768
    return 15000, max(ephemeral, 16000) - 1


PORT_LOW, PORT_HIGH = port_range()


def kill_session(sid: int) -> None:
    """SIGKILLs every process of session `sid`: a suite's test process and every process it
    started (Foundation's Process puts each child in a process group of its own, but they stay
    in the suite's session)."""
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid:   # after "pid (comm)": state ppid pgrp session …
                os.kill(int(stat.parent.name), signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            pass


def tests_binary() -> pathlib.Path:
    bin_dir = subprocess.check_output(["swift", "build", "--show-bin-path"], cwd=ROOT, text=True).strip()
    binary = pathlib.Path(bin_dir) / "chronir-backendPackageTests.xctest"
    if not binary.exists():
        sys.exit(f"test-lanes: {binary} is not built; run `swift build --build-tests` first")
    return binary


def list_tests(binary: pathlib.Path) -> list[str]:
    """Every test id (`Module.Type/test()`); its suite is the id up to the first '/'."""
    out = subprocess.run([str(binary), "--testing-library", "swift-testing", "--list-tests"],
                         cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"test-lanes: listing the tests failed ({out.returncode}):\n{out.stderr[-2000:]}")
    ids = [line.strip() for line in out.stdout.splitlines()
           if "/" in line and not line.startswith("[") and " " not in line.split("/")[0]]
    if not ids:
        sys.exit(f"test-lanes: no tests listed by {binary}:\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return ids


def read_times(path: pathlib.Path) -> dict[str, float]:
    times: dict[str, float] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            parts = line.split("\t")
            if len(parts) >= 2 and not line.startswith("#"):
                try:
                    times[parts[0]] = float(parts[1])
                except ValueError:
                    pass
    return times


def read_serial(path: pathlib.Path) -> list[str]:
    """Suites (`Module.Type`) or single tests (`Module.Type/test()`), one per line; '#' starts a
    comment (the reason it runs alone)."""
    names = []
    for line in path.read_text().splitlines():
        name = line.split("#", 1)[0].strip()
        if name:
            names.append(name)
    return names


def file_name(unit: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", unit.replace("/", "."))


class Run:
    """The suites still to run and what has come of the others, shared by the lane threads."""

    def __init__(self, binary: pathlib.Path, out: pathlib.Path, tests: dict[str, int]):
        self.binary, self.out, self.tests = binary, out, tests
        self.lock = threading.Lock()
        self.results: list[tuple[str, str, float, int, int]] = []   # suite, tier, seconds, lane, rc
        self.started = time.monotonic()
        self.deadline = float(os.environ.get("CHRONIR_TEST_SUITE_DEADLINE", "900"))
        self.live: set[int] = set()   # sessions of the suites running now

    def stop_all(self, signum: int, _frame) -> None:
        """SIGINT/SIGTERM: the suites run in sessions of their own, out of reach of the
        terminal's or CI's signal, so they are killed here before exiting."""
        with self.lock:
            live = list(self.live)
        for sid in live:
            kill_session(sid)
        print(f"test-lanes: stopped by signal {signum}; {len(live)} running suites killed", flush=True)
        os._exit(128 + signum)

    def run_suite(self, suite: str, tier: str, lane: int, ports: tuple[int, int] | None,
                  skip: list[str] = ()) -> int:
        """Runs one unit: a suite (`Module.Type`, less the tests in `skip`) or one test id."""
        env = dict(os.environ)
        if ports:
            env["CHRONIR_TEST_PORTS"] = f"{ports[0]}-{ports[1]}"
        name = file_name(suite)
        log = self.out / "logs" / f"{name}.log"
        xunit = self.out / "xunit" / f"{name}.xml"
        # Tests inside a suite run one after another, as `swift test --no-parallel` ran them.
        pattern = f"^{re.escape(suite)}(/|$)" if "/" in suite else f"^{re.escape(suite)}/"
        cmd = [str(self.binary), "--testing-library", "swift-testing", "--no-parallel",
               "--filter", pattern, "--xunit-output", str(xunit)]
        for test in skip:
            cmd += ["--skip", f"^{re.escape(test)}(/|$)"]
        t0 = time.monotonic()
        with open(log, "w") as f:
            # A process group of its own, so a suite past its deadline is ended with the
            # services and tools it started.
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
            with self.lock:
                self.live.add(proc.pid)
            try:
                rc = proc.wait(timeout=self.deadline)
            except subprocess.TimeoutExpired:
                kill_session(proc.pid)
                proc.wait()
                f.write(f"\ntest-lanes: {suite} ran past its deadline of {self.deadline:.0f} s "
                        f"(CHRONIR_TEST_SUITE_DEADLINE) and was killed\n")
                rc = 124
        took = time.monotonic() - t0
        kill_session(proc.pid)   # anything the suite left running
        with self.lock:
            self.live.discard(proc.pid)
            self.results.append((suite, tier, took, lane, rc))
            done = len(self.results)
            status = "ok  " if rc == 0 else f"FAIL (exit {rc})"
            print(f"[{time.monotonic() - self.started:6.0f} s] {tier}{'' if lane < 0 else f' lane {lane}'}: "
                  f"{status} {suite} ({self.tests.get(suite, 0) - len(skip)} tests, {took:.1f} s) [{done} done]", flush=True)
        return rc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lanes", type=int, default=int(os.environ.get("CHRONIR_TEST_LANES", "3")))
    ap.add_argument("--filter", help="only suites whose name matches this regular expression")
    ap.add_argument("--out", default=str(ROOT / ".run" / "test-lanes"))
    ap.add_argument("--times", default=str(ROOT / "Tests" / "suite-times.tsv"))
    ap.add_argument("--serial", default=str(ROOT / "Tests" / "serial-suites.txt"))
    only = ap.add_mutually_exclusive_group()
    only.add_argument("--lanes-only", action="store_true", help="skip the serial tier")
    only.add_argument("--serial-only", action="store_true", help="skip the lanes")
    args = ap.parse_args()
    if not 1 <= args.lanes <= (PORT_HIGH - PORT_LOW + 1) // 500:
        sys.exit(f"test-lanes: --lanes must be between 1 and {(PORT_HIGH - PORT_LOW + 1) // 500} "
                 f"(each lane takes at least 500 of the ports {PORT_LOW}–{PORT_HIGH})")

    out = pathlib.Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    (out / "logs").mkdir(parents=True)
    (out / "xunit").mkdir()
    binary = tests_binary()
    ids = list_tests(binary)
    counts: dict[str, int] = {}
    for test in ids:
        counts[test.split("/")[0]] = counts.get(test.split("/")[0], 0) + 1
    serial_names = read_serial(pathlib.Path(args.serial))
    unknown = [s for s in serial_names if s not in counts and s not in ids]
    if unknown:
        sys.exit(f"test-lanes: {args.serial} names what does not exist: {', '.join(unknown)}")
    for test in serial_names:
        if "/" in test:
            counts[test] = 1
    pattern = re.compile(args.filter) if args.filter else None
    chosen = [s for s in counts if "/" not in s and (pattern is None or pattern.search(s))]
    if not chosen:
        sys.exit(f"test-lanes: no suite matches {args.filter!r}")
    times = read_times(pathlib.Path(args.times))
    # Serial units: whole suites, and single tests of suites that otherwise run in the lanes.
    serial = [s for s in serial_names if s.split("/")[0] in chosen]
    parallel = [s for s in chosen if s not in serial]
    skips = {s: [t for t in serial if t.startswith(s + "/")] for s in parallel}
    if args.serial_only:
        parallel = []
    if args.lanes_only:
        serial = []
    # Longest first (unknown ones first of all: they may be long), so the lanes end together.
    parallel.sort(key=lambda s: -times.get(s, 1e9))
    run = Run(binary, out, counts)
    signal.signal(signal.SIGINT, run.stop_all)
    signal.signal(signal.SIGTERM, run.stop_all)
    tests_in = sum(counts[s] - len(skips[s]) for s in parallel) + sum(counts[s] for s in serial)
    print(f"test-lanes: {len(parallel)} suites in {args.lanes} lanes, then {len(serial)} one at a time "
          f"({tests_in} tests; logs and xunit in {out})", flush=True)

    queue = list(parallel)
    queue_lock = threading.Lock()
    width = (PORT_HIGH - PORT_LOW + 1) // args.lanes

    def lane(k: int) -> None:
        ports = (PORT_LOW + k * width, PORT_LOW + (k + 1) * width - 1)
        while True:
            with queue_lock:
                if not queue:
                    return
                suite = queue.pop(0)
            run.run_suite(suite, "lanes", k, ports, skips.get(suite, []))

    threads = [threading.Thread(target=lane, args=(k,)) for k in range(min(args.lanes, len(parallel)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lanes_took = time.monotonic() - run.started
    for suite in serial:
        run.run_suite(suite, "serial", -1, None)
    total = time.monotonic() - run.started

    failed = [r for r in run.results if r[4] != 0]
    for suite, _, _, _, rc in failed:
        print(f"\n===== {suite} failed (exit {rc}); the end of {out / 'logs' / (file_name(suite) + '.log')}:", flush=True)
        lines = (out / "logs" / f"{file_name(suite)}.log").read_text(errors="replace").splitlines()
        interesting = [ln for ln in lines if "✘" in ln or "recorded an issue" in ln or "error" in ln.lower()]
        print("\n".join((interesting or lines)[-40:]))
    print(f"\ntest-lanes: {len(run.results)} suites, {len(failed)} failed; lanes {lanes_took:.0f} s, "
          f"serial {total - lanes_took:.0f} s, {total:.0f} s in all", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
