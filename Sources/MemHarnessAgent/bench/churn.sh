#!/usr/bin/env bash
# The agent's cost on an allocation-heavy loop, measured side by side in one run.
#
#   Sources/MemHarnessAgent/bench/churn.sh [pairs] [rounds]      (defaults: 20000000 pairs, 7 rounds)
#
# `agent-probe churn <pairs>` (malloc/free pairs of 16 B-4 KiB, 64 alive, one thread: the calibration
# workload's churn in C) runs under five configurations, their order rotating from round to round so no
# configuration always runs first or last; the probe times its own loop (wall and CPU, start-up excluded).
# Prints the median of each and its ratio to the uninstrumented median. Release build; not a test.
set -euo pipefail
cd "$(dirname "$0")/../../.."

PAIRS=${1:-20000000}
ROUNDS=${2:-7}

swift build -c release --product memharness-agent >/dev/null
swift build -c release --product agent-probe >/dev/null
BIN=$(swift build -c release --show-bin-path)
AGENT="$BIN/libmemharness-agent.so"
PROBE="$BIN/agent-probe"
JEMALLOC=""
for candidate in /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/aarch64-linux-gnu/libjemalloc.so.2 /usr/lib/libjemalloc.so.2; do
  if [ -e "$candidate" ]; then JEMALLOC=$candidate; break; fi
done
[ -n "$JEMALLOC" ] || { echo "libjemalloc.so.2 not found (apt-get install libjemalloc-dev)" >&2; exit 1; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# Stacks imply exact counting (the peak snapshot follows the exact high-water mark): "stacks" is exact + stacks.
NAMES=("uninstrumented" "agent, nothing on" "exact" "stacks, 64 KiB mean (counts exactly too)"
  "heap graph (every live block tracked)")
CONFIGS=5
# One configuration: its LD_PRELOAD, then its agent variables.
config() {
  case $1 in
    0) echo "$JEMALLOC" ;;
    1) echo "$AGENT $JEMALLOC" ;;
    2) echo "$AGENT $JEMALLOC|MEMHARNESS_AGENT_EXACT=1" ;;
    3) echo "$AGENT $JEMALLOC|MEMHARNESS_AGENT_STACK_SAMPLE_BYTES=65536" ;;
    4) echo "$AGENT $JEMALLOC|MEMHARNESS_AGENT_HEAP=1" ;;
  esac
}

RESULTS="$WORK/results"
run() {
  local spec preload variables line
  spec=$(config "$1")
  preload=${spec%%|*}
  variables=""
  [[ $spec == *"|"* ]] && variables=${spec#*|}
  # shellcheck disable=SC2086  # the variables are words on purpose
  line=$(env -u MEMHARNESS_AGENT_EXACT -u MEMHARNESS_AGENT_STACK_SAMPLE_BYTES -u MEMHARNESS_AGENT_HEAP LD_PRELOAD="$preload" $variables "$PROBE" churn "$PAIRS" | grep '^churn ')
  # churn pairs N wall_ns W cpu_ns C ...
  echo "$1 $(echo "$line" | awk '{print $5, $7}')" >>"$RESULTS"
}

echo "warm-up" >&2
for ((c = 0; c < CONFIGS; c++)); do PAIRS_SAVED=$PAIRS; PAIRS=$((PAIRS / 10)); run $c; PAIRS=$PAIRS_SAVED; done
: >"$RESULTS"
for ((round = 0; round < ROUNDS; round++)); do
  echo "round $((round + 1))/$ROUNDS" >&2
  for ((i = 0; i < CONFIGS; i++)); do run $(((round + i) % CONFIGS)); done
done

median() { sort -n | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
base_wall=$(awk '$1==0 {print $2}' "$RESULTS" | median)
base_cpu=$(awk '$1==0 {print $3}' "$RESULTS" | median)
echo
echo "churn: $PAIRS malloc/free pairs (16 B-4 KiB, 64 alive), one thread, medians of $ROUNDS rounds, order rotating"
echo
echo "| Configuration | Wall | ns/pair | x | CPU | x |"
echo "|---|---:|---:|---:|---:|---:|"
for ((c = 0; c < CONFIGS; c++)); do
  wall=$(awk -v c=$c '$1==c {print $2}' "$RESULTS" | median)
  cpu=$(awk -v c=$c '$1==c {print $3}' "$RESULTS" | median)
  awk -v name="${NAMES[$c]}" -v w="$wall" -v c="$cpu" -v bw="$base_wall" -v bc="$base_cpu" -v p="$PAIRS" \
    'BEGIN {printf "| %s | %.3f s | %.1f | %.2fx | %.3f s | %.2fx |\n", name, w/1e9, w/p, w/bw, c/1e9, c/bc}'
done
