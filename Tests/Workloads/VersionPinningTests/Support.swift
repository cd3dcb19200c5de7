import Foundation
import HarnessModel
import Measurement
import Testing
import WorkloadKit

@testable import VersionPinningWorkload

/// Every test of the SQLite workloads, one at a time: they share SQLite's process-wide memory
/// counter and two cores, and a burst beside another would starve its writer.
@Suite(.serialized, .timeLimit(.minutes(5))) struct SQLiteWorkloadTests {}

/// A fresh directory under the system's temporary directory, removed when the test is done.
final class ScratchDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "memharness-sqlite-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// A case of `workload` set up in `scratch`, run step by step by the test.
final class CaseUnderTest {
    let workload: any Workload
    let context: CaseContext
    let workloadCase: any WorkloadCase

    init(
        _ workload: any Workload, strategy: String, _ overrides: [String: ParameterValue] = [:],
        in scratch: ScratchDirectory
    ) throws {
        self.workload = workload
        var parameters = ParameterValues(
            Dictionary(uniqueKeysWithValues: workload.descriptor.parameters.map { ($0.name, $0.defaultValue) }))
        for (name, value) in overrides {
            #expect(parameters[name] != nil, "no parameter '\(name)'")
            parameters[name] = value
        }
        context = CaseContext(
            strategy: strategy, gaugeNames: workload.descriptor.gauges.map(\.name), scratchDirectory: scratch.path)
        workloadCase = try workload.makeCase(strategy: strategy, parameters: parameters, context: context)
        try workloadCase.setUp(context: context)
    }

    /// Runs the workload's step `name`, its first argument set to `argument` when given.
    func run(_ name: String, _ argument: ParameterValue? = nil) throws {
        let descriptor = try #require(workload.descriptor.steps.first { $0.name == name }, "no step '\(name)'")
        var arguments = ParameterValues(
            Dictionary(uniqueKeysWithValues: descriptor.arguments.map { ($0.name, $0.defaultValue) }))
        if let argument, let first = descriptor.arguments.first { arguments[first.name] = argument }
        try workloadCase.run(StepInvocation(name: name, phase: name, arguments: arguments), context: context)
    }

    func tearDown() throws -> [String: Double] {
        try workloadCase.tearDown(context: context)
        return Dictionary(uniqueKeysWithValues: workloadCase.metrics().map { ($0.name, $0.value) })
    }

    func gauge(_ name: String) -> Int { Int(context.gauge(name).value) }
}

/// The size in bytes of a WAL holding `frames` frames of `pageSize` pages, from SQLite's file format:
/// a 32-byte header, then per frame a 24-byte header and the page.
func walFileBytes(frames: Int, pageSize: Int) -> Int {
    32 + frames * (pageSize + 24)
}

extension Dictionary where Key == String, Value == Double {
    /// A metric as a whole number, failing the test when the case did not report it.
    func int(_ name: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> Int {
        Int(try #require(self[name], "metric '\(name)' missing", sourceLocation: sourceLocation))
    }
}
