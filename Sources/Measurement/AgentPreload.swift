import CSystem
import Foundation
import HarnessModel

/// The agent library and the jemalloc it forwards to, as a case process preloads them.
public struct AgentPreload: Sendable, Hashable {
    /// `libmemharness-agent.so`.
    public var library: String
    /// The jemalloc shared library (`libjemalloc.so.2`), preloaded after the agent so that it is the
    /// process allocator even in programs that do not link it; nil when the harness itself links jemalloc statically.
    public var jemalloc: String?

    public init(library: String, jemalloc: String?) {
        self.library = library
        self.jemalloc = jemalloc
    }

    /// The agent named by `MEMHARNESS_AGENT_LIBRARY`, else the one beside `executable`; nil when neither exists.
    public static func locate(besideExecutable executable: String) -> AgentPreload? {
        let fileManager = FileManager.default
        let candidates: [String?] = [
            ProcessInfo.processInfo.environment["MEMHARNESS_AGENT_LIBRARY"],
            URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(Agent.libraryName).path,
        ]
        guard let library = candidates.compactMap({ $0 }).first(where: { fileManager.isReadableFile(atPath: $0) })
        else {
            return nil
        }
        return AgentPreload(library: library, jemalloc: jemallocLibraryPath)
    }

    /// The path of the jemalloc shared library serving this process; nil when it is linked statically.
    public static var jemallocLibraryPath: String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        guard memharness_library_path_of_symbol("mallctl", &buffer, UInt(buffer.count)) == 0 else { return nil }
        // The C function ends the path with a NUL inside the buffer.
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Why there is no agent, and how to build it.
    public static func missingDescription(besideExecutable executable: String) -> String {
        let folder = URL(fileURLWithPath: executable).deletingLastPathComponent().path
        let release = folder.hasSuffix("/release") ? " -c release" : ""
        return "there is no \(Agent.libraryName) beside \(executable) (nor in MEMHARNESS_AGENT_LIBRARY); build it with "
            + "`swift build\(release) --product memharness-agent` in the package that built \(executable) "
            + "(memharness's `make build` does; `swift package memharness` does it for a package of your own)"
    }

    /// The variables that load the agent into a process and set its modes; `allocator` glibc preloads the agent
    /// alone (it then forwards to glibc's malloc and reads glibc's figures).
    public func variables(
        exact: Bool = false, stackSampleBytes: Int? = nil, heap: Bool = false, allocator: Allocator = .jemalloc
    ) -> [String: String] {
        let existing = ProcessInfo.processInfo.environment["LD_PRELOAD"].map { " " + $0 } ?? ""
        let jemalloc = allocator == .jemalloc ? self.jemalloc.map { [$0] } ?? [] : []
        var variables = ["LD_PRELOAD": ([library] + jemalloc).joined(separator: " ") + existing]
        if exact { variables["MEMHARNESS_AGENT_EXACT"] = "1" }
        // Every live block in the agent's table, for heap captures.
        if heap { variables["MEMHARNESS_AGENT_HEAP"] = "1" }
        if let stackSampleBytes { variables["MEMHARNESS_AGENT_STACK_SAMPLE_BYTES"] = String(stackSampleBytes) }
        return variables
    }
}
