import OpenCombine

/// The profile a screen shows; a small value, so the payload of the screen dominates its bytes.
struct Profile: Hashable, Sendable {
    var revision: Int
    var displayName: String
}

/// The app-wide model a profile screen observes: an infinite stream of updates (it lives as long
/// as the app and never completes) and one-shot loads that complete once answered.
final class ProfileStore {
    /// Every change of the profile, for as long as the store lives: never completes.
    let updates = PassthroughSubject<Profile, Never>()
    /// Promises of loads not answered yet; `publish` answers and forgets them.
    private var pendingLoads: [Future<Profile, Never>.Promise] = []
    private(set) var revision = 0

    /// A one-shot load, like a network request: one value, then completion at the next `publish`.
    ///
    /// OpenCombine's `Future` holds its subscribers until the promise is fulfilled, then sends the
    /// value and `.finished`; a `Sink` drops its closures on completion, which is what ends a
    /// cycle through the subscriber.
    func load() -> Future<Profile, Never> {
        Future { promise in self.pendingLoads.append(promise) }
    }

    /// Sends one update to every subscriber of `updates` and answers every pending load with it;
    /// returns the update.
    @discardableResult
    func publish() -> Profile {
        revision += 1
        let profile = Profile(revision: revision, displayName: "Ada Lovelace")
        updates.send(profile)
        let loads = pendingLoads
        pendingLoads = []
        for promise in loads {
            promise(.success(profile))
        }
        return profile
    }
}
