import ImageFeedWorkload
import Testing

struct ScrollPlanTests {
    @Test func scrollsStraightThroughWithoutBacktracking() {
        #expect(ScrollPlan(distance: 5, stride: 10, backtrack: 0).positions(from: 0, lastTop: 100) == [1, 2, 3, 4, 5])
    }

    @Test func glancesBackAfterEachStride() {
        #expect(
            ScrollPlan(distance: 4, stride: 3, backtrack: 1).positions(from: 0, lastTop: 100) == [1, 2, 3, 2, 3, 4])
    }

    @Test func scrollsUpTowardsTheTop() {
        #expect(
            ScrollPlan(distance: 4, stride: 2, backtrack: 1, forward: false).positions(from: 10, lastTop: 100)
                == [9, 8, 9, 8, 7, 8, 7, 6])
        #expect(
            ScrollPlan(distance: 50, stride: 2, backtrack: 0, forward: false).positions(from: 3, lastTop: 100) == [
                2, 1, 0,
            ])
    }

    @Test(arguments: [(400, 40, 20, 395), (100, 7, 3, 60), (10, 1, 0, 4), (30, 5, 9, 12)])
    func movesOnePostAtATimeAndStaysOnTheTimeline(distance: Int, stride: Int, backtrack: Int, lastTop: Int) {
        let positions = ScrollPlan(distance: distance, stride: stride, backtrack: backtrack).positions(
            from: 0, lastTop: lastTop)
        #expect(zip([0] + positions, positions).allSatisfy { abs($0 - $1) == 1 })
        #expect(positions.allSatisfy { (0...lastTop).contains($0) })
        #expect(positions.last == min(distance, lastTop))
    }

    @Test func aBacktrackAsLongAsTheStrideIsClampedSoTheScrollStillGetsThere() {
        let plan = ScrollPlan(distance: 6, stride: 3, backtrack: 5)
        #expect(plan.backtrack == 2)
        #expect(plan.positions(from: 0, lastTop: 100).last == 6)
    }
}
