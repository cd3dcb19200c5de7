#!/usr/bin/env python3
"""What the heap graph costs, against each of its bars, side by side in one run.

    scripts/measure-heap-cost.py --bin BIN [--before DIR] [--rounds N] [--write FILE]

BIN is the release build (`make build` and the products below); DIR, when given, holds an older build's `memharness`,
`libmemharness-agent.so`, `heap-fixtures` and `agent-probe`, measured alternately with BIN's in the same sitting (the
before/after ratios). Measures:

- the shipped suite (`memharness run`, every scenario: `make run`), wall time;
- `memharness run Scenarios/subscriptions.yaml --repeat 1` with its `expect:` lines against a copy without them;
- `memharness profile --heap-graph -- PROGRAM` against the program alone, on `swift-package describe` and
  `swift-format format`; also `profile` without the heap graph;
- `heap-fixtures million` (a heap of a million blocks captured, named and analysed in its own process);
- `agent-probe churn` uninstrumented and with every block tracked with its stack (`MEMHARNESS_AGENT_HEAP=1`).

Prints Markdown; with --write, replaces the section between the markers `<!-- heap-cost -->` and
`<!-- /heap-cost -->` of FILE (or appends it). Not a test: timings depend on the machine's load, which is printed.
"""
import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

JEMALLOC_CANDIDATES = ["/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2"]
SMALL_PACKAGE = """// swift-tools-version: 5.9
import PackageDescription
let package = Package(
    name: "Small", products: [.library(name: "Small", targets: ["Small"])],
    targets: [.target(name: "Small"), .testTarget(name: "SmallTests", dependencies: ["Small"])])
"""
SWIFT_SOURCE = """struct Point { var x: Int; var y: Int }
final class Shape {
var points: [Point] = []
func add( _ p:Point ) { points.append(p) }
}
let shape = Shape()
for i in 0..<3 { shape.add(Point(x: i, y: i*i)) }
print(shape.points.map { $0.x + $0.y })
"""
MARK_BEGIN, MARK_END = "<!-- heap-cost -->", "<!-- /heap-cost -->"


def load():
    return " ".join(open("/proc/loadavg").read().split()[:3])


class Time:
    """Wall and CPU seconds (user + system of the process and everything it started) of one run."""

    def __init__(self, wall, cpu):
        self.wall = wall
        self.cpu = cpu


def timed(argv, env=None, cwd=None, timeout=3600):
    """The time of one run of argv and its standard output; raises when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    result = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    elapsed = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 1, 2):  # 1, 2: a finding (a gate, a leak), the run itself worked
        raise RuntimeError(f"{' '.join(argv)}: exit {result.returncode}: {result.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Time(elapsed, cpu), result.stdout.decode()


class Build:
    def __init__(self, name, folder):
        self.name = name
        self.folder = folder
        self.memharness = os.path.join(folder, "memharness")
        self.agent = os.path.join(folder, "libmemharness-agent.so")
        self.fixtures = os.path.join(folder, "heap-fixtures")
        self.probe = os.path.join(folder, "agent-probe")


def environment(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMHARNESS_AGENT")}
    env.update(extra or {})
    return env


def median(values):
    values = [v for v in values if v == v]  # NaN: a figure an older build does not print
    return statistics.median(values) if values else float("nan")


def suite(builds, scratch, rounds):
    rows = {b.name: [] for b in builds}
    for _ in range(rounds):
        for build in builds:
            out = os.path.join(scratch, "suite-" + build.name)
            shutil.rmtree(out, ignore_errors=True)
            rows[build.name].append(timed([build.memharness, "run", "--quiet", "--out", out])[0])
            shutil.rmtree(out, ignore_errors=True)
    return rows


def without_expectations(scratch):
    text = open("Scenarios/subscriptions.yaml").read()
    stripped = re.sub(r",\s*expect:\s*[a-z-]+", "", text)
    path = os.path.join(scratch, "subscriptions-without-expect.yaml")
    with open(path, "w") as file:
        file.write(stripped)
    return path


def expectations(builds, scratch, rounds):
    plain = without_expectations(scratch)
    rows = {(b.name, kind): [] for b in builds for kind in ("with", "without")}
    for round_index in range(rounds):
        for build in builds:
            kinds = ("with", "without") if round_index % 2 == 0 else ("without", "with")
            for kind in kinds:
                scenario = "Scenarios/subscriptions.yaml" if kind == "with" else plain
                out = os.path.join(scratch, "expect-" + build.name)
                shutil.rmtree(out, ignore_errors=True)
                argv = [build.memharness, "run", scenario, "--repeat", "1", "--quiet", "--out", out]
                rows[(build.name, kind)].append(timed(argv)[0])
                shutil.rmtree(out, ignore_errors=True)
    return rows


def programs(scratch):
    package = os.path.join(scratch, "pkg")
    os.makedirs(os.path.join(package, "Sources", "Small"), exist_ok=True)
    os.makedirs(os.path.join(package, "Tests", "SmallTests"), exist_ok=True)
    open(os.path.join(package, "Package.swift"), "w").write(SMALL_PACKAGE)
    open(os.path.join(package, "Sources", "Small", "Small.swift"), "w").write("public struct Small {}\n")
    open(os.path.join(package, "Tests", "SmallTests", "SmallTests.swift"), "w").write("import Small\n")
    source = os.path.join(scratch, "input.swift")
    open(source, "w").write(SWIFT_SOURCE)
    return [
        ("swift-package describe", ["/opt/swift/usr/bin/swift-package", "describe", "--package-path", package]),
        ("swift-format format", ["/opt/swift/usr/bin/swift-format", "format", source]),
    ]


def profiles(builds, scratch, rounds):
    rows = {}
    for name, argv in programs(scratch):
        for _ in range(rounds):
            rows.setdefault((name, "alone", ""), []).append(timed(argv)[0])
            for build in builds:
                for mode, extra in (("profile", []), ("heap-graph", ["--heap-graph"])):
                    out = os.path.join(scratch, "profile-" + build.name)
                    shutil.rmtree(out, ignore_errors=True)
                    command = [build.memharness, "profile", "--quiet", "--out", out] + extra + ["--"] + argv
                    rows.setdefault((name, mode, build.name), []).append(timed(command)[0])
                    shutil.rmtree(out, ignore_errors=True)
    return rows


def jemalloc():
    for candidate in JEMALLOC_CANDIDATES:
        if os.path.exists(candidate):
            return candidate
    sys.exit("libjemalloc.so.2 not found (apt-get install libjemalloc-dev)")


def million(builds, rounds):
    rows = {b.name: [] for b in builds}
    for _ in range(rounds):
        for build in builds:
            env = environment({"MEMHARNESS_AGENT_HEAP": "1", "LD_PRELOAD": f"{build.agent} {jemalloc()}"})
            _, output = timed([build.fixtures, "million"], env=env)
            figures = dict(re.findall(r"(\w+) ([0-9.e+-]+)", output))
            rows[build.name].append({k: float(v) for k, v in figures.items()})
            rows[build.name][-1]["cpu_all_s"] = sum(rows[build.name][-1].get(k, 0) for k in (
                "cpu_capture_s", "cpu_naming_s", "cpu_analysis_s"))
    return rows


def churn(builds, rounds, pairs):
    rows = {}
    configurations = [("uninstrumented", None, {})] + [
        ("every block tracked with its stack", b, {"MEMHARNESS_AGENT_HEAP": "1"}) for b in builds
    ]
    for round_index in range(rounds):
        rotated = configurations[round_index % len(configurations):] + configurations[: round_index % len(configurations)]
        for label, build, extra in rotated:
            agent = (build or builds[-1]).agent
            preload = jemalloc() if build is None else f"{agent} {jemalloc()}"
            env = environment(dict(extra, LD_PRELOAD=preload))
            _, output = timed([builds[-1].probe, "churn", str(pairs)], env=env)
            fields = re.search(r"wall_ns (\d+) cpu_ns (\d+)", output)
            rows.setdefault((label, build.name if build else ""), []).append(
                Time(int(fields.group(1)) / 1e9, int(fields.group(2)) / 1e9))
    return rows


def wall(times):
    return median([t.wall for t in times])


def cpu(times):
    return median([t.cpu for t in times])


def render(builds, results, rounds, started_load):
    new = builds[-1].name
    lines = [MARK_BEGIN, "## The cost bars, side by side", ""]
    lines.append(
        f"Measured {time.strftime('%Y-%m-%dT%H:%MZ', time.gmtime())} with `make bench-heap-cost` "
        f"(scripts/measure-heap-cost.py), {os.cpu_count()} cores, load average {started_load} before and {load()} after. "
        "Other developers' builds share the two cores: a wall time here is mostly waiting for a core, so each figure is "
        "also given in CPU seconds (user and system time of the process and of everything it started), and every "
        "figure is a median of rounds run alternately, before and after side by side, so the load falls on both alike. "
        "Release builds with frame pointers."
        + (f" *{builds[0].name}* is the build in {builds[0].folder}, *{new}* this tree's." if len(builds) > 1 else ""))
    lines += ["", "| Bar | " + " | ".join(f"{b.name}: wall | {b.name}: CPU" for b in builds) + " | Bar |",
              "|---|" + "---:|---:|" * len(builds) + "---|"]

    def row(label, pairs, bar, unit):
        cells = [f"{w:.2f}{unit} | {c:.2f}{unit}" for w, c in pairs]
        lines.append(f"| {label} | " + " | ".join(cells) + f" | ≤ {bar}{unit} |")

    if "suite" in results:
        row("`make run` (every shipped scenario)", [(wall(results["suite"][b.name]), cpu(results["suite"][b.name]))
                                                   for b in builds], 45, " s")
    if "expect" in results:
        e = results["expect"]
        row("`run subscriptions --repeat 1`, with `expect:` ÷ without",
            [(wall(e[(b.name, "with")]) / wall(e[(b.name, "without")]),
              cpu(e[(b.name, "with")]) / cpu(e[(b.name, "without")])) for b in builds], 1.3, "x")
    if "profile" in results:
        p = results["profile"]
        for program in sorted({key[0] for key in p}):
            alone = p[(program, "alone", "")]
            row(f"`profile --heap-graph` ÷ alone, {program}",
                [(wall(p[(program, "heap-graph", b.name)]) / wall(alone),
                  cpu(p[(program, "heap-graph", b.name)]) / cpu(alone)) for b in builds], 2, "x")
    if "million" in results:
        m = results["million"]
        row("a million blocks captured, named and analysed",
            [(median([r["capture_and_naming_s"] + r["analysis_s"] for r in m[b.name]]),
              median([r.get("cpu_all_s", float("nan")) for r in m[b.name]])) for b in builds], 3, " s")
    if "churn" in results:
        c = results["churn"]
        base = c[("uninstrumented", "")]
        row("churn loop, every block tracked with its stack ÷ uninstrumented",
            [(wall(c[("every block tracked with its stack", b.name)]) / wall(base),
              cpu(c[("every block tracked with its stack", b.name)]) / cpu(base)) for b in builds], 2.5, "x")
    lines += ["", f"Medians of {rounds} rounds (the suite: {len(next(iter(results.get('suite', {'': [0]}).values())))}"
              "; the churn loop: more). The figures the ratios are of:", ""]
    lines += details(builds, results)
    lines += [MARK_END]
    return "\n".join(lines) + "\n"


def details(builds, results):
    lines = ["| Run | " + " | ".join(f"{b.name}: wall | {b.name}: CPU" for b in builds) + " |",
             "|---|" + "---:|---:|" * len(builds)]

    def row(label, per_build, digits=2):
        lines.append(f"| {label} | " + " | ".join(f"{wall(t):.{digits}f} s | {cpu(t):.{digits}f} s" for t in per_build) + " |")

    if "profile" in results:
        p = results["profile"]
        for program in sorted({key[0] for key in p}):
            lines.append(f"| {program} alone | " + " | ".join(
                f"{wall(p[(program, 'alone', '')]):.2f} s | {cpu(p[(program, 'alone', '')]):.2f} s" for _ in builds) + " |")
            row(f"`profile` {program}", [p[(program, "profile", b.name)] for b in builds])
            row(f"`profile --heap-graph` {program}", [p[(program, "heap-graph", b.name)] for b in builds])
    if "expect" in results:
        e = results["expect"]
        row("`run subscriptions --repeat 1` with `expect:`", [e[(b.name, "with")] for b in builds])
        row("the same without `expect:`", [e[(b.name, "without")] for b in builds])
    if "million" in results:
        m = results["million"]
        for phase in ("capture", "naming", "analysis"):
            wall_key = "capture_s" if phase == "capture" else ("naming_s" if phase == "naming" else "analysis_s")
            lines.append(f"| million blocks: {phase} | " + " | ".join(
                f"{median([r[wall_key] for r in m[b.name]]):.2f} s | "
                f"{median([r.get('cpu_' + phase + '_s', float('nan')) for r in m[b.name]]):.2f} s" for b in builds) + " |")
        lines.append("| million blocks: dominators and retainers alone (wall) | " + " | ".join(
            f"{median([r['retainers_s'] for r in m[b.name]]):.2f} s | –" for b in builds) + " |")
    if "churn" in results:
        c = results["churn"]
        lines.append("| churn loop uninstrumented | " + " | ".join(
            f"{wall(c[('uninstrumented', '')]):.3f} s | {cpu(c[('uninstrumented', '')]):.3f} s" for _ in builds) + " |")
        row("churn loop, every block tracked with its stack", [c[("every block tracked with its stack", b.name)]
                                                               for b in builds], 3)
    lines.append("")
    return lines


def write(path, section):
    text = open(path).read() if os.path.exists(path) else ""
    if MARK_BEGIN in text and MARK_END in text:
        head, rest = text.split(MARK_BEGIN, 1)
        text = head + section.rstrip("\n") + rest.split(MARK_END, 1)[1]
    else:
        first, _, rest = text.partition("\n\n")
        text = first + "\n\n" + section + "\n" + rest
    open(path, "w").write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--before")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--suite-rounds", type=int, default=1)
    parser.add_argument("--pairs", type=int, default=10_000_000)
    parser.add_argument("--only", default="suite,expect,profile,million,churn")
    parser.add_argument("--write")
    options = parser.parse_args()
    builds = ([Build("before", options.before)] if options.before else []) + [Build("after", options.bin)]
    if len(builds) == 1:
        builds[0].name = "this build"
    started = load()
    results = {}
    with tempfile.TemporaryDirectory(prefix="heap-cost-") as scratch:
        for part in options.only.split(","):
            print(f"measuring {part} (load {load()})", file=sys.stderr)
            if part == "suite":
                results[part] = suite(builds, scratch, options.suite_rounds)
            elif part == "expect":
                results[part] = expectations(builds, scratch, options.rounds)
            elif part == "profile":
                results[part] = profiles(builds, scratch, options.rounds)
            elif part == "million":
                results[part] = million(builds, options.rounds)
            elif part == "churn":
                results[part] = churn(builds, options.rounds * 2 + 1, options.pairs)
    section = render(builds, results, options.rounds, started).replace("nan s", "–").replace("nanx", "–")
    print(section)
    if options.write:
        write(options.write, section)


if __name__ == "__main__":
    main()
