// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "chronir-backend",
    platforms: [.macOS(.v15)],
    products: [],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // MARK: Shared libraries
        .systemLibrary(
            name: "CZMQ",
            path: "Shared/CZMQ",
            pkgConfig: "libzmq",
            providers: [.apt(["libzmq3-dev"])]
        ),
        .target(
            name: "ZMQ",
            dependencies: [
                "CZMQ",
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            path: "Shared/ZMQ",
            swiftSettings: swiftSettings
        ),

        .target(
            name: "Messaging",
            dependencies: [
                "ZMQ",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/Messaging",
            swiftSettings: swiftSettings
        ),

        // MARK: Tests
        .testTarget(
            name: "MessagingTests",
            dependencies: ["Messaging", "ZMQ"],
            path: "Tests/MessagingTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ZMQTests",
            dependencies: ["ZMQ"],
            path: "Tests/ZMQTests",
            swiftSettings: swiftSettings
        ),
    ]
)
