// swift-tools-version: 6.2
import PackageDescription

// A real HTTP server on Hummingbird with routes that reproduce known server memory problems, and the scenario
// (Scenarios/server-leaks.yaml) that `memharness run` drives it with: started, loaded by `memharness-load`, stopped
// with SIGTERM, its heap captured at exit. Not a dependency of memharness: `make example-server` builds it
// (release, in its own .build) and runs the scenario with the memharness of the clone two folders up.
let package = Package(
    name: "ServerLeaks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // `traits: []`: neither swift-configuration nor full Foundation is needed by these routes.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0", traits: [])
    ],
    targets: [
        .executableTarget(
            name: "server-leaks",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")]
        )
    ]
)
