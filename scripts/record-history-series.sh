#!/bin/sh
# Records the series of real runs of unchanged programs that the history's detection benchmark and
# HistoryTests replay (Tests/HistoryTests/Fixtures/recorded-series.json): each subject is run RUNS times with
# the release memharness, every run recorded into a store of its own under a made-up commit, and every figure's
# series exported. Nothing changes between the runs of a subject, so a change point found in them is false.
#
#   scripts/record-history-series.sh WORK-DIR [RUNS] [SCENARIO-RUNS]
#
# `make history-series` runs it (20 runs of each program, 10 of each shipped scenario) and writes the fixture.
# Subjects: a small C program (the end-to-end test's: 1 MiB kept, exact peaks, a `workload: command` scenario), the
# shipped scenarios as they are, and `profile` of programs this machine has (swift-format, swift-package,
# python3, sqlite3, git), one of them with --peak exact.
set -eu
work=$1
runs=${2:-20}
scenario_runs=${3:-10}
bin=$(swift build -c release --show-bin-path)
memharness="$bin/memharness"
root=$(pwd)
rm -rf "$work"
mkdir -p "$work/keeper" "$work/stores"

# measure COMMAND...: a run; a finding (2: a threshold the machine's load breached) is still a run to record.
measure() {
    status=0
    "$@" || status=$?
    if [ "$status" -ne 0 ] && [ "$status" -ne 2 ]; then
        echo "failed ($status): $*" >&2
        exit 1
    fi
}

# record SUBJECT INDEX REPORT-DIR: adds the run to the subject's store as commit INDEX of a made-up history.
record() {
    "$memharness" history record "$3" --store "$work/stores/$1" --commit "$(printf '%040x' "$2")" \
        --branch main --machine recorded --time "2026-01-01T00:$(printf '%02d' $(($2 / 60))):$(printf '%02d' $(($2 % 60)))Z" \
        >/dev/null
}

# The end-to-end test's C program as it was, unchanged: 1 MiB kept for 20 ms (the sampler misses so short a peak
# now and then on a loaded machine: a sampled figure with outliers).
cat >"$work/keeper/keeper.c" <<'EOF'
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define KEEP (1024 * 1024)
int main(void) {
    char *kept = malloc(KEEP);
    memset(kept, 1, KEEP);
    usleep(20000);
    free(kept);
    return 0;
}
EOF
cat >"$work/keeper/keeper.yaml" <<'EOF'
scenario: keeper
description: A program that keeps a buffer for 20 ms.
workload: command
strategies:
  - name: keeper
    command: ./keeper
repetitions: 1
peak: exact
settle: 10ms
EOF
(cd "$work/keeper" && cc -O0 -o keeper keeper.c)

# A Swift file to format, a package to describe, a database to query, a Python program (in a file: `profile`
# reads {NAME} in a program's arguments as a parameter), a repository's log.
# Frozen copies: the checkout's objects and sources change as others commit.
git clone -q --bare "$root" "$work/repo.git"
cp "$root/Sources/History/ChangePoints.swift" "$work/format-me.swift"
cat >"$work/table.py" <<'EOF'
table = dict((i, str(i) * 3) for i in range(300000))
print(len(table))
EOF
/usr/bin/python3 -c "
import sqlite3
db = sqlite3.connect('$work/data.sqlite')
db.execute('create table t (k integer primary key, v text)')
db.executemany('insert into t values (?, ?)', ((i, 'value %d' % i * 4) for i in range(100000)))
db.commit()
"

i=1
while [ "$i" -le "$runs" ]; do
    (cd "$work/keeper" && measure "$memharness" run keeper.yaml --out "$work/report" --quiet)
    record keeper "$i" "$work/report"
    measure "$memharness" profile --out "$work/report" --quiet -- \
        /opt/swift/usr/bin/swift-format format "$work/format-me.swift" 2>/dev/null
    record swift-format "$i" "$work/report"
    measure "$memharness" profile --out "$work/report" --quiet --peak exact -- \
        /opt/swift/usr/bin/swift-package describe --package-path "$root/Examples/JSONCache" 2>/dev/null
    record swift-package-describe "$i" "$work/report"
    measure "$memharness" profile --out "$work/report" --quiet -- \
        /usr/bin/python3 "$work/table.py" 2>/dev/null
    record python3 "$i" "$work/report"
    measure "$memharness" profile --out "$work/report" --quiet -- \
        sqlite3 "$work/data.sqlite" "select count(*), sum(length(v)) from t where v like '%99%'" 2>/dev/null
    record sqlite3 "$i" "$work/report"
    measure "$memharness" profile --out "$work/report" --quiet -- git -C "$work/repo.git" log --stat -n 200 2>/dev/null
    record git "$i" "$work/report"
    i=$((i + 1))
done

i=1
while [ "$i" -le "$scenario_runs" ]; do
    measure "$memharness" run --out "$work/report" --quiet
    record scenarios "$i" "$work/report"
    i=$((i + 1))
done

recorded="$(date -u +%Y-%m-%d), $(nproc) cores ($(uname -m)), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; \
$runs runs of each program, $scenario_runs of the shipped scenarios (scripts/record-history-series.sh)"
"$bin/history-bench" export --recorded "$recorded" "$work"/stores/*
