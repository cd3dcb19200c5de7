/// The malloc a program's case runs on (`--allocator`).
public enum Allocator: String, Sendable, Hashable, Codable, CaseIterable {
    /// jemalloc, preloaded after the agent (the default): its own figures, and a heap that returns freed pages.
    case jemalloc
    /// glibc's malloc (ptmalloc): the agent alone is preloaded, and it reads glibc's figures (mallinfo2).
    case glibc
}
