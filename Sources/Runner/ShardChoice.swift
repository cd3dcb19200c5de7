/// `--shard I/N`, or `--shard auto` (`auto/N`): the shard given, or the one the CI engine running this job names.
public enum ShardChoice: Sendable, Hashable {
    /// `I/N`, as given.
    case fixed(Shard)
    /// `auto`, or `auto/N` with the count given (what a Kubernetes Indexed Job needs: it names the index only).
    case auto(count: Int?)

    /// Reads `I/N`, `auto` or `auto/N`; nil for anything else (or a count below 1).
    public init?(parsing text: String) {
        if text == "auto" {
            self = .auto(count: nil)
        } else if text.hasPrefix("auto/") {
            guard let count = Int(text.dropFirst("auto/".count)), count >= 1 else { return nil }
            self = .auto(count: count)
        } else {
            guard let shard = Shard(parsing: text) else { return nil }
            self = .fixed(shard)
        }
    }

    /// The shard, read from `environment` for `auto`; a message naming the variables read (and the ones to set, or
    /// `--shard I/N`) when no CI engine's are set, or when they do not make a shard.
    public func resolve(environment: [String: String]) -> Result<Shard, ShardProblem> {
        switch self {
        case .fixed(let shard): return .success(shard)
        case .auto(let count): return CIShardEngine.shard(environment: environment, count: count)
        }
    }
}

/// Why `--shard auto` has no shard; its description says what to set instead.
public struct ShardProblem: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
}

/// A CI engine that runs a job as several parallel copies and tells each its place in variables.
struct CIShardEngine: Sendable {
    var name: String
    var indexVariable: String
    /// Nil for an engine that names the index only (a Kubernetes Indexed Job): the count is given as `auto/N`.
    var countVariable: String?
    /// The first index: 1 (GitLab) or 0.
    var firstIndex: Int

    /// The engines `--shard auto` reads, in the order they are looked for.
    static let known = [
        CIShardEngine(name: "GitLab", indexVariable: "CI_NODE_INDEX", countVariable: "CI_NODE_TOTAL", firstIndex: 1),
        CIShardEngine(
            name: "Buildkite", indexVariable: "BUILDKITE_PARALLEL_JOB", countVariable: "BUILDKITE_PARALLEL_JOB_COUNT",
            firstIndex: 0),
        CIShardEngine(
            name: "CircleCI", indexVariable: "CIRCLE_NODE_INDEX", countVariable: "CIRCLE_NODE_TOTAL", firstIndex: 0),
        CIShardEngine(
            name: "a Kubernetes Indexed Job", indexVariable: "JOB_COMPLETION_INDEX", countVariable: nil, firstIndex: 0),
    ]

    /// The variables of every engine, as the messages list them.
    static var spelledOut: String {
        known.map { engine in
            "\(engine.name) \(engine.indexVariable)" + (engine.countVariable.map { "/\($0)" } ?? " with auto/N")
        }.joined(separator: ", ")
    }

    /// The shard of the first engine whose index variable is set (GitLab's count alone, which every GitLab job
    /// has, is shard 1 of 1: a job without `parallel:`).
    static func shard(environment: [String: String], count: Int?) -> Result<Shard, ShardProblem> {
        for engine in known {
            if environment[engine.indexVariable] != nil {
                return engine.shard(environment: environment, givenCount: count)
            }
        }
        if environment["CI_NODE_TOTAL"] == "1" { return engineShard(index: 1, count: 1, given: count, "GitLab") }
        return .failure(
            ShardProblem(
                description: "--shard auto: no CI engine says which parallel job this is (none of \(spelledOut) is "
                    + "set); give --shard I/N (under GitHub Actions, from a matrix: --shard ${{ matrix.shard }}/N)"))
    }

    /// This engine's shard, from its variables and the count given with `auto/N`, if any.
    func shard(environment: [String: String], givenCount: Int?) -> Result<Shard, ShardProblem> {
        let indexText = environment[indexVariable] ?? ""
        guard let index = Int(indexText) else {
            return .failure(ShardProblem(description: "--shard auto: \(indexVariable)='\(indexText)' is not a number"))
        }
        guard let countVariable else {
            guard let givenCount else {
                return .failure(
                    ShardProblem(
                        description:
                            "--shard auto: \(indexVariable) is set (\(name)) but not the number of jobs; give it "
                            + "as --shard auto/N (the Job's completions)"))
            }
            return Self.engineShard(index: index - firstIndex + 1, count: givenCount, given: nil, name)
        }
        let countText = environment[countVariable] ?? ""
        guard let count = Int(countText) else {
            return .failure(
                ShardProblem(
                    description: "--shard auto: \(indexVariable) is set (\(name)) but \(countVariable)='\(countText)' "
                        + "is not a number of jobs"))
        }
        return Self.engineShard(index: index - firstIndex + 1, count: count, given: givenCount, name)
    }

    /// `index/count` (from 1) when it is a shard and agrees with the count given; the problem otherwise.
    private static func engineShard(index: Int, count: Int, given: Int?, _ engine: String) -> Result<
        Shard, ShardProblem
    > {
        if let given, given != count {
            return .failure(
                ShardProblem(description: "--shard auto/\(given): \(engine) runs \(count) parallel jobs, not \(given)"))
        }
        guard let shard = Shard(index: index, count: count) else {
            return .failure(
                ShardProblem(
                    description: "--shard auto: \(engine) names job \(index) of \(count) (counted from 1), not a shard")
            )
        }
        return .success(shard)
    }
}
