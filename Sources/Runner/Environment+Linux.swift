import AllocatorProbe
import Foundation
import HarnessModel
import Measurement
import Scenarios
import WorkloadKit

#if os(Linux)
    import Glibc
#else
    #error("memharness builds on Linux only: the environment is read from uname and /proc")
#endif

/// Facts about this machine for the report's environment section.
public enum MachineEnvironment {
    /// The Swift compiler that built the harness.
    public static var swiftVersion: String {
        #if compiler(>=6.4)
            return "6.4 or later"
        #elseif compiler(>=6.3)
            return "6.3"
        #elseif compiler(>=6.2)
            return "6.2"
        #else
            return "before 6.2"
        #endif
    }

    /// Collects the environment of this process and machine.
    public static func current(toolVersion: String, interval: Duration) -> EnvironmentInfo {
        var name = utsname()
        uname(&name)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        // Descriptive only: an unreadable file leaves the field empty in the report.
        let cpuInfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuInfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
            ?? "unknown"
        // Descriptive only, as above.
        let osRelease = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        let pretty =
            osRelease.split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { String($0.dropFirst("PRETTY_NAME=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            ?? "Linux"
        return EnvironmentInfo(
            toolVersion: toolVersion,
            jemallocVersion: JemallocProbe.version(),
            jemallocSettings: JemallocProbe.settings(),
            swiftVersion: swiftVersion,
            operatingSystem: pretty,
            kernel: "\(field(name.sysname)) \(field(name.release)) \(field(name.machine))",
            cpuModel: model,
            cpuCount: ProcessInfo.processInfo.activeProcessorCount,
            memoryBytes: Int(ProcessInfo.processInfo.physicalMemory),
            requestedIntervalNanoseconds: interval.nanoseconds
        )
    }
}
