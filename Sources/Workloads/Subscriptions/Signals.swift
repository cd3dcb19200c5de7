import OpenCombine
import WorkloadKit

/// ReactiveCocoa's lifetime rule on OpenCombine: "you don't need to retain signals".
///
/// A `SignalSubscriber` is what RAC's `subscribeNext:` creates: an implicit subscriber holding the
/// block, and with it everything the block captures. Nobody has to store it: it is retained by
/// the upstream's subscription (OpenCombine's subjects and futures hold their subscribers, and it
/// holds the subscription back), so it lives until the publisher completes or fails, or until
/// it is disposed. Completion and disposal drop the block and the subscription, and the pair is
/// freed. Combine's `AnyCancellable` has the opposite default: it cancels when it is released,
/// so a sink nobody stores ends at once.
final class SignalSubscriber<Input>: Subscriber, Cancellable {
    typealias Failure = Never

    private var next: ((Input) -> Void)?
    /// The upstream's subscription: the other half of the cycle that keeps this subscriber alive.
    private var subscription: (any Subscription)?
    private let presence: ScreenPresence
    private let deliveries: Deliveries

    init(presence: ScreenPresence, deliveries: Deliveries, next: @escaping (Input) -> Void) {
        self.next = next
        self.presence = presence
        self.deliveries = deliveries
    }

    func receive(subscription: any Subscription) {
        guard next != nil else {
            // Disposed before the upstream answered: nothing to deliver to.
            subscription.cancel()
            return
        }
        self.subscription = subscription
        subscription.request(.unlimited)
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        guard let next else { return .none }
        deliveries.record(presence)
        next(input)
        return .none
    }

    /// Completion tears the subscription down: the block (and what it captured) and the
    /// subscription are released, which breaks any cycle through this subscriber.
    func receive(completion: Subscribers.Completion<Never>) {
        next = nil
        subscription = nil
    }

    /// Disposal: to this subscriber it is as if the publisher had completed, but no event is sent.
    func cancel() {
        let subscription = self.subscription
        self.subscription = nil
        next = nil
        subscription?.cancel()
    }

    /// Whether the subscription is still running (not completed, failed or disposed).
    var isActive: Bool { next != nil }
}

/// What `subscribeNext` returns: a handle that ends the subscription when disposed.
///
/// Keeping it is optional. Like a `RACDisposable`, it holds the subscription and so the subscriber
/// (`screen -> disposable -> subscriber -> block -> screen` is a cycle until disposal or completion).
final class Disposable {
    private let subscriber: any Cancellable

    init(_ subscriber: any Cancellable) {
        self.subscriber = subscriber
    }

    /// Ends the subscription: the subscriber drops its block and is removed from the publisher.
    func dispose() {
        subscriber.cancel()
    }
}

extension Publisher where Failure == Never {
    /// RAC's `subscribeNext:`: subscribes an implicit subscriber running `next` for every value.
    ///
    /// The subscription lives until the publisher completes or the returned handle is disposed,
    /// whether or not anyone keeps the handle. `onSubscribe` gets the subscriber (for tracking).
    @discardableResult
    func subscribeNext(
        presence: ScreenPresence, deliveries: Deliveries, onSubscribe: (AnyObject) -> Void = { _ in },
        _ next: @escaping (Output) -> Void
    ) -> Disposable {
        let subscriber = SignalSubscriber<Output>(presence: presence, deliveries: deliveries, next: next)
        onSubscribe(subscriber)
        subscribe(subscriber)
        return Disposable(subscriber)
    }
}

/// Whether a screen has been dismissed; shared by the screen and its subscribers, so a delivery
/// can tell it reached a screen that is gone (without the subscriber keeping the screen alive).
final class ScreenPresence {
    var isDismissed = false
}

/// Values delivered to subscribers, and those delivered after their screen was dismissed (work
/// nobody sees: the screen is off the navigation stack).
final class Deliveries {
    private(set) var total = 0
    private(set) var afterDismiss = 0
    private let afterDismissGauge: Gauge

    init(afterDismissGauge: Gauge) {
        self.afterDismissGauge = afterDismissGauge
    }

    /// Counts one value handed to a subscriber of the screen `presence` stands for.
    func record(_ presence: ScreenPresence) {
        total += 1
        if presence.isDismissed {
            afterDismiss += 1
            afterDismissGauge.increment()
        }
    }
}
