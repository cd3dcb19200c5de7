/// How a case captures its heap as a graph: after teardown, and after every `repeat` iteration when asked.
public struct HeapGraphRequest: Sendable, Hashable, Codable {
    /// Types whose shortest retaining path is wanted (`--retained-by TYPE`), by name with or without the module.
    public var retainedBy: [String]
    /// True (`--heap-graph`): a capture after every `repeat` iteration too, for growth by type. False: after
    /// teardown only, enough to decide a leak expectation or a threshold (`expect:`, `leakedBlocks`), for a
    /// fraction of the time (each capture stops the process and is analysed).
    public var capturesIterations: Bool

    public init(retainedBy: [String] = [], capturesIterations: Bool = true) {
        self.retainedBy = retainedBy
        self.capturesIterations = capturesIterations
    }

    /// The capture a leak expectation or a heap-graph threshold needs: after teardown only.
    public static let afterTeardown = HeapGraphRequest(capturesIterations: false)

    private enum CodingKeys: String, CodingKey { case retainedBy, capturesIterations }

    /// Reads records written before `capturesIterations` existed (every request captured iterations then).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        retainedBy = try container.decode([String].self, forKey: .retainedBy)
        capturesIterations = try container.decodeIfPresent(Bool.self, forKey: .capturesIterations) ?? true
    }
}
