import Testing

@testable import Runner

/// `--shard auto`: the shard each CI engine names, and the refusals where none does.
struct ShardChoiceTests {
    private func shard(_ text: String, _ environment: [String: String]) throws -> Result<Shard, ShardProblem> {
        try #require(ShardChoice(parsing: text)).resolve(environment: environment)
    }

    @Test(arguments: [
        // GitLab counts from 1, the others from 0.
        (["CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3"], 2, 3),
        (["BUILDKITE_PARALLEL_JOB": "0", "BUILDKITE_PARALLEL_JOB_COUNT": "4"], 1, 4),
        (["CIRCLE_NODE_INDEX": "3", "CIRCLE_NODE_TOTAL": "4"], 4, 4),
        // A GitLab job without `parallel:` has the total only: the whole run.
        (["CI_NODE_TOTAL": "1"], 1, 1),
    ])
    func autoTakesTheShardFromTheEngine(environment: [String: String], index: Int, count: Int) throws {
        #expect(try shard("auto", environment).get() == Shard(index: index, count: count))
    }

    @Test func aKubernetesIndexedJobNeedsTheCountOnTheCommandLine() throws {
        #expect(try shard("auto/4", ["JOB_COMPLETION_INDEX": "3"]).get() == Shard(index: 4, count: 4))
        guard case .failure(let problem) = try shard("auto", ["JOB_COMPLETION_INDEX": "3"]) else {
            Issue.record("a Kubernetes index without a count was taken")
            return
        }
        #expect(problem.description.contains("--shard auto/N"), "\(problem)")
    }

    @Test func withoutAnEngineAutoIsRefusedNamingWhatToSet() throws {
        guard case .failure(let problem) = try shard("auto", ["PATH": "/usr/bin"]) else {
            Issue.record("auto without an engine gave a shard")
            return
        }
        for variable in ["CI_NODE_INDEX", "BUILDKITE_PARALLEL_JOB", "CIRCLE_NODE_INDEX", "JOB_COMPLETION_INDEX"] {
            #expect(problem.description.contains(variable), "\(problem)")
        }
        #expect(problem.description.contains("--shard I/N"))
    }

    @Test func engineFiguresThatMakeNoShardOrDisagreeAreRefused() throws {
        let refused: [(String, [String: String], String)] = [
            ("auto", ["CIRCLE_NODE_INDEX": "4", "CIRCLE_NODE_TOTAL": "4"], "job 5 of 4"),
            ("auto", ["CI_NODE_INDEX": "x", "CI_NODE_TOTAL": "2"], "CI_NODE_INDEX='x'"),
            ("auto", ["BUILDKITE_PARALLEL_JOB": "1"], "BUILDKITE_PARALLEL_JOB_COUNT=''"),
            ("auto/3", ["CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "2"], "runs 2 parallel jobs, not 3"),
        ]
        for (text, environment, expected) in refused {
            guard case .failure(let problem) = try shard(text, environment) else {
                Issue.record("\(text) with \(environment) gave a shard")
                continue
            }
            #expect(problem.description.contains(expected), "\(problem)")
        }
    }

    @Test func fixedShardsAndBadSpellingsParseAsBefore() throws {
        #expect(try shard("2/4", ["CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "2"]).get() == Shard(index: 2, count: 4))
        for text in ["auto/0", "auto/x", "automatic", "0/2"] { #expect(ShardChoice(parsing: text) == nil, "\(text)") }
    }
}
