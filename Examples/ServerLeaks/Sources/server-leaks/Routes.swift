import Hummingbird
import NIOCore
import Synchronization

// The three server problems, each with its fix beside it (one strategy of the scenario per route):
//
// | Route                   | Problem                                           | Kept per request, by construction   |
// |-------------------------|---------------------------------------------------|-------------------------------------|
// | POST /upload/collect    | the whole body collected before it is used        | nothing after the request; the peak |
// |                         |                                                   | holds every upload in flight        |
// | POST /upload/stream     | the fix: the body consumed chunk by chunk         | nothing; the peak holds chunks      |
// | GET  /cache/unbounded   | a per-connection cache that never evicts          | one CachedResponse: 4,096 + 32 B    |
// | GET  /cache/bounded     | the fix: 128 responses in all, the oldest out     | nothing from the 128th request on   |
// | POST /audit/leak        | a handler's closure retains its request's record  | one AuditRecord cycle, 4,144 B:     |
// |                         | (record -> onFlush closure -> record: a cycle)    | body copy 4,096 + record 48 (the    |
// |                         |                                                   | closure's context is the record)    |
// | POST /audit/weak        | the fix: the closure holds the record weakly      | nothing                             |
//
// The sizes: a class instance is a 16-byte header plus its stored properties; `UnsafeMutableRawBufferPointer
// .allocate(byteCount: 4096, alignment: 16)` is one malloc of 4,096 bytes (a jemalloc size class: no rounding); a
// closure that captures one class reference and nothing else has that reference as its context (no box).

/// The size of one cached response and of the copy of an audited body: a jemalloc size class, so what the code
/// keeps is what the allocator counts.
let payloadBytes = 4096

/// A request's context that knows its connection: the per-connection cache is keyed by it.
struct ConnectionContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection's channel, as an identity (never dereferenced).
    let connection: ObjectIdentifier

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        connection = ObjectIdentifier(source.channel)
    }
}

/// Exactly `payloadBytes` of rendered response, filled with `seed`: 4,096 B, plus the instance (16-byte header +
/// 16-byte buffer pointer = 32 B).
final class CachedResponse: @unchecked Sendable {
    let bytes: UnsafeMutableRawBufferPointer

    init(seed: Int) {
        bytes = .allocate(byteCount: payloadBytes, alignment: 16)
        bytes.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: seed))
    }

    deinit { bytes.deallocate() }
}

/// The responses rendered for each connection, keyed by the connection and the cache's request number. `capacity`
/// nil: unbounded (every response is kept for as long as the server runs, its connection closed or not); otherwise at
/// most `capacity` responses in all, the oldest evicted first, and nothing else kept per connection: a counter per
/// connection would grow with the connections (16 B each, in a dictionary that doubles), a bound cache's own leak.
final class ConnectionCaches: Sendable {
    private struct Key: Hashable {
        let connection: ObjectIdentifier
        let number: Int
    }

    private struct State {
        /// Requests answered: the next response's number.
        var requests = 0
        var responses: [Key: CachedResponse] = [:]
        /// Bounded only: the cached keys in a ring, the oldest at `oldest` once it is full.
        var order: [Key] = []
        var oldest = 0
    }

    let capacity: Int?
    private let state = Mutex(State())

    init(capacity: Int?) { self.capacity = capacity }

    /// Caches the connection's next response; returns how many responses the cache holds.
    func respond(on connection: ObjectIdentifier) -> Int {
        state.withLock { state in
            let key = Key(connection: connection, number: state.requests)
            state.responses[key] = CachedResponse(seed: state.requests)
            state.requests += 1
            if let capacity {
                if state.order.count < capacity {
                    state.order.append(key)
                } else {
                    state.responses[state.order[state.oldest]] = nil
                    state.order[state.oldest] = key
                    state.oldest = (state.oldest + 1) % capacity
                }
            }
            return state.responses.count
        }
    }
}

/// What an audited request keeps until it is flushed: a copy of its body (`payloadBytes` bytes: the load sends
/// bodies of that size) and the callback that flushes it. Instance: 16-byte header + 16-byte buffer + 16-byte
/// closure = 48 B.
final class AuditRecord: @unchecked Sendable {
    let body: UnsafeMutableRawBufferPointer
    var onFlush: (() -> Void)?

    init(copying buffer: ByteBuffer) {
        body = .allocate(byteCount: buffer.readableBytes, alignment: 16)
        buffer.withUnsafeReadableBytes { body.copyMemory(from: $0) }
    }

    /// The bytes' sum, what the record would write.
    func checksum() -> Int { body.reduce(0) { $0 &+ Int($1) } }

    deinit { body.deallocate() }
}

/// Requests answered, printed at the stop (the load client's count is checked against it).
let served = Atomic<Int>(0)

/// The routes of the table above on `router`.
func addRoutes(to router: Router<ConnectionContext>) {
    router.get("/health") { _, _ in "ok" }
    addUploadRoutes(to: router)
    let unbounded = ConnectionCaches(capacity: nil)
    let bounded = ConnectionCaches(capacity: 128)
    router.get("/cache/unbounded") { _, context in count(unbounded.respond(on: context.connection)) }
    router.get("/cache/bounded") { _, context in count(bounded.respond(on: context.connection)) }
    router.post("/audit/leak") { request, _ in
        var request = request
        let record = AuditRecord(copying: try await request.collectBody(upTo: 1 << 20))
        // The leak: the record holds its callback, whose context is the record. Never flushed, never freed.
        record.onFlush = { _ = record.checksum() }
        return count(record.body.count)
    }
    router.post("/audit/weak") { request, _ in
        var request = request
        let record = AuditRecord(copying: try await request.collectBody(upTo: 1 << 20))
        record.onFlush = { [weak record] in _ = record?.checksum() }
        return count(record.body.count)
    }
}

/// Uploads: the whole body in one buffer (as `collectBody` or a decoder does) vs its chunks as they arrive.
func addUploadRoutes(to router: Router<ConnectionContext>) {
    router.post("/upload/collect") { request, _ in
        var request = request
        let body = try await request.collectBody(upTo: 64 << 20)
        return count(body.readableBytesView.reduce(0) { $0 &+ Int($1) })
    }
    router.post("/upload/stream") { request, _ in
        var sum = 0
        for try await chunk in request.body { sum = chunk.readableBytesView.reduce(sum) { $0 &+ Int($1) } }
        return count(sum)
    }
}

/// Counts a served request; the answer's text.
func count(_ value: Int) -> String {
    served.add(1, ordering: .relaxed)
    return "\(value)\n"
}
