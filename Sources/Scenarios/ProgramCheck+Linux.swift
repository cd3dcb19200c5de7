import Foundation

#if os(Linux)
    import Glibc
#else
    #error("memharness runs on Linux only: it links jemalloc and reads /proc")
#endif

/// Why an external program cannot be measured; found before anything runs.
public struct ProgramProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The program as given.
    public var program: String
    public var reason: String

    public var description: String { "\(program): \(reason)" }
}

/// Checks an external program before it runs: it exists, is executable, and the agent can be loaded into it.
public enum ProgramCheck {
    /// The absolute path `program` runs from: as given when it contains a `/` (a relative one from
    /// `workingDirectory`, itself from the current directory), else the first match in `PATH`. Throws when it is missing, not a regular executable file, a
    /// script without a `#!` line (or whose interpreter is missing), or statically linked (LD_PRELOAD
    /// cannot reach it, so its allocations would be invisible).
    public static func resolve(
        _ program: String, workingDirectory: String? = nil, path: String? = ProcessInfo.processInfo.environment["PATH"]
    ) throws(ProgramProblem) -> String {
        let resolved = try locate(program, workingDirectory: workingDirectory, path: path)
        try checkLoadable(resolved, as: program, depth: 0)
        return resolved
    }

    static func locate(_ program: String, workingDirectory: String?, path: String?) throws(ProgramProblem) -> String {
        if program.contains("/") {
            // Absolute, because the program starts in `workingDirectory`: a relative path would be taken from there twice.
            return absolute(
                program, from: absolute(workingDirectory ?? ".", from: FileManager.default.currentDirectoryPath))
        }
        for directory in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(program)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw ProgramProblem(program: program, reason: "no such program in PATH; give its path, e.g. ./\(program)")
    }

    /// `path` made absolute from `directory` (an absolute path), with `.` and `..` resolved.
    static func absolute(_ path: String, from directory: String) -> String {
        URL(fileURLWithPath: path.hasPrefix("/") ? path : "\(directory)/\(path)").standardized.path
    }

    /// A regular executable file: an ELF binary with a dynamic loader, or a script whose interpreter is one.
    static func checkLoadable(_ path: String, as program: String, depth: Int) throws(ProgramProblem) {
        // At depth 0 `path` is the program; deeper, the interpreter its #! line names.
        let what = depth == 0 ? "" : "its interpreter \(path): "
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw ProgramProblem(
                program: program, reason: depth == 0 ? "no such file (\(path))" : "\(what)no such file")
        }
        guard status.st_mode & S_IFMT != S_IFDIR else {
            throw ProgramProblem(program: program, reason: "\(what)is a directory; expected an executable program")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw ProgramProblem(program: program, reason: "\(what)not a regular file; expected an executable program")
        }
        guard access(path, X_OK) == 0 else {
            throw ProgramProblem(program: program, reason: "\(what)not executable (chmod +x \(path))")
        }
        let head = Self.head(of: path, bytes: 4096)
        if head.starts(with: [0x23, 0x21]) {  // "#!"
            // Two levels cover `#!/usr/bin/env python3`; deeper chains are not scripts people write.
            guard depth < 2, let interpreter = try Self.interpreter(of: head, program: program) else {
                throw ProgramProblem(program: program, reason: "a script whose #! line names no interpreter")
            }
            try checkLoadable(interpreter, as: program, depth: depth + 1)
            return
        }
        guard head.starts(with: [0x7F, 0x45, 0x4C, 0x46]) else {  // "\u{7F}ELF"
            throw ProgramProblem(
                program: program,
                reason: "\(what)not an executable: neither a binary for this machine nor a script starting with #! "
                    + "(a script needs a first line such as #!/bin/sh)")
        }
        guard ELFHeader.hasInterpreter(path) else {
            throw ProgramProblem(
                program: program,
                reason: "\(what)statically linked: the agent cannot be preloaded into it (LD_PRELOAD needs the "
                    + "dynamic loader), so its allocations would be invisible; build it dynamically linked")
        }
    }

    /// The first `bytes` bytes of the file (fewer for a shorter one).
    static func head(of path: String, bytes: Int) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }  // read-only: closing cannot lose anything
        // An unreadable file reads as empty: the checks that follow refuse it as not a program, saying so.
        return Array((try? handle.read(upToCount: bytes)) ?? Data())
    }

    /// The interpreter a `#!` line names (for `/usr/bin/env NAME`, NAME looked up in PATH); nil when it names none.
    static func interpreter(of head: [UInt8], program: String) throws(ProgramProblem) -> String? {
        let line = String(decoding: head.dropFirst(2).prefix { $0 != 0x0A }, as: UTF8.self)
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let first = words.first else { return nil }
        if first.hasSuffix("/env"), let name = words.dropFirst().first(where: { !$0.hasPrefix("-") }) {
            do {
                return try locate(name, workingDirectory: nil, path: ProcessInfo.processInfo.environment["PATH"])
            } catch {
                throw ProgramProblem(program: program, reason: "its interpreter \(name) (#!\(line)) is not in PATH")
            }
        }
        return first
    }
}

/// Just enough of ELF to tell a dynamically linked program (it has a `PT_INTERP` program header) from a static one.
enum ELFHeader {
    static func hasInterpreter(_ path: String) -> Bool {
        let bytes = ProgramCheck.head(of: path, bytes: 64 * 1024)
        // 64-bit little-endian only: the machines memharness runs on (x86-64, aarch64).
        guard bytes.count >= 64, bytes[4] == 2, bytes[5] == 1 else { return true }
        func read<T: FixedWidthInteger>(_ offset: Int, as _: T.Type) -> T? {
            guard offset + MemoryLayout<T>.size <= bytes.count else { return nil }
            return bytes[offset..<offset + MemoryLayout<T>.size].reversed().reduce(T(0)) { $0 << 8 | T($1) }
        }
        guard let tableOffset = read(0x20, as: UInt64.self), let entrySize = read(0x36, as: UInt16.self),
            let count = read(0x38, as: UInt16.self)
        else { return true }
        for index in 0..<Int(count) {
            // PT_INTERP is 3. A table past what was read is assumed dynamic (the exec will tell).
            guard let type = read(Int(tableOffset) + index * Int(entrySize), as: UInt32.self) else { return true }
            if type == 3 { return true }
        }
        return false
    }
}
