import Foundation
import Synchronization

/// One source location a tool gave for an address (an address inside inlined code has several).
public struct ToolLocation: Sendable, Hashable, Codable {
    /// The symbol as the tool printed it (C++ demangled, Swift mangled); nil or `??` when unknown.
    public var function: String?
    /// Source file; nil, empty or `??` when unknown.
    public var file: String?
    /// Line number; 0 or nil when unknown.
    public var line: Int?

    public init(function: String?, file: String? = nil, line: Int? = nil) {
        self.function = function
        self.file = file
        self.line = line
    }
}

/// A tool that names addresses of one binary (llvm-symbolizer, addr2line, or a scripted one in tests).
public protocol SymbolizerTool: Sendable {
    /// The tool's name for diagnostics.
    var name: String { get }
    /// The locations of each address, **innermost first** (inlined callee before its caller), one
    /// list per address in the order given. Addresses are the binary's own virtual addresses (load
    /// bias already subtracted). An empty list means the tool knows nothing about that address.
    func symbolize(modulePath: String, addresses: [UInt64]) throws(SymbolsError) -> [[ToolLocation]]
    /// The same for several binaries at once, one list of answers per binary in the order given: a tool that runs as
    /// a process answers them all from one (its start-up, which loads its libraries, is most of a small batch's time).
    func symbolize(modules: [(path: String, addresses: [UInt64])]) throws(SymbolsError) -> [[[ToolLocation]]]
}

extension SymbolizerTool {
    /// One batch per binary.
    public func symbolize(modules: [(path: String, addresses: [UInt64])]) throws(SymbolsError) -> [[[ToolLocation]]] {
        var answers: [[[ToolLocation]]] = []
        for module in modules { answers.append(try symbolize(modulePath: module.path, addresses: module.addresses)) }
        return answers
    }
}

/// The one symbol table: names the addresses of a process's code and data as its modules' files say, for allocation
/// profiles (Attribution) and heap graphs (HeapGraph) alike, so that one address reads the same in both.
///
/// Return addresses become frames (module lookup, load bias and return-address adjustment, one batch per module to
/// the first tool that answers, demangling; remembered, so a module's addresses are sent to a tool once per
/// symbolizer); code and data addresses become the function or global that holds them (the module's ELF symbol
/// table, demangled).
public struct Symbolizer: Sendable {
    /// Tools tried in order for each module; the next is asked when one fails (not found, timed out, crashed).
    public var tools: [any SymbolizerTool]
    /// How Swift (and C++) names are made readable.
    public var demangler: SwiftDemangler
    /// What this symbolizer has already named.
    private let memory = Memory()

    public init(tools: [any SymbolizerTool], demangler: SwiftDemangler = SwiftDemangler()) {
        self.tools = tools
        self.demangler = demangler
    }

    /// The symbolizer of this process (`system` with its environment), created once: what it names stays named for
    /// every later capture and profile of the process.
    public static let shared = Symbolizer.system(environment: ProcessInfo.processInfo.environment)

    /// Frames and readable names already found, by module file and address.
    private final class Memory: Sendable {
        let frames = Mutex<[FrameKey: [SymbolizedFrame]]>([:])
        let names = Mutex<[String: String]>([:])
    }

    private struct FrameKey: Hashable {
        var module: String
        var relative: UInt64
    }

    /// The tools of this machine: `llvm-symbolizer` (from `MEMHARNESS_LLVM_SYMBOLIZER`, `PATH`, or
    /// beside `swift` in the toolchain), then `addr2line` (`MEMHARNESS_ADDR2LINE` or `PATH`);
    /// Swift names demangled in process, with `swift-demangle` (`MEMHARNESS_SWIFT_DEMANGLE`, `PATH`,
    /// beside `swift`) as the second choice; the modules' own symbol tables last (functions without
    /// file:line). A stripped binary's frames are `module+0xoffset`.
    public static func system(environment: [String: String], timeout: Duration = .seconds(60)) -> Symbolizer {
        func locate(_ variable: String, _ name: String, besideSwift: Bool) -> String? {
            if let override = environment[variable], !override.isEmpty { return override }
            return ToolProcess.findInPath(name, environment: environment)
                ?? (besideSwift ? ToolProcess.findBesideSwift(name, environment: environment) : nil)
        }
        var tools: [any SymbolizerTool] = []
        if let path = locate("MEMHARNESS_LLVM_SYMBOLIZER", "llvm-symbolizer", besideSwift: true) {
            tools.append(LLVMSymbolizerTool(executable: path, timeout: timeout))
        }
        if let path = locate("MEMHARNESS_ADDR2LINE", "addr2line", besideSwift: false) {
            tools.append(Addr2LineTool(executable: path, timeout: timeout))
        }
        tools.append(ELFSymbolTool())
        let demangle = locate("MEMHARNESS_SWIFT_DEMANGLE", "swift-demangle", besideSwift: true)
        return Symbolizer(tools: tools, demangler: SwiftDemangler(toolPath: demangle, toolTimeout: timeout))
    }

    /// Frames of each return address, **innermost first**, and what went wrong on the way.
    ///
    /// Each address is looked up in the module segments; `address - 1 - loadBias` is what the
    /// tools see (a return address points after the call; minus one lands inside it). An address
    /// outside every module is named by itself; one no tool can name becomes `module+0xoffset`.
    public func symbolize(returnAddresses: some Sequence<UInt64>, modules: ModuleMap)
        -> (frames: [UInt64: [SymbolizedFrame]], diagnostics: [SymbolDiagnostic])
    {
        var diagnostics: [SymbolDiagnostic] = []
        let lookup = Self.lookUpModules(of: returnAddresses, in: modules)
        var frames = lookup.outside
        if !lookup.byModule.isEmpty && tools.allSatisfy({ $0 is ELFSymbolTool }) {
            diagnostics.append(
                SymbolDiagnostic(
                    module: nil,
                    message: "no llvm-symbolizer or addr2line found; frames are named from symbol tables, without "
                        + "file:line (or module+0xoffset). Install LLVM or binutils, or set MEMHARNESS_LLVM_SYMBOLIZER"
                ))
        }
        var unnamed: [String: (unnamed: Int, all: Int)] = [:]
        var fresh: [String: [ModuleAddress]] = [:]
        for (module, entries) in lookup.byModule {
            for entry in entries {
                guard let known = memory.frames.withLock({ $0[FrameKey(module: module, relative: entry.relative)] })
                else {
                    fresh[module, default: []].append(entry)
                    continue
                }
                frames[entry.returnAddress] = known
                unnamed[module, default: (0, 0)].all += 1
            }
        }
        let located = locate(fresh, diagnostics: &diagnostics)
        let names = located.values.flatMap { $0.locations.compactMap(\.function) }
        let (readable, demangleDiagnostics) = demangler.demangle(names)
        diagnostics += demangleDiagnostics
        for (address, entry) in located.sorted(by: { $0.key < $1.key }) {
            let list = Self.frames(of: entry, readable: readable)
            frames[address] =
                list.isEmpty ? [SymbolizedFrame(function: entry.fallbackName, module: entry.module)] : list
            unnamed[entry.module, default: (0, 0)].all += 1
            // An address no tool named is asked about again next time (a tool may have failed only this once).
            if list.isEmpty {
                unnamed[entry.module, default: (0, 0)].unnamed += 1
            } else {
                memory.frames.withLock { $0[FrameKey(module: entry.module, relative: entry.relative)] = list }
            }
        }
        // Without tools every address is unnamed, and the diagnostic above already says why.
        if !tools.isEmpty { diagnostics += Self.unnamedDiagnostics(unnamed) }
        return (frames, diagnostics)
    }

    /// The readable name of the function whose code holds `address` (an entry point or a program counter, not a
    /// return address), from its module's symbol table; nil outside every module or symbol.
    public func function(at address: UInt64, in modules: ModuleMap) -> String? {
        guard let module = modules.module(containing: address), address >= module.loadBias,
            let symbol = ELFSymbols.cached(path: module.path).function(containing: address - module.loadBias)
        else { return nil }
        return readableName(symbol.name)
    }

    /// The data symbol (a global, a static, a type's metadata, a vtable) holding `address`, with its readable name;
    /// nil outside every module or symbol.
    public func object(at address: UInt64, in modules: ModuleMap) -> (symbol: ELFSymbols.Symbol, name: String)? {
        guard let module = modules.module(containing: address), address >= module.loadBias,
            let symbol = ELFSymbols.cached(path: module.path).object(containing: address - module.loadBias)
        else { return nil }
        return (symbol, readableName(symbol.name))
    }

    /// A symbol's readable name: demangled (Swift simplified, C++), or as it is when it is no mangled name.
    public func readableName(_ symbol: String) -> String {
        if let known = memory.names.withLock({ $0[symbol] }) { return known }
        let readable = demangler.demangle([symbol]).names[symbol] ?? symbol
        memory.names.withLock { $0[symbol] = readable }
        return readable
    }

    /// A return address inside a module, and the address the tools see for it.
    private struct ModuleAddress {
        var returnAddress: UInt64
        /// Return address minus one, minus the module's load bias.
        var relative: UInt64
    }

    /// What the tools said about one address of a module.
    private struct LocatedAddress {
        var module: String
        var relative: UInt64
        var locations: [ToolLocation]

        /// `module+0xoffset`: the frame's name when no tool names it, or only by a name no demangler reads.
        var fallbackName: String {
            (module.split(separator: "/").last.map(String.init) ?? module) + "+0x" + String(relative, radix: 16)
        }
    }

    /// Frames of the addresses outside every module (named by themselves), and the others grouped by module.
    private static func lookUpModules(of returnAddresses: some Sequence<UInt64>, in modules: ModuleMap)
        -> (outside: [UInt64: [SymbolizedFrame]], byModule: [String: [ModuleAddress]])
    {
        var outside: [UInt64: [SymbolizedFrame]] = [:]
        var byModule: [String: [ModuleAddress]] = [:]
        for address in Set(returnAddresses).sorted() {
            guard let module = modules.module(containing: address) else {
                outside[address] = [SymbolizedFrame(function: "0x" + String(address, radix: 16), module: "[unknown]")]
                continue
            }
            // A return address at the segment's very start is not a return address; keep it as it is.
            let adjusted = address > module.start ? address - 1 : address
            byModule[module.path, default: []].append(
                ModuleAddress(returnAddress: address, relative: adjusted &- module.loadBias))
        }
        return (outside, byModule)
    }

    /// The tools' locations of every address, by return address; modules in path order. The first tool is asked about
    /// every module at once; when it fails, module by module, each module's failure a diagnostic.
    private func locate(_ byModule: [String: [ModuleAddress]], diagnostics: inout [SymbolDiagnostic])
        -> [UInt64: LocatedAddress]
    {
        var located: [UInt64: LocatedAddress] = [:]
        let modules = byModule.sorted(by: { $0.key < $1.key })
        let together = try? tools.first?.symbolize(modules: modules.map { ($0.key, $0.value.map(\.relative)) })
        for (position, (modulePath, entries)) in modules.enumerated() {
            let answers =
                together.map { $0[position] } ?? firstAnswer(about: entries, in: modulePath, diagnostics: &diagnostics)
            for (index, entry) in entries.enumerated() {
                let locations = answers.flatMap { index < $0.count ? $0[index] : nil } ?? []
                located[entry.returnAddress] = LocatedAddress(
                    module: modulePath, relative: entry.relative, locations: locations)
            }
        }
        return located
    }

    /// The answer of the first tool that does not fail (each failure becomes a diagnostic); nil when all fail.
    private func firstAnswer(
        about entries: [ModuleAddress], in modulePath: String, diagnostics: inout [SymbolDiagnostic]
    ) -> [[ToolLocation]]? {
        for tool in tools {
            do {
                return try tool.symbolize(modulePath: modulePath, addresses: entries.map(\.relative))
            } catch {
                diagnostics.append(SymbolDiagnostic(module: modulePath, message: "\(tool.name): \(error)"))
            }
        }
        return nil
    }

    /// The readable frames of one address, innermost first; empty when no location has a name.
    private static func frames(of entry: LocatedAddress, readable: [String: String]) -> [SymbolizedFrame] {
        var list: [SymbolizedFrame] = []
        for location in entry.locations {
            guard let raw = location.function, !raw.isEmpty, raw != "??" else { continue }
            var function = readable[raw] ?? raw
            // No demangler understood it: the address names the frame, never the mangled symbol.
            if SwiftDemangler.isSwiftMangled(function) { function = entry.fallbackName }
            if SwiftDemangler.containsSwiftMangling(function) {
                function = SwiftDemangler.expandEmbeddedNames(function)
            }
            let file = location.file.flatMap {
                $0.isEmpty || $0 == "??" || $0 == "/<compiler-generated>" ? nil : $0
            }
            let line = location.line.flatMap { $0 > 0 ? $0 : nil }
            list.append(
                SymbolizedFrame(
                    function: function, linkageName: raw == function ? nil : raw,
                    file: file, line: file == nil ? nil : line, module: entry.module))
        }
        return list
    }

    /// One diagnostic per module with addresses no tool could name, modules in path order.
    private static func unnamedDiagnostics(_ unnamed: [String: (unnamed: Int, all: Int)]) -> [SymbolDiagnostic] {
        unnamed.sorted(by: { $0.key < $1.key }).filter { $0.value.unnamed > 0 }.map { module, count in
            SymbolDiagnostic(
                module: module,
                message: "\(count.unnamed) of \(count.all) addresses have no symbol "
                    + "and are named module+0xoffset: the binary is stripped or was replaced after the run; keep its symbol table, or build it with -g"
            )
        }
    }
}
