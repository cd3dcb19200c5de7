/// How a case captures its heap as a graph (`--heap-graph`): after teardown, after every `repeat` iteration.
public struct HeapGraphRequest: Sendable, Hashable, Codable {
    /// Types whose shortest retaining path is wanted (`--retained-by TYPE`), by name with or without the module.
    public var retainedBy: [String]

    public init(retainedBy: [String] = []) {
        self.retainedBy = retainedBy
    }
}
