import HarnessModel
import Testing
import WorkloadKit

@Suite struct LifetimeTrackerTests {
    final class Screen {}

    @Test func aLiveObjectSurvivesAndADeadOneDoesNot() {
        let tracker = LifetimeTracker()
        var live: Screen? = Screen()
        do {
            let transient = Screen()
            tracker.track(transient, as: "Screen")
        }
        if let live { tracker.track(live, as: "Screen") }
        #expect(tracker.tracked() == [TypeCount(typeName: "Screen", count: 2)])
        #expect(tracker.survivors() == [TypeCount(typeName: "Screen", count: 1)])
        live = nil
        #expect(tracker.survivors().isEmpty)
        #expect(tracker.tracked() == [TypeCount(typeName: "Screen", count: 2)])
    }

    @Test func survivorsAreCountedPerTypeInNameOrder() {
        let tracker = LifetimeTracker()
        let objects = [Screen(), Screen(), Screen()]
        tracker.track(objects[0], as: "ViewModel")
        tracker.track(objects[1], as: "Screen")
        tracker.track(objects[2], as: "ViewModel")
        #expect(
            tracker.survivors() == [
                TypeCount(typeName: "Screen", count: 1), TypeCount(typeName: "ViewModel", count: 2),
            ])
        tracker.removeAll()
        #expect(tracker.survivors().isEmpty)
        #expect(tracker.tracked().isEmpty)
        withExtendedLifetime(objects) {}
    }

    @Test func trackingDoesNotExtendALifetime() {
        let tracker = LifetimeTracker()
        weak var observed: Screen?
        do {
            let screen = Screen()
            observed = screen
            tracker.track(screen, as: "Screen")
            #expect(observed != nil)
        }
        #expect(observed == nil)
        #expect(tracker.survivors().isEmpty)
    }
}
