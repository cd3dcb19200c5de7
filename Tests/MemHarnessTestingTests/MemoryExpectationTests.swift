import HarnessModel
import Testing

@testable import MemHarnessTesting

#if os(Linux)
    import Glibc
#endif

/// The verdict as a pure function of made-up figures: the exact messages a person reads.
@Suite struct MemoryExpectationTests {
    private static func figures(
        peak: Int = 0, residue: Int = 0, tracked: [TypeCount] = [], survivors: [TypeCount] = [],
        growth: [Int]? = nil, threadCacheAtEnd: Int = 0
    ) -> MemoryFigures {
        MemoryFigures(
            peakBytes: peak, sampledPeakBytes: peak, residueBytes: residue,
            leaks: LeakMeasurements(
                tracked: tracked, survivors: survivors,
                growth: growth.map { [GrowthSeries(phase: "runs", warmupIterations: 1, liveBytesAfterIteration: $0)] }
                    ?? [],
                threadCacheBytesAtEnd: threadCacheAtEnd),
            iterations: growth?.count ?? 1, settleNanoseconds: 50_000_000)
    }

    @Test func peakOverTheLimitSaysByHowMuchAndWhatToDo() {
        let peak = Int(71.3 * 1_048_576)
        let findings = MemoryExpectation(peakBelow: .mebibytes(64)).findings(in: Self.figures(peak: peak))
        #expect(
            findings == [
                MemoryFinding(
                    kind: .peak,
                    message: "peak 71.30 MiB above the start, over the 64 MiB limit by 7.30 MiB (11%). The peak is "
                        + "the most the closure had allocated at once; hold less at once (stream or page the work, "
                        + "release what is done early), or raise the limit if the growth is intended.")
            ])
    }

    @Test func peakBelowTheLimitPassesAndAtTheLimitFails() {
        let expectation = MemoryExpectation(peakBelow: .mebibytes(64))
        #expect(expectation.findings(in: Self.figures(peak: (64 << 20) - 1)).isEmpty)
        let atLimit = expectation.findings(in: Self.figures(peak: 64 << 20))
        #expect(atLimit.map(\.kind) == [.peak])
        #expect(
            atLimit.first?.message.hasPrefix(
                "peak 64.00 MiB above the start, at the 64 MiB limit (it must stay below).") == true)
    }

    @Test func residueOverTheLimitNamesTheSettleAndTheThreadCacheMargin() {
        let findings = MemoryExpectation(residueBelow: .mebibytes(1)).findings(
            in: Self.figures(residue: 3 << 20, threadCacheAtEnd: 28 << 10))
        #expect(
            findings.map(\.message) == [
                "residue 3.00 MiB (± 28.00 KiB of thread caches) after the closure and a 50.00 ms settle, over the "
                    + "1 MiB limit by 2.00 MiB (200%). The closure left this allocated: a cache, a global, work still "
                    + "queued, or a leak; track the objects it should free with track(_:as:) to see which survive."
            ])
    }

    @Test func survivorsAreListedByTypeWithWhatWasTracked() {
        let figures = Self.figures(
            tracked: [TypeCount(typeName: "ProfileScreen", count: 2), TypeCount(typeName: "Row", count: 3)],
            survivors: [TypeCount(typeName: "ProfileScreen", count: 2), TypeCount(typeName: "Row", count: 1)])
        #expect(
            MemoryExpectation(leaks: .none).findings(in: figures).map(\.message) == [
                "leak: 2 of 2 ProfileScreen and 1 of 3 Row survived the closure. Something still holds them: a "
                    + "reference cycle (a stored closure capturing its owner strongly), a cache, a global, or work "
                    + "still queued; capture weakly or release before the closure returns, or pass leaks: .allowed."
            ])
        #expect(MemoryExpectation(leaks: .allowed).findings(in: figures).isEmpty)
    }

    @Test func growthPerRunIsALeakAndAFlatHeapIsNot() throws {
        let growing = Self.figures(growth: (0..<8).map { 1_000_000 + $0 * 65_536 })
        let findings = MemoryExpectation(leaks: .none).findings(in: growing)
        #expect(findings.map(\.kind) == [.growth])
        #expect(
            findings.first?.message
                == "leak: the live heap grows 64.00 KiB ± 0 B per run over 7 runs after 1 warm-up run. Every run "
                + "keeps something; track the objects the closure creates with track(_:as:) to find which, or pass "
                + "leaks: .allowed.")
        let flat = Self.figures(growth: [1_000_000, 1_000_016, 1_000_000, 1_000_016, 1_000_000, 1_000_016, 1_000_000])
        #expect(MemoryExpectation(leaks: .none).findings(in: flat).isEmpty)
        #expect(try #require(flat.growth).iterations == 6)
    }

    @Test func everyBrokenLimitIsAFindingInAFixedOrder() {
        let figures = Self.figures(
            peak: 10 << 20, residue: 2 << 20, tracked: [TypeCount(typeName: "Cache", count: 1)],
            survivors: [TypeCount(typeName: "Cache", count: 1)])
        let findings = MemoryExpectation(peakBelow: .mebibytes(1), residueBelow: .mebibytes(1), leaks: .none)
            .findings(in: figures)
        #expect(findings.map(\.kind) == [.peak, .residue, .survivors])
        #expect(
            findings[0].message.hasPrefix("peak 10.00 MiB above the start, over the 1 MiB limit by 9.00 MiB (900%)."))
        #expect(findings[2].message.hasPrefix("leak: 1 of 1 Cache survived the closure. Something still holds it:"))
    }

    @Test func smallExcessesAndZeroLimitsStillReadWell() {
        #expect(MemoryExpectation.excess(1_048_577, over: .mebibytes(1)) == "over the 1 MiB limit by 1 B (<1%)")
        #expect(MemoryExpectation.excess(4096, over: .bytes(0)) == "over the 0 B limit by 4.00 KiB")
        #expect(MemoryExpectation.list(["a"]) == "a")
        #expect(MemoryExpectation.list(["a", "b", "c"]) == "a, b and c")
    }

    @Test(arguments: [
        (MemorySize.mebibytes(64), "64 MiB"), (.mebibytes(1.5), "1.5 MiB"), (.kibibytes(512), "512 KiB"),
        (.bytes(100), "100 B"), (.gibibytes(2), "2 GiB"), (.bytes(1_100_000), "1.05 MiB"), (.bytes(-5), "0 B"),
    ])
    func sizesPrintAsAPersonWritesThem(size: MemorySize, text: String) {
        #expect(size.description == text)
    }

    @Test func sizesAreBinaryMultiples() {
        #expect(MemorySize.kibibytes(1).bytes == 1024)
        #expect(MemorySize.mebibytes(1.5).bytes == 1_572_864)
        #expect(MemorySize.gibibytes(1).bytes == 1 << 30)
        #expect(MemorySize.mebibytes(.infinity).bytes == Int.max)
        #expect(MemorySize.kibibytes(1) < .mebibytes(1))
    }
}

/// How a test is named to its replica.
@Suite struct TestIdentityTests {
    @Test func aSwiftTestingTestIsSelectedByItsWholeIDAloneAndSerially() {
        let identity = TestIdentity.swiftTesting(id: "Module.Suite/test(x:)/File.swift:12:4", caseDescription: nil)
        #expect(
            identity.replicaArguments == [
                "--testing-library", "swift-testing", "--filter", #"^Module\.Suite/test\(x:\)/File\.swift:12:4$"#,
                "--no-parallel",
            ])
        #expect(identity.caseKey == nil)
    }

    @Test func anXCTestMethodIsSelectedAsModuleClassSlashMethod() {
        let identity = TestIdentity.xcTest(type: "Module.FeedTests", name: "FeedTests.testScroll")
        #expect(identity.id == "Module.FeedTests/testScroll")
        #expect(identity.replicaArguments == ["Module.FeedTests/testScroll"])
    }

    @Test func regexMetacharactersAreEscaped() {
        #expect(
            TestIdentity.escapingRegex(#"a.b*c+d?e(f)[g]{h}|i^j$k\l"#) == #"a\.b\*c\+d\?e\(f\)\[g\]\{h\}\|i\^j\$k\\l"#)
    }

    @Test func addressesAreBlankedSoCasesReadTheSameInEveryProcess() {
        #expect(
            TestIdentity.blankingAddresses("Case(_kind: (unknown context at $7fd1cac0e35c).x, value: <Foo: 0x5581aa>)")
                == "Case(_kind: (unknown context at $_).x, value: <Foo: 0x_>)")
        #expect(TestIdentity.blankingAddresses("cost $ 0 0x") == "cost $ 0 0x")
    }

    @Test func aRequestConcernsOneTestCaseAndSite() {
        let test = TestIdentity.swiftTesting(id: "M.S/t()/F.swift:1:1", caseDescription: "case 1")
        let request = ReplicaRequest(test: test, site: "M/F.swift:3:9", occurrence: 0, resultPath: "/tmp/r")
        #expect(request.concerns(test, site: "M/F.swift:3:9"))
        #expect(!request.concerns(test, site: "M/F.swift:4:9"))
        #expect(
            !request.concerns(
                .swiftTesting(id: "M.S/t()/F.swift:1:1", caseDescription: "case 2"), site: "M/F.swift:3:9"))
    }

    @Test func runsOfASiteAreCountedPerOwnerAndStartAgainForANewOne() {
        let log = TestRunLog()
        let test = TestIdentity.xcTest(type: "M.C", name: "C.testA")
        #expect(log.next(test, site: "f:1", owner: 1) == 0)
        #expect(log.next(test, site: "f:1", owner: 1) == 1)
        #expect(log.next(test, site: "f:2", owner: 1) == 0)
        #expect(log.next(test, site: "f:1", owner: 2) == 0)
    }

    @Test func theFiguresOfARunSoFarGoToTheNextReplica() {
        let log = TestRunLog()
        let test = TestIdentity.xcTest(type: "M.C", name: "C.testA")
        let figures = MemoryFigures(peakBytes: 7, sampledPeakBytes: 7, residueBytes: 1)
        _ = log.next(test, site: "f:1", owner: 1)
        log.record(figures, test: test, site: "f:1", occurrence: 0, owner: 1)
        log.record(figures, test: test, site: "f:9", occurrence: 0, owner: 99)
        #expect(log.earlier(test, owner: 1) == [EarlierFigures(site: "f:1", occurrence: 0, figures: figures)])
        #expect(log.earlier(test, owner: 2).isEmpty)
        let request = ReplicaRequest(
            test: test, site: "f:2", occurrence: 0, resultPath: "/tmp/r", earlier: log.earlier(test, owner: 1))
        #expect(request.earlierFigures(site: "f:1", occurrence: 0) == figures)
        #expect(request.earlierFigures(site: "f:1", occurrence: 1) == nil)
    }

    @Test func aFailureInTheReplicasOutputIsWhatTheMessageQuotes() {
        let output =
            "\u{25C7} Test run started.\n\u{2718} Test t() recorded an issue at F.swift:3:4: boom\n\u{2714} done\n"
        #expect(
            MemoryTestingError.tail(output)
                == "\nThe replica said:\n\u{2718} Test t() recorded an issue at F.swift:3:4: boom")
        #expect(MemoryTestingError.tail("a\nb\n") == "\nThe replica said:\na\nb")
        #expect(MemoryTestingError.tail("") == "")
    }
}

/// Errors say what went wrong and how to fix it.
@Suite struct MemoryTestingErrorTests {
    @Test func aMissingAllocatorSaysHowToLinkIt() {
        let text = MemoryTestingError.allocator(.notProcessAllocator(movedBytes: 0, expectedAtLeast: 1 << 20))
            .description
        #expect(text.hasPrefix("memory expectations read jemalloc's statistics, so jemalloc must be the allocator"))
        #expect(text.contains("a test target depending on MemHarnessTesting links it"))
        #expect(text.contains("Link the unprefixed libjemalloc"))
    }

    @Test func replicaErrorsNameTheTestAndTheWayOut() {
        let unreached = MemoryTestingError.replicaDidNotReach(
            test: "M.S/t()/F.swift:1:1", site: "M/F.swift:3:9", occurrence: 1, exitStatus: 1,
            output: "\u{2718} Test t() recorded an issue at F.swift:2:3: boom\n")
        #expect(
            unreached.description
                == "the replica of M.S/t()/F.swift:1:1 exited with status 1 without reaching this expectation "
                + "(M/F.swift:3:9, run 2 of that line in the test): the test takes another path in a fresh process "
                + "running it alone. Does it depend on other tests, on files or state left by an earlier run, or on "
                + "parameterized arguments whose descriptions change between processes? Make it self-contained, or "
                + "pass measuring: .thisProcess with swift test --no-parallel\nThe replica said:\n"
                + "\u{2718} Test t() recorded an issue at F.swift:2:3: boom")
        let timedOut = MemoryTestingError.replicaTimedOut(test: "T", limitNanoseconds: 5_000_000_000, output: "")
        #expect(
            timedOut.description
                == "the replica of T did not finish the measured closure within 5.00 s and was killed; raise "
                + "MemoryMeasuring.timeLimit if the test is this slow, or look for a wait that never ends in a "
                + "fresh process")
        #expect(
            MemoryTestingError.replicaNotStarted(executable: "/x", errno: ENOENT).description.hasSuffix(
                "pass measuring: .thisProcess"))
    }
}
