import HarnessCore
import HarnessModel
import Testing

@Suite(.serialized) struct ResidueTests {
    /// Runs `release` blocks, then idles for `idle`, sampling every millisecond.
    func run(idle: String) throws -> CaseResult {
        let catalog = WorkloadCatalog([BlockWorkload()])
        let yaml = """
        scenario: s
        workload: blocks
        strategies: [release]
        steps: [allocate, {idle: \(idle)}]
        interval: 1ms
        settle: 10ms
        """
        let spec = try ScenarioParser(catalog: catalog).parse(yaml, file: "s.yaml")
        let caseSpec = try #require(planCases([spec], options: RunOptions(repetitions: 1)).first)
        return try CaseExecutor(catalog: catalog).run(caseSpec, scratchDirectory: "/tmp")
    }

    /// The residue without the freed blocks other threads' caches held at either reading.
    func liveResidue(_ result: CaseResult) throws -> Int {
        let leaks = try #require(result.leaks)
        return result.residueBytes - leaks.threadCacheBytesAtEnd + leaks.threadCacheBytesAtBaseline
    }

    @Test func theSamplersSeriesIsNotResidue() throws {
        _ = try run(idle: "1ms")
        let short = try run(idle: "10ms")
        let long = try run(idle: "300ms")
        // The probe must see what could leak in: the long case holds hundreds more rows (~200 B each).
        let extraRows = try #require(long.samples?.count) - (try #require(short.samples?.count))
        #expect(extraRows > 200)
        #expect(try abs(liveResidue(long) - liveResidue(short)) < 4096,
                "residue \(long.residueBytes) B after 300 ms vs \(short.residueBytes) B after 10 ms")
    }
}
