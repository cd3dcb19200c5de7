/// An article as the app's screens use it, decoded from the API's JSON.
public struct Article: Codable, Sendable, Hashable {
    public var id: Int
    public var title: String
    public var author: String
    public var tags: [String]
    public var body: String

    public init(id: Int, title: String, author: String, tags: [String], body: String) {
        self.id = id
        self.title = title
        self.author = author
        self.tags = tags
        self.body = body
    }
}
