import Foundation

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// The processes of the machine as /proc shows them.
enum ProcessTable {
    /// A live process that belongs to a trial.
    struct Entry: CustomStringConvertible {
        var pid: pid_t
        var parent: pid_t
        var group: pid_t
        var state: String
        var commandLine: String

        var description: String { "pid \(pid) (parent \(parent), group \(group), state \(state)): \(commandLine)" }
    }

    /// Every process that is not a zombie and whose command line or environment contains `marker`.
    ///
    /// A trial gives the harness a unique environment variable, which every process it starts inherits (case
    /// processes, the programs of command cases and what they start, the cleanup guard); the guard's `rm` has
    /// an empty environment but the trial's folder in its command line, which holds the marker too.
    static func processes(marked marker: String) -> [Entry] {
        let own = getpid()
        // /proc is always there on Linux; without it there is nothing to find.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap { name -> Entry? in
            guard let pid = pid_t(name), pid != own else { return nil }
            let commandLine = read("/proc/\(pid)/cmdline")
            let environment = read("/proc/\(pid)/environ")
            guard commandLine.contains(marker) || environment.contains(marker) else { return nil }
            guard let stat = status(of: pid), stat.state != "Z" else { return nil }
            return Entry(
                pid: pid, parent: stat.parent, group: stat.group, state: stat.state,
                commandLine: commandLine.replacingOccurrences(of: "\0", with: " "))
        }
    }

    /// The state letter of `pid` (R, S, D, T, Z...), nil when there is no such process.
    static func state(of pid: pid_t) -> String? { status(of: pid)?.state }

    /// The children of `pid` that are not zombies.
    static func children(of pid: pid_t) -> [pid_t] {
        // /proc is always there on Linux; without it there is nothing to find.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap { name in
            guard let child = pid_t(name), let stat = status(of: child), stat.parent == pid, stat.state != "Z" else {
                return nil
            }
            return child
        }
    }

    /// The signals `pid` catches (`SigCgt` of /proc/PID/status) include `signal`.
    static func catches(_ pid: pid_t, _ signal: Int32) -> Bool {
        let status = read("/proc/\(pid)/status")
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
            let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << UInt64(signal - 1)) != 0
    }

    /// Where descriptor `fd` of `pid` points ("/dev/null", "pipe:[123]", a path), nil when it is closed.
    static func descriptorTarget(of pid: pid_t, _ fd: Int32) -> String? {
        // No link: the descriptor is closed (or the process gone), which is what nil says.
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)")
    }

    /// State, parent and process group from /proc/PID/stat (the command name in parentheses may hold spaces).
    private static func status(of pid: pid_t) -> (state: String, parent: pid_t, group: pid_t)? {
        let text = read("/proc/\(pid)/stat")
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 3, let parent = pid_t(fields[1]), let group = pid_t(fields[2]) else { return nil }
        return (String(fields[0]), parent, group)
    }

    /// A /proc file's text ("" when the process is gone or the file unreadable); /proc sizes are 0, so read to EOF.
    static func read(_ path: String) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
