/// The corpus: real programs this machine has (the Swift toolchain's own Swift programs, the system's), chosen so
/// that together they start process trees, run many threads, load libraries late, take signals and end with `_exit`.
public enum Corpus {
    /// Every program of the corpus, quick ones first.
    public static let all: [CorpusProgram] = quick + full

    /// The quick corpus `make test` runs: base system programs, a few seconds each in every mode.
    public static let quick: [CorpusProgram] = [
        CorpusProgram(
            "dash pipeline", ["/usr/bin/dash", "{dir}/pipeline.sh"], traits: [.processTree, .quickExit],
            files: ["pipeline.sh": "#!/usr/bin/dash\nprintf 'c\\nb\\na\\n' | sort | head -2\necho done | tr a-z A-Z\n"],
            quick: true),
        CorpusProgram(
            "python3 threads, dlopen, a signal", ["/usr/bin/python3", "{dir}/work.py"],
            traits: [.threads, .dlopen, .signals], files: ["work.py": pythonWork], quick: true),
        CorpusProgram(
            "bash trap and _exit", ["/usr/bin/bash", "{dir}/trap.sh"], traits: [.signals, .processTree, .quickExit],
            files: [
                "trap.sh":
                    "trap 'echo trapped USR1' USR1\nkill -USR1 $$\n(sleep 0.1; echo child) &\nwait\n"
                    + "/usr/bin/python3 -c 'import os; print(\"leaving\", flush=True); os._exit(3)'\necho status $?\n"
            ], quick: true),
    ]

    /// The rest: the toolchain's Swift programs and larger system programs.
    public static let full: [CorpusProgram] = [
        CorpusProgram(
            "swift-package describe", ["/opt/swift/usr/bin/swift-package", "describe", "--package-path", "{dir}/pkg"],
            traits: [.swift, .threads, .processTree], files: smallPackage),
        CorpusProgram(
            "swift-format format", ["/opt/swift/usr/bin/swift-format", "format", "{dir}/input.swift"],
            traits: [.swift], files: ["input.swift": swiftSource]),
        CorpusProgram(
            "sourcekit-lsp answering a request",
            ["/bin/sh", "-c", "exec /opt/swift/usr/bin/sourcekit-lsp < {dir}/requests.lsp"],
            traits: [.swift, .threads, .processTree], deterministicOutput: false,
            files: ["main.swift": swiftSource, "requests.lsp": LSPMessages.documentSymbolSession]),
        CorpusProgram(
            "docc convert",
            [
                "/opt/swift/usr/bin/docc", "convert", "{dir}/Catalog.docc", "--output-path", "{dir}/out",
                "--fallback-display-name", "Catalog", "--fallback-bundle-identifier", "com.example.catalog",
            ], traits: [.swift, .threads], deterministicOutput: false,
            files: [
                "Catalog.docc/Catalog.md": "# Catalog\n\nA catalog with one article.\n\n## Topics\n\n- <doc:Guide>\n",
                "Catalog.docc/Guide.md": "# Guide\n\nHow to use the catalog, in ``Catalog``.\n",
            ]),
        CorpusProgram(
            "make with a recipe tree", ["/usr/bin/make", "-s", "-C", "{dir}", "-j2"], traits: [.processTree],
            files: ["Makefile": "all: a b\n\t@echo all\na:\n\t@sh -c 'echo a | tr a A'\nb:\n\t@sleep 0.2; echo b\n"]),
        CorpusProgram(
            "xz with four threads",
            ["/bin/sh", "-c", "/usr/bin/xz -T4 -9 --stdout {dir}/data.txt | /usr/bin/xz -d | md5sum"],
            traits: [.threads, .processTree],
            files: ["data.txt": String(repeating: "memharness corpus line\n", count: 200_000)]),
        CorpusProgram(
            "git in a fresh repository", ["/bin/sh", "{dir}/git.sh"], traits: [.processTree],
            files: ["git.sh": gitScript]),
        CorpusProgram(
            "perl with XS modules",
            [
                "/usr/bin/perl", "-MPOSIX", "-MList::Util=sum", "-MData::Dumper", "-e",
                "print sum(1..100), ' ', POSIX::floor(2.5), qq(\\n); $Data::Dumper::Sortkeys=1; print Dumper({a=>1});",
            ],
            traits: [.dlopen]),
        CorpusProgram(
            "sqlite3",
            [
                "/usr/bin/sqlite3", ":memory:",
                "create table t(x); with recursive n(i) as (select 1 union all select i+1 from n where i<50000) "
                    + "insert into t select i from n; select count(*), sum(x) from t;",
            ], traits: []),
        CorpusProgram(
            "node",
            [
                "/usr/bin/node", "-e",
                "const a=[]; for (let i=0;i<200000;i++) a.push({i}); console.log(a.length, JSON.stringify(a.slice(0,2)))",
            ],
            traits: [.threads, .runtimeHeap]),
        CorpusProgram(
            "java", ["/usr/bin/java", "-Xmx64m", "{dir}/Main.java"], traits: [.threads, .runtimeHeap, .dlopen],
            files: ["Main.java": javaMain]),
    ]

    static let pythonWork = """
        import ctypes, json, signal, sqlite3, threading
        got = []
        signal.signal(signal.SIGUSR1, lambda s, f: got.append(s))
        signal.raise_signal(signal.SIGUSR1)
        results = [None] * 4
        def work(i):
            db = sqlite3.connect(":memory:")
            db.execute("create table t(x)")
            db.executemany("insert into t values (?)", [(n,) for n in range(5000)])
            results[i] = db.execute("select sum(x) from t").fetchone()[0] + len(json.dumps(list(range(1000))))
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads: t.start()
        for t in threads: t.join()
        libc = ctypes.CDLL(None)
        print(results, got == [signal.SIGUSR1], libc.abs(-7))

        """

    static let smallPackage: [String: String] = [
        "pkg/Package.swift": """
        // swift-tools-version: 5.9
        import PackageDescription
        let package = Package(
            name: "Small", products: [.library(name: "Small", targets: ["Small"])],
            targets: [.target(name: "Small"), .testTarget(name: "SmallTests", dependencies: ["Small"])])

        """,
        "pkg/Sources/Small/Small.swift": "public func twice(_ x: Int) -> Int { 2 * x }\n",
        "pkg/Tests/SmallTests/SmallTests.swift": "import Small\n",
    ]

    static let swiftSource = """
        struct Point { var x: Int; var y: Int }
        final class Shape {
        var points: [Point] = []
        func add( _ p:Point ) { points.append(p) }
        }
        let shape = Shape()
        for i in 0..<3 { shape.add(Point(x: i, y: i*i)) }
        print(shape.points.map { $0.x + $0.y })

        """

    static let gitScript = """
        set -e
        export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com
        export GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z' HOME="$(dirname "$0")"
        cd "$(dirname "$0")"
        git init -q -b main repo && cd repo
        for i in 1 2 3; do echo "line $i" >> file.txt; git add file.txt; git commit -q -m "commit $i"; done
        git log --format='%H %s'
        git diff HEAD~2 --stat

        """

    static let javaMain = """
        public class Main {
            public static void main(String[] args) throws Exception {
                java.util.List<int[]> held = new java.util.ArrayList<>();
                for (int i = 0; i < 2000; i++) held.add(new int[1000]);
                Thread t = new Thread(() -> System.out.println("thread " + held.size()));
                t.start(); t.join();
                System.out.println("done");
            }
        }

        """
}
