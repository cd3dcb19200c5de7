import HarnessModel
import Testing

@testable import Runner

/// A server's leaked blocks per request leave out known leaks, as its leak figures do.
struct ServerLeakMetricTests {
    @Test func aSuppressedLeakIsNotALeakedBlockPerRequest() throws {
        // At exit: glibc's loader block (a known leak, by its signature) and 160 blocks the handlers leaked.
        let loader = HeapLeakGroup(
            kind: .rootLeak, signature: "bb461cc75b67", blocks: 1, bytes: 64, rootBlocks: 1,
            rootType: HeapTypeName(name: "", kind: .unknown, unnamedBlockBytes: 64), types: [])
        let records = HeapLeakGroup(
            kind: .rootCycle, signature: "f05359ddaf19", count: 80, blocks: 160, bytes: 80 * 4144, rootBlocks: 80,
            rootType: HeapTypeName(name: "App.AuditRecord", kind: .swiftObject), types: [])
        var capture = HeapCaptureSummary(label: "at exit", timeNanoseconds: 0)
        capture.leakedBlocks = 161
        capture.leakedBytes = 64 + 80 * 4144
        capture.groups = [records, loader]
        let summary = HeapGraphSummary(captures: [capture])
        var served = ServedRun()
        served.requests = 80
        let known = [LeakSuppression(.signature("bb461cc75b67"), reason: "glibc's loader")]
        // The probe first: without the suppression every unreachable block counts.
        #expect(served.leakMetrics(summary, suppressions: []).first?.value == 161.0 / 80)
        #expect(served.leakMetrics(summary, suppressions: known).first?.value == 2)
        // A leak-free server whose only unreachable block is the known one leaks nothing per request.
        capture.leakedBlocks = 1
        capture.leakedBytes = 64
        capture.groups = [loader]
        let clean = HeapGraphSummary(captures: [capture])
        #expect(served.leakMetrics(clean, suppressions: known).first?.value == 0)
    }
}
