/// Language Server Protocol messages for `sourcekit-lsp` read from its standard input: one session that opens a file
/// and asks for its symbols, then shuts down. `{dir}` stands for the scratch folder.
enum LSPMessages {
    /// The session, each message framed with its `Content-Length` header (computed once `{dir}` is replaced, see
    /// `CorpusProgram.prepare`, which frames files ending in `.lsp`).
    static let documentSymbolSession = [
        #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://{dir}","capabilities":{}}}"#,
        #"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
        #"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file://{dir}/main.swift","languageId":"swift","version":1,"text":"struct Point { var x: Int }\nlet p = Point(x: 1)\n"}}}"#,
        #"{"jsonrpc":"2.0","id":2,"method":"textDocument/documentSymbol","params":{"textDocument":{"uri":"file://{dir}/main.swift"}}}"#,
        #"{"jsonrpc":"2.0","id":3,"method":"shutdown","params":null}"#,
        #"{"jsonrpc":"2.0","method":"exit","params":null}"#,
    ].joined(separator: "\n")

    /// `messages` (one per line, `{dir}` already replaced) framed for the wire.
    static func frame(_ messages: String) -> String {
        messages.split(separator: "\n").map { "Content-Length: \($0.utf8.count)\r\n\r\n\($0)" }.joined()
    }
}
