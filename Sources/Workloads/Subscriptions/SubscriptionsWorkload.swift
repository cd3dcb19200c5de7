import WorkloadKit
import HarnessModel
import OpenCombine

/// How a screen holds its subscription to the store (seed 003: finite streams end their
/// subscription; infinite ones need disposal; capturing the owner strongly is a cycle).
public enum SubscriptionStrategy: String, CaseIterable, Sendable {
    /// The sink closure captures the screen strongly on an infinite publisher: a cycle, one leak per screen.
    case strongSelfCapture = "strong-self-capture"
    /// The sink closure captures the screen weakly: the screen dies, its cancellable cancels.
    case weakSelf = "weak-self"
    /// Strong capture, but dismissing the screen cancels the subscription first.
    case cancelOnTeardown = "cancel-on-teardown"
    /// Strong capture of a one-shot load that completes: the subscription ends by itself.
    case finitePublisher = "finite-publisher"
    /// `assign(to: \.profile, on: self)` on an infinite publisher: Assign holds the screen, a known cycle.
    case assignToSelf = "assign-to-self"

    /// One line for `memharness list` and the report.
    public var summary: String {
        switch self {
        case .strongSelfCapture: return "sink { self.profile = $0 } on the store's infinite updates, cancellable stored in the screen (a cycle)."
        case .weakSelf: return "sink { [weak self] in ... } on the infinite updates; the screen's deinit cancels."
        case .cancelOnTeardown: return "Strong capture, but dismissing the screen cancels the subscription explicitly."
        case .finitePublisher: return "Strong capture of a one-shot load (a Future) that completes at the next update."
        case .assignToSelf: return "assign(to: \\.profile, on: self) on the infinite updates (Assign holds self strongly)."
        }
    }
}

/// Profile screens subscribing to an app-wide store with OpenCombine and being dismissed, over and over.
public struct SubscriptionsWorkload: Workload {
    /// The type name screens are tracked under; survivors after teardown are leaked screens.
    public static let trackedScreenType = "ProfileScreen"

    public init() {}

    public var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "subscriptions",
            summary: "Screens subscribe to an app-wide store (OpenCombine) and are dismissed; some strategies leak every screen.",
            strategies: SubscriptionStrategy.allCases.map { StrategyDescriptor($0.rawValue, $0.summary) },
            parameters: [
                .bytes("payloadSize", default: 64 * 1024, range: 0...(64 << 20),
                       "View state each screen holds, so a leaked screen shows in bytes."),
            ],
            steps: [
                StepDescriptor("present", "Create a screen with its payload, subscribe it the strategy's way, push it."),
                StepDescriptor("publish", "The store sends updates to its subscribers and answers pending loads.", arguments: [
                    .count("count", default: 1, range: 1...1_000_000, "Updates to send."),
                ]),
                StepDescriptor("dismiss", "Pop the top screen (cancelling first under cancel-on-teardown) and drop it."),
            ],
            gauges: [
                GaugeDescriptor("liveScreens", "Screens alive (created and not yet deinitialized)."),
                GaugeDescriptor("renders", "Updates screens have received so far."),
            ],
            defaultSteps: ["present", "publish", "dismiss"]
        )
    }

    public func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase {
        guard let strategy = SubscriptionStrategy(rawValue: strategy) else {
            throw SubscriptionsError.unknownStrategy(strategy)
        }
        return SubscriptionsCase(strategy: strategy, payloadBytes: parameters.bytes("payloadSize"), context: context)
    }
}

/// Why the subscriptions workload could not run a case.
public enum SubscriptionsError: Error, CustomStringConvertible, Sendable {
    case unknownStrategy(String)
    case unknownStep(String)

    public var description: String {
        switch self {
        case let .unknownStrategy(name):
            return "subscriptions: unknown strategy '\(name)'; expected one of: "
                + SubscriptionStrategy.allCases.map(\.rawValue).joined(separator: ", ")
        case let .unknownStep(name):
            return "subscriptions: unknown step '\(name)'; expected one of: present, publish, dismiss"
        }
    }
}

/// One case: a store, and a navigation stack of screens.
final class SubscriptionsCase: WorkloadCase {
    let strategy: SubscriptionStrategy
    let payloadBytes: Int
    private var store: ProfileStore?
    /// Presented screens, top last.
    private var stack: [ProfileScreen] = []
    private let liveScreens: Gauge
    private let renders: Gauge
    private var presented = 0
    private var published = 0
    private var aliveAfterTeardown: Int64 = 0

    init(strategy: SubscriptionStrategy, payloadBytes: Int, context: CaseContext) {
        self.strategy = strategy
        self.payloadBytes = payloadBytes
        liveScreens = context.gauge("liveScreens")
        renders = context.gauge("renders")
    }

    func setUp(context: CaseContext) throws {
        store = ProfileStore()
    }

    func run(_ step: StepInvocation, context: CaseContext) throws {
        switch step.name {
        case "present": present(context: context)
        case "publish":
            for _ in 0..<step.arguments.count("count") {
                store?.publish()
                published += 1
            }
        case "dismiss": dismiss()
        default: throw SubscriptionsError.unknownStep(step.name)
        }
    }

    func present(context: CaseContext) {
        guard let store else { return }
        let screen = ProfileScreen(payloadBytes: payloadBytes, liveScreens: liveScreens, renders: renders)
        screen.subscribe(to: store, strategy: strategy)
        context.track(screen, as: SubscriptionsWorkload.trackedScreenType)
        stack.append(screen)
        presented += 1
    }

    func dismiss() {
        guard let screen = stack.popLast() else { return }
        if strategy == .cancelOnTeardown {
            screen.cancelSubscription()
        }
    }

    /// Dismisses every screen still presented, then drops the store without completing it:
    /// an app-wide stream does not end when a screen goes, so whatever a cycle holds stays.
    func tearDown(context: CaseContext) throws {
        while !stack.isEmpty {
            dismiss()
        }
        store = nil
        aliveAfterTeardown = liveScreens.value
    }

    func metrics() -> [Metric] {
        [
            Metric(name: "screensPresented", value: Double(presented), unit: .count),
            Metric(name: "updatesPublished", value: Double(published), unit: .count),
            Metric(name: "updatesRendered", value: Double(renders.value), unit: .count),
            Metric(name: "screensAliveAfterTeardown", value: Double(aliveAfterTeardown), unit: .count),
        ]
    }
}
