import HarnessModel
import Reports
import Testing

/// The words of a case that did not complete: the model holds the typed reason, Reports says it.
struct CaseFailureWordingTests {
    @Test func aMemoryLimitSaysWhenWhatAndTheWarningsBeforeIt() {
        let hit = MemoryLimitHit(
            timeNanoseconds: 1_420_000_000, footprintBytes: 315_000_000, limitBytes: 300 << 20, footprint: .allocated,
            warningsBefore: 1)
        #expect(
            CaseFailure.memoryLimit(hit).text
                == "killed by memory limit at 1.42 s, 300.41 MiB allocated (limit 300.00 MiB), after 1 memory warning")
        var twice = hit
        twice.warningsBefore = 2
        #expect(CaseFailure.memoryLimit(twice).text.hasSuffix(", after 2 memory warnings"))
        twice.warningsBefore = 0
        #expect(!CaseFailure.memoryLimit(twice).text.contains("warning"))
    }

    @Test func aCrashNamesItsSignalAndItsMessageWhenThereIsOne() {
        let crash = CaseCrash(signal: 6, signalName: "SIGABRT", message: "Fatal error: boom")
        #expect(CaseFailure.crash(crash).text == "killed by signal 6 (SIGABRT): Fatal error: boom")
        #expect(
            CaseFailure.crash(CaseCrash(signal: 11, signalName: "SIGSEGV", message: "")).text
                == "killed by signal 11 (SIGSEGV)")
    }

    @Test func aTimeoutSaysItsLimitAndAMessageIsKeptAsItCame() {
        #expect(
            CaseFailure.timeout(limitNanoseconds: 120_000_000_000).text == "stopped after the 120.00 s case timeout")
        #expect(CaseFailure.workload("the store closed").text == "the store closed")
        #expect(CaseFailure.notMeasured("no agent").message == "no agent")
        #expect(CaseFailure.crash(CaseCrash(signal: 6, signalName: "SIGABRT", message: "x")).message == nil)
    }
}
