import Scenarios
import TestSupport
import Testing
import WorkloadKit

struct MemoryBudgetParserTests {
    let parser = ScenarioParser(catalog: WorkloadCatalog([ExampleWorkload()]))

    func parse(_ extra: String) -> Result<ScenarioSpec, ScenarioError> {
        Result { () throws(ScenarioError) in
            try parser.parse("scenario: s\nworkload: example\n" + extra, file: "Scenarios/x.yaml")
        }
    }

    @Test func readsTheLimitAndTheWarning() throws {
        let spec = try parse("memoryLimit: 300MiB\nmemoryWarning: 80%\n").get()
        #expect(spec.memoryLimitBytes == 300 << 20)
        #expect(spec.memoryWarning == .fractionOfLimit(0.8))
        let absolute = try parse("memoryWarning: 64MiB\n").get()
        #expect(absolute.memoryLimitBytes == nil)
        #expect(absolute.memoryWarning == .bytes(64 << 20))
    }

    @Test(arguments: [
        (
            "memoryLimit: 300XB\n",
            "Scenarios/x.yaml:3:14: bad value '300XB' for 'memoryLimit'; expected a size from 1MiB to 1TiB"
        ),
        (
            "memoryLimit: 100MiB\nmemoryWarning: 200MiB\n",
            "Scenarios/x.yaml:4:16: 'memoryWarning' 200.00 MiB is above 'memoryLimit' 100.00 MiB"
        ),
        (
            "memoryWarning: 180%\n",
            "Scenarios/x.yaml:3:16: bad value '180%' for 'memoryWarning'; expected a share of the limit"
        ),
        // A number without a unit could be a share or bytes: `0.8` was once read as a warning at 1 byte.
        (
            "memoryLimit: 300MiB\nmemoryWarning: 0.8\n",
            "Scenarios/x.yaml:4:16: 'memoryWarning' '0.8' has no unit, so it could be a share of the limit or a "
                + "number of bytes; write a percentage such as 80% (1%...100%) or a size such as 200MiB"
        ),
        ("memoryWarning: 200\n", "Scenarios/x.yaml:3:16: 'memoryWarning' '200' has no unit"),
        ("memoryLimt: 1GiB\n", "unknown key 'memoryLimt'; expected one of: "),
    ])
    func reportsBadValuesWithTheirPlace(text: String, message: String) {
        guard case .failure(.invalid(let found)) = parse(text) else {
            Issue.record("\(text) parsed")
            return
        }
        #expect(found.contains { $0.description.contains(message) }, "\(found)")
    }
}
