import HarnessModel

/// The leaked blocks grouped as macOS `leaks` groups them.
///
/// A component is a cycle when it has more than one block or one block referencing itself. A root is a
/// component no leaked block outside it references: a root cycle, or a root leak (one block in no cycle).
/// Every leaked block is reachable from some root (the components form a DAG), and is counted in the group
/// of the first root that reaches it: roots in address order of their lowest block, each walked breadth
/// first over blocks no earlier group took. The groups' blocks therefore sum to the leaked blocks.
struct LeakGrouping {
    let graph: LeakedGraph
    /// Members of component `c`: `members[memberStart[c]..<memberStart[c + 1]]`, ascending.
    let memberStart: [UInt32]
    let members: [UInt32]
    let selfLoop: [Bool]
    let referencedFromOutside: [Bool]
    /// Root component of each group, in group order.
    let rootComponents: [UInt32]
    /// Group of each leaked block.
    let groupOf: [UInt32]
    /// Members of group `g` in the order its walk took them (the root's first): `order[orderStart[g]..<...]`.
    let orderStart: [UInt32]
    let order: [UInt32]

    init(_ graph: LeakedGraph) {
        self.graph = graph
        let components = graph.componentCount
        var memberStart = [UInt32](repeating: 0, count: components + 1)
        for vertex in 0..<graph.count { memberStart[Int(graph.component[vertex]) + 1] += 1 }
        for component in 0..<components { memberStart[component + 1] += memberStart[component] }
        var cursor = Array(memberStart.dropLast())
        var members = [UInt32](repeating: 0, count: graph.count)
        for vertex in 0..<graph.count {
            let component = Int(graph.component[vertex])
            members[Int(cursor[component])] = UInt32(truncatingIfNeeded: vertex)
            cursor[component] += 1
        }
        var selfLoop = [Bool](repeating: false, count: components)
        var referenced = [Bool](repeating: false, count: components)
        for vertex in 0..<graph.count {
            let component = graph.component[vertex]
            for edge in graph.edges(of: vertex) {
                let target = Int(graph.targets[edge])
                if target == vertex { selfLoop[Int(component)] = true }
                if graph.component[target] != component { referenced[Int(graph.component[target])] = true }
            }
        }
        self.memberStart = memberStart
        self.members = members
        self.selfLoop = selfLoop
        referencedFromOutside = referenced
        // Roots in the order of their lowest block (members are ascending, so the first member is the lowest).
        let roots = (0..<UInt32(truncatingIfNeeded: components)).filter { !referenced[Int($0)] }
            .sorted { members[Int(memberStart[Int($0)])] < members[Int(memberStart[Int($1)])] }
        rootComponents = roots
        (groupOf, orderStart, order) = Self.walk(graph, roots: roots, memberStart: memberStart, members: members)
    }

    var groupCount: Int { rootComponents.count }

    func members(ofComponent component: Int) -> ArraySlice<UInt32> {
        members[Int(memberStart[component])..<Int(memberStart[component + 1])]
    }

    func members(ofGroup group: Int) -> ArraySlice<UInt32> {
        order[Int(orderStart[group])..<Int(orderStart[group + 1])]
    }

    func isCycle(_ component: Int) -> Bool {
        memberStart[component + 1] - memberStart[component] > 1 || selfLoop[component]
    }

    /// Breadth-first from each root in turn, over blocks no group has taken yet.
    private static func walk(
        _ graph: LeakedGraph, roots: [UInt32], memberStart: [UInt32], members: [UInt32]
    ) -> ([UInt32], [UInt32], [UInt32]) {
        var groupOf = [UInt32](repeating: LeakedGraph.absent, count: graph.count)
        var order: [UInt32] = []
        order.reserveCapacity(graph.count)
        var orderStart: [UInt32] = [0]
        for (group, root) in roots.enumerated() {
            var head = order.count
            for member in members[Int(memberStart[Int(root)])..<Int(memberStart[Int(root) + 1])] {
                groupOf[Int(member)] = UInt32(truncatingIfNeeded: group)
                order.append(member)
            }
            while head < order.count {
                let vertex = Int(order[head])
                head += 1
                for edge in graph.edges(of: vertex) {
                    let target = Int(graph.targets[edge])
                    guard groupOf[target] == LeakedGraph.absent else { continue }
                    groupOf[target] = UInt32(truncatingIfNeeded: group)
                    order.append(UInt32(truncatingIfNeeded: target))
                }
            }
            orderStart.append(UInt32(truncatingIfNeeded: order.count))
        }
        return (groupOf, orderStart, order)
    }

    /// One shortest round trip through `start` inside its component: the graph's edge indices in cycle order.
    /// `scratch` has one entry per leaked block, all `absent`, and is left so.
    func shortestCycle(through start: Int, scratch: inout [UInt32]) -> [Int] {
        let component = graph.component[start]
        var queue = [UInt32(truncatingIfNeeded: start)]
        var head = 0
        var closing: Int?
        search: while head < queue.count {
            let vertex = Int(queue[head])
            head += 1
            for edge in graph.edges(of: vertex) {
                let target = Int(graph.targets[edge])
                guard graph.component[target] == component else { continue }
                if target == start {
                    closing = edge
                    break search
                }
                if scratch[target] == LeakedGraph.absent {
                    scratch[target] = UInt32(truncatingIfNeeded: edge)
                    queue.append(UInt32(truncatingIfNeeded: target))
                }
            }
        }
        var path: [Int] = []
        if var edge = closing {
            path.append(edge)
            var from = source(ofEdge: edge)
            while from != start {
                edge = Int(scratch[from])
                path.append(edge)
                from = source(ofEdge: edge)
            }
        }
        for vertex in queue.dropFirst() { scratch[Int(vertex)] = LeakedGraph.absent }
        return path.reversed()
    }

    /// The leaked block an edge of the leaked graph starts from.
    func source(ofEdge edge: Int) -> Int {
        var low = 0
        var high = graph.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if Int(graph.start[middle]) <= edge { low = middle } else { high = middle - 1 }
        }
        return low
    }
}
