import Foundation
import HarnessModel
import Reports
import TestSupport
import Testing

/// `--allocator glibc`: a program runs with the agent alone preloaded, on glibc's malloc, and the agent reads glibc's
/// figures (mallinfo2, its heaps in smaps), never jemalloc's. Known answers by construction: `agent-probe pinned 1KiB
/// 16384 300` holds 16 MiB in 16,384 written blocks below a small pin, then frees all but the pin and exits: glibc's
/// main arena cannot shrink below the pin, so the freed 16 MiB stay glibc's free memory, resident, at exit.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct GlibcAllocatorTests {
    static let mebibyte = 1 << 20

    @Test func aProgramOnGlibcHasItsLiveHeapAndTheFreeMemoryGlibcKeepsExplained() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let outcome = try trial.profile(
            ["--allocator", "glibc"], [ProgramTrial.agentProbe, "pinned", "1KiB", "16384", "300"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        // The probe first: the agent in the program says glibc serves malloc (2), and it counts nothing here (-1).
        #expect(outcome.stdout.contains("pinned allocator 2 held 16777216"), "\(outcome.stdout)")
        let result = try #require(try trial.record().report.scenarios.first?.cases.first)
        let program = try #require(result.measurements?.program, "\(result)")
        #expect(program.allocator == .glibc)
        let parts = try #require(program.residentExplained, "\(program)")
        let peak = try #require(parts.first { $0.point == .peak }, "\(parts)")
        let end = try #require(parts.first { $0.point == .end }, "\(parts)")
        #expect(peak.allocator == .glibc && end.allocator == .glibc)
        // The samples see the 16 MiB live (mallinfo2's bytes in use, chunk headers included, at the sampled peak) ...
        let measurements = try #require(result.measurements)
        let stats = measurements.peak
        #expect(stats.allocatedBytes >= 16 * Self.mebibyte, "\(stats)")
        // ... and the resident set's peak holds them as glibc's: a plateau (the frees return nothing), so the high read
        // again once it settled may be read while or after they are freed: live, or free in the arena.
        #expect(peak.liveHeapBytes + peak.allocatorFreeBytes >= 16 * Self.mebibyte, "\(peak)")
        // ... and at exit glibc keeps them free: in its arena, resident, yet not in the top it could trim.
        #expect(end.liveHeapBytes < 4 * Self.mebibyte, "\(end)")
        #expect(end.allocatorFreeBytes >= 16 * Self.mebibyte, "\(end)")
        #expect((end.allocatorPagesBytes ?? 0) >= 16 * Self.mebibyte, "\(end)")
        #expect(end.purgeableBytes < 4 * Self.mebibyte, "\(end)")
        #expect((end.arenaCount ?? 0) >= 1, "\(end)")
        // The quality bar: the parts add up to the measured resident set within 2% at each point.
        for breakdown in [peak, end] {
            #expect(
                abs(breakdown.unexplainedFraction) <= 0.02,
                "unexplained \(breakdown.unexplainedBytes) of \(breakdown.measuredBytes): \(breakdown)")
        }
        // No jemalloc figure: jemalloc is not loaded, so its active, retained and metadata bytes are unknown (0 in the
        // record), while the allocated figure is glibc's bytes in use and resident what glibc holds from the kernel.
        #expect(stats.activeBytes == 0 && stats.retainedBytes == 0 && stats.metadataBytes == 0, "\(stats)")
        #expect(stats.residentBytes >= stats.allocatedBytes, "\(stats)")
        let report = try String(contentsOfFile: "\(trial.out)/report.md", encoding: .utf8)
        #expect(report.contains("| `pinned` | `glibc` | peak |") || report.contains("| `glibc` | peak |"), "\(report)")
    }

    @Test func theSameProgramOnJemallocSaysJemalloc() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let outcome = try trial.profile([], [ProgramTrial.agentProbe, "pinned", "1KiB", "4096", "100"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("pinned allocator 1 held 4194304"), "\(outcome.stdout)")
        let result = try #require(try trial.record().report.scenarios.first?.cases.first)
        #expect(result.measurements?.program?.allocator == .jemalloc)
        let end = try #require(result.measurements?.program?.residentExplained?.first { $0.point == .end })
        #expect(end.allocator == nil && end.releasableBytes == nil, "\(end)")
    }

    @Test func exactCountsOnGlibcSeeEveryBlock() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let outcome = try trial.profile(
            ["--allocator", "glibc", "--peak", "exact"], [ProgramTrial.agentProbe, "pinned", "1KiB", "4096", "100"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        // The agent's live count while the blocks are held: glibc's usable bytes, 1,032 of a 1 KiB request.
        let live = try #require(
            outcome.stdout.split(separator: "\n").first { $0.hasPrefix("pinned allocator 2") }?.split(separator: " ")
                .last.flatMap { Int($0) }, "\(outcome.stdout)")
        #expect(live >= 4096 * 1032 && live < 4096 * 1032 + 4 * Self.mebibyte, "\(outcome.stdout)")
    }

    @Test func theHeapGraphFindsAProgramsLeaksOnGlibc() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let outcome = try trial.profile(
            ["--allocator", "glibc", "--heap-graph"], [ProgramTrial.agentProbe, "leaks", "at-exit"])
        #expect(outcome.status == 2, "\(outcome.stdout)\(outcome.stderr)")
        let heap = try #require(try trial.rows("instrumented.csv").first)
        // The same 3 lost blocks in 1 cycle; glibc's usable bytes: 1,000 + 2 x 2,008.
        #expect(heap["leaked_blocks"] == "3" && heap["leaked_cycles"] == "1", "\(heap)")
        #expect(heap["leaked_bytes"] == "5016", "\(heap)")
    }

    /// A strategy's `allocator:` puts the same program on both allocators in one run, side by side; `--allocator`
    /// overrides it for the whole run.
    @Test func twoStrategiesRunTheSameProgramOnEachAllocator() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let scenario = try trial.script(
            "both.yaml",
            """
            scenario: both
            workload: command
            strategies:
              - name: on-jemalloc
                command: agent-probe pinned 1KiB 4096 100
              - name: on-glibc
                command: agent-probe pinned 1KiB 4096 100
                allocator: glibc
            repetitions: 1

            """, mode: 0o644)
        func allocators(_ options: [String]) throws -> [String: Allocator?] {
            let outcome = try trial.memharness(["run", scenario, "--out", trial.out] + options)
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let cases = try trial.record().report.scenarios.flatMap(\.cases)
            return Dictionary(uniqueKeysWithValues: cases.map { ($0.strategy, $0.measurements?.program?.allocator) })
        }
        #expect(try allocators([]) == ["on-jemalloc": .jemalloc, "on-glibc": .glibc])
        let report = try String(contentsOfFile: "\(trial.out)/report.md", encoding: .utf8)
        #expect(report.contains("| `on-jemalloc` | `jemalloc` | peak |"), "\(report)")
        #expect(report.contains("| `on-glibc` | `glibc` | peak |"), "\(report)")
        #expect(try allocators(["--allocator", "glibc"]) == ["on-jemalloc": .glibc, "on-glibc": .glibc])
    }

    @Test func aStrategysBadAllocatorIsRefusedAtItsPlace() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let scenario = try trial.script(
            "bad.yaml",
            """
            scenario: bad
            workload: command
            strategies:
              - name: probe
                command: agent-probe pinned 1KiB 16 10
                allocator: glib
            repetitions: 1

            """, mode: 0o644)
        let outcome = try trial.memharness(["run", scenario, "--out", trial.out])
        #expect(outcome.status == 64, "\(outcome.stderr)")
        let message = "bad.yaml:6:16: bad value 'glib' for 'allocator'; expected one of: jemalloc, glibc"
        #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: trial.out))
    }

    @Test func aBadAllocatorIsRefusedWithTheValidChoices() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        let outcome = try trial.profile(["--allocator", "tcmalloc"], ["/bin/true"])
        #expect(outcome.status == 64, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("tcmalloc") && outcome.stderr.contains("'jemalloc'"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("'glibc'"), "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: trial.out))
    }

    @Test func aWorkloadThatRunsInsideMemharnessIsRefusedOnGlibc() throws {
        let trial = try ProgramTrial()
        defer { trial.remove() }
        try trial.script(
            "inside.yaml",
            """
            scenario: inside
            workload: calibration
            strategies:
              - hold-large
            steps:
              - allocate
            repetitions: 1

            """, mode: 0o644)
        let outcome = try trial.memharness(["run", "inside.yaml", "--allocator", "glibc", "--out", trial.out])
        #expect(outcome.status == 64, "\(outcome.stderr)")
        #expect(outcome.stderr.contains("inside.yaml:2:"), "\(outcome.stderr)")
        #expect(outcome.stderr.contains("--allocator glibc runs programs only"), "\(outcome.stderr)")
        #expect(!FileManager.default.fileExists(atPath: trial.out))
    }
}
