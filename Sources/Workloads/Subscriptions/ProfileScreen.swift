import WorkloadKit
import OpenCombine

/// A screen-like owner: it subscribes to the store when presented and is dismissed later.
///
/// It holds `payloadBytes` of view state (decoded images, layout caches) so a leaked screen is
/// visible in bytes, not only as a count.
final class ProfileScreen {
    /// View state, touched so it is real memory.
    let payload: [UInt8]
    /// What the screen shows (a placeholder until the first update); `assign(to:on:)` writes it directly.
    var profile = Profile(revision: 0, displayName: "") {
        didSet { renders.increment() }
    }
    /// The subscription: the cancellable `sink`/`assign` returned.
    private var subscription: AnyCancellable?
    private let liveScreens: Gauge
    private let renders: Gauge

    init(payloadBytes: Int, liveScreens: Gauge, renders: Gauge) {
        payload = [UInt8](repeating: 0xA5, count: payloadBytes)
        self.liveScreens = liveScreens
        self.renders = renders
        liveScreens.increment()
    }

    deinit {
        liveScreens.decrement()
    }

    /// Subscribes the way `strategy` does. The screen stores the cancellable in every strategy
    /// (without it OpenCombine would cancel at once); what differs is what the subscriber holds.
    func subscribe(to store: ProfileStore, strategy: SubscriptionStrategy) {
        switch strategy {
        case .strongSelfCapture, .cancelOnTeardown:
            // screen -> AnyCancellable -> Sink -> closure -> screen: a cycle until cancelled.
            subscription = store.updates.sink { profile in self.profile = profile }
        case .weakSelf:
            subscription = store.updates.sink { [weak self] profile in self?.profile = profile }
        case .finitePublisher:
            // The same strong capture, but the Future completes and the Sink then drops its closure.
            subscription = store.load().sink { profile in self.profile = profile }
        case .assignToSelf:
            // Subscribers.Assign holds its object strongly until completion or cancel.
            subscription = store.updates.assign(to: \.profile, on: self)
        }
    }

    /// Explicit disposal: cancelling makes the Sink drop its closures and the subject its conduit.
    func cancelSubscription() {
        subscription?.cancel()
        subscription = nil
    }
}
