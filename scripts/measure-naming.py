#!/usr/bin/env python3
"""How much of a real heap memharness names: real programs at their exit, and a shipped scenario's own captures.

For each program, the agent captures the heap at exit and holds the program there (MEMHARNESS_AGENT_HOLD_AT_EXIT)
while `heap-graph-bench name CAPTURE PID` names that one capture twice, side by side: from the program's files alone
(what memharness did before it read a held program's memory) and from its memory. For the subscriptions scenario,
every heap capture of a `memharness run` (its workload's own, in process) is compared with the same captures of the
committed sample report (Reports/sample, made before). Writes the tables to --out (default
Reports/benchmarks/naming.md). `make bench-naming` builds in release and runs it.

Named means named by a type (a class, a generic instance, collection storage, a closure by its function, a box by
its value, a task by its function, a C++ class) or by an allocation site; a Swift object is a block that starts with
Swift metadata.
"""
import argparse, json, os, socket, struct, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def jemalloc():
    for path in ["/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2"]:
        if os.path.exists(path):
            return path
    sys.exit("libjemalloc.so.2 not found (apt-get install libjemalloc2)")


def held_naming(bin_dir, argv, cwd, scratch):
    """Runs argv with the agent; names its heap at exit from its files and from its memory while it is held."""
    name = "memharness-measure-%d-%d" % (os.getpid(), int(time.time() * 1e6))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(b"\0" + name.encode())
    listener.listen(16)
    listener.settimeout(1.0)
    env = dict(os.environ)
    env.update({
        "LD_PRELOAD": "%s/libmemharness-agent.so %s" % (bin_dir, jemalloc()),
        "MEMHARNESS_AGENT_HEAP_AT_EXIT": os.path.join(scratch, "heap.%p"),
        "MEMHARNESS_AGENT_HOLD_AT_EXIT": "@" + name,
    })
    start = time.time()
    program = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lines = []
    try:
        while program.poll() is None and time.time() - start < 600:
            try:
                connection, _ = listener.accept()
            except socket.timeout:
                continue
            pid = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
            if pid == program.pid and not lines:
                capture = os.path.join(scratch, "heap.%d" % pid)
                named = subprocess.run(
                    ["%s/heap-graph-bench" % bin_dir, "name", capture, str(pid)], capture_output=True, text=True,
                    timeout=600)
                lines = [json.loads(line) for line in named.stdout.splitlines() if line.startswith("{")]
                if named.returncode != 0:
                    print(named.stderr, file=sys.stderr)
            connection.send(b"x")
            connection.close()
    finally:
        if program.poll() is None:
            program.kill()
        program.wait()
        listener.close()
    return {line["way"]: line for line in lines}


def shares(live_blocks, live_bytes, naming):
    named_bytes = naming["typedBytes"] + naming["siteOnlyBytes"]
    named_blocks = naming["typedBlocks"] + naming["siteOnlyBlocks"]
    swift = naming["swiftObjectBlocks"]
    unnamed = sorted(naming["unnamed"], key=lambda entry: -entry["bytes"])
    rest = ", ".join("%s %s" % (entry["reason"], kib(entry["bytes"])) for entry in unnamed) or "none"
    return {
        "bytes": 100.0 * named_bytes / max(live_bytes, 1),
        "blocks": 100.0 * named_blocks / max(live_blocks, 1),
        "swift": (naming["swiftObjectsNamedByType"], swift),
        "rest": rest,
    }


def kib(value):
    return "%.1f KiB" % (value / 1024.0) if value < 1 << 20 else "%.2f MiB" % (value / 1048576.0)


def program_rows(bin_dir, scratch):
    package = os.path.join(scratch, "package")
    os.makedirs(os.path.join(package, "Sources", "Demo"), exist_ok=True)
    with open(os.path.join(package, "Package.swift"), "w") as file:
        file.write('// swift-tools-version: 5.9\nimport PackageDescription\n'
                   'let package = Package(name: "Demo", targets: [.executableTarget(name: "Demo")])\n')
    with open(os.path.join(package, "Sources", "Demo", "main.swift"), "w") as file:
        file.write('print("demo")\n')
    toolchain = os.path.dirname(os.path.realpath(subprocess.run(
        ["sh", "-c", "command -v swift"], capture_output=True, text=True).stdout.strip()))
    programs = [
        ("`swift-package describe` (a one-target package)", [os.path.join(toolchain, "swift-package"), "describe"],
         package),
        ("`swift-format format Symbolizer.swift`",
         [os.path.join(toolchain, "swift-format"), "format", os.path.join(ROOT, "Sources/Symbols/Symbolizer.swift")],
         ROOT),
    ]
    rows = []
    for label, argv, cwd in programs:
        ways = held_naming(bin_dir, argv, cwd, scratch)
        if "files" not in ways or "memory" not in ways:
            rows.append("| %s | failed: the program was not held, or its capture not named | | | | | |" % label)
            continue
        files, memory = ways["files"], ways["memory"]
        before = shares(files["liveBlocks"], files["liveBytes"], files["naming"])
        after = shares(memory["liveBlocks"], memory["liveBytes"], memory["naming"])
        rows.append("| %s | %d | %s | %.1f%% / %.1f%% | **%.1f%%** / %.1f%% | %d of %d (%.1f%%) | %.2f s | %s |" % (
            label, memory["liveBlocks"], kib(memory["liveBytes"]), before["bytes"], before["blocks"], after["bytes"],
            after["blocks"], after["swift"][0], after["swift"][1], 100.0 * after["swift"][0] / max(after["swift"][1], 1),
            memory["namingSeconds"], after["rest"]))
    return rows


def heap_cases(run):
    """(strategy, heap graph) of every case of a run.json with a heap graph."""
    for scenario in run["report"]["scenarios"]:
        for case in scenario.get("instrumentedCases", scenario.get("attributedCases", [])):
            for outcome in case.get("outcome", {}).values():
                graph = (outcome.get("measurements") or {}).get("heapGraph") if isinstance(outcome, dict) else None
                if graph:
                    yield case["strategy"], graph


def old_shares(capture):
    """A capture of a summary written before `naming` was kept: named bytes from its type tallies (a type with a
    name), the omitted types' bytes counted as unnamed."""
    named_bytes = sum(tally["bytes"] for tally in capture["types"] if tally["type"]["name"])
    named_blocks = sum(tally["count"] for tally in capture["types"] if tally["type"]["name"])
    return 100.0 * named_bytes / max(capture["liveBytes"], 1), 100.0 * named_blocks / max(capture["liveBlocks"], 1)


def scenario_rows(bin_dir, scratch, sample):
    out = os.path.join(scratch, "subscriptions")
    subprocess.run(["%s/memharness" % bin_dir, "run", os.path.join(ROOT, "Scenarios/subscriptions.yaml"), "--out", out],
                   cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800)
    with open(os.path.join(out, "run.json")) as file:
        after = dict(heap_cases(json.load(file)))
    with open(sample) as file:
        before = dict(heap_cases(json.load(file)))
    rows = []
    totals = {"live": 0, "named": 0, "blocks": 0, "named_blocks": 0, "swift": 0, "swift_named": 0}
    for strategy in sorted(after):
        capture = after[strategy]["captures"][-1]
        naming = capture["naming"]
        now = shares(capture["liveBlocks"], capture["liveBytes"], naming)
        old = next((c for c in before.get(strategy, {"captures": []})["captures"] if c["label"] == capture["label"]), None)
        then = "%.1f%% / %.1f%%" % old_shares(old) if old else "–"
        rows.append("| %s | %d | %s | %s | **%.1f%%** / %.1f%% | %d of %d | %s |" % (
            strategy, capture["liveBlocks"], kib(capture["liveBytes"]), then, now["bytes"], now["blocks"],
            now["swift"][0], now["swift"][1], now["rest"]))
        totals["live"] += capture["liveBytes"]
        totals["named"] += naming["typedBytes"] + naming["siteOnlyBytes"]
        totals["swift"] += naming["swiftObjectBlocks"]
        totals["swift_named"] += naming["swiftObjectsNamedByType"]
    return rows, totals


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build/release"))
    parser.add_argument("--out", default=os.path.join(ROOT, "Reports/benchmarks/naming.md"))
    parser.add_argument("--sample", default=os.path.join(ROOT, "Reports/sample/run.json"))
    options = parser.parse_args()
    options.bin = os.path.abspath(options.bin)
    with tempfile.TemporaryDirectory(prefix="memharness-naming-") as scratch:
        programs = program_rows(options.bin, scratch)
        scenario, totals = scenario_rows(options.bin, scratch, options.sample)
    load = open("/proc/loadavg").read().split()[:3]
    lines = [
        "# Naming the heap: how much of it memharness names",
        "",
        "Measured %s with `%s` (`make bench-naming`; scripts/measure-naming.py), load average %s before the run."
        % (time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), os.path.relpath(options.bin, ROOT), " ".join(load)),
        "Named: by a type (a class or generic instance, collection storage, a closure by its function, a box by its",
        "value's type, a task by its function, a C++ class) or by an allocation site. A Swift object: a block that starts",
        "with Swift metadata. Shares are of live bytes / of live blocks.",
        "",
        "## Real programs, at their exit",
        "",
        "The same capture of each program named twice in one sitting: from its files alone (as memharness named another",
        "process's blocks before it held the program at its exit) and from the program's memory while it is held.",
        "",
        "| Program | Live blocks | Live bytes | Named, files only | Named, from its memory | Swift objects named by type | Naming | Not named, by why |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ] + programs + [
        "",
        "## The subscriptions scenario, its own captures (after teardown)",
        "",
        "Each strategy's last capture of a `memharness run Scenarios/subscriptions.yaml`, named in the case process,",
        "beside the same capture of the committed sample report (made before, its share from its type tallies).",
        "",
        "| Strategy | Live blocks | Live bytes | Named, sample report | Named, now | Swift objects named by type | Not named, by why |",
        "|---|---:|---:|---:|---:|---:|---|",
    ] + scenario + [
        "",
        "All strategies: %.1f%% of the live bytes named, %d of %d Swift objects (%.1f%%) by their Swift type." % (
            100.0 * totals["named"] / max(totals["live"], 1), totals["swift_named"], totals["swift"],
            100.0 * totals["swift_named"] / max(totals["swift"], 1)),
        "",
    ]
    with open(options.out, "w") as file:
        file.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
