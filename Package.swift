// swift-tools-version: 6.2
import PackageDescription

/// Settings applied to every target: Swift 6 language mode (strict concurrency) everywhere.
let settings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

let package = Package(
    name: "memharness",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "memharness", targets: ["memharness"]),
        // The same command line with every allocation counted (`run --peak exact` launches its cases with it).
        .executable(name: "memharness-exact", targets: ["memharness-exact"]),
        // The agent: preloaded into case processes (LD_PRELOAD="libmemharness-agent.so libjemalloc.so.2"),
        // never linked (it would replace the allocator of whatever links it). API: Sources/MemHarnessAgent/include.
        .library(name: "memharness-agent", type: .dynamic, targets: ["MemHarnessAgent"]),
        // Everything a user needs to define and run scenarios of their own in Swift.
        .library(name: "MemHarness", targets: ["AllocatorProbe", "HarnessModel", "HarnessCore", "Reports", "Workloads"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        // MARK: System libraries
        .systemLibrary(
            name: "CJemalloc",
            pkgConfig: "jemalloc",
            providers: [.apt(["libjemalloc-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),

        // MARK: Measurement
        .target(name: "AllocatorProbe", dependencies: ["CJemalloc"], swiftSettings: settings),
        // Exact peaks: a malloc family that counts every allocation, linked only into `memharness-exact`
        // (never into a library or test target: it would replace the allocator of everything it is linked into).
        .target(name: "CExactPeak", dependencies: ["CJemalloc", "CExactPeakHooks"]),
        // Weak references to CExactPeak's counters: "not available" in binaries without it.
        .target(name: "CExactPeakHooks"),
        // The preloaded agent (C, one C++ file for operator new/delete): exact counts, allocation stacks,
        // peak snapshots, a sampler thread for external programs. Only the `memharness-agent` product uses it.
        .target(
            name: "MemHarnessAgent",
            dependencies: ["CJemalloc"],
            exclude: ["bench"],
            linkerSettings: [.linkedLibrary("m")]
        ),

        // MARK: Harness
        .target(name: "HarnessModel", swiftSettings: settings),
        .target(
            name: "HarnessCore",
            dependencies: ["AllocatorProbe", "HarnessModel", "CExactPeakHooks", .product(name: "Yams", package: "Yams")],
            swiftSettings: settings
        ),

        // MARK: Workloads (the modelled systems), one target each, all under Sources/Workloads
        .target(name: "CalibrationWorkload", dependencies: ["HarnessCore", "CJemalloc"],
                path: "Sources/Workloads/Calibration", swiftSettings: settings),
        .target(name: "DocumentStore", dependencies: [],
                path: "Sources/Workloads/DocumentStore", swiftSettings: settings),
        .target(name: "LiveQueryWorkload", dependencies: ["HarnessCore", "DocumentStore"],
                path: "Sources/Workloads/LiveQuery", swiftSettings: settings),
        .target(name: "StoreObserverWorkload", dependencies: ["HarnessCore", "DocumentStore"],
                path: "Sources/Workloads/StoreObserver", swiftSettings: settings),
        .target(name: "SubscriptionsWorkload",
                dependencies: ["HarnessCore", .product(name: "OpenCombine", package: "OpenCombine")],
                path: "Sources/Workloads/Subscriptions", swiftSettings: settings),
        .target(name: "ImageFeedWorkload", dependencies: ["HarnessCore"],
                path: "Sources/Workloads/ImageFeed", swiftSettings: settings),
        .target(name: "VersionPinningWorkload", dependencies: ["HarnessCore", "CSQLite"],
                path: "Sources/Workloads/VersionPinning", swiftSettings: settings),
        .target(
            name: "Workloads",
            dependencies: [
                "HarnessCore", "CalibrationWorkload", "LiveQueryWorkload", "StoreObserverWorkload",
                "SubscriptionsWorkload", "ImageFeedWorkload", "VersionPinningWorkload",
            ],
            path: "Sources/Workloads/Catalog", swiftSettings: settings
        ),

        // MARK: Reports (depend on the result model only)
        .target(name: "Reports", dependencies: ["HarnessModel"], swiftSettings: settings),

        // MARK: Command line (a library, so the executables are one line and packages can build their own)
        .target(
            name: "MemHarnessCLI",
            dependencies: [
                "AllocatorProbe", "HarnessCore", "Reports", "Workloads",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: settings
        ),

        // MARK: Executables
        .executableTarget(name: "memharness", dependencies: ["MemHarnessCLI"], swiftSettings: settings),
        .executableTarget(name: "memharness-exact", dependencies: ["MemHarnessCLI", "CExactPeak"], swiftSettings: settings),
        .executableTarget(
            name: "memharness-bench",
            dependencies: ["HarnessCore", "Workloads", "AllocatorProbe", "StoreObserverWorkload", "Reports"],
            path: "Sources/Benchmarks", swiftSettings: settings
        ),

        // MARK: Test programs (plain executables the tests spawn)
        // A C program with known allocations for the agent's tests and for trying `memharness profile`.
        .executableTarget(name: "agent-probe", path: "Tests/Programs/agent-probe"),

        // MARK: Tests (mirror the source targets)
        // Spawns agent-probe with the built agent preloaded (both built first: see the suite's comment).
        .testTarget(name: "MemHarnessAgentTests", swiftSettings: settings),
        .testTarget(name: "AllocatorProbeTests", dependencies: ["AllocatorProbe"], swiftSettings: settings),
        .testTarget(name: "HarnessModelTests", dependencies: ["HarnessModel"], swiftSettings: settings),
        .testTarget(name: "HarnessCoreTests", dependencies: ["HarnessCore", "AllocatorProbe"],
                    swiftSettings: settings),
        .testTarget(name: "CalibrationWorkloadTests", dependencies: ["CalibrationWorkload", "HarnessCore", "CJemalloc"],
                    path: "Tests/Workloads/CalibrationTests", swiftSettings: settings),
        .testTarget(name: "LiveQueryWorkloadTests", dependencies: ["LiveQueryWorkload", "DocumentStore", "HarnessCore"],
                    path: "Tests/Workloads/LiveQueryTests", swiftSettings: settings),
        .testTarget(name: "StoreObserverWorkloadTests", dependencies: ["StoreObserverWorkload", "DocumentStore", "HarnessCore"],
                    path: "Tests/Workloads/StoreObserverTests", swiftSettings: settings),
        .testTarget(name: "SubscriptionsWorkloadTests", dependencies: ["SubscriptionsWorkload", "HarnessCore"],
                    path: "Tests/Workloads/SubscriptionsTests", swiftSettings: settings),
        .testTarget(name: "ImageFeedWorkloadTests", dependencies: ["ImageFeedWorkload", "HarnessCore"],
                    path: "Tests/Workloads/ImageFeedTests", swiftSettings: settings),
        .testTarget(name: "VersionPinningWorkloadTests", dependencies: ["VersionPinningWorkload", "HarnessCore", "CSQLite"],
                    path: "Tests/Workloads/VersionPinningTests", swiftSettings: settings),
        // Golden files and fixtures are read through #filePath, so they need no resource bundle.
        .testTarget(name: "ReportsTests", dependencies: ["Reports", "HarnessModel"],
                    exclude: ["Golden"], swiftSettings: settings),
        .testTarget(name: "memharnessTests", dependencies: ["memharness", "HarnessModel", "Reports", "AllocatorProbe"],
                    exclude: ["Fixtures"], swiftSettings: settings),
    ]
)
