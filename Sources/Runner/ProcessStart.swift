import CSystem

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// What a harness process does before anything else, the case processes it starts included.
public enum ProcessStart {
    /// Ignores SIGPIPE and SIGXFSZ (a closed pipe on stdout or stderr, or `ulimit -f`, then fails a write
    /// with EPIPE or EFBIG instead of killing the run before its report is written) and gives a closed stdin,
    /// stdout or stderr (a shell's `>&-`) /dev/null, so its number does not go to the first file the run
    /// opens (its lock, a report file); unblocks SIGINT, SIGTERM and SIGHUP, which a parent that started the run
    /// from a thread blocking them would otherwise leave blocked. Returns how many standard descriptors it reopened.
    ///
    /// Written in C (`memharness_prepare_standard_streams`): case processes run it too, before their
    /// baseline, and Swift code here could allocate (generic metadata) and move the figures they start from.
    @discardableResult
    public static func prepareStandardStreams() -> Int { Int(memharness_prepare_standard_streams()) }

    /// Writes all of `text` to `descriptor` (stdout, stderr), again after a short write or EINTR; false when
    /// the descriptor fails. A closed or full pipe loses the text, not the run: the report folder is the
    /// record, and with SIGPIPE ignored (`prepareStandardStreams`) the write just fails.
    @discardableResult
    public static func write(_ text: String, to descriptor: Int32) -> Bool {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            bytes = bytes.dropFirst(written)
        }
        return true
    }
}

extension Interruption {
    /// What the command says when `signal` came after the report was in place: the report is complete.
    public static func afterReport(_ signal: Int32, folder: String) -> String {
        "interrupted by \(SignalNames.name(of: signal)) after the report was written: \(folder) holds the complete run"
    }
}
