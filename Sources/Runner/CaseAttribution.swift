import Attribution
import Foundation
import HarnessModel
import Symbols
import WorkloadKit

/// Turns the agent's record of an attributed case into the case's allocation profile: symbolized,
/// folded stacks at the peak, growth per site over `repeat` iterations, and the places leaked objects
/// were tracked from. Symbolizing needs the case's binaries, so it happens here, after the case ended.
enum CaseAttribution {
    /// `outcome` with its profile; a `failed` outcome saying why when the record is missing or unreadable.
    static func attach(to outcome: CaseOutcome, recordFile: String, label: String) -> CaseOutcome {
        guard let measurements = outcome.measurements else { return outcome }
        let failure: String
        do {
            let text = try String(contentsOfFile: recordFile, encoding: .utf8)
            let record = try AgentRecord.parse(text, source: "record of \(label)")
            let symbolizer = Symbolizer.shared
            let attributed = try Attribution.profile(record, source: "record of \(label)", symbolizer: symbolizer)
            var profile = attributed.profile
            let leaks = Attribution.leakSites(
                measurements.leaks?.survivorStacks ?? [], modules: record.modules, symbolizer: symbolizer)
            profile.leakSites = leaks.sites
            profile.notes = Array(Set((attributed.diagnostics + leaks.diagnostics).map(\.description))).sorted()
            return outcome.mapMeasurements { $0.replacingProfile(profile) }
        } catch let error as AttributionError {
            failure = error.description
        } catch {
            failure = "the case left no readable record of its allocation stacks (\(error.localizedDescription))"
        }
        switch outcome {
        case .completed(let measurements), .failed(_, let measurements):
            return .failed(reason: "allocation stacks: \(failure)", measurements: measurements)
        default:
            return outcome
        }
    }
}
