/// When to compact, as the seed's compaction rules state them; plain functions over sizes.
public enum CompactionRules {
    /// Automatic compaction: "when the size of unused space in the file is more than twice the size
    /// of user data in the file".
    ///
    /// - Parameters:
    ///   - totalBytes: data plus free space, bytes.
    ///   - usedBytes: bytes that hold data.
    public static func autoCompactionDue(totalBytes: Int, usedBytes: Int) -> Bool {
        totalBytes - usedBytes > 2 * usedBytes
    }

    /// Compaction on launch, the seed's `shouldCompactOnLaunch` example: the file is over
    /// `totalAbove` bytes and less than `usedBelow` of it is used.
    ///
    /// - Parameters:
    ///   - totalBytes: size of the file on disk (data plus free space), bytes.
    ///   - usedBytes: bytes that hold data.
    ///   - totalAbove: file size above which compaction is considered, bytes (100 MB in the seed).
    ///   - usedBelow: used share below which the file is compacted, 0...1 (0.5 in the seed).
    public static func launchCompactionDue(totalBytes: Int, usedBytes: Int, totalAbove: Int, usedBelow: Double) -> Bool
    {
        // An empty file is never "over" any size; the guard also keeps the division defined.
        guard totalBytes > 0 else { return false }
        return totalBytes > totalAbove && Double(usedBytes) / Double(totalBytes) < usedBelow
    }
}
