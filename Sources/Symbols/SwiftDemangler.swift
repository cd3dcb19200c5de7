#if canImport(Glibc)
    import Glibc
#endif

/// The Swift runtime's demangler with the full options (`a.LiveQueryApp.deliver(Swift.Array<Swift.Int>) -> ()`).
///
/// Public ABI of every Swift runtime, so always linkable; the last resort (see `SwiftDemangler`).
@_silgen_name("swift_demangle")
private func runtimeDemangle(
    _ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int,
    _ outputBuffer: UnsafeMutablePointer<CChar>?, _ outputBufferSize: UnsafeMutablePointer<Int>?, _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?

/// The runtime backtracer's demangler: `char *(const char *, size_t, char *, size_t *)`.
private typealias BacktraceDemangle =
    @convention(c) (
        UnsafePointer<CChar>?, Int, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<Int>?
    ) -> UnsafeMutablePointer<CChar>?

/// Turns mangled Swift (and Itanium C++) names into readable ones, in process.
///
/// The choice, measured with Swift 6.3.1 on `$s1a7genericySayxGxSjRzlFSd_Tg5`:
/// - `_swift_backtrace_demangle`, the runtime's own demangler for crash backtraces, uses the
///   simplified UI options: `specialized generic<A>(_:)`, `LiveQueryApp.deliver(_:)`,
///   `partial apply for closure #1 in Foo.bar()`; it also demangles C++. Used when present (the
///   runtime exports it as SPI since Swift 5.9; looked up with `dlsym`, so its absence is no link error).
/// - `swift-demangle --simplified` prints the same names but costs a process and needs the toolchain
///   at run time: the second choice, one batch for all names.
/// - `swift_demangle` (stable ABI) prints `generic specialization <Swift.Double> of
///   a.generic<A where A: Swift.Numeric>(A) -> Swift.Array<A>`: readable, but every frame of a
///   flame graph drowns in types. The last resort, so a mangled name never reaches a report.
public struct SwiftDemangler: Sendable, Hashable {
    /// One way of demangling, tried in the order of `methods`.
    public enum Method: Sendable, Hashable {
        /// `_swift_backtrace_demangle` of the loaded runtime (simplified names, Swift and C++).
        case runtimeSimplified
        /// `swift-demangle --simplified` at this path, one process for all names.
        case tool(path: String)
        /// `swift_demangle` of the loaded runtime (full names; Swift only).
        case runtimeFull
    }

    /// The methods to try, in order; a name the first cannot demangle goes to the next.
    public var methods: [Method]
    /// Bound on the `swift-demangle` batch.
    public var toolTimeout: Duration

    public init(methods: [Method], toolTimeout: Duration = .seconds(30)) {
        self.methods = methods
        self.toolTimeout = toolTimeout
    }

    /// The runtime's simplified demangler, then `swift-demangle --simplified` when a path is given, then the full demangler.
    public init(toolPath: String? = nil, toolTimeout: Duration = .seconds(30)) {
        self.init(
            methods: [.runtimeSimplified] + (toolPath.map { [.tool(path: $0)] } ?? []) + [.runtimeFull],
            toolTimeout: toolTimeout)
    }

    /// True when `name` is a mangled Swift symbol (`$s`, `_$s`, `$S`, `$e`, `_T0` prefixes).
    public static func isSwiftMangled(_ name: String) -> Bool {
        ["$s", "_$s", "$S", "_$S", "$e", "_$e", "_T0"].contains { name.hasPrefix($0) }
    }

    /// True when `name` is a mangled Itanium C++ symbol.
    public static func isCxxMangled(_ name: String) -> Bool {
        name.hasPrefix("_Z")
    }

    /// True when the runtime's simplified demangler is available in this process.
    public static var hasSimplifiedRuntimeDemangler: Bool { backtraceDemangle.function != nil }

    /// Readable names for the mangled ones among `names` (others are left out of the result).
    ///
    /// Never returns a mangled Swift name: one no method understands is left out, and the caller
    /// names the frame by its address instead.
    public func demangle(_ names: some Sequence<String>) -> (
        names: [String: String], diagnostics: [SymbolDiagnostic]
    ) {
        var pending = Set(names.filter { Self.isSwiftMangled($0) || Self.isCxxMangled($0) }).sorted()
        var result: [String: String] = [:]
        var diagnostics: [SymbolDiagnostic] = []
        func accept(_ name: String, _ readable: String?) {
            // A demangler that hands the input back (or another mangled name) has not demangled it.
            guard let readable, !readable.isEmpty, readable != name else { return }
            // A result that is nothing but a mangled name is no demangling; one that starts with an
            // embedded macro-made name followed by readable text is (see `expandEmbeddedNames`).
            if Self.isSwiftMangled(readable),
                Self.embeddedManglings(in: readable).first.map({ $0.upperBound == readable.endIndex }) ?? true
            {
                return
            }
            result[name] = Self.expandEmbeddedNames(readable)
        }
        for method in methods where !pending.isEmpty {
            switch method {
            case .runtimeSimplified:
                guard let function = Self.backtraceDemangle.function else { continue }
                for name in pending { accept(name, Self.call(function, name)) }
            case .tool(let path):
                let swiftNames = pending.filter(Self.isSwiftMangled)
                guard !swiftNames.isEmpty else { continue }
                do {
                    let output = try ToolProcess.run(
                        executable: path, arguments: ["--simplified"],
                        input: swiftNames.joined(separator: "\n") + "\n", timeout: toolTimeout)
                    let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
                    for (name, line) in zip(swiftNames, lines) { accept(name, String(line)) }
                } catch {
                    diagnostics.append(
                        SymbolDiagnostic(
                            module: nil,
                            message: "swift-demangle failed: \(error); Swift names were demangled in process"))
                }
            case .runtimeFull:
                for name in pending where Self.isSwiftMangled(name) {
                    accept(
                        name,
                        name.withCString { pointer in
                            runtimeDemangle(pointer, strlen(pointer), nil, nil, 0).map { buffer in
                                defer { free(buffer) }
                                return String(cString: buffer)
                            }
                        })
                }
            }
            pending = pending.filter { result[$0] == nil }
        }
        return (result, diagnostics)
    }

    /// True when `text` holds a mangled Swift name anywhere (`$s` followed by a letter, digit or `_`).
    public static func containsSwiftMangling(_ text: String) -> Bool {
        embeddedManglings(in: text).first != nil
    }

    /// The ranges of mangled Swift names inside `text`: `$s`, `$S` or `$e`, then letters, digits, `_` and `$`.
    static func embeddedManglings(in text: String) -> [Range<String.Index>] {
        var ranges: [Range<String.Index>] = []
        var index = text.startIndex
        while let dollar = text[index...].firstIndex(of: "$") {
            let marker = text.index(after: dollar)
            guard marker < text.endIndex, "sSe".contains(text[marker]) else {
                index = marker
                continue
            }
            let body = text.index(after: marker)
            let end =
                text[body...].firstIndex { !($0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "$")) }
                ?? text.endIndex
            if end > body { ranges.append(dollar..<end) }
            index = end > body ? end : body
        }
        return ranges
    }

    /// Demangles the mangled names a demangler printed raw inside a readable name.
    ///
    /// Names a macro made unique (`$s...fMu_`, in code expanded from `@Test` and other macros) are
    /// printed as they are by every demangler; demangled on their own they read "unique name #1 of
    /// __local in peer macro @Test expansion #1 of ...". One that still cannot be read becomes
    /// `(macro-generated name)`, so no mangled name reaches a report.
    static func expandEmbeddedNames(_ text: String) -> String {
        var text = text
        // Each pass replaces every embedded name; a demangled name may embed another, two levels at most in practice.
        for _ in 0..<4 {
            let ranges = embeddedManglings(in: text)
            guard !ranges.isEmpty else { return text }
            for range in ranges.reversed() {
                let token = String(text[range])
                let readable =
                    backtraceDemangle.function.flatMap { call($0, token) }
                    ?? token.withCString { pointer in
                        runtimeDemangle(pointer, strlen(pointer), nil, nil, 0).map { buffer in
                            defer { free(buffer) }
                            return String(cString: buffer)
                        }
                    }
                let replacement = readable.flatMap { $0.isEmpty || $0 == token ? nil : $0 } ?? "(macro-generated name)"
                text.replaceSubrange(range, with: replacement)
            }
        }
        for range in embeddedManglings(in: text).reversed() {
            text.replaceSubrange(range, with: "(macro-generated name)")
        }
        return text
    }

    private static func call(_ function: BacktraceDemangle, _ name: String) -> String? {
        name.withCString { pointer in
            function(pointer, strlen(pointer), nil, nil).map { buffer in
                defer { free(buffer) }
                return String(cString: buffer)
            }
        }
    }

    /// `_swift_backtrace_demangle` from the loaded Swift runtime, nil when it does not export it.
    private static let backtraceDemangle: RuntimeFunction = {
        // dlopen(nil) is the global scope: the executable and every library it loaded, libswiftCore among them.
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "_swift_backtrace_demangle") else {
            return RuntimeFunction(function: nil)
        }
        return RuntimeFunction(function: unsafeBitCast(symbol, to: BacktraceDemangle.self))
    }()

    /// A C function pointer looked up once.
    // @unchecked: the pointer is written once at initialization and the function it names is
    // reentrant (it allocates its result and keeps no state), so sharing it between threads is safe.
    private struct RuntimeFunction: @unchecked Sendable {
        let function: BacktraceDemangle?
    }
}
