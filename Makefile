# The two commands: `make run` (the suite on a local PostgreSQL) and `make test`.
# The inner loop: `make core` (tier 0, the pure modules, minutes from clean) and `make check`
# (tier 0, then the suites of what changed); docs/testing.md says which to run when.
.PHONY: run test check core build clean benchmarks compose-test contract-test

run:
	scripts/run.sh

test:
	scripts/test.sh

# Tier 0: Core's own package and test binary (Wire, Schedules, Contracts, TimingWheel); no
# service, PostgreSQL, NIO or ZeroMQ is built. The venv is for the RRULE cross-check's dateutil.
core:
	python=$$(scripts/test-venv.sh) && CHRONIR_TEST_PYTHON=$$python swift test --package-path Core

# Tier 0, then tiers 1 and 2 of the services and libraries a change touches (scripts/check.sh).
check:
	scripts/check.sh

build:
	scripts/deps.sh
	swift build

# The cached build plan of Benchmarks/ lists the root package's files as they were: drop it, so a
# file added to the root package is compiled (SwiftPM does not notice it through the path dependency).
benchmarks:
	rm -f Benchmarks/.build/*/description.json
	cd Benchmarks && swift package --disable-sandbox benchmark && swift build -c release --product rpc-bench && .build/release/rpc-bench

clean:
	rm -rf .build .run Core/.build

# The compose stack end to end with podman (installs podman; see docs/operations.md).
compose-test:
	scripts/compose-test.sh

# schemathesis against the running suite: every phase, every check, as a signed-in user.
contract-test:
	scripts/contract-test.sh
