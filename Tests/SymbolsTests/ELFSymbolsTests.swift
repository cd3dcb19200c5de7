import Foundation
import Symbols
import Testing

/// A file's symbol table as the heap graph and the flame graphs look addresses up in it.
struct ELFSymbolsTests {
    /// `readelf -sW`'s value of the symbol `name` in `path`, nil when it has none.
    static func value(of name: String, in path: String) throws -> UInt64? {
        let readelf = Process()
        readelf.executableURL = URL(fileURLWithPath: "/usr/bin/readelf")
        readelf.arguments = ["-sW", path]
        let pipe = Pipe()
        readelf.standardOutput = pipe
        try readelf.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        readelf.waitUntilExit()
        let line = text.split(separator: "\n").first { $0.split(separator: " ").last.map(String.init) == name }
        return line.flatMap { $0.split(separator: " ").dropFirst().first.flatMap { UInt64($0, radix: 16) } }
    }

    /// The Swift runtime of the toolchain that builds this package: a file with `_init` and `_fini` in its symbol
    /// table, as every toolchain library has.
    static let runtime = "/opt/swift/usr/lib/swift/linux/libswiftCore.so"

    @Test func codeAfterInitOrFiniIsNotNamedByThem() throws {
        let symbols = ELFSymbols(path: Self.runtime)
        for name in ["_init", "_fini"] {
            // The probe first: the symbol is there, sizeless, and names its own address.
            let start = try #require(try Self.value(of: name, in: Self.runtime), "\(Self.runtime) has no \(name)")
            let own = try #require(symbols.function(containing: start))
            #expect(own.name == name && own.size == 0)
            // 64 bytes on is past the section's few instructions: no name rather than a wrong one.
            #expect(symbols.function(containing: start + 64).map(\.name) != name)
        }
    }
}
