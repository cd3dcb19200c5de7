import HarnessModel
import HeapGraph
import WorkloadKit

/// A made-up heap built block by block, with addresses handed out in order and edges named by field.
struct GraphFixture {
    var builder: HeapSnapshotBuilder
    private var nextAddress: UInt64
    private let spacing: UInt64

    /// Blocks at `firstAddress`, `firstAddress + spacing`, …: another run's heap has other addresses.
    init(label: String = "after teardown", firstAddress: UInt64 = 0x10_0000, spacing: UInt64 = 0x100) {
        builder = HeapSnapshotBuilder(label: label)
        nextAddress = firstAddress
        self.spacing = spacing
    }

    @discardableResult
    mutating func block(
        _ type: String, bytes: Int = 48, kind: HeapBlockKind = .swiftObject, stack: [String]? = nil
    ) -> UInt32 {
        defer { nextAddress += spacing }
        return builder.addBlock(address: nextAddress, sizeBytes: bytes, kind: kind, typeName: type, stack: stack)
    }

    mutating func edge(
        _ from: UInt32, _ to: UInt32, _ field: String? = nil, kind: HeapEdgeKind = .strong, offset: Int = 16
    ) {
        builder.addEdge(from: from, to: to, byteOffset: offset, kind: kind, fieldName: field)
    }

    mutating func global(_ symbol: String, _ block: UInt32, module: String = "App") {
        builder.addRoot(.global(symbol: symbol, module: module), description: symbol, block: block, slotAddress: 0x5000)
    }

    mutating func stack(_ function: String, _ block: UInt32, thread: Int = 1) {
        builder.addRoot(
            .threadStack(threadID: thread, threadName: "main", frameFunction: function),
            description: "thread \(thread) in \(function)", block: block, slotAddress: 0x7ff0_0000)
    }

    func snapshot() throws -> HeapSnapshot { try builder.build() }

    func analyse(_ targets: [HeapPathTarget] = [], limits: HeapGraphLimits = HeapGraphLimits()) throws
        -> HeapCaptureSummary
    {
        HeapAnalysis.analyse(try snapshot(), options: HeapAnalysisOptions(targets: targets, limits: limits)).summary
    }
}

extension SeededRandom {
    mutating func below(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &self) }
}

extension HeapTypeName {
    static func object(_ name: String) -> HeapTypeName { HeapTypeName(name: name, kind: .swiftObject) }
}
