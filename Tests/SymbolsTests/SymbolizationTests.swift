import Foundation
import HarnessModel
import Symbols
import Testing

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - A real stack of this test bundle

private typealias BacktraceFunction = @convention(c) (UnsafeMutablePointer<UnsafeMutableRawPointer?>?, Int32) -> Int32

/// The return addresses glibc's `backtrace` sees, innermost first, captured by `capturingComparator`.
nonisolated(unsafe) private var capturedReturnAddresses: [UInt64] = []

/// A function with C linkage (the name a C caller and the symbol table use), called by libc's qsort.
@_cdecl("memharness_attribution_test_comparator")
func capturingComparator(_ left: UnsafeRawPointer?, _ right: UnsafeRawPointer?) -> Int32 {
    if capturedReturnAddresses.isEmpty {
        capturedReturnAddresses = captureReturnAddresses()
    }
    return 0
}

/// The line of the `backtrace` call, which the innermost return address points into.
nonisolated(unsafe) private var captureLine = 0

@inline(never)
func captureReturnAddresses() -> [UInt64] {
    guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "backtrace") else { return [] }
    let backtrace = unsafeBitCast(symbol, to: BacktraceFunction.self)
    var buffer = [UnsafeMutableRawPointer?](repeating: nil, count: 64)
    let count = backtrace(&buffer, 64)
    captureLine = #line - 1  // the line of the `backtrace` call above
    return buffer.prefix(Int(max(count, 0))).map { UInt64(UInt(bitPattern: $0)) }
}

/// Sorts two numbers with libc's qsort and the capturing comparator: a stack of Swift, C-linkage and libc frames.
let sortCallLine = #line + 5
@inline(never)
func stackThroughQsort() -> [UInt64] {
    capturedReturnAddresses = []
    var values: [Int32] = [2, 1]
    values.withUnsafeMutableBytes { raw in if let base = raw.baseAddress { qsort(base, 2, 4, capturingComparator) } }
    return capturedReturnAddresses
}

@Suite(.serialized, .timeLimit(.minutes(2)))
struct SymbolizationTests {
    static let thisFile = #filePath
    let environment = ProcessInfo.processInfo.environment

    func realStack() throws -> (addresses: [UInt64], modules: ModuleMap) {
        let addresses = stackThroughQsort()
        try #require(addresses.count >= 4, "backtrace gave \(addresses.count) frames")
        let modules = ProcessMaps.read().modules
        let uncovered = addresses.filter { modules.module(containing: $0) == nil }
        #expect(uncovered.isEmpty, "addresses outside every module: \(uncovered.map { String($0, radix: 16) })")
        return (addresses, modules)
    }

    /// The symbolized frames of the real stack, innermost first.
    func symbolizedFrames(_ symbolizer: Symbolizer) throws -> [SymbolizedFrame] {
        let (addresses, modules) = try realStack()
        let (frames, diagnostics) = symbolizer.symbolize(returnAddresses: addresses, modules: modules)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        return addresses.flatMap { frames[$0] ?? [] }
    }

    @Test func llvmSymbolizerNamesSwiftCAndLibcFramesWithFileAndLine() throws {
        let symbolizer = Symbolizer.system(environment: environment)
        let tool = try #require(symbolizer.tools.first)
        #expect(tool.name == "llvm-symbolizer", "llvm-symbolizer should be found on PATH or beside swift")
        try checkRealFrames(symbolizedFrames(Symbolizer(tools: [tool])), inlinedAndLibc: true)
    }

    @Test func llvmSymbolizerAnswersEveryModuleFromOneProcessAndTheSymbolTablesWhereThereIsNoLineTable() throws {
        let (addresses, modules) = try realStack()
        let tool = try #require(Symbolizer.system(environment: environment).tools.first as? LLVMSymbolizerTool)
        // This test bundle has DWARF line tables; the Swift runtime's library (shipped stripped of them) has none.
        let own = try #require(modules.module(containing: addresses[0]))
        #expect(ELFSymbols.cached(path: own.path).hasLineInformation)
        let runtime = try #require(
            ProcessMaps.read().modules.modules.first { $0.path.hasSuffix("/libswiftCore.so") }, "the Swift runtime")
        #expect(!ELFSymbols.cached(path: runtime.path).hasLineInformation)
        // The batch answers as one module at a time does, module by module.
        var byModule: [String: [UInt64]] = [:]
        for address in addresses {
            guard let module = modules.module(containing: address) else { continue }
            byModule[module.path, default: []].append(address - 1 - module.loadBias)
        }
        let batch = byModule.sorted { $0.key < $1.key }.map { (path: $0.key, addresses: $0.value) }
        let together = try tool.symbolize(modules: batch)
        let apart = try batch.map { try tool.symbolize(modulePath: $0.path, addresses: $0.addresses) }
        #expect(together == apart && together.count == batch.count && batch.count >= 2)
    }

    @Test func addr2lineIsTheFallback() throws {
        let path = try #require(
            Symbolizer.system(environment: ["PATH": "/usr/bin:/bin"]).tools.first { $0.name == "addr2line" },
            "binutils' addr2line is installed with the toolchain's dependencies")
        try checkRealFrames(symbolizedFrames(Symbolizer(tools: [path])), inlinedAndLibc: false)
    }

    @Test func aFailingToolFallsBackToTheNextAndSaysSo() throws {
        let (addresses, modules) = try realStack()
        let broken = LLVMSymbolizerTool(executable: "/nonexistent/llvm-symbolizer")
        let llvm = try #require(Symbolizer.system(environment: environment).tools.first)
        let (frames, diagnostics) = Symbolizer(tools: [broken, llvm]).symbolize(
            returnAddresses: addresses, modules: modules)
        #expect(
            diagnostics.contains {
                $0.message.hasPrefix("llvm-symbolizer: could not start /nonexistent/llvm-symbolizer")
            })
        #expect(addresses.flatMap { frames[$0] ?? [] }.contains { $0.function == "captureReturnAddresses()" })
    }

    func checkRealFrames(_ frames: [SymbolizedFrame], inlinedAndLibc: Bool) throws {
        let names = frames.map(\.function)
        // The innermost frame is the Swift function that called backtrace, demangled, with this file and the call's line.
        let capture = try #require(frames.first { $0.function == "captureReturnAddresses()" }, "frames: \(names)")
        #expect(capture.file == Self.thisFile)
        #expect(capture.line == captureLine)
        #expect(capture.linkageName?.hasPrefix("$s") == true)
        // The comparator: its Swift body and its C-linkage entry point, which keeps its C name.
        #expect(names.contains("capturingComparator(_:_:)"))
        #expect(names.contains("memharness_attribution_test_comparator"))
        // The function that called qsort, at the line of the call.
        let caller = try #require(frames.first { $0.function.contains("stackThroughQsort()") }, "frames: \(names)")
        #expect(caller.file == Self.thisFile)
        if inlinedAndLibc {
            #expect(frames.contains { $0.line == sortCallLine && $0.file == Self.thisFile })
            // qsort's frames are in libc: a name from its symbol table (a file too where libc's debug information is installed).
            let libcFrames = frames.filter { $0.module.contains("libc.so") }
            #expect(libcFrames.contains { $0.function.hasPrefix("qsort") }, "libc frames: \(libcFrames)")
        }
        #expect(!names.contains { SwiftDemangler.containsSwiftMangling($0) }, "mangled names: \(names)")
    }
}
