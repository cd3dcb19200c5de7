import CJemalloc
import Testing
import WorkloadKit

#if canImport(Glibc)
    import Glibc
#endif

/// What a request and an array cost: the size class jemalloc hands out, read back from live blocks.
struct AllocatorCostTests {
    /// A 40-byte element, aligned to 8.
    struct Entry {
        var key: Int
        var value: (Int, Int, Int, Int)
    }

    @Test(arguments: [1, 17, 100, 4096, 12_289, 16 << 10, 3 << 20])
    func aRequestCostsTheUsableSizeOfTheBlockItGets(size: Int) throws {
        let block = try #require(malloc(size))
        defer { free(block) }
        #expect(AllocatorCost.bytes(forRequest: size) == malloc_usable_size(block))
        #expect(AllocatorCost.bytes(forRequest: size) >= size)
    }

    @Test func sizeClassesRoundUpAndNothingCostsNothing() {
        #expect(AllocatorCost.bytes(forRequest: 12_289) == 14 << 10)
        #expect(AllocatorCost.bytes(forRequest: 16 << 10) == 16 << 10)
        #expect(AllocatorCost.bytes(forRequest: 0) == 0)
        #expect(AllocatorCost.arrayBytes(of: Int.self, count: 0) == 0)
    }

    /// The array's block starts its header before the elements: its usable size is what `arrayBytes` says.
    @Test(arguments: [1, 10, 500, 100_000])
    func anArrayBuiltAtItsSizeCostsItsBlock(count: Int) throws {
        let bytes = [UInt8](repeating: 1, count: count)
        let entries = [Entry](repeating: Entry(key: 1, value: (1, 2, 3, 4)), count: count)
        let integers = (0..<count).map { $0 }
        #expect(try blockBytes(bytes) == AllocatorCost.arrayBytes(of: UInt8.self, count: bytes.capacity))
        #expect(try blockBytes(entries) == AllocatorCost.arrayBytes(of: Entry.self, count: count))
        #expect(try blockBytes(integers) == AllocatorCost.arrayBytes(of: Int.self, count: count))
        #expect(AllocatorCost.arrayBytes(of: Entry.self, count: count) >= 32 + 40 * count)
    }

    /// A native string's storage starts its header before its UTF-8 bytes: its usable size is what `stringBytes` says.
    @Test(arguments: [16, 64, 100, 4000])
    func aStringBuiltAtItsSizeCostsItsBlock(utf8Count: Int) throws {
        var text = String(repeating: "a", count: utf8Count)
        let utf8 = try #require(text.utf8.withContiguousStorageIfAvailable { UnsafeRawPointer($0.baseAddress) })
        let start = try #require(utf8)
        #expect(
            malloc_usable_size(UnsafeMutableRawPointer(mutating: start - 32))
                == AllocatorCost.stringBytes(utf8Count: utf8Count))
        text.append("!")  // the block is the string's: still alive above
        #expect(AllocatorCost.stringBytes(utf8Count: 15) == 0, "a small string lives in the value")
    }

    /// The usable size of the block that holds `array`'s elements, found from its header.
    private func blockBytes<Element>(_ array: [Element]) throws -> Int {
        let header = AllocatorCost.arrayHeaderBytes(of: Element.self)
        return try array.withUnsafeBytes { buffer in
            let elements = try #require(buffer.baseAddress)
            return malloc_usable_size(UnsafeMutableRawPointer(mutating: elements - header))
        }
    }
}
