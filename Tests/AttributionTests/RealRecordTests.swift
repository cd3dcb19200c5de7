import Attribution
import Foundation
import HarnessModel
import Symbols
import Testing

#if canImport(Glibc)
    import Glibc
#endif

private typealias BacktraceFunction = @convention(c) (UnsafeMutablePointer<UnsafeMutableRawPointer?>?, Int32) -> Int32

/// The line of the `backtrace` call in `returnAddressesHere`, which the innermost return address points into.
nonisolated(unsafe) private var backtraceLine = 0

/// This thread's return addresses, innermost first, as glibc's `backtrace` sees them (what the agent records).
@inline(never)
private func returnAddressesHere() -> [UInt64] {
    guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "backtrace") else { return [] }
    let backtrace = unsafeBitCast(symbol, to: BacktraceFunction.self)
    var buffer = [UnsafeMutableRawPointer?](repeating: nil, count: 64)
    let count = backtrace(&buffer, 64)
    backtraceLine = #line - 1  // the line of the `backtrace` call above
    return buffer.prefix(Int(max(count, 0))).map { UInt64(UInt(bitPattern: $0)) }
}

/// A record of this very process, symbolized with the machine's tools: its profile ends where the stack was taken.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct RealRecordTests {
    /// The record the agent would write for one stack live at the peak.
    private func record(for addresses: [UInt64], modules: [LoadedModule]) -> String {
        var lines = ["memharness-agent-record 1", "pid \(getpid())", "stackSampleBytes 65536"]
        for module in modules {
            let fields = [module.loadBias, module.start, module.end].map { "0x" + String($0, radix: 16) }
            lines.append("module " + fields.joined(separator: " ") + " " + module.path)
        }
        lines.append("stack 1 " + addresses.map { "0x" + String($0, radix: 16) }.joined(separator: " "))
        lines += ["mark baseline 0 0", "mark peak 10 1048576", "live 1 1048576 16", "end", ""]
        return lines.joined(separator: "\n")
    }

    @Test func aRealRecordBecomesAProfileEndingInTheRealSite() throws {
        let addresses = returnAddressesHere()
        try #require(addresses.count >= 3, "backtrace gave \(addresses.count) frames")
        let modules = ProcessMaps.read().modules.modules
        let attributed = try Attribution.profile(
            recordText: record(for: addresses, modules: modules), source: "real.record",
            symbolizer: .system(environment: ProcessInfo.processInfo.environment))
        let profile = attributed.profile
        let stack = try #require(profile.stacks.first)
        let frames = profile.frames(of: stack)
        #expect(frames.last?.function == "returnAddressesHere()")
        #expect(frames.last?.line == backtraceLine)
        #expect(stack.peakLiveBytes == 1_048_576)
        let sites = profile.siteTable()
        #expect(sites.rows.first?.site.function == "returnAddressesHere()")
        #expect(sites.rows.first?.site.shortLocation == "RealRecordTests.swift:\(backtraceLine)")
        let json = try Golden.json(attributed)
        #expect(!json.contains("$s"), "\(json)")
    }
}
