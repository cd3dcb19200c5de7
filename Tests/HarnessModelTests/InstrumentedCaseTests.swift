import Foundation
import HarnessModel
import TestSupport
import Testing

/// An instrumented case is named by what it recorded, never numbered as a repetition: in run.json it has
/// `instrumentation` and no `repetition`, and records written before (`attributed: true` with the next repetition
/// number) read as instrumented cases.
struct InstrumentedCaseTests {
    static func json(_ value: some Encodable) throws -> [String: Any] {
        let data = try JSONEncoder().encode(value)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func anInstrumentedCaseIsWrittenWithItsInstrumentationAndNoRepetition() throws {
        let measured = CaseResult.draft(strategy: "screen", repetition: 3) { _ in }
        var heap = CaseResult.draft(strategy: "screen", repetition: 0) {
            $0.heapGraph = HeapLeakFixture.graph(leaked: 1)
        }
        heap.instrumentation = .heap
        let measuredJSON = try Self.json(measured)
        #expect(measuredJSON["repetition"] as? Int == 3 && measuredJSON["instrumentation"] == nil)
        let heapJSON = try Self.json(heap)
        #expect(heapJSON["instrumentation"] as? String == "heap" && heapJSON["repetition"] == nil)
        #expect(try JSONDecoder().decode(CaseResult.self, from: JSONEncoder().encode(heap)) == heap)
        #expect(heap.label == "\(heap.scenario) / screen #heap" && measured.label.hasSuffix("#3"))
    }

    @Test func olderRecordsReadTheirAttributedCasesAsInstrumented() throws {
        var stacks = CaseResult.draft(strategy: "screen", repetition: 4) { _ in }
        var legacy = try Self.json(stacks)
        legacy["attributed"] = true
        var heapOnly = try Self.json(
            CaseResult.draft(strategy: "screen", repetition: 5) { $0.heapGraph = HeapLeakFixture.graph(leaked: 1) })
        heapOnly["attributed"] = true
        var plain = try Self.json(stacks)
        plain["attributed"] = false
        let decode = { (object: [String: Any]) in
            try JSONDecoder().decode(CaseResult.self, from: JSONSerialization.data(withJSONObject: object))
        }
        let read = try decode(legacy)
        #expect(read.instrumentation == .stacks && read.repetition == 0)
        let readHeap = try decode(heapOnly)
        #expect(readHeap.instrumentation == .heap && readHeap.repetition == 0)
        let readPlain = try decode(plain)
        #expect(readPlain.instrumentation == nil && readPlain.repetition == 4)
        stacks.repetition = 0
        stacks.instrumentation = .stacks
        #expect(read == stacks)
    }
}
