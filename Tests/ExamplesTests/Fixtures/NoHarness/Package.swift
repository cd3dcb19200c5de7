// swift-tools-version: 6.2
import PackageDescription

// A package that depends on memharness but has no harness executable (its one executable does not
// depend on MemHarness): `swift package memharness` must say so before building anything.
let package = Package(
    name: "NoHarness",
    products: [.executable(name: "tool", targets: ["tool"])],
    dependencies: [.package(name: "memharness", path: "../../../..")],
    targets: [
        .executableTarget(name: "tool", dependencies: [.product(name: "WorkloadKit", package: "memharness")])
    ]
)
