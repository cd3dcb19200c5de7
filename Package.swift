// swift-tools-version: 6.2
import PackageDescription

// memharness builds on Linux only: it links jemalloc and reads /proc. Data flows one way:
// scenario files -> plan -> case processes -> outcomes -> run report -> renderings.

/// Settings applied to every Swift target: Swift 6 language mode (strict concurrency) everywhere.
let settings: [SwiftSetting] = [
    .swiftLanguageMode(.v6)
]

/// OpenCombine, for the targets of the `BuiltInWorkloads` trait only (see `traits` below).
let openCombine: Target.Dependency = .product(
    name: "OpenCombine", package: "OpenCombine", condition: .when(traits: ["BuiltInWorkloads"]))

let package = Package(
    name: "memharness",
    products: [
        .executable(name: "memharness", targets: ["memharness"]),
        // The load client of server scenarios (`load:` steps), run beside `memharness`.
        .executable(name: "memharness-load", targets: ["memharness-load"]),
        // The agent: preloaded into case processes (LD_PRELOAD="libmemharness-agent.so libjemalloc.so.2") for
        // exact peaks, allocation stacks and the sampler of external programs; never linked (it would replace
        // the allocator of whatever links it). API: Sources/MemHarnessAgent/include.
        .library(name: "memharness-agent", type: .dynamic, targets: ["MemHarnessAgent"]),
        // What a package builds its own harness on: `MemHarness.main(workloads:)`, the whole command line.
        .library(name: "MemHarness", targets: ["MemHarness"]),
        // What a workload imports: the Workload protocol, CaseContext, parameters, gauges, tracking.
        .library(name: "WorkloadKit", targets: ["WorkloadKit"]),
        // What a test target imports: memory expectations for `swift test` (Swift Testing and XCTest).
        .library(name: "MemHarnessTesting", targets: ["MemHarnessTesting"]),
        // `swift package memharness run [ARGS]` in a package with a harness executable of its own.
        .plugin(name: "MemHarnessPlugin", targets: ["MemHarnessPlugin"]),
    ],
    // `BuiltInWorkloads` (on by default): the shipped workloads' own dependency, OpenCombine, which only
    // `SubscriptionsWorkload` and the heap graph's fixtures use. A package that builds its own harness depends on
    // memharness with `traits: []`: SwiftPM then neither fetches nor builds OpenCombine (SwiftPM 6.1+ prunes a
    // dependency that only trait-gated targets use). Traits rather than a second package: one repository, one
    // version, one URL, and the shipped `memharness` executable and every test still build with a plain `swift build`.
    traits: [
        .trait(
            name: "BuiltInWorkloads",
            description: "The shipped workloads' dependencies (OpenCombine); `traits: []` for a harness of your own."
        ),
        .default(enabledTraits: ["BuiltInWorkloads"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),  // BuiltInWorkloads only
        // `swift package generate-documentation` (`make docs`): the DocC catalogs and symbol documentation.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: System libraries
        .systemLibrary(name: "CJemalloc", pkgConfig: "jemalloc", providers: [.apt(["libjemalloc-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // gzip for pprof's profile.pb.gz.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),

        // System calls the Swift Glibc module does not expose (atomic folder exchange, process spawning).
        .target(name: "CSystem"),

        // MARK: Values: what crosses every boundary (pure, no dependencies)
        // Case specs and outcomes, run reports, aggregation, leaks, thresholds, baselines, verdicts, units: no
        // wording for people (Reports and the CLI word it) and no file I/O (FileIO, Reports).
        .target(name: "HarnessModel", swiftSettings: settings),

        // MARK: Verdicts: evidence -> verdicts with typed reasons (leaks, gates, run-to-run comparisons), one noise model
        // The one leak judgement (a case, a strategy, `expectMemory`), the checks of a run, the one comparison of a
        // figure between runs. Values in, values out: the words are the renderers' (Reports, MemHarnessTesting).
        .target(name: "Verdicts", dependencies: ["HarnessModel"], swiftSettings: settings),

        // MARK: Child processes: the one Swift layer over CSystem's spawn, bounded pidfd wait and group kill
        // Case processes, external programs, symbolizing tools and test replicas all start here. Above CSystem and
        // the values (it answers in `TerminationStatus`), below every target that starts a process.
        .target(name: "ChildProcesses", dependencies: ["CSystem", "HarnessModel"], swiftSettings: settings),

        // MARK: Files at the edge: the user's input files, with the checks every input gets; the report folder's
        // transaction and lock, single files replaced in one step, run.json and baseline files, the strict JSON checker
        .target(name: "FileIO", dependencies: ["HarnessModel", "CSystem"], swiftSettings: settings),

        // MARK: What a workload imports (it names the few model values a workload's API uses; no re-export)
        // Also what a request costs in jemalloc (`AllocatorCost`, over nallocx): workloads and tests compute truths.
        .target(name: "WorkloadKit", dependencies: ["HarnessModel", "CJemalloc"], swiftSettings: settings),

        // MARK: Measuring one case in this process
        // jemalloc's mallctl and the kernel's /proc figures.
        .target(name: "AllocatorProbe", dependencies: ["CJemalloc"], swiftSettings: settings),
        // The preloaded agent (C, one C++ file for operator new/delete): exact counts, allocation stacks,
        // peak snapshots, a sampler thread for external programs. Only the `memharness-agent` product uses it.
        .target(
            name: "MemHarnessAgent",
            exclude: ["bench"],
            linkerSettings: [.linkedLibrary("m")]
        ),
        // The sampler, the agent's readings (found at run time), memory budgets and the case executor.
        .target(
            name: "Measurement",
            dependencies: ["WorkloadKit", "HarnessModel", "AllocatorProbe", "CSystem", "HeapGraph", "Symbols"],
            swiftSettings: settings),

        // MARK: Memory expectations in the ordinary test runner: `expectMemory(peakBelow:...) { ... }`
        // Also over one strategy of a workload (`expectMemory(of:strategy:)`), resolved by the scenario parser.
        // Replica processes: the parent-death check at load, before any test code (C: prctl is variadic).
        .target(name: "CMemHarnessTesting"),
        .target(
            name: "MemHarnessTesting",
            dependencies: [
                "CMemHarnessTesting", "Measurement", "WorkloadKit", "AllocatorProbe", "HarnessModel",
                "ChildProcesses", "HeapGraph", "Scenarios", "Verdicts",
            ],
            swiftSettings: settings
        ),

        // MARK: Scenario files -> validated ScenarioSpec (every error before any work)
        .target(
            name: "Scenarios",
            dependencies: ["WorkloadKit", "HarnessModel", "FileIO", .product(name: "Yams", package: "Yams")],
            swiftSettings: settings
        ),

        // MARK: Running: request -> plan -> case results -> run report
        .target(
            name: "Runner",
            dependencies: [
                "Scenarios", "Measurement", "Attribution", "Symbols", "FileIO", "WorkloadKit", "AllocatorProbe",
                "HarnessModel", "CSystem", "ChildProcesses",
            ],
            swiftSettings: settings
        ),

        // MARK: Symbols: the one symbol table (addresses -> module, function, file:line; demangling; fold rules)
        // ELF symbol tables, llvm-symbolizer or addr2line (run through ChildProcesses), the return-address adjustment:
        // what allocation profiles and heap graphs both name frames, roots and globals with.
        .target(name: "Symbols", dependencies: ["HarnessModel", "ChildProcesses", "CSystem"], swiftSettings: settings),

        // MARK: Swift's own reflection reader (libswiftRemoteMirror.so, dlopen'ed) over this or another process's memory
        // Type names from metadata (generic instances included), fields and closure captures from the images'
        // reflection sections. CSwiftRemoteMirror declares the library's types (the toolchain installs no header).
        .target(name: "CSwiftRemoteMirror"),
        .target(name: "SwiftReflection", dependencies: ["CSwiftRemoteMirror", "Symbols"], swiftSettings: settings),

        // MARK: Attribution: agent records -> symbolized, folded allocation profiles ("where the memory is")
        .target(name: "Attribution", dependencies: ["HarnessModel", "Symbols"], swiftSettings: settings),

        // MARK: Heap graph: a heap capture -> reachability, leak groups (cycles), retaining paths, generations
        .target(
            name: "HeapGraph", dependencies: ["HarnessModel", "Attribution", "Symbols", "SwiftReflection"],
            swiftSettings: settings),

        // MARK: Reports: the record -> a typed document (Document, Builder) -> renderings (Markdown, HTML, SVG, terminal),
        // for runs and for the history's pages (the values of History, never its store)
        .target(
            name: "Reports", dependencies: ["HarnessModel", "Verdicts", "FileIO", "History", "CZlib"],
            // report.html's script and style sheet, compiled into the library as bytes (no bundle to find at run time).
            // The page data's schema is read by the tests alone (PageDataSchemaTests), against the data and report.js.
            exclude: ["Html/assets/page-data.schema.json"],
            resources: [.embedInCode("Html/assets/report.js"), .embedInCode("Html/assets/report.css")],
            swiftSettings: settings),

        // MARK: History: run records across commits -> a SQLite index -> series, change points (PELT), gates, diffs
        .target(
            name: "History", dependencies: ["HarnessModel", "Verdicts", "FileIO", "Attribution", "Symbols", "CSQLite"],
            swiftSettings: settings),

        // MARK: The command line over a catalog of workloads: `MemHarness.main(workloads:)`
        .target(
            name: "MemHarness",
            dependencies: [
                "Runner", "Reports", "FileIO", "Scenarios", "Measurement", "WorkloadKit", "HarnessModel", "Verdicts",
                "History",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: settings
        ),

        // MARK: Shipped workloads (the modelled systems), one target each, all under Sources/Workloads
        .target(
            name: "CalibrationWorkload", dependencies: ["WorkloadKit", "CJemalloc"],
            path: "Sources/Workloads/Calibration", swiftSettings: settings
        ),
        .target(name: "DocumentStore", path: "Sources/Workloads/DocumentStore", swiftSettings: settings),
        .target(
            name: "LiveQueryWorkload", dependencies: ["WorkloadKit", "DocumentStore"],
            path: "Sources/Workloads/LiveQuery", swiftSettings: settings
        ),
        .target(
            name: "StoreObserverWorkload",
            dependencies: ["WorkloadKit", "DocumentStore", "AllocatorProbe", "HarnessModel"],
            path: "Sources/Workloads/StoreObserver", swiftSettings: settings
        ),
        .target(
            name: "SubscriptionsWorkload",
            dependencies: ["WorkloadKit", openCombine],
            path: "Sources/Workloads/Subscriptions", swiftSettings: settings
        ),
        .target(
            name: "ImageFeedWorkload", dependencies: ["WorkloadKit"],
            path: "Sources/Workloads/ImageFeed", swiftSettings: settings
        ),
        .target(
            name: "VersionPinningWorkload", dependencies: ["WorkloadKit", "CSQLite"],
            path: "Sources/Workloads/VersionPinning", swiftSettings: settings
        ),
        // The list of shipped workloads the `memharness` executable passes to `MemHarness.main`.
        .target(
            name: "BuiltInWorkloads",
            dependencies: [
                "WorkloadKit", "CalibrationWorkload", "LiveQueryWorkload", "StoreObserverWorkload",
                "SubscriptionsWorkload", "ImageFeedWorkload", "VersionPinningWorkload",
            ],
            path: "Sources/Workloads/BuiltIn", swiftSettings: settings
        ),

        // MARK: Executables
        .executableTarget(
            name: "memharness", dependencies: ["MemHarness", "BuiltInWorkloads"], swiftSettings: settings
        ),
        // The load client of server scenarios' `load` steps (C, HTTP/1.1 keep-alive to 127.0.0.1): found beside the
        // `memharness` executable at run time, never linked by a library product.
        .executableTarget(name: "memharness-load", path: "Sources/memharness-load"),
        // Real programs of this machine (the toolchain's Swift programs, system programs) that memharness must never
        // break, run plainly and under every mode (`make bench-corpus`; the quick ones in `make test`).
        .target(name: "ProgramCorpus", dependencies: ["ChildProcesses"], swiftSettings: settings),
        .executableTarget(
            name: "memharness-bench",
            dependencies: [
                "Runner", "Reports", "FileIO", "BuiltInWorkloads", "StoreObserverWorkload", "AllocatorProbe",
                "ChildProcesses", "HarnessModel", "Verdicts", "WorkloadKit", "ProgramCorpus",
            ],
            path: "Sources/Benchmarks", swiftSettings: settings
        ),

        // The heap graph's analysis on a synthetic million-block heap, timed (release: `--product heap-graph-bench`).
        .executableTarget(
            name: "heap-graph-bench", dependencies: ["HeapGraph", "HarnessModel", "WorkloadKit"],
            path: "Sources/HeapGraphBench",
            swiftSettings: settings
        ),

        // Change-point detection on seeded synthetic series and the history store at scale, timed (`history-bench`).
        .executableTarget(
            name: "history-bench",
            dependencies: ["History", "HarnessModel", "Reports", "FileIO", "WorkloadKit", "ChildProcesses"],
            path: "Sources/HistoryBench",
            swiftSettings: settings),

        // MARK: The command plugin: builds a package's harness executable and the agent, runs its Scenarios/
        .plugin(
            name: "MemHarnessPlugin",
            capability: .command(
                intent: .custom(
                    verb: "memharness",
                    description:
                        "Build this package's memory harness (the executable that depends on MemHarness) and run it: "
                        + "run (its Scenarios/, report under Reports/latest), list, report, compare, baseline, merge."
                ),
                permissions: [
                    .writeToPackageDirectory(
                        reason: "`run` writes its report folder under the package (default Reports/latest)")
                ]
            ),
            path: "Plugins/MemHarnessPlugin"
        ),

        // MARK: Test programs (plain executables the tests spawn)
        // A C program with known allocations for the agent's tests and for trying `memharness profile`.
        .executableTarget(name: "agent-probe", path: "Tests/Programs/agent-probe"),
        // Threads that fork, signals whose handlers allocate, heap captures and exit() all at once: the agent's
        // lifecycle stress test runs it under every mode.
        .executableTarget(name: "fork-stress", path: "Tests/Programs/fork-stress"),
        // A harness that registers one workload twice, for the catalog check of `MemHarness.main`.
        .executableTarget(
            name: "duplicate-workloads", dependencies: ["MemHarness", "CalibrationWorkload"],
            path: "Tests/Programs/duplicate-workloads", swiftSettings: settings
        ),
        // An HTTP server whose requests, retained bytes and crash are known by construction (server scenarios' tests).
        .executableTarget(name: "http-fixture", path: "Tests/Programs/http-fixture"),
        // A Swift program that stops on `fatalError`, run as a command case by the fault tests.
        .executableTarget(name: "trap-probe", path: "Tests/Programs/trap-probe", swiftSettings: settings),
        // Swift objects leaked and kept in known ways, captured with the agent preloaded (the heap graph's tests).
        .executableTarget(
            name: "heap-fixtures",
            dependencies: [
                "Measurement", "HeapGraph", "HarnessModel", "WorkloadKit", "CSystem",
                openCombine,
            ],
            path: "Tests/Programs/heap-fixtures", swiftSettings: settings
        ),

        // A harness of one workload whose strategies leak a known cycle or nothing, and the same work as a plain
        // program: the leak verdict of `run`, `profile` and `expectMemory` on one process state.
        .executableTarget(
            name: "leak-fixtures", dependencies: ["MemHarness", "TestSupport"], path: "Tests/Programs/leak-fixtures",
            swiftSettings: settings
        ),

        // MARK: Tests (mirror the source targets)
        // Builders of made-up results and a way to run a case in the test process, for every test target.
        .target(
            name: "TestSupport", dependencies: ["HarnessModel", "WorkloadKit", "Measurement", "ChildProcesses"],
            path: "Tests/TestSupport",
            swiftSettings: settings
        ),
        // Spawns agent-probe with the built agent preloaded (`make test` builds both first).
        .testTarget(
            name: "MemHarnessAgentTests",
            dependencies: ["TestSupport", "HeapGraph", "Attribution", "Symbols", "HarnessModel", "ChildProcesses"],
            swiftSettings: settings),
        // Spawns /bin/sh children: ends, signals, bounds, group kills, standard streams.
        .testTarget(
            name: "ChildProcessesTests", dependencies: ["ChildProcesses", "HarnessModel"], swiftSettings: settings),
        .testTarget(name: "HarnessModelTests", dependencies: ["TestSupport", "HarnessModel"], swiftSettings: settings),
        .testTarget(
            name: "VerdictsTests", dependencies: ["TestSupport", "Verdicts", "HarnessModel"], swiftSettings: settings),
        .testTarget(name: "FileIOTests", dependencies: ["FileIO"], swiftSettings: settings),
        .testTarget(
            name: "WorkloadKitTests", dependencies: ["TestSupport", "WorkloadKit", "HarnessModel", "CJemalloc"],
            swiftSettings: settings),
        .testTarget(
            name: "AllocatorProbeTests", dependencies: ["TestSupport", "AllocatorProbe", "WorkloadKit"],
            swiftSettings: settings),
        .testTarget(
            name: "MeasurementTests",
            dependencies: [
                "TestSupport", "Measurement", "Scenarios", "Runner", "WorkloadKit", "HarnessModel", "AllocatorProbe",
                "Verdicts",
            ],
            swiftSettings: settings
        ),
        // Spawns replicas of the test binary itself (the expectations under test do).
        .testTarget(
            name: "MemHarnessTestingTests",
            dependencies: ["MemHarnessTesting", "AllocatorProbe", "HarnessModel", "WorkloadKit", "Verdicts"],
            swiftSettings: settings
        ),
        .testTarget(
            name: "ScenariosTests",
            dependencies: ["TestSupport", "Scenarios", "Runner", "WorkloadKit", "HarnessModel"],
            swiftSettings: settings
        ),
        .testTarget(
            name: "RunnerTests",
            dependencies: [
                "TestSupport", "Runner", "Scenarios", "Measurement", "Reports", "FileIO", "WorkloadKit", "HarnessModel",
                "Verdicts",
            ],
            swiftSettings: settings
        ),
        // Golden files and fixtures are read through #filePath, so they need no resource bundle.
        .testTarget(
            name: "ReportsTests",
            dependencies: ["TestSupport", "Reports", "FileIO", "History", "Verdicts", "HarnessModel", "CZlib"],
            exclude: ["Golden"],
            swiftSettings: settings
        ),
        .testTarget(
            name: "HeapGraphTests", dependencies: ["HeapGraph", "HarnessModel", "WorkloadKit"], swiftSettings: settings),
        .testTarget(
            name: "AttributionTests", dependencies: ["Attribution", "Symbols", "HarnessModel"], exclude: ["Golden"],
            swiftSettings: settings
        ),
        // Symbolizes this test bundle's own stacks with the machine's tools; reads its own symbol tables.
        .testTarget(name: "SymbolsTests", dependencies: ["Symbols", "HarnessModel"], swiftSettings: settings),
        // Names this test process's own objects, and a child's it holds, through libswiftRemoteMirror.so.
        .testTarget(
            name: "SwiftReflectionTests", dependencies: ["SwiftReflection", "Symbols", "ChildProcesses"],
            swiftSettings: settings),
        .testTarget(
            name: "HistoryTests",
            dependencies: ["History", "HarnessModel", "Reports", "FileIO", "TestSupport", "WorkloadKit"],
            exclude: ["Fixtures"], swiftSettings: settings),
        .testTarget(
            name: "MemHarnessTests",
            dependencies: [
                "TestSupport", "memharness", "MemHarness", "Runner", "HarnessModel", "WorkloadKit", "Reports", "FileIO",
                "AllocatorProbe", "ChildProcesses", "Measurement", "Verdicts", "ProgramCorpus", "MemHarnessTesting",
            ],
            exclude: ["Fixtures"], swiftSettings: settings
        ),
        // Drives Examples/JSONCache (built by `make test` in its own .build) and the command plugin on it.
        .testTarget(
            name: "ExamplesTests",
            dependencies: ["TestSupport", "duplicate-workloads", "Reports", "FileIO", "HarnessModel", "WorkloadKit"],
            exclude: ["Fixtures"], swiftSettings: settings
        ),
        // Runs the built `memharness` as a child process and injects faults (signals, kill -9, a second run into
        // the same folder, a full file system, closed pipes); MEMHARNESS_SOAK_TRIALS sets the trials (`make soak`).
        .testTarget(
            name: "FaultTests",
            dependencies: ["memharness", "trap-probe", "Reports", "FileIO", "HarnessModel", "TestSupport"],
            swiftSettings: settings
        ),
        .testTarget(
            name: "CalibrationWorkloadTests",
            dependencies: [
                "TestSupport", "CalibrationWorkload", "Measurement", "WorkloadKit", "HarnessModel", "CJemalloc",
            ],
            path: "Tests/Workloads/CalibrationTests", swiftSettings: settings
        ),
        .testTarget(
            name: "LiveQueryWorkloadTests",
            dependencies: [
                "TestSupport", "LiveQueryWorkload", "DocumentStore", "Measurement", "Scenarios", "WorkloadKit",
                "HarnessModel",
            ],
            path: "Tests/Workloads/LiveQueryTests", swiftSettings: settings
        ),
        .testTarget(
            name: "StoreObserverWorkloadTests",
            dependencies: [
                "TestSupport", "StoreObserverWorkload", "DocumentStore", "Measurement", "Scenarios", "WorkloadKit",
                "HarnessModel",
            ],
            path: "Tests/Workloads/StoreObserverTests", swiftSettings: settings
        ),
        .testTarget(
            name: "SubscriptionsWorkloadTests",
            dependencies: [
                "TestSupport", "SubscriptionsWorkload", "Measurement", "Scenarios", "Runner", "AllocatorProbe",
                "WorkloadKit", "HarnessModel", "Verdicts",
                openCombine,
            ],
            path: "Tests/Workloads/SubscriptionsTests", swiftSettings: settings
        ),
        .testTarget(
            name: "ImageFeedWorkloadTests",
            dependencies: ["TestSupport", "ImageFeedWorkload", "Measurement", "WorkloadKit", "HarnessModel"],
            path: "Tests/Workloads/ImageFeedTests", swiftSettings: settings
        ),
        .testTarget(
            name: "VersionPinningWorkloadTests",
            dependencies: [
                "TestSupport", "VersionPinningWorkload", "Measurement", "Runner", "Scenarios", "WorkloadKit",
                "HarnessModel", "CSQLite",
            ],
            path: "Tests/Workloads/VersionPinningTests", swiftSettings: settings
        ),
    ]
)
