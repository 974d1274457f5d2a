// swift-tools-version:6.2
import PackageDescription

/// A module of the Core package (tier 0, `Core/`: pure, tested on its own; docs/testing.md).
func core(_ name: String) -> Target.Dependency { .product(name: name, package: "core") }

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

/// What the service test targets and their harness use: every service, the shared libraries,
/// and the clients and servers the tests stand up.
let suiteTestDependencies: [Target.Dependency] = [
    "Support", "ServiceKit", "Messaging", "Persistence", "Outbox", core("Contracts"), "AccountsService", "GatewayService",
    core("AlarmsCore"), core("NotificationsCore"), core("AccountsCore"), core("BillingCore"), core("InvitationsCore"),
    core("SchedulerCore"), "AlarmsService", "SchedulerService", "LoadFixtures", "NotificationsService", "InvitationsService", "BillingService", core("Schedules"), "ZMQ",
    .product(name: "AsyncHTTPClient", package: "async-http-client"),
    .product(name: "Hummingbird", package: "hummingbird"),
    .product(name: "HummingbirdHTTP2", package: "hummingbird"),
    .product(name: "JWTKit", package: "jwt-kit"),
    .product(name: "X509", package: "swift-certificates"),
    .product(name: "SwiftASN1", package: "swift-asn1"),
    .product(name: "Crypto", package: "swift-crypto"),
    .product(name: "CryptoExtras", package: "swift-crypto"),
    .product(name: "NIOSSL", package: "swift-nio-ssl"),
    .product(name: "NIOHTTP1", package: "swift-nio"),
    .product(name: "NIOCore", package: "swift-nio"),
]

/// A test target of `Tests/<name>` on the shared harness (SuiteSupport).
func suiteTests(_ name: String, also: [Target.Dependency] = []) -> Target {
    .testTarget(name: name, dependencies: ["SuiteSupport"] + also + suiteTestDependencies, path: "Tests/\(name)",
                swiftSettings: swiftSettings)
}

let package = Package(
    name: "chronir-backend",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ZMQ", targets: ["ZMQ"]),
        .library(name: "Messaging", targets: ["Messaging"]),
        .executable(name: "accounts", targets: ["accounts"]),
        .executable(name: "gateway", targets: ["gateway"]),
        .executable(name: "chronirctl", targets: ["chronirctl"]),
        .executable(name: "alarms", targets: ["alarms"]),
        .executable(name: "scheduler", targets: ["scheduler"]),
        .executable(name: "notifications", targets: ["notifications"]),
        .executable(name: "invitations", targets: ["invitations"]),
        .executable(name: "billing", targets: ["billing"]),
    ],
    dependencies: [
        // Tier 0: the pure modules (Wire, Schedules, Contracts, TimingWheel) and their tests.
        .package(path: "Core"),
        .package(url: "https://github.com/apple/swift-collections.git", exact: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", exact: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", exact: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio.git", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", exact: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", exact: "2.4.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", exact: "5.8.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", exact: "0.2.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", exact: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", exact: "1.7.4"),
        // Transitive dependencies, pinned here too so that every build resolves the same graph
        // (Package.resolved cannot be committed on these machines; see docs/architecture.md).
        .package(url: "https://github.com/apple/swift-algorithms.git", exact: "1.2.1"),
        .package(url: "https://github.com/apple/swift-async-algorithms.git", exact: "1.1.4"),
        .package(url: "https://github.com/apple/swift-atomics.git", exact: "1.3.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", exact: "1.4.0"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64.git", exact: "1.2.0"),
        .package(url: "https://github.com/apple/swift-http-structured-headers.git", exact: "1.7.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", exact: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", exact: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", exact: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-transport-services.git", exact: "1.28.0"),
        .package(url: "https://github.com/apple/swift-numerics.git", exact: "1.1.1"),
        .package(url: "https://github.com/apple/swift-service-context.git", exact: "1.5.1"),
        .package(url: "https://github.com/apple/swift-system.git", exact: "1.8.1"),
    ],
    targets: [
        // MARK: Build version
        .plugin(name: "BuildVersion", capability: .buildTool(), path: "Plugins/BuildVersion"),
        .target(name: "BuildInfo", path: "Shared/BuildInfo", swiftSettings: swiftSettings, plugins: ["BuildVersion"]),
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
                core("Wire"), core("StreamCore"), "ZMQ",
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

        .target(
            name: "Persistence",
            dependencies: [
                core("Wire"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Shared/Persistence",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Outbox",
            dependencies: ["Messaging", "Persistence"],
            path: "Shared/Outbox",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "ServiceKit",
            dependencies: [
                "BuildInfo", core("Contracts"), "Messaging", "Persistence", "Outbox", "ZMQ",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Shared/ServiceKit",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GoogleAPI",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            path: "Shared/GoogleAPI",
            swiftSettings: swiftSettings
        ),

        // MARK: Services
        .target(
            name: "AccountsService",
            dependencies: [
                "ServiceKit", core("Contracts"), core("AccountsCore"), "Outbox", "Persistence", "Messaging", "GoogleAPI",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Services/Accounts/Sources",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "accounts",
            dependencies: ["AccountsService", "ServiceKit"],
            path: "Services/Accounts/Main",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GatewayService",
            dependencies: [
                "ServiceKit", core("Contracts"), "Messaging", "Persistence", core("TimingWheel"), core("GatewayCore"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            path: "Services/Gateway/Sources",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "gateway",
            dependencies: ["GatewayService", "ServiceKit"],
            path: "Services/Gateway/Main",
            swiftSettings: swiftSettings
        ),

        .target(
            name: "AlarmsService",
            dependencies: [
                "ServiceKit", core("Contracts"), core("AlarmsCore"), "Outbox", "Persistence", "Messaging", core("Schedules"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Services/Alarms/Sources",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "alarms",
            dependencies: ["AlarmsService", "ServiceKit"],
            path: "Services/Alarms/Main",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SchedulerService",
            dependencies: [
                "ServiceKit", core("Contracts"), core("SchedulerCore"), "Outbox", "Persistence", "Messaging", core("Schedules"), core("TimingWheel"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "Services/Scheduler/Sources",
            swiftSettings: swiftSettings
        ),
        // Bulk fixtures for load runs and tests (chronirctl, tests); not in the scheduler binary.
        .target(
            name: "LoadFixtures",
            dependencies: [
                "SchedulerService", core("SchedulerCore"), "Persistence",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Services/Scheduler/LoadFixtures",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "scheduler",
            dependencies: ["SchedulerService", "ServiceKit"],
            path: "Services/Scheduler/Main",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "NotificationsService",
            dependencies: [
                "ServiceKit", core("Contracts"), core("NotificationsCore"), "Outbox", "Persistence", "Messaging", "GoogleAPI",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Services/Notifications/Sources",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "notifications",
            dependencies: ["NotificationsService", "ServiceKit"],
            path: "Services/Notifications/Main",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "InvitationsService",
            dependencies: [
                "ServiceKit", core("Contracts"), core("InvitationsCore"), "Outbox", "Persistence", "Messaging",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Services/Invitations/Sources",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "invitations",
            dependencies: ["InvitationsService", "ServiceKit"],
            path: "Services/Invitations/Main",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "BillingService",
            dependencies: [
                "ServiceKit", core("Contracts"), core("BillingCore"), "Outbox", "Persistence", "Messaging", "GoogleAPI",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                // Apple's marker extensions on the App Store chain (swift-certificates and
                // swift-asn1 come with jwt-kit already).
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Services/Billing/Sources",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "billing",
            dependencies: ["BillingService", "ServiceKit"],
            path: "Services/Billing/Main",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "chronirctl",
            dependencies: [
                "BuildInfo", "ServiceKit", "Messaging", "ZMQ", core("Contracts"), core("Schedules"), "SchedulerService", "LoadFixtures", "Persistence",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            path: "Services/Chronirctl",
            swiftSettings: swiftSettings
        ),

        // MARK: Tests
        .target(
            name: "Support",
            dependencies: [
                "Persistence", "ServiceKit", core("CoreTesting"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Tests/Support",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "chronir-testpeer",
            dependencies: ["ServiceKit", "Messaging", "Outbox", "Persistence"],
            path: "Tests/TestPeer",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MessagingTests",
            dependencies: ["Messaging", "ZMQ", "Support", "Persistence"],
            path: "Tests/MessagingTests",
            swiftSettings: swiftSettings
        ),
        // The suite wired in-process for a test (TestSuite), its users, fake push and identity
        // servers: the one harness of the service test targets below.
        .target(
            name: "SuiteSupport",
            dependencies: suiteTestDependencies,
            path: "Tests/SuiteSupport",
            swiftSettings: swiftSettings
        ),
        suiteTests("AccountsServiceTests"),
        suiteTests("AlarmsServiceTests"),
        suiteTests("NotificationsServiceTests"),
        suiteTests("InvitationsServiceTests"),
        suiteTests("BillingServiceTests"),
        suiteTests("GatewayServiceTests"),
        suiteTests("OutboxTests", also: ["chronir-testpeer"]),
        suiteTests("PersistenceTests"),
        suiteTests("ServiceKitTests"),
        // chronirctl's commands (expand, trace) as processes, and its load audit; the schedules'
        // own tests are in Core.
        .testTarget(
            name: "ChronirctlTests",
            dependencies: [core("Schedules"), "Messaging", "Support", "chronirctl"],
            path: "Tests/ChronirctlTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SchedulerTests",
            dependencies: [
                "Support", "SuiteSupport", "ServiceKit", "Messaging", "Persistence", "Outbox", core("Contracts"), core("Schedules"), "SchedulerService", core("SchedulerCore"), "LoadFixtures", "scheduler",
                "BillingService",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Tests/SchedulerTests",
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
