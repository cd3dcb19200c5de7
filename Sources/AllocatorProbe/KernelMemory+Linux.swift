#if os(Linux)
    import Glibc
#else
    #error("memharness builds on Linux only: KernelMemory reads /proc/self")
#endif

/// The kernel's view of the process's memory, from `/proc/self`.
public enum KernelMemory {
    /// `VmRSS` and `VmHWM` of `/proc/self/status`, in bytes.
    public struct Status: Sendable, Hashable, Codable {
        /// Current resident set size.
        public var rssBytes: Int
        /// Resident set high-water mark since process start or the last reset.
        public var peakRSSBytes: Int
    }

    /// Reads `VmRSS` and `VmHWM` from `/proc/self/status`.
    public static func status() throws(AllocatorProbeError) -> Status {
        let path = "/proc/self/status"
        guard let text = readSmallFile(path) else {
            throw AllocatorProbeError.kernelFile(path: path, reason: "cannot read")
        }
        var rss = 0
        var hwm = 0
        for line in text.split(separator: "\n") {
            if line.hasPrefix("VmRSS:") { rss = kibibytes(in: line) * 1024 }
            if line.hasPrefix("VmHWM:") { hwm = kibibytes(in: line) * 1024 }
        }
        return Status(rssBytes: rss, peakRSSBytes: hwm)
    }

    /// Resets the RSS high-water mark (`VmHWM`) to the current RSS by writing `5` to `/proc/self/clear_refs`.
    public static func resetPeakRSS() throws(AllocatorProbeError) {
        let path = "/proc/self/clear_refs"
        let fd = open(path, O_WRONLY)
        guard fd >= 0 else {
            throw AllocatorProbeError.kernelFile(path: path, reason: "cannot open for writing (errno \(errno))")
        }
        defer { close(fd) }
        let written = write(fd, "5", 1)
        guard written == 1 else {
            throw AllocatorProbeError.kernelFile(path: path, reason: "writing 5 failed (errno \(errno))")
        }
    }

    private static func kibibytes(in line: Substring) -> Int {
        let digits = line.drop { !$0.isNumber }.prefix { $0.isNumber }
        return Int(digits) ?? 0
    }

    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 8192)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: bytes[0..<count], as: UTF8.self)
    }
}

/// Reads the current RSS from `/proc/self/statm` into a stack buffer (allocation-free, thread-safe).
final class ResidentSetReader: Sendable {
    private let fd: Int32
    private let pageSize: Int

    init() {
        fd = open("/proc/self/statm", O_RDONLY)
        pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Current RSS in bytes, or 0 when `/proc/self/statm` is unavailable.
    func currentBytes() -> Int {
        guard fd >= 0 else { return 0 }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { buffer -> Int in
            let count = pread(fd, buffer.baseAddress, buffer.count, 0)
            guard count > 0 else { return 0 }
            // statm: "size resident shared text lib data dt" in pages; the second field is RSS.
            var index = 0
            while index < count && buffer[index] != 0x20 { index += 1 }
            index += 1
            var pages = 0
            while index < count, buffer[index] >= 0x30, buffer[index] <= 0x39 {
                pages = pages * 10 + Int(buffer[index] - 0x30)
                index += 1
            }
            return pages * pageSize
        }
    }
}
