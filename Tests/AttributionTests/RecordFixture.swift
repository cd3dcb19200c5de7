import Attribution
import Foundation
import Symbols
import Testing

/// A made-up record of a live-query case, and made-up frames for its addresses (what a symbolizer
/// would say), so folding and profile building can be tested without tools.
enum RecordFixture {
    static let executable = "/work/.build/debug/memharness"
    static let swiftCore = "/opt/swift/usr/lib/swift/linux/libswiftCore.so"
    static let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
    static let jemalloc = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
    static let agent = "/work/.build/debug/libmemharness-agent.so"
    static let dispatch = "/opt/swift/usr/lib/swift/linux/libdispatch.so"

    static let text = """
        memharness-agent-record 1
        pid 4242
        program /work/.build/debug/memharness
        stackSampleBytes 65536
        exact 1048576 150000000 2000000
        module 0x555555554000 0x555555560000 0x555555700000 /work/.build/debug/memharness
        module 0x7f0000000000 0x7f0000100000 0x7f0000400000 /opt/swift/usr/lib/swift/linux/libswiftCore.so
        module 0x7f1000000000 0x7f1000028000 0x7f1000190000 /usr/lib/x86_64-linux-gnu/libc.so.6
        module 0x7f2000000000 0x7f2000010000 0x7f2000090000 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2
        module 0x7f3000000000 0x7f3000001000 0x7f3000009000 /work/.build/debug/libmemharness-agent.so
        module 0x7f4000000000 0x7f4000010000 0x7f4000080000 /opt/swift/usr/lib/swift/linux/libdispatch.so
        stack 1 0x7f3000001101 0x7f3000001001 0x7f2000010001 0x7f0000100101 0x7f0000100201 0x555555561101 0x555555562001 0x555555563001 0x555555563101 0x555555564001 0x555555564101 0x7f1000030001 0x555555564201
        stack 2 0x7f3000001001 0x7f0000100101 0x7f0000100201 0x555555561001 0x555555562001 0x555555563001 0x555555563101 0x555555564001 0x555555564101 0x7f1000030001 0x555555564201
        stack 3 0x7f3000001001 0x7f0000100101 0x7f0000100301 0x555555565001 0x555555562001 0x555555563001 0x555555563101 0x555555564001 0x555555564101 0x7f1000030001 0x555555564201

        stack 4 0x7f3000001001 0x555555565101 0x7f4000010101 0x7f4000010001 0x7f1000040001 0x7f1000040101
        stack 5 0x7f3000001001 0x7f0000100101 0x7f0000100201 0x555555561001 0x555555562001 0x555555563201 0x555555563101
        stack 6 0x7f3000001001 0xdead0001
        stack 7 0x7f3000001001 0x7f0000100101 0x555555565001 0x555555562001
        stack 8 0x7f3000001001 0x555555561001 0x555555562001
        truncated 8
        futureKind 1 2 3
        mark baseline 1200000 1048576
        live 7 200000 4
        live 2 65536 1
        mark iteration.churn.0 100000000 20000000
        live 1 1048576 16
        live 3 4194304 64
        mark iteration.churn.1 110000000 21000000
        live 1 2097152 32
        live 3 4194304 64
        mark iteration.churn.2 120000000 22000000
        live 1 3145728 48
        live 3 4194304 64
        mark iteration.churn.3 130000000 23000000
        live 1 4194304 64
        live 3 4194304 64
        live 7 65536 1
        mark peak 350000000 150000000
        live 1 100663296 1536
        live 2 16777216 256
        live 3 25165824 384
        live 4 12582912 192
        live 5 4194304 64
        live 6 131072 2
        live 7 65536 1
        live 8 65536 1
        mark end 900000000 1200000
        live 7 65536 1
        end

        """

    /// What a symbolizer says about each return address: frames innermost first.
    static let frames: [UInt64: [SymbolizedFrame]] = [
        // The agent, jemalloc, the Swift runtime: allocator frames.
        0x7f30_0000_1101: [SymbolizedFrame(function: "memharness_agent_sample_stack", module: agent)],
        0x7f30_0000_1001: [SymbolizedFrame(function: "malloc", module: agent)],
        0x7f20_0001_0001: [SymbolizedFrame(function: "malloc_default", module: jemalloc)],
        0x7f00_0010_0101: [SymbolizedFrame(function: "swift_slowAlloc", module: swiftCore)],
        0x7f00_0010_0201: [SymbolizedFrame(function: "swift_allocObject", module: swiftCore)],
        0x7f00_0010_0301: [
            SymbolizedFrame(
                function: "specialized _NativeDictionary.resize(capacity:)",
                linkageName: "$ss17_NativeDictionaryV6resize8capacityySi_tFSS_SiTg5", module: swiftCore)
        ],
        // The workload: an address with an inlined standard-library call, innermost first.
        0x5555_5556_1101: [
            SymbolizedFrame(
                function: "specialized Array.append(_:)", linkageName: "$sSa6appendyyxnFSi_Tg5", module: executable),
            SymbolizedFrame(
                function: "LiveQueryApp.deliver(_:)", linkageName: "$s17LiveQueryWorkload0aB3AppC7deliveryySaySiGF",
                file: "/work/Sources/Workloads/LiveQuery/LiveQueryApp.swift", line: 43, module: executable),
        ],
        0x5555_5556_1001: [
            SymbolizedFrame(
                function: "LiveQueryApp.deliver(_:)", linkageName: "$s17LiveQueryWorkload0aB3AppC7deliveryySaySiGF",
                file: "/work/Sources/Workloads/LiveQuery/LiveQueryApp.swift", line: 42, module: executable)
        ],
        0x5555_5556_2001: [
            SymbolizedFrame(
                function: "LiveQueryCase.run(_:context:)",
                linkageName: "$s17LiveQueryWorkload0aB4CaseC3run_7contextyAA4StepV_AA0G7ContextCtKF",
                file: "/work/Sources/Workloads/LiveQuery/LiveQueryCase.swift", line: 57, module: executable)
        ],
        0x5555_5556_5001: [
            SymbolizedFrame(
                function: "DocumentStore.apply(_:)", linkageName: "$s13DocumentStoreAAC5applyyyAA6ChangeVF",
                file: "/work/Sources/Workloads/DocumentStore/DocumentStore.swift", line: 88, module: executable)
        ],
        0x5555_5556_5101: [
            SymbolizedFrame(
                function: "closure #1 in LiveQueryApp.observe()",
                linkageName: "$s17LiveQueryWorkload0aB3AppC7observeyyFyycfU_",
                file: "/work/Sources/Workloads/LiveQuery/LiveQueryApp.swift", line: 30, module: executable)
        ],
        // The harness above the workload: entry frames.
        0x5555_5556_3001: [
            SymbolizedFrame(
                function: "closure #1 in CaseExecutor.run(_:scratchDirectory:checkAllocator:)",
                linkageName:
                    "$s11Measurement12CaseExecutorV3run_16scratchDirectory14checkAllocatorAA0B6ResultVAA0B4SpecV_SSSbtKFyyKXEfU_",
                file: "/work/Sources/Measurement/CaseExecutor.swift", line: 120, module: executable)
        ],
        0x5555_5556_3201: [
            SymbolizedFrame(
                function: "closure #2 in CaseExecutor.run(_:scratchDirectory:checkAllocator:)",
                linkageName:
                    "$s11Measurement12CaseExecutorV3run_16scratchDirectory14checkAllocatorAA0B6ResultVAA0B4SpecV_SSSbtKFyyKXEfU0_",
                file: "/work/Sources/Measurement/CaseExecutor.swift", line: 150, module: executable)
        ],
        0x5555_5556_3101: [
            SymbolizedFrame(
                function: "CaseExecutor.run(_:scratchDirectory:checkAllocator:)",
                linkageName:
                    "$s11Measurement12CaseExecutorV3run_16scratchDirectory14checkAllocatorAA0B6ResultVAA0B4SpecV_SSSbtKF",
                file: "/work/Sources/Measurement/CaseExecutor.swift", line: 108, module: executable)
        ],
        0x5555_5556_4001: [
            SymbolizedFrame(
                function: "RunCaseCommand.run()", linkageName: "$s10MemHarness14RunCaseCommandV3runyyKF",
                file: "/work/Sources/MemHarness/RunCaseCommand.swift", line: 31, module: executable)
        ],
        0x5555_5556_4101: [
            SymbolizedFrame(function: "main", file: "/work/Sources/memharness/main.swift", line: 3, module: executable)
        ],
        0x5555_5556_4201: [SymbolizedFrame(function: "_start", module: executable)],
        0x7f10_0003_0001: [SymbolizedFrame(function: "__libc_start_call_main", module: libc)],
        0x7f10_0004_0001: [SymbolizedFrame(function: "start_thread", module: libc)],
        0x7f10_0004_0101: [SymbolizedFrame(function: "clone3", module: libc)],
        // Dispatch: library frames at the root of a worker thread's stack.
        0x7f40_0001_0101: [SymbolizedFrame(function: "_dispatch_client_callout", module: dispatch)],
        0x7f40_0001_0001: [SymbolizedFrame(function: "_dispatch_worker_thread2", module: dispatch)],
        0xdead_0001: [SymbolizedFrame(function: "0xdead0001", module: "[unknown]")],
    ]

    static func record() throws -> AgentRecord {
        try AgentRecord.parse(text, source: "fixture.record")
    }
}

/// Golden files beside the tests; `UPDATE_GOLDEN=1` rewrites them (review the diff).
enum Golden {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    static func check(_ text: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let url = directory.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        let golden = try String(contentsOf: url, encoding: .utf8)
        #expect(
            text == golden, "\(name) differs from its golden file; rerun with UPDATE_GOLDEN=1 and review the diff",
            sourceLocation: sourceLocation)
    }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
    }
}
