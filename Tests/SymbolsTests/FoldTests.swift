import HarnessModel
import Testing

@testable import Symbols

/// The files frames come from (the fold rules read a module by its file name only).
private enum Paths {
    static let executable = "/srv/app/bin/app"
    static let swiftCore = "/srv/toolchain/libswiftCore.so"
    static let libc = "/lib/libc.so.6"
    static let jemalloc = "/lib/libjemalloc.so.2"
    static let agent = "/srv/app/bin/libmemharness-agent.so"
    static let dispatch = "/srv/toolchain/libdispatch.so"
}

struct FoldTests {
    let folder = StackFolder()

    func frame(_ function: String, _ module: String = Paths.executable, linkage: String? = nil)
        -> SymbolizedFrame
    {
        SymbolizedFrame(function: function, linkageName: linkage, module: module)
    }

    /// Frames given root first, as `fold` takes them.
    func folded(_ frames: [SymbolizedFrame]) -> [String] {
        folder.fold(frames).map(\.function)
    }

    @Test(arguments: [
        ("malloc", Paths.agent),
        ("memharness_agent_sample_stack", Paths.agent),
        ("malloc_default", Paths.jemalloc),
        ("je_malloc", "/app/static-binary"),
        ("calloc", Paths.libc),
        ("posix_memalign", Paths.libc),
        ("realloc", Paths.libc),
        ("swift_slowAlloc", Paths.swiftCore),
        ("swift::swift_slowAllocTyped(unsigned long, unsigned long, unsigned long long)", Paths.swiftCore),
        ("swift_allocObject", Paths.swiftCore),
        (
            "_swift_allocObject_(swift::TargetHeapMetadata<swift::InProcess> const*, unsigned long, unsigned long)",
            Paths.swiftCore
        ),
        ("swift_allocBox", Paths.swiftCore),
        ("operator new(unsigned long)", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
        ("operator new[](unsigned long, std::align_val_t)", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
    ])
    func allocatorFramesFoldOffTheLeaf(function: String, module: String) {
        let user = frame("Cache.store(_:)")
        #expect(folded([user, frame(function, module)]) == ["Cache.store(_:)"], "\(function) should fold")
        #expect(folder.matches(frame(function, module), .allocator))
    }

    @Test func onlyTheLeafEndIsFoldedAndAStackNeverVanishes() {
        // malloc in the middle (a callback from inside an allocator would be odd, but must stay).
        #expect(
            folded([frame("a()"), frame("malloc"), frame("b()"), frame("swift_allocObject")]) == [
                "a()", "malloc", "b()",
            ])
        // Nothing but allocator frames: the outermost stays so the bytes remain visible.
        #expect(
            folded([frame("swift_allocObject"), frame("swift_slowAlloc"), frame("malloc", Paths.agent)]) == [
                "swift_allocObject"
            ])
        #expect(folded([]) == [])
    }

    /// A tracked object's stack as a release build records it: the capture's closure is inlined into a
    /// standard-library `withUnsafeMutableBufferPointer`, which sits between two of the agent's frames.
    @Test func libraryFramesInsideTheAllocatorMachineryFoldWithIt() {
        let stack = [
            frame("ScreenFlow.present()", linkage: "$s13Subscriptions10ScreenFlowC7presentyyF"),
            frame("CaseContext.track(_:)", linkage: "$s11WorkloadKit11CaseContextC5trackyyyXlF"),
            frame("LifetimeTracker.track(_:)", linkage: "$s11WorkloadKit15LifetimeTrackerC5trackyyyXlF"),
            frame(
                "static Agent.captureStack(limit:)", linkage: "$s11Measurement5AgentO12captureStack5limitSaySuGSi_tFZ"),
            frame(
                "specialized Array.withUnsafeMutableBufferPointer<A, B>(_:)",
                linkage:
                    "$sSa30withUnsafeMutableBufferPointeryqd__qd__SryxGzqd_0_YKXEqd_0_YKs5ErrorRd_0_r0_lFSu_s5Int32Vs5NeverOTg5"
            ),
            frame(
                "closure #1 in static Agent.captureStack(limit:)",
                linkage: "$s11Measurement5AgentO12captureStack5limitSaySuGSi_tFZs5Int32VSrySuGzXEfU_"),
        ]
        #expect(folded(stack) == ["ScreenFlow.present()"])
        // Library code that called the allocator is kept: the site is still the user's frame below it.
        let growing = [
            frame("Cache.store(_:)"), frame("specialized Array.append(_:)", linkage: "$sSa6appendyyxnFSi_Tg5"),
            frame("swift_allocObject", Paths.swiftCore), frame("malloc", Paths.agent),
        ]
        #expect(folded(growing) == ["Cache.store(_:)", "specialized Array.append(_:)"])
    }

    @Test func harnessFramesAboveTheWorkloadFoldOffTheRoot() {
        let stack = [
            frame("_start"), frame("__libc_start_call_main", Paths.libc), frame("main"),
            frame("RunCaseCommand.run()", linkage: "$s10MemHarness14RunCaseCommandV3runyyKF"),
            frame("ParsableCommand.main()", linkage: "$s14ArgumentParser15ParsableCommandPAAE4mainyyFZ"),
            frame("CaseExecutor.run(_:)", linkage: "$s11Measurement12CaseExecutorV3runyyF"),
            frame("closure #1 in CaseExecutor.run(_:)", linkage: "$s11Measurement12CaseExecutorV3runyyFyyXEfU_"),
            frame("thunk for @escaping @callee_guaranteed () -> ()", linkage: "$sIeg_IeyB_TR"),
            frame("LiveQueryCase.run(_:context:)", linkage: "$s17LiveQueryWorkload0aB4CaseC3runyyF"),
            frame("CaseContext.gauge(_:_:)", linkage: "$s11Measurement11CaseContextC5gaugeyySS_SitF"),
            frame("malloc", Paths.agent),
        ]
        // Everything up to the innermost harness frame goes, the thunk below it too;
        // the harness's CaseContext, called by the workload, stays.
        #expect(folded(stack) == ["LiveQueryCase.run(_:context:)", "CaseContext.gauge(_:_:)"])
    }

    @Test func threadAndProcessEntryFoldOffTheRoot() {
        #expect(
            folded([
                frame("clone3", Paths.libc), frame("start_thread", Paths.libc),
                frame("_dispatch_worker_thread2", Paths.dispatch), frame("work()"), frame("malloc"),
            ])
                == ["_dispatch_worker_thread2", "work()"])
        #expect(
            folded([frame("_start"), frame("__libc_start_main", Paths.libc), frame("main"), frame("malloc")])
                == ["main"], "a program's own main is the user's code")
    }

    @Test func aHarnessFrameThatAllocatesItselfStays() {
        let executor = frame("CaseExecutor.run(_:)", linkage: "$s11Measurement12CaseExecutorV3runyyF")
        #expect(
            folded([frame("main"), executor, frame("swift_allocObject", Paths.swiftCore)]) == [
                "CaseExecutor.run(_:)"
            ])
    }

    @Test func swiftModuleRulesReadTheMangledContextNotTheReadableName() {
        // A user's own type named CaseExecutor is not the harness's.
        let impostor = frame("CaseExecutor.run(_:)", linkage: "$s5MyApp12CaseExecutorV3runyyF")
        #expect(!folder.matches(impostor, .harness))
        // A module whose name starts like the harness's is not the harness.
        #expect(!folder.matches(frame("x()", linkage: "$s15memharnessTools1xyyF"), .harness))
        #expect(folder.matches(frame("x()", linkage: "$s10memharness1xyyF"), .harness))
        #expect(folder.matches(frame("y()", linkage: "_$s10MemHarness1yyyF"), .harness))
    }

    @Test func libraryFramesStayButAreMarked() {
        let frames = folder.fold([
            frame("LiveQueryApp.deliver(_:)", linkage: "$s17LiveQueryWorkload0aB3AppC7deliveryySaySiGF"),
            frame("specialized Array.append(_:)", linkage: "$sSa6appendyyxnFSi_Tg5"),
            frame("specialized _NativeDictionary.resize(capacity:)", Paths.swiftCore),
            frame("strdup", Paths.libc),
            frame("malloc", Paths.agent),
        ])
        #expect(
            frames.map(\.function) == [
                "LiveQueryApp.deliver(_:)", "specialized Array.append(_:)",
                "specialized _NativeDictionary.resize(capacity:)", "strdup",
            ])
        #expect(frames.map(\.isLibrary) == [false, true, true, true])
    }

    /// A block is the harness's when the innermost frame past the allocator and the libraries is memharness's own code
    /// (its bookkeeping of a workload's objects included), the user's when it is the workload's, whoever called it.
    @Test func aBlockIsTheHarnesssWhenItsAllocatingFrameIsTheHarnesss() {
        let main = frame("main", linkage: "main")
        let caseRun = frame("CaseRun.runScript()", linkage: "$s11Measurement7CaseRunC9runScriptyyF")
        let append = frame("specialized Array.append(_:)", linkage: "$sSa6appendyyxnFSi_Tg5")
        let allocate = frame("swift_allocObject", Paths.swiftCore)
        let malloc = frame("malloc", Paths.agent)
        let buffer = frame("SampleBuffer.append(_:)", linkage: "$s11Measurement12SampleBufferV6appendyyF")
        let deliver = frame("LiveQueryApp.deliver(_:)", linkage: "$s17LiveQueryWorkload0aB3AppC7deliveryySaySiGF")
        let track = frame("CaseContext.track(_:)", linkage: "$s11WorkloadKit11CaseContextC5trackyyF")
        let pacer = frame("Pacer.next()", linkage: "$s11WorkloadKit5PacerV4nextyyF")
        #expect(folder.isHarnessAllocation([main, caseRun, buffer, append, allocate, malloc]))
        #expect(folder.isHarnessAllocation([main, caseRun, allocate, malloc]))
        #expect(folder.isHarnessAllocation([main, caseRun, deliver, track, append, malloc]))
        #expect(!folder.isHarnessAllocation([main, caseRun, deliver, append, allocate, malloc]))
        #expect(!folder.isHarnessAllocation([main, caseRun, deliver, pacer, malloc]), "the kit's, for the workload")
        #expect(folder.isHarnessAllocation([main, caseRun, pacer, malloc]), "the kit's, for the harness")
        #expect(!folder.isHarnessAllocation([frame("strdup", Paths.libc), malloc]), "no frame of anyone's code")
        let memo = FoldMemo()
        #expect(folder.isHarnessAllocation([main, caseRun, buffer, append, malloc], memo: memo))
        #expect(!folder.isHarnessAllocation([main, caseRun, deliver, append, malloc], memo: memo))
    }

    @Test func theStandardListNamesAReasonForEveryRule() {
        #expect(StackFolder.standardRules.allSatisfy { !$0.reason.isEmpty })
        let actions: Set<FoldRule.Action> = [.allocator, .entry, .harness, .library, .harnessOwn, .kit]
        #expect(Set(StackFolder.standardRules.map(\.action)) == actions)
        #expect(FoldRule.identifier("Measurement") == "11Measurement")
        #expect(FoldRule.identifier("é") == "2é", "lengths count UTF-8 bytes")
    }
}
