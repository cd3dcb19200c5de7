import Foundation

/// A stand-in for the JSON API: answers `GET /articles/<id>` with a response of exactly `responseSize` bytes.
///
/// Every response is built afresh, as a network response would arrive: a new `Data` whose bytes
/// are one allocation of `responseSize` bytes. The body text is padded to make the size exact, so a
/// cache holding `n` responses holds `n * responseSize` bytes of JSON.
public struct ArticleBackend: Sendable {
    /// Size of every response body, bytes.
    public let responseSize: Int

    /// The smallest response that still holds an article's fields, bytes.
    public static let minimumResponseSize = 256

    /// A backend whose responses are `responseSize` bytes (at least `minimumResponseSize`).
    public init(responseSize: Int) {
        precondition(responseSize >= Self.minimumResponseSize, "responses need at least \(Self.minimumResponseSize) B")
        self.responseSize = responseSize
    }

    /// The path the app requests article `id` under; short enough for Swift's inline strings (no allocation).
    public static func path(ofArticle id: Int) -> String { "/articles/\(id)" }

    /// The JSON of article `id`, exactly `responseSize` bytes.
    public func response(forArticle id: Int) -> Data {
        let head = #"{"id":\#(id),"title":"Article \#(id)","author":"Staff","tags":["news","swift"],"body":""#
        let tail = #""}"#
        let filler = Array("All the news that fits. ".utf8)
        var bytes = [UInt8]()
        bytes.reserveCapacity(responseSize)
        bytes.append(contentsOf: head.utf8)
        let bodyLength = responseSize - bytes.count - tail.utf8.count
        for index in 0..<bodyLength { bytes.append(filler[index % filler.count]) }
        bytes.append(contentsOf: tail.utf8)
        return Data(bytes)
    }
}
