// swift-tools-version:6.2
import PackageDescription

/// Tier 0: the pure modules of the suite and their tests (docs/testing.md). No I/O, no
/// PostgreSQL, NIO or ZeroMQ: `swift test --package-path Core` (`make core`) builds and runs them
/// in its own `.build` in a few minutes from clean. The root package depends on it by path.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "core",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Wire", targets: ["Wire"]),
        .library(name: "Schedules", targets: ["Schedules"]),
        .library(name: "Contracts", targets: ["Contracts"]),
        .library(name: "TimingWheel", targets: ["TimingWheel"]),
        .library(name: "CoreTesting", targets: ["CoreTesting"]),
        .library(name: "NotificationsCore", targets: ["NotificationsCore"]),
        .library(name: "AlarmsCore", targets: ["AlarmsCore"]),
        .library(name: "AccountsCore", targets: ["AccountsCore"]),
        .library(name: "BillingCore", targets: ["BillingCore"]),
        .library(name: "InvitationsCore", targets: ["InvitationsCore"]),
        .library(name: "SchedulerCore", targets: ["SchedulerCore"]),
        .library(name: "StreamCore", targets: ["StreamCore"]),
        .library(name: "GatewayCore", targets: ["GatewayCore"]),
    ],
    dependencies: [
        // The same version the root package pins (docs/architecture.md: every dependency pinned).
        .package(url: "https://github.com/apple/swift-collections.git", exact: "1.6.0"),
    ],
    targets: [
        // The wire: message shapes and their encoding, no I/O (Contracts and Messaging use it).
        .target(
            name: "Wire",
            // The encoder's state is a class whose fields every value writes; runtime
            // exclusivity checks on them were ~10 % of encoding (docs/performance.md).
            swiftSettings: swiftSettings + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        .target(name: "Schedules", dependencies: ["Wire"], swiftSettings: swiftSettings),
        .target(name: "Contracts", dependencies: ["Wire", "Schedules"], swiftSettings: swiftSettings),
        .target(
            name: "TimingWheel",
            dependencies: [.product(name: "HeapModule", package: "swift-collections")],
            swiftSettings: swiftSettings
        ),
        // The notifications service's decisions (issue 60: one core per service, as extracted).
        .target(name: "NotificationsCore", dependencies: ["Contracts", "Wire"], swiftSettings: swiftSettings),
        // The alarms service's rules: field limits, tier rules, sharing by consent, patches,
        // marks, snoozes and floating time (they were its Domain folder).
        .target(name: "AlarmsCore", dependencies: ["Contracts", "Schedules", "Wire"], swiftSettings: swiftSettings),
        // The accounts service's input rules (its key sealing, which needs Crypto, stays in the service for now).
        .target(name: "AccountsCore", dependencies: ["Contracts", "Wire"], swiftSettings: swiftSettings),
        // The billing service's catalogue (products, tiers and what each tier may do) and its
        // subscription state machine and entitlement (`SubscriptionRules`).
        .target(name: "BillingCore", dependencies: ["Contracts"], swiftSettings: swiftSettings),
        // The invitation lifecycle: who may see and answer an invitation, from which state, and
        // what each answer writes; the create request's checks (the address rule is sign-up's).
        .target(name: "InvitationsCore", dependencies: ["Contracts", "Wire", "AccountsCore"], swiftSettings: swiftSettings),
        // The scheduler's decisions: timer kinds, which timers an occurrence needs, leads, overdue,
        // the grace window and what a fired timer announces; partitions; the words of warnings.
        .target(name: "SchedulerCore", swiftSettings: swiftSettings),
        // The gateway's rules: who a request comes from (trusted proxies, forwarding headers);
        // the throttle's admissions (which buckets, in which order, refunded how) and its ledger;
        // the per-principal caps (connections, live streams, photo bodies).
        .target(name: "GatewayCore", dependencies: ["Contracts"], swiftSettings: swiftSettings),
        // The stream consumer's decisions (Messaging's StreamConsumer is the shell): what an
        // event or heartbeat means against the checkpoint, what a replay skips as lost past
        // retention, a checkpoint another writer moved, and a batch's attempts (split, dead
        // letter, retry with back-off).
        .target(name: "StreamCore", swiftSettings: swiftSettings),
        // What tests of both packages share and that needs nothing but Foundation (SeededRandom).
        .target(name: "CoreTesting", swiftSettings: swiftSettings),
        .testTarget(name: "WireTests", dependencies: ["Wire", "CoreTesting"], swiftSettings: swiftSettings),
        .testTarget(name: "SchedulesTests", dependencies: ["Schedules", "Wire", "CoreTesting"], swiftSettings: swiftSettings),
        .testTarget(name: "ContractsTests", dependencies: ["Contracts"], swiftSettings: swiftSettings),
        .testTarget(name: "TimingWheelTests", dependencies: ["TimingWheel", "CoreTesting"], swiftSettings: swiftSettings),
        .testTarget(name: "NotificationsCoreTests", dependencies: ["NotificationsCore", "Contracts", "CoreTesting"], swiftSettings: swiftSettings),
        .testTarget(name: "InvitationsCoreTests", dependencies: ["InvitationsCore", "Contracts", "Wire"], swiftSettings: swiftSettings),
        .testTarget(name: "BillingCoreTests", dependencies: ["BillingCore", "Contracts"], swiftSettings: swiftSettings),
        .testTarget(name: "AccountsCoreTests", dependencies: ["AccountsCore", "Contracts", "Wire"], swiftSettings: swiftSettings),
        .testTarget(name: "GatewayCoreTests", dependencies: ["GatewayCore", "Contracts"], swiftSettings: swiftSettings),
        .testTarget(name: "StreamCoreTests", dependencies: ["StreamCore"], swiftSettings: swiftSettings),
        .testTarget(name: "SchedulerCoreTests", dependencies: ["SchedulerCore"], swiftSettings: swiftSettings),
        .testTarget(name: "AlarmsCoreTests", dependencies: ["AlarmsCore", "Contracts", "Schedules", "Wire", "CoreTesting"], swiftSettings: swiftSettings),
    ]
)
