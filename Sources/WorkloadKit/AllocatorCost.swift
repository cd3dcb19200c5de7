import CJemalloc

/// What a request costs in the allocator the harness measures: the bytes jemalloc hands out for it, which is
/// what `stats.allocated`, the peaks, the residue and `expectMemory`'s figures count.
///
/// jemalloc rounds every request up to a size class (4 classes per doubling above 64 bytes, so up to 25% more;
/// whole pages above 16 KiB): a 12 KiB response costs 12 KiB, a 12,289-byte one 14 KiB. The truth a test or a
/// workload computes for a strategy ("500 responses of 16 KiB") is a sum of these costs, never of the bytes asked.
///
/// ```swift
/// let held = 500 * AllocatorCost.bytes(forRequest: 16 << 10)          // 500 responses kept as Data
/// let index = AllocatorCost.arrayBytes(of: Int.self, count: 500)       // one [Int] of 500 elements
/// let tag = AllocatorCost.stringBytes(utf8Count: 64)                   // a String of 64 UTF-8 bytes
/// ```
///
/// The one home of the size-class formula: the harness's own tests and benchmarks compute their truths here too.
/// It lives in WorkloadKit, which a workload author imports and `MemHarnessTesting` depends on (and names it), so
/// the author of a workload and the author of an `expectMemory` test reach the same function.
public enum AllocatorCost {
    /// The bytes jemalloc allocates for a request of `bytes` bytes: its size class (`nallocx`), bytes.
    /// Zero and negative requests cost nothing.
    public static func bytes(forRequest bytes: Int) -> Int {
        guard bytes > 0 else { return 0 }
        return nallocx(bytes, 0)
    }

    /// The bytes of the header Swift puts before an array's elements: the object header (metadata and reference
    /// counts, 16 bytes), the count and the capacity (8 each), then padding to the element's alignment.
    public static func arrayHeaderBytes<Element>(of _: Element.Type) -> Int {
        let alignment = MemoryLayout<Element>.alignment
        return (32 + alignment - 1) / alignment * alignment
    }

    /// The bytes jemalloc allocates for a native Swift string of `utf8Count` UTF-8 bytes built at that size (read,
    /// decoded, or joined in one go): nothing up to 15 bytes (a small string lives inside the `String` value
    /// itself), else one block of a 32-byte header, the bytes and a terminating zero, in its size class. A string
    /// grown by appending may hold spare capacity; a bridged or literal string may hold no block of its own.
    public static func stringBytes(utf8Count: Int) -> Int {
        utf8Count <= 15 ? 0 : bytes(forRequest: 32 + utf8Count + 1)
    }

    /// The bytes jemalloc allocates for a Swift array of `count` elements of `Element` built at that size
    /// (`Array(repeating:count:)`, `reserveCapacity(count)`, `map` over a collection of `count`): one block of
    /// the header and `MemoryLayout<Element>.stride * count`, in its size class; an empty array costs nothing.
    ///
    /// Not counted: what the elements reference (each class instance, string or array element is a block of its
    /// own), and the spare capacity of an array grown by appending (it doubles its capacity as it grows, so
    /// `arrayBytes(of:count: array.capacity)` is the cost of such an array).
    public static func arrayBytes<Element>(of _: Element.Type, count: Int) -> Int {
        guard count > 0 else { return 0 }
        return bytes(forRequest: arrayHeaderBytes(of: Element.self) + MemoryLayout<Element>.stride * count)
    }
}
