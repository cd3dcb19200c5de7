// swift-tools-version: 6.2
import PackageDescription

// A user's package with a memory harness of its own: the app code (JSONCache), a workload over it
// (JSONCacheWorkload) and an executable that hands the workload to memharness's command line.
// Copy it, point the dependency at memharness, and replace the cache with your own code.
let package = Package(
    name: "JSONCache",
    products: [
        .library(name: "JSONCache", targets: ["JSONCache"]),
        .executable(name: "json-cache-harness", targets: ["json-cache-harness"]),
    ],
    dependencies: [
        // The memharness clone two folders up; `name:` because a path dependency is otherwise known by its
        // folder's name, whatever the clone is called; `traits: []` so the shipped workloads' dependency
        // (OpenCombine) is neither fetched nor built. A package of your own uses:
        // .package(url: "https://github.com/OWNER/memharness", from: "0.2.0", traits: [])
        .package(name: "memharness", path: "../..", traits: [])
    ],
    targets: [
        // The app code under study: an HTTP response cache for a JSON API.
        .target(name: "JSONCache"),
        // The workload: what memharness runs under each strategy (imports WorkloadKit only).
        .target(
            name: "JSONCacheWorkload",
            dependencies: ["JSONCache", .product(name: "WorkloadKit", package: "memharness")]
        ),
        // The harness: `json-cache-harness run|list|report|compare|baseline|merge`.
        .executableTarget(
            name: "json-cache-harness",
            dependencies: ["JSONCacheWorkload", .product(name: "MemHarness", package: "memharness")]
        ),
        // The caches' semantics, and memory expectations on them in the ordinary `swift test`.
        .testTarget(
            name: "JSONCacheTests",
            dependencies: [
                "JSONCache", "JSONCacheWorkload", .product(name: "MemHarnessTesting", package: "memharness"),
            ]
        ),
    ]
)
