import Hummingbird
import Logging

#if canImport(Glibc)
    import Glibc
#endif

// server-leaks PORT: serves the routes of Routes.swift on 127.0.0.1:PORT until SIGTERM or SIGINT (a graceful
// shutdown: open requests finish, then the process exits and the agent captures its heap), then prints
// `served N` on standard error.
guard let port = Standard.port(CommandLine.arguments) else { exit(64) }
var logger = Logger(label: "server-leaks")
logger.logLevel = .warning
let router = Router(context: ConnectionContext.self)
addRoutes(to: router)
let app = Application(
    router: router,
    configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "server-leaks"),
    logger: logger
)
Standard.error("listening on 127.0.0.1:", port)
try await app.runService()
Standard.error("served ", served.load(ordering: .relaxed))

/// The command line and standard error. Synchronous, so the text they build is freed before they return (built in
/// the async top-level code, it would stay in the main task's frame, which no root reaches at exit).
enum Standard {
    /// The port of `arguments` (`server-leaks PORT`); nil after printing the usage.
    static func port(_ arguments: [String]) -> Int? {
        if arguments.count == 2, let port = Int(arguments[1]), (1...65_535).contains(port) { return port }
        write("usage: server-leaks PORT (1...65535); got '\(arguments.dropFirst().joined(separator: " "))'\n")
        return nil
    }

    /// Writes `text` then `number` and a newline on standard error, unbuffered.
    static func error(_ text: String, _ number: Int) { write("\(text)\(number)\n") }

    private static func write(_ text: String) {
        var text = text
        text.withUTF8 { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
