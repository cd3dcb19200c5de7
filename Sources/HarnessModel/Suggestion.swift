/// Suggests the closest valid word when one is within two edits, or the only one starting with the word.
package func suggestion(_ word: String, _ choices: [String]) -> String {
    let lowered = word.lowercased()
    let prefixed = choices.filter { $0.lowercased().hasPrefix(lowered) }
    if lowered.count >= 3, prefixed.count == 1, let only = prefixed.first { return " (did you mean '\(only)'?)" }
    let scored = choices.map { ($0, editDistance(lowered, $0.lowercased())) }
    guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 2 else { return "" }
    return " (did you mean '\(best.0)'?)"
}

package func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    var previous = Array(0...b.count)
    for i in 1...a.count {
        var current = [i] + Array(repeating: 0, count: b.count)
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        previous = current
    }
    return previous[b.count]
}
