import Foundation

#if !os(Linux)
    #error("memharness builds on Linux only: the symbolizers run as child processes started with Linux's pidfd")
#endif

/// `llvm-symbolizer`: DWARF file:line and inlined frames, C++ demangled; Swift names left mangled.
public struct LLVMSymbolizerTool: SymbolizerTool {
    /// Path of the executable.
    public var executable: String
    /// Bound on one batch (one process: a module's addresses, or every module's).
    public var timeout: Duration

    public init(executable: String, timeout: Duration = .seconds(60)) {
        self.executable = executable
        self.timeout = timeout
    }

    public var name: String { "llvm-symbolizer" }

    public func symbolize(modulePath: String, addresses: [UInt64]) throws(SymbolsError) -> [[ToolLocation]] {
        guard !addresses.isEmpty else { return [] }
        // Without line information the tool would read the symbol table: this process has it indexed already.
        guard ELFSymbols.cached(path: modulePath).hasLineInformation else {
            return try ELFSymbolTool().symbolize(modulePath: modulePath, addresses: addresses)
        }
        let input = addresses.map { "0x" + String($0, radix: 16) }.joined(separator: "\n") + "\n"
        return try answers(arguments: ["--obj=\(modulePath)"], input: input, count: addresses.count)
    }

    /// Every module's addresses from one process, each input line naming its binary (`"PATH" 0xADDRESS`); those of a
    /// module without line information from its symbol table here (the tool would read nothing else).
    public func symbolize(modules: [(path: String, addresses: [UInt64])]) throws(SymbolsError) -> [[[ToolLocation]]] {
        let asked = modules.map { !$0.addresses.isEmpty && ELFSymbols.cached(path: $0.path).hasLineInformation }
        // A path with a quote or a line break cannot be written on the line: one process per module then.
        guard !modules.contains(where: { $0.path.contains("\"") || $0.path.contains("\n") }) else {
            return try modules.map { module throws(SymbolsError) in
                try symbolize(modulePath: module.path, addresses: module.addresses)
            }
        }
        let input = zip(modules, asked).filter(\.1).flatMap { module, _ in
            module.addresses.map { "\"\(module.path)\" 0x" + String($0, radix: 16) }
        }
        var flat =
            input.isEmpty
            ? [][...] : try answers(arguments: [], input: input.joined(separator: "\n") + "\n", count: input.count)[...]
        var result: [[[ToolLocation]]] = []
        for (module, isAsked) in zip(modules, asked) {
            guard isAsked else {
                result.append(try ELFSymbolTool().symbolize(modulePath: module.path, addresses: module.addresses))
                continue
            }
            result.append(Array(flat.prefix(module.addresses.count)))
            flat = flat.dropFirst(module.addresses.count)
        }
        return result
    }

    /// The locations of `count` addresses given on `input`, one line each.
    private func answers(arguments: [String], input: String, count: Int) throws(SymbolsError) -> [[ToolLocation]] {
        let output = try ToolProcess.run(
            executable: executable,
            arguments: arguments + ["--output-style=JSON", "--inlines", "--demangle", "--functions=linkage"],
            input: input, timeout: timeout)
        // llvm-symbolizer's JSON keys are capitalized; the properties follow Swift's naming.
        struct Entry: Decodable {
            struct Symbol: Decodable {
                var functionName: String?
                var fileName: String?
                var line: Int?
                enum CodingKeys: String, CodingKey {
                    case functionName = "FunctionName"
                    case fileName = "FileName"
                    case line = "Line"
                }
            }
            var symbols: [Symbol]?
            var error: ErrorMessage?
            struct ErrorMessage: Decodable {
                var message: String?
                enum CodingKeys: String, CodingKey { case message = "Message" }
            }
            enum CodingKeys: String, CodingKey {
                case symbols = "Symbol"
                case error = "Error"
            }
        }
        // One JSON document per input line, in input order.
        let lines = output.split(separator: "\n").filter { !$0.allSatisfy(\.isWhitespace) }
        guard lines.count == count else {
            throw .toolOutputUnreadable(executable: executable, reason: "\(lines.count) answers for \(count) addresses")
        }
        var result: [[ToolLocation]] = []
        result.reserveCapacity(lines.count)
        for line in lines {
            let entry: Entry
            do {
                entry = try JSONDecoder().decode(Entry.self, from: Data(line.utf8))
            } catch {
                throw .toolOutputUnreadable(executable: executable, reason: "\(error)")
            }
            if let message = entry.error?.message {
                throw .toolFailed(executable: executable, termination: .exited(0), stderr: message)
            }
            result.append(
                (entry.symbols ?? []).map {
                    ToolLocation(function: $0.functionName, file: $0.fileName, line: $0.line)
                })
        }
        return result
    }
}

/// `addr2line` from binutils: the fallback when there is no llvm-symbolizer.
public struct Addr2LineTool: SymbolizerTool {
    /// Path of the executable.
    public var executable: String
    /// Bound on one batch (one module).
    public var timeout: Duration

    public init(executable: String, timeout: Duration = .seconds(60)) {
        self.executable = executable
        self.timeout = timeout
    }

    public var name: String { "addr2line" }

    public func symbolize(modulePath: String, addresses: [UInt64]) throws(SymbolsError) -> [[ToolLocation]] {
        guard !addresses.isEmpty else { return [] }
        let input = addresses.map { "0x" + String($0, radix: 16) }.joined(separator: "\n") + "\n"
        // -a prints each address before its frames, which is how the answers are told apart;
        // -f function names, -i inlined frames (innermost first), -C demangled C++.
        let output = try ToolProcess.run(
            executable: executable, arguments: ["-a", "-f", "-i", "-C", "-e", modulePath],
            input: input, timeout: timeout)
        var result: [[ToolLocation]] = []
        var current: [ToolLocation]?
        var pendingFunction: String?
        for line in output.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("0x"), pendingFunction == nil {
                if let current { result.append(current) }
                current = []
                continue
            }
            if let function = pendingFunction {
                let (file, number) = Self.splitLocation(line)
                current?.append(ToolLocation(function: function, file: file, line: number))
                pendingFunction = nil
            } else {
                pendingFunction = String(line)
            }
        }
        if let current { result.append(current) }
        guard result.count == addresses.count else {
            throw .toolOutputUnreadable(
                executable: executable, reason: "\(result.count) answers for \(addresses.count) addresses")
        }
        return result
    }

    /// `/path/file.swift:42 (discriminator 3)` -> (`/path/file.swift`, 42); `??:0` -> (nil, nil).
    static func splitLocation(_ text: Substring) -> (String?, Int?) {
        let location = text.split(separator: " ").first ?? text
        guard let colon = location.lastIndex(of: ":") else { return (nil, nil) }
        let file = String(location[..<colon])
        let line = Int(location[location.index(after: colon)...])
        return (file == "??" ? nil : file, line)
    }
}

/// The module's own ELF symbol table: the function holding each address, without file:line or inlined frames. The
/// last tool: it needs no program, and a binary that is not stripped always has one.
public struct ELFSymbolTool: SymbolizerTool {
    public init() {}

    public var name: String { "symbol table" }

    public func symbolize(modulePath: String, addresses: [UInt64]) throws(SymbolsError) -> [[ToolLocation]] {
        let table = ELFSymbols.cached(path: modulePath)
        return addresses.map { address in
            table.function(containing: address).map { [ToolLocation(function: $0.name)] } ?? []
        }
    }
}
