import HarnessModel

/// Live sets by call path: one tree of frames for several live sets at once (the columns: each strategy's live set
/// at its peak, at each iteration mark, an earlier run's), so a flame graph is one column of it and a difference
/// of two strategies or two runs is two columns of the same nodes. Built once (`build`), by the builder; the flame
/// graphs' SVG and report.js only lay it out.
///
/// A node is a function under a path of callers (frames of one function at different lines are one node, as
/// flamegraph.pl folds them); the root is `all`. Children are in order of name.
public struct FlameTree: Sendable, Hashable {
    /// What one column weighs.
    public struct Column: Sendable, Hashable {
        /// The strategy whose live set it is.
        public var strategy: String
        /// Which run: nil for this run, else the earlier run of a comparison (in words).
        public var earlierRun: String?
        /// The moment: nil for the peak, else the iteration mark (`steady #3`) and its time.
        public var mark: Mark?
        /// The measured peak above the baseline of the case the live set was sampled in, bytes (0 when unknown).
        public var measuredPeakNetBytes: Int
        /// The mean of the byte sampling (one sample per this many bytes allocated, on average).
        public var sampleMeanBytes: Int

        public struct Mark: Sendable, Hashable {
            public var label: String
            public var timeNanoseconds: Int64
        }

        public init(
            strategy: String, earlierRun: String? = nil, mark: Mark? = nil, measuredPeakNetBytes: Int = 0,
            sampleMeanBytes: Int = 0
        ) {
            self.strategy = strategy
            self.earlierRun = earlierRun
            self.mark = mark
            self.measuredPeakNetBytes = measuredPeakNetBytes
            self.sampleMeanBytes = sampleMeanBytes
        }
    }

    public struct Node: Sendable, Hashable {
        public var name: String
        /// The caller's node; nil for the root.
        public var parent: Int?
        /// In order of name.
        public var children: [Int]
        public var isLibrary: Bool
        public var moduleName: String
        /// The node's source locations (`File.swift:12`), each with the columns whose stacks pass it there.
        public var locations: [Location]
    }

    public struct Location: Sendable, Hashable {
        public var text: String
        public var columns: Set<Int>
    }

    /// One frame of a stack given to `build`.
    public struct Frame: Sendable, Hashable {
        public var function: String
        public var location: String?
        public var moduleName: String
        public var isLibrary: Bool

        public init(function: String, location: String? = nil, moduleName: String = "", isLibrary: Bool = false) {
            self.function = function
            self.location = location
            self.moduleName = moduleName
            self.isLibrary = isLibrary
        }
    }

    /// One stack given to `build`: its frames root first, and what it holds in the column.
    public struct Stack: Sendable, Hashable {
        public var frames: [Frame]
        public var bytes: Int
        public var count: Int

        public init(frames: [Frame], bytes: Int, count: Int) {
            self.frames = frames
            self.bytes = bytes
            self.count = count
        }
    }

    public var columns: [Column]
    /// Node 0 is the root; every node after its parent.
    public var nodes: [Node]
    /// `bytes[column][node]`: the live bytes of the column's stacks through the node.
    public var bytes: [[Int]]
    /// `counts[column][node]`: their blocks.
    public var counts: [[Int]]
    /// `selfBytes[column][node]`: the bytes of the stacks that end at the node.
    public var selfBytes: [[Int]]

    /// The tree of `stacks` (one list per column; stacks of no bytes are left out): the one place call paths
    /// become a tree.
    public static func build(columns: [Column], stacks: [[Stack]]) -> FlameTree {
        var tree = FlameTree(
            columns: columns,
            nodes: [Node(name: "all", parent: nil, children: [], isLibrary: false, moduleName: "", locations: [])],
            bytes: [], counts: [], selfBytes: [])
        var childIndex: [[String: Int]] = [[:]]
        var weights: [[(node: Int, bytes: Int, count: Int, ends: Bool)]] = []
        for (column, columnStacks) in stacks.enumerated() {
            var touched: [(node: Int, bytes: Int, count: Int, ends: Bool)] = []
            for stack in columnStacks where stack.bytes > 0 {
                var node = 0
                touched.append((0, stack.bytes, stack.count, stack.frames.isEmpty))
                for (depth, frame) in stack.frames.enumerated() {
                    let child: Int
                    if let index = childIndex[node][frame.function] {
                        child = index
                    } else {
                        child = tree.nodes.count
                        tree.nodes.append(
                            Node(
                                name: frame.function, parent: node, children: [], isLibrary: frame.isLibrary,
                                moduleName: frame.moduleName, locations: []))
                        childIndex.append([:])
                        childIndex[node][frame.function] = child
                        tree.nodes[node].children.append(child)
                    }
                    if let location = frame.location {
                        tree.addLocation(location, column: column, node: child)
                    }
                    touched.append((child, stack.bytes, stack.count, depth == stack.frames.count - 1))
                    node = child
                }
            }
            weights.append(touched)
        }
        tree.finish(weights)
        return tree
    }

    private mutating func addLocation(_ text: String, column: Int, node: Int) {
        if let index = nodes[node].locations.firstIndex(where: { $0.text == text }) {
            nodes[node].locations[index].columns.insert(column)
        } else {
            nodes[node].locations.append(Location(text: text, columns: [column]))
        }
    }

    /// Sums the weights into the per-column arrays; sorts children and locations by name.
    private mutating func finish(_ weights: [[(node: Int, bytes: Int, count: Int, ends: Bool)]]) {
        let empty = [Int](repeating: 0, count: nodes.count)
        bytes = Array(repeating: empty, count: columns.count)
        counts = bytes
        selfBytes = bytes
        for (column, touched) in weights.enumerated() where column < columns.count {
            for entry in touched {
                bytes[column][entry.node] += entry.bytes
                counts[column][entry.node] += entry.count
                if entry.ends { selfBytes[column][entry.node] += entry.bytes }
            }
        }
        let names = nodes.map(\.name)
        for index in nodes.indices {
            nodes[index].children.sort { names[$0] < names[$1] }
            nodes[index].locations.sort { $0.text < $1.text }
        }
    }

    /// The node's locations that `column`'s stacks pass.
    public func locations(of node: Int, in column: Int) -> [String] {
        nodes[node].locations.filter { $0.columns.contains(column) }.map(\.text)
    }

    /// The depth of the tree as `column` sees it: the levels of its deepest stack, the root's included.
    public func depth(in column: Int) -> Int {
        depth(of: 0) { bytes[column][$0] > 0 }
    }

    /// The levels below and including `node` over the nodes `includes` keeps.
    public func depth(of node: Int, includes: (Int) -> Bool) -> Int {
        1 + (nodes[node].children.filter(includes).map { depth(of: $0, includes: includes) }.max() ?? 0)
    }
}
