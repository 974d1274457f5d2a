// swift-tools-version:6.2
// Benchmarks of the Chronir backend (ordo-one/benchmark). Run with `make benchmarks`
// or `cd Benchmarks && swift package benchmark`. Kept out of the main package so
// `make test` does not build the benchmark tooling.
import class Foundation.ProcessInfo
import struct Foundation.URL
import PackageDescription

// The root package is referenced by path; its identity is its directory's name.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let rootIdentity = root.lastPathComponent.lowercased()

let package = Package(
    name: "chronir-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(path: "../Core"),   // Schedules, TimingWheel (tier 0)
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        // RuntimeInterposer (the default's other trait) needs a package not available here.
        // The malloc interposer it needs adds a cost to every allocation, so the messaging
        // figures are also taken by `rpc-bench`, a plain executable (see MessagingBench).
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
    ],
    targets: [
        .systemLibrary(name: "CZMQBench", path: "Sources/CZMQBench", pkgConfig: "libzmq"),
        .executableTarget(
            name: "ScheduleBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Schedules", package: "core"),
            ],
            path: "Benchmarks/ScheduleBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "TimingWheelBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "TimingWheel", package: "core"),
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            path: "Benchmarks/TimingWheelBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .target(
            name: "MessagingBench",
            dependencies: [
                "CZMQBench",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Messaging", package: rootIdentity),
                .product(name: "ZMQ", package: rootIdentity),
            ],
            path: "Sources/MessagingBench"
        ),
        .executableTarget(
            name: "rpc-bench",
            dependencies: ["MessagingBench"],
            path: "Sources/RPCBench"
        ),
        .executableTarget(
            name: "MessagingBenchmarks",
            dependencies: [
                "MessagingBench",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/MessagingBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
