extension RandomAccessCollection where Index == Int {
    /// The index of the last element whose `start` is at or below `value`, in a collection sorted by `start`; nil when
    /// every element starts above it. The one search by address of the symbol tables, segments and mappings.
    package func lastIndex(startingAtOrBelow value: UInt64, start: (Element) -> UInt64) -> Int? {
        var low = startIndex
        var high = endIndex
        while low < high {
            let middle = (low + high) / 2
            if start(self[middle]) <= value { low = middle + 1 } else { high = middle }
        }
        return low > startIndex ? low - 1 : nil
    }
}

extension RandomAccessCollection where Index == Int, Element == UInt64 {
    /// The index of the last value at or below `value` in sorted values (the same search over the starts themselves).
    package func lastIndex(startingAtOrBelow value: UInt64) -> Int? { lastIndex(startingAtOrBelow: value) { $0 } }
}
