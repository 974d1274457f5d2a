# The two commands: `make run` (the suite on a local PostgreSQL) and `make test`.
.PHONY: run test build clean benchmarks compose-test contract-test

run:
	scripts/run.sh

test:
	scripts/test.sh

build:
	scripts/deps.sh
	swift build

# The cached build plan of Benchmarks/ lists the root package's files as they were: drop it, so a
# file added to the root package is compiled (SwiftPM does not notice it through the path dependency).
benchmarks:
	rm -f Benchmarks/.build/*/description.json
	cd Benchmarks && swift package --disable-sandbox benchmark && swift build -c release --product rpc-bench && .build/release/rpc-bench

clean:
	rm -rf .build .run

# The compose stack end to end with podman (installs podman; see docs/operations.md).
compose-test:
	scripts/compose-test.sh

# schemathesis against the running suite: every phase, every check, as a signed-in user.
contract-test:
	scripts/contract-test.sh
