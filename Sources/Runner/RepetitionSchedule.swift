import HarnessModel

/// The further repetitions the `repetitions: auto` scenarios of a plan need, decided as their results come in.
///
/// The plan lists each auto scenario's first `minimum` repetitions, as for a fixed count. A round is the cases
/// of a scenario not yet finished: the planned ones first, then one repetition of every strategy still
/// running. When a round's last case ends, each strategy of it is judged by the stopping rule
/// (`AdaptiveRepetitions.decision`, a pure function of its results so far) and those that need more get one
/// more repetition each, run next; the results carry the count. Fixed scenarios are not touched.
struct RepetitionSchedule {
    private struct CaseKey: Hashable {
        var strategy: String
        var repetition: Int
    }

    /// One auto scenario as it runs.
    private struct Group {
        var rule: AdaptiveRepetitions
        var watched: [Figure]
        /// Each strategy's first measured case: the spec its further repetitions copy.
        var templates: [String: CaseSpec] = [:]
        /// Strategies in plan order.
        var strategies: [String] = []
        /// The cases of the current round that have not ended.
        var pending: Set<CaseKey> = []
        var results: [String: [CaseResult]] = [:]
    }

    private var groups: [String: Group] = [:]

    init(_ plan: RunPlan) {
        for planned in plan.scenarios {
            guard case .auto(let rule) = planned.repetitions else { continue }
            var group = Group(rule: rule, watched: planned.watchedFigures)
            for spec in plan.cases where spec.scenario == planned.spec.name && !spec.isInstrumented {
                if group.templates[spec.strategy] == nil {
                    group.templates[spec.strategy] = spec
                    group.strategies.append(spec.strategy)
                }
                group.pending.insert(CaseKey(strategy: spec.strategy, repetition: spec.repetition))
            }
            if !group.pending.isEmpty { groups[planned.spec.name] = group }
        }
    }

    /// Records a finished case; returns the cases to run next: empty unless it ended a round of an auto
    /// scenario in which some strategy needs more repetitions.
    mutating func casesAfter(_ result: CaseResult) -> [CaseSpec] {
        guard !result.isInstrumented, var group = groups[result.scenario] else { return [] }
        group.results[result.strategy, default: []].append(result)
        group.pending.remove(CaseKey(strategy: result.strategy, repetition: result.repetition))
        var next: [CaseSpec] = []
        if group.pending.isEmpty {
            for strategy in group.strategies {
                let results = group.results[strategy] ?? []
                guard group.rule.decision(for: results, watching: group.watched) == .more,
                    var spec = group.templates[strategy]
                else { continue }
                spec.repetition = (results.map(\.repetition).max() ?? 0) + 1
                next.append(spec)
                group.pending.insert(CaseKey(strategy: strategy, repetition: spec.repetition))
            }
        }
        groups[result.scenario] = group
        return next
    }
}
