/// Where a viewport of cells goes while the user scrolls: a pure function of the gesture.
///
/// The viewport shows `visibleCells` consecutive posts; its position is the index of the top one.
/// A scroll moves it one post at a time: `stride` posts forward, then `backtrack` posts back (the
/// user glances back up), and again, until it has moved `distance` posts net or reached an end of
/// the timeline. Each move is one scrolled cell: one cell leaves the screen and is reused for the
/// post that enters.
public struct ScrollPlan: Sendable, Hashable {
    /// Net posts to move.
    public var distance: Int
    /// Posts moved forward before each glance back; at least 1.
    public var stride: Int
    /// Posts moved back at each glance; 0 scrolls straight through. Less than `stride`, or the
    /// viewport would never get anywhere.
    public var backtrack: Int
    /// true: towards higher post indices (older posts); false: back towards the top.
    public var forward: Bool

    public init(distance: Int, stride: Int, backtrack: Int, forward: Bool = true) {
        self.distance = distance
        // A stride of 0 would never move; clamp.
        self.stride = max(stride, 1)
        // Backtracking as far as the stride would never make progress; clamp below it.
        self.backtrack = min(max(backtrack, 0), self.stride - 1)
        self.forward = forward
    }

    /// The viewport positions after each move, starting from `top`, staying within
    /// `0...lastTop` (the last position where the viewport is still full).
    public func positions(from top: Int, lastTop: Int) -> [Int] {
        let lastTop = max(lastTop, 0)
        var positions: [Int] = []
        var position = min(max(top, 0), lastTop)
        let target = forward ? min(position + distance, lastTop) : max(position - distance, 0)
        let ahead = forward ? 1 : -1
        func reached() -> Bool { forward ? position >= target : position <= target }
        while !reached() {
            for _ in 0..<stride where !reached() {
                position += ahead
                positions.append(position)
            }
            if reached() { break }
            for _ in 0..<backtrack {
                let next = position - ahead
                guard next >= 0 && next <= lastTop else { break }
                position = next
                positions.append(position)
            }
        }
        return positions
    }
}
