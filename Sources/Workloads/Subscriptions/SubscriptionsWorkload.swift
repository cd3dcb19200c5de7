import OpenCombine
import WorkloadKit

#if !os(Linux)
    #error("memharness builds on Linux only: the workloads run under the Linux harness")
#endif

/// How a screen subscribes, and so how long its subscription lives (seed 003).
///
/// The first five follow ReactiveCocoa's rule, "you don't need to retain signals": a subscription
/// lives until its signal completes or errors, or until it is disposed, whether or not anyone
/// stores it (the subscriber is retained by the upstream, see `SignalSubscriber`). The last four
/// are Combine's own default, where the screen stores an `AnyCancellable` that cancels on release.
public enum SubscriptionStrategy: String, CaseIterable, Sendable {
    /// Not stored; a one-shot load that completes: torn down by itself.
    case implicitFinite = "implicit-finite"
    /// Not stored; the store's infinite updates: the subscriber and the screen it captures live on and keep receiving.
    case implicitInfinite = "implicit-infinite"
    /// The infinite updates, the disposable kept by the screen and disposed when it is dismissed.
    case disposed = "disposed"
    /// A publisher derived from the screen's own property, its block capturing the screen strongly: a cycle.
    case selfDerivedStrong = "self-derived-strong"
    /// The same, capturing the screen weakly: the screen goes, its property's publisher completes.
    case selfDerivedWeak = "self-derived-weak"
    /// Combine: the sink closure captures the screen strongly on the infinite updates: a cycle through the stored
    /// cancellable.
    case strongSelfCapture = "strong-self-capture"
    /// Combine: the sink closure captures the screen weakly: the screen dies, its cancellable cancels.
    case weakSelf = "weak-self"
    /// Combine: strong capture of a one-shot load (a Future), cancellable stored: completion ends the subscription.
    case finitePublisher = "finite-publisher"
    /// Combine: `assign(to: \.profile, on: self)` on the infinite updates: Assign holds the screen, a known cycle.
    case assignToSelf = "assign-to-self"

    /// One line for `memharness list` and the report.
    public var summary: String {
        switch self {
        case .implicitFinite:
            return
                "RAC rule: subscribeNext { self.profile = $0 } on a one-shot load, not stored: the load completes "
                + "and the subscription ends by itself."
        case .implicitInfinite:
            return
                "RAC rule: subscribeNext { self.profile = $0 } on the store's infinite updates, not stored: lives "
                + "on and keeps receiving after dismissal."
        case .disposed:
            return
                "RAC rule: the same on the infinite updates, the disposable kept by the screen and disposed on "
                + "dismissal."
        case .selfDerivedStrong:
            return
                "RAC rule: subscribeNext { self.validate($0) } on the screen's own username (RACObserve(self, "
                + "...)): a cycle no completion breaks."
        case .selfDerivedWeak:
            return "RAC rule: the same with [weak self]: the screen deallocates and its username's publisher completes."
        case .strongSelfCapture:
            return
                "Combine: sink { self.profile = $0 } on the infinite updates, AnyCancellable stored in the screen "
                + "(a cycle)."
        case .weakSelf:
            return
                "Combine: sink { [weak self] in ... } on the infinite updates; the screen's deinit releases the "
                + "cancellable, which cancels."
        case .finitePublisher:
            return
                "Combine: strong capture of a one-shot load (a Future), AnyCancellable stored: the load completes "
                + "at the next update."
        case .assignToSelf:
            return "Combine: assign(to: \\.profile, on: self) on the infinite updates (Assign holds self strongly)."
        }
    }
}

/// Profile screens subscribing to an app-wide store with OpenCombine and being dismissed, over and over.
public struct SubscriptionsWorkload: Workload {
    /// The type name screens are tracked under; survivors after teardown are leaked screens.
    public static let trackedScreenType = "ProfileScreen"
    /// The type name subscriber objects are tracked under (RAC-style subscribers, Sinks, Assigns).
    public static let trackedSubscriberType = "Subscriber"

    public init() {}

    public var descriptor: WorkloadDescriptor {
        WorkloadDescriptor(
            name: "subscriptions",
            summary:
                "Screens subscribe (ReactiveCocoa's lifetimes modelled on OpenCombine, and Combine's) and are "
                + "dismissed; some subscriptions outlive their screen.",
            strategies: SubscriptionStrategy.allCases.map { StrategyDescriptor($0.rawValue, $0.summary) },
            parameters: [
                .bytes(
                    "payloadSize", default: 64 * 1024, range: 0...(64 << 20),
                    "View state each screen holds, so a leaked screen shows in bytes.")
            ],
            steps: [
                StepDescriptor(
                    "present", "Create a screen with its payload, subscribe it the strategy's way, push it."),
                StepDescriptor(
                    "publish",
                    "The store sends an update to its subscribers and answers pending loads; the screen on top gets "
                        + "the new name in its own username.",
                    arguments: [
                        .count("count", default: 1, range: 1...1_000_000, "Updates to send.")
                    ]),
                StepDescriptor(
                    "dismiss", "Pop the top screen (disposing its subscription under disposed) and drop it."),
            ],
            gauges: [
                GaugeDescriptor("liveScreens", "Screens alive (created and not yet deinitialized)."),
                GaugeDescriptor("liveSubscribers", "Subscriber objects alive, read after each step."),
                GaugeDescriptor(
                    "renders", "Updates screens have received so far (profile updates and username checks)."),
                GaugeDescriptor(
                    "deliveriesAfterDismiss",
                    "Values delivered to subscribers of screens already dismissed (wasted work)."),
            ],
            metrics: [
                MetricDescriptor("screensPresented", .count, "Profile screens presented."),
                MetricDescriptor("updatesPublished", .count, "Profile updates the store published."),
                MetricDescriptor("updatesRendered", .count, "Updates a screen rendered."),
                MetricDescriptor("deliveries", .count, "Values delivered to subscribers."),
                MetricDescriptor(
                    "deliveriesAfterDismiss", .count,
                    "Values delivered to subscribers of screens already dismissed (work for nobody)."),
                MetricDescriptor("screensAliveAfterTeardown", .count, "Screens still alive after teardown (leaked)."),
                MetricDescriptor(
                    "subscribersAliveAfterTeardown", .count, "Subscriber objects still alive after teardown."),
            ],
            defaultSteps: ["present", "publish", "dismiss"]
        )
    }

    public func makeCase(strategy: String, parameters: ParameterValues, context: CaseContext) throws -> any WorkloadCase
    {
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
        case .unknownStrategy(let name):
            return "subscriptions: unknown strategy '\(name)'; expected one of: "
                + SubscriptionStrategy.allCases.map(\.rawValue).joined(separator: ", ")
        case .unknownStep(let name):
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
    private let liveSubscribersGauge: Gauge
    private let renders: Gauge
    private let deliveries: Deliveries
    /// Every subscriber made so far, weakly: the live ones are counted after each step.
    private var subscribers: [WeakSubscriber] = []
    private var presented = 0
    private var published = 0
    private var screensAliveAfterTeardown: Int64 = 0
    private var subscribersAliveAfterTeardown = 0

    init(strategy: SubscriptionStrategy, payloadBytes: Int, context: CaseContext) {
        self.strategy = strategy
        self.payloadBytes = payloadBytes
        liveScreens = context.gauge("liveScreens")
        liveSubscribersGauge = context.gauge("liveSubscribers")
        renders = context.gauge("renders")
        deliveries = Deliveries(afterDismissGauge: context.gauge("deliveriesAfterDismiss"))
    }

    func setUp(context: CaseContext) throws {
        store = ProfileStore()
    }

    func run(_ step: StepInvocation, context: CaseContext) throws {
        switch step.name {
        case "present": present(context: context)
        case "publish": publish(count: step.arguments.count("count"))
        case "dismiss": dismiss()
        default: throw SubscriptionsError.unknownStep(step.name)
        }
        liveSubscribersGauge.set(Int64(liveSubscribers))
    }

    func present(context: CaseContext) {
        guard let store else { return }
        let screen = ProfileScreen(
            payloadBytes: payloadBytes, liveScreens: liveScreens, renders: renders, deliveries: deliveries)
        screen.subscribe(to: store, strategy: strategy) { subscriber in
            context.track(subscriber, as: SubscriptionsWorkload.trackedSubscriberType)
            subscribers.append(WeakSubscriber(object: subscriber))
        }
        context.track(screen, as: SubscriptionsWorkload.trackedScreenType)
        stack.append(screen)
        presented += 1
    }

    /// Sends `count` updates from the store; the screen on top sees each new name in its own property.
    func publish(count: Int) {
        guard let store else { return }
        for _ in 0..<count {
            let profile = store.publish()
            stack.last?.username.value = "\(profile.displayName) \(profile.revision)"
            published += 1
        }
    }

    func dismiss() {
        guard let screen = stack.popLast() else { return }
        screen.dismissed()
    }

    /// Subscribers still alive; forgets the dead ones (their weak references hold side tables).
    private var liveSubscribers: Int {
        subscribers.removeAll { $0.object == nil }
        return subscribers.count
    }

    /// Dismisses every screen still presented, then drops the store without completing it:
    /// an app-wide stream does not end when a screen goes, so whatever it still delivers to stays.
    func tearDown(context: CaseContext) throws {
        while !stack.isEmpty {
            dismiss()
        }
        store = nil
        screensAliveAfterTeardown = liveScreens.value
        subscribersAliveAfterTeardown = liveSubscribers
        liveSubscribersGauge.set(Int64(subscribersAliveAfterTeardown))
        subscribers = []
    }

    func metrics() -> [Metric] {
        [
            Metric(name: "screensPresented", value: Double(presented), unit: .count),
            Metric(name: "updatesPublished", value: Double(published), unit: .count),
            Metric(name: "updatesRendered", value: Double(renders.value), unit: .count),
            Metric(name: "deliveries", value: Double(deliveries.total), unit: .count),
            Metric(name: "deliveriesAfterDismiss", value: Double(deliveries.afterDismiss), unit: .count),
            Metric(name: "screensAliveAfterTeardown", value: Double(screensAliveAfterTeardown), unit: .count),
            Metric(name: "subscribersAliveAfterTeardown", value: Double(subscribersAliveAfterTeardown), unit: .count),
        ]
    }
}

/// A weak reference to a subscriber object (never used to reach it, only to see whether it is alive).
private struct WeakSubscriber {
    weak var object: AnyObject?
}
