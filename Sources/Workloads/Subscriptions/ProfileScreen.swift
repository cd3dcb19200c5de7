import OpenCombine
import WorkloadKit

/// A screen-like owner: it subscribes when presented and is dismissed later.
///
/// It holds `payloadBytes` of view state (decoded images, layout caches) so a leaked screen is
/// visible in bytes, not only as a count.
final class ProfileScreen {
    /// View state, touched so it is real memory.
    let payload: [UInt8]
    /// Whether the screen was dismissed; its subscribers share it to count deliveries nobody sees.
    let presence = ScreenPresence()
    /// What the screen shows (a placeholder until the first update); `assign(to:on:)` writes it directly.
    var profile = Profile(revision: 0, displayName: "") {
        didSet {
            renders.increment()
            // Assign has no block of ours to count in: count its deliveries where they land.
            if countsRendersAsDeliveries { deliveries.record(presence) }
        }
    }
    /// The screen's own observable property (RAC's `RACObserve(self, username)`): it sends the
    /// current value on subscription and every change, and completes when the screen deallocates.
    let username = CurrentValueSubject<String, Never>("")
    /// Combine's handle: the cancellable `sink`/`assign` returned (cancels when released).
    private var cancellable: AnyCancellable?
    /// RAC's handle, kept only by `disposed`.
    private var disposable: Disposable?
    private var countsRendersAsDeliveries = false
    private let liveScreens: Gauge
    private let renders: Gauge
    private let deliveries: Deliveries

    init(payloadBytes: Int, liveScreens: Gauge, renders: Gauge, deliveries: Deliveries) {
        payload = [UInt8](repeating: 0xA5, count: payloadBytes)
        self.liveScreens = liveScreens
        self.renders = renders
        self.deliveries = deliveries
        liveScreens.increment()
    }

    deinit {
        // RACObserve's signal completes when its object deallocates, ending what observes it.
        username.send(completion: .finished)
        liveScreens.decrement()
    }

    /// Checks the username (the block a self-derived subscription runs): a render of the screen.
    func validate(_ username: String) {
        renders.increment()
    }

    /// Subscribes the way `strategy` does; `onSubscribe` gets the subscriber object (for tracking).
    func subscribe(to store: ProfileStore, strategy: SubscriptionStrategy, onSubscribe: (AnyObject) -> Void) {
        switch strategy {
        // ReactiveCocoa's rule: the subscriber is retained by the upstream, not by the screen.
        case .implicitFinite:
            // Not stored; the load completes at the next publish and the subscription ends by itself.
            showProfiles(from: store.load(), onSubscribe: onSubscribe)
        case .implicitInfinite:
            // Not stored, and the store's updates never complete: the subscriber and the screen it
            // captures live on, and keep receiving, after the screen is dismissed.
            showProfiles(from: store.updates, onSubscribe: onSubscribe)
        case .disposed:
            // The same strong capture on the infinite updates, but the screen keeps the disposable
            // and disposes it when dismissed (`dismissed()`).
            disposable = showProfiles(from: store.updates, onSubscribe: onSubscribe)
        case .selfDerivedStrong:
            // screen -> username -> subscriber -> block -> screen: the signal would complete when the
            // screen deallocates, which the cycle prevents. No completion breaks it.
            username.subscribeNext(presence: presence, deliveries: deliveries, onSubscribe: onSubscribe) { name in
                self.validate(name)
            }
        case .selfDerivedWeak:
            username.subscribeNext(presence: presence, deliveries: deliveries, onSubscribe: onSubscribe) {
                [weak self] name in
                self?.validate(name)
            }

        // Combine's default: the screen stores an AnyCancellable, which cancels when released.
        case .strongSelfCapture:
            // screen -> AnyCancellable -> Sink -> closure -> screen: a cycle until cancelled.
            keep(profileSink(capturing: .strong), subscribedTo: { store.updates }, onSubscribe: onSubscribe)
        case .weakSelf:
            keep(profileSink(capturing: .weak), subscribedTo: { store.updates }, onSubscribe: onSubscribe)
        case .finitePublisher:
            // The seed's finite example: the handle is stored and the block captures the screen, but
            // the Future completes and the Sink then drops its closure, breaking the cycle.
            keep(profileSink(capturing: .strong), subscribedTo: { store.load() }, onSubscribe: onSubscribe)
        case .assignToSelf:
            // Subscribers.Assign holds its object strongly until completion or cancel.
            countsRendersAsDeliveries = true
            let assign = Subscribers.Assign<ProfileScreen, Profile>(object: self, keyPath: \.profile)
            keep(assign, subscribedTo: { store.updates }, onSubscribe: onSubscribe)
        }
    }

    /// RAC's `subscribeNext { self.profile = $0 }`: the block holds the screen strongly.
    @discardableResult
    private func showProfiles<Upstream: Publisher>(from upstream: Upstream, onSubscribe: (AnyObject) -> Void)
        -> Disposable
    where Upstream.Output == Profile, Upstream.Failure == Never {
        upstream.subscribeNext(presence: presence, deliveries: deliveries, onSubscribe: onSubscribe) { profile in
            self.profile = profile
        }
    }

    /// How a subscriber's closure holds the screen.
    private enum Capture {
        case strong
        case weak
    }

    /// A Sink that counts each delivery and shows the profile it receives.
    private func profileSink(capturing capture: Capture) -> Subscribers.Sink<Profile, Never> {
        // Copied out, so a closure that holds the screen weakly holds these strongly.
        let presence = presence
        let deliveries = deliveries
        switch capture {
        case .strong:
            return Subscribers.Sink(
                receiveCompletion: { _ in },
                receiveValue: { profile in
                    deliveries.record(presence)
                    self.profile = profile
                })
        case .weak:
            return Subscribers.Sink(
                receiveCompletion: { _ in },
                receiveValue: { [weak self] profile in
                    deliveries.record(presence)
                    self?.profile = profile
                })
        }
    }

    /// Combine's way: `subscriber` goes to `onSubscribe`, is subscribed to `upstream()`, and is stored as
    /// the screen's cancellable (which cancels it when released).
    private func keep<Downstream: Subscriber & Cancellable & AnyObject, Upstream: Publisher>(
        _ subscriber: Downstream, subscribedTo upstream: () -> Upstream, onSubscribe: (AnyObject) -> Void
    ) where Upstream.Output == Downstream.Input, Upstream.Failure == Downstream.Failure {
        onSubscribe(subscriber)
        upstream().subscribe(subscriber)
        cancellable = AnyCancellable(subscriber)
    }

    /// The screen left the navigation stack: `disposed` disposes its subscription; every strategy
    /// marks the screen dismissed, so later deliveries to it count as wasted.
    func dismissed() {
        presence.isDismissed = true
        disposable?.dispose()
        disposable = nil
    }
}
