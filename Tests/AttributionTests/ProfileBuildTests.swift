import Attribution
import HarnessModel
import Symbols
import Testing

struct ProfileBuildTests {
    func profile() throws -> AllocationProfile {
        try Attribution.build(RecordFixture.record(), source: "fixture.record", frames: RecordFixture.frames)
    }

    func stack(_ profile: AllocationProfile, endingIn function: String, line: Int? = nil) -> AllocationStack? {
        profile.stacks.first { stack in
            guard let last = profile.frames(of: stack).last else { return false }
            return last.function == function && (line == nil || last.line == line)
        }
    }

    @Test func thePeakIsNetOfTheBaselinePerStackAndFoldedStacksMerge() throws {
        let profile = try profile()
        #expect(profile.peakLevelBytes == 150_000_000)
        #expect(profile.baselineLevelBytes == 1_048_576)
        #expect(profile.peakNetBytes == 150_000_000 - 1_048_576)
        #expect(profile.sampleMeanBytes == 65536)
        #expect(profile.peakTimeNanoseconds == 350_000_000)
        #expect(profile.truncatedStacks == 1)

        // Stack 1: allocator and harness frames folded; the inlined append kept as a library frame.
        let deliver43 = try #require(profile.stacks.first)
        #expect(
            profile.frames(of: deliver43).map(\.function) == [
                "LiveQueryCase.run(_:context:)", "LiveQueryApp.deliver(_:)",
                "specialized Array.append(_:)",
            ])
        #expect(profile.frames(of: deliver43).map(\.isLibrary) == [false, false, true])
        #expect(deliver43.peakLiveBytes == 100_663_296 && deliver43.peakLiveCount == 1536)

        // Stacks 2 (net of its baseline), 5 (another executor closure) and 8 (truncated, no harness frames) fold alike.
        let deliver42 = try #require(stack(profile, endingIn: "LiveQueryApp.deliver(_:)", line: 42))
        #expect(deliver42.peakLiveBytes == (16_777_216 - 65536) + 4_194_304 + 65536)
        #expect(deliver42.peakLiveCount == 255 + 64 + 1)

        // Dispatch worker: thread entry folded, dispatch frames kept as library frames.
        let observe = try #require(stack(profile, endingIn: "closure #1 in LiveQueryApp.observe()"))
        #expect(
            profile.frames(of: observe).map(\.function) == [
                "_dispatch_worker_thread2", "_dispatch_client_callout",
                "closure #1 in LiveQueryApp.observe()",
            ])

        // Stack 7 held more at the baseline than at the peak: nothing of the peak, but kept for its iteration.
        let shrunk = try #require(
            profile.stacks.first {
                profile.frames(of: $0).map(\.function) == ["LiveQueryCase.run(_:context:)", "DocumentStore.apply(_:)"]
            })
        #expect(shrunk.peakLiveBytes == 0 && shrunk.peakLiveCount == 0)

        // An address outside every module is named by itself.
        #expect(stack(profile, endingIn: "0xdead0001")?.peakLiveBytes == 131_072)

        #expect(profile.sampledPeakLiveBytes == 100_663_296 + 20_971_520 + 25_165_824 + 12_582_912 + 131_072)
        // Largest first, and every frame index is in range.
        #expect(profile.stacks.map(\.peakLiveBytes) == profile.stacks.map(\.peakLiveBytes).sorted(by: >))
        #expect(profile.stacks.allSatisfy { $0.frameIndices.allSatisfy(profile.frames.indices.contains) })
        #expect(profile.frames == profile.frames.sorted())
    }

    @Test func noAllocatorOrHarnessFrameAndNoMangledNameIsLeft() throws {
        let profile = try profile()
        let names = profile.frames.map(\.function)
        for unwanted in [
            "malloc", "swift_slowAlloc", "swift_allocObject", "malloc_default", "memharness_agent_sample_stack",
            "_start", "main", "__libc_start_call_main", "start_thread", "clone3",
        ] {
            #expect(!names.contains(unwanted), "\(unwanted) should be folded")
        }
        #expect(!names.contains { $0.contains("CaseExecutor") || $0.contains("RunCaseCommand") })
        #expect(!(try Golden.json(profile)).contains("$s"))
    }

    @Test func iterationMarksBecomeLiveSetsInOrder() throws {
        let profile = try profile()
        #expect(profile.iterations.map(\.phase) == ["churn", "churn", "churn", "churn"])
        #expect(profile.iterations.map(\.iteration) == [0, 1, 2, 3])
        #expect(profile.iterations.map(\.levelBytes) == [20_000_000, 21_000_000, 22_000_000, 23_000_000])
        let deliverIndex = try #require(
            profile.stacks.firstIndex { profile.frames(of: $0).last?.function == "specialized Array.append(_:)" })
        #expect(
            profile.iterations.map { $0.live.first { $0.stack == deliverIndex }?.liveBytes } == [
                1_048_576, 2_097_152, 3_145_728, 4_194_304,
            ])
        let growth = profile.siteGrowth()
        #expect(growth.first?.site.function == "LiveQueryApp.deliver(_:)")
        #expect(growth.first?.site.line == 43)
        #expect(growth.first?.fit.slopeBytesPerIteration == 1_048_576)
    }

    @Test func profileMatchesGolden() throws {
        try Golden.check(Golden.json(profile()), "fixture-profile.json")
    }

    @Test func aRecordWithoutAPeakSaysWhichMarksItHas() throws {
        let text = "memharness-agent-record 1\nstack 1 0x10\nmark baseline 1 2\nlive 1 5 1\nmark end 3 4\nend\n"
        let record = try AgentRecord.parse(text, source: "nopeak.record")
        #expect(
            throws: AttributionError.missingMark(
                source: "nopeak.record", label: "peak", available: ["baseline", "end"])
        ) {
            try Attribution.build(record, source: "nopeak.record", frames: [:])
        }
    }

    @Test func theLastPeakMarkIsThePeak() throws {
        let text = """
            memharness-agent-record 1
            stack 1 0x10
            mark peak 5 100
            live 1 10 1
            mark peak 9 300
            live 1 30 3
            end
            """
        let profile = try Attribution.build(AgentRecord.parse(text), source: "r", frames: [:])
        #expect(profile.peakLevelBytes == 300)
        #expect(profile.stacks.first?.peakLiveBytes == 30)
        #expect(profile.baselineLevelBytes == 0)
    }

    @Test func withoutToolsEveryFrameIsNamedByModuleAndOffset() throws {
        let attributed = try Attribution.profile(
            recordText: RecordFixture.text, source: "fixture.record",
            symbolizer: Symbolizer(tools: []))
        let names = Set(attributed.profile.frames.map(\.function))
        // return address - 1 - load bias: 0x555555561101 - 1 - 0x555555554000.
        #expect(names.contains("memharness+0xd100"))
        #expect(names.allSatisfy { $0.contains("+0x") || $0.hasPrefix("0x") })
        #expect(attributed.diagnostics.contains { $0.message.contains("no llvm-symbolizer or addr2line found") })
    }
}
