import Foundation
import Symbols
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Where each loaded file is, read from /proc: the lookup every address goes through.
@Suite struct ModuleMapTests {
    /// libc's `qsort` as the loader resolved it, and the file it is in.
    private func qsort() throws -> (address: UInt64, path: String) {
        let symbol = try #require(dlopen(nil, RTLD_NOW).flatMap { dlsym($0, "qsort") })
        let address = UInt64(UInt(bitPattern: symbol))
        let region = try #require(ProcessMaps.read().region(containing: address))
        try #require(region.isExecutable && region.path.contains("libc"), "\(region)")
        return (address, region.path)
    }

    @Test func aFunctionIsNamedThroughItsModuleEvenWhenItsFileIsAlsoMappedAsData() throws {
        let (address, path) = try qsort()
        // Reading the file's symbols maps it whole, at offset 0: a second mapping of the file, which must not be taken
        // for where the loader put it.
        #expect(ELFSymbols.cached(path: path).count > 0)
        let modules = ProcessMaps.read().modules
        let module = try #require(modules.module(containing: address))
        #expect(module.path == path)
        #expect(Symbolizer(tools: []).function(at: address, in: modules)?.hasPrefix("qsort") == true)
        // The same file's segments placed from its program headers, where the loader said it was loaded.
        let placed = ModuleMap(loadedFiles: [(path, module.loadBias)])
        #expect(placed.module(containing: address)?.loadBias == module.loadBias)
    }

    @Test func theWholeMapsFileIsRead() {
        // Foundation's String(contentsOfFile:) stops at 4 KiB of a /proc file; a Swift test process has more mappings.
        let maps = ProcessMaps.read()
        #expect(maps.regions.count > 60)
        let stack = maps.regions.first { $0.path == "[stack]" }
        #expect(stack?.isReadable == true && stack?.isFile == false)
        var local = 0
        let address = withUnsafeMutablePointer(to: &local) { UInt64(UInt(bitPattern: $0)) }
        #expect(maps.isReadable(address, length: 8))
        #expect(!maps.isReadable(8, length: 8))
    }
}
