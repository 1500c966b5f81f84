#!/usr/bin/env bash
# Runs every go test -fuzz target of the verify package (its signature and
# header parsers and its Verify functions, which include the payload field
# extractors) for FUZZTIME each. The long form of the drills runs it:
#
#   drills/fuzz.sh                 # each target 60 s, two at a time
#   FUZZTIME=300s drills/fuzz.sh   # longer
#   FUZZTIME=2000000x drills/fuzz.sh   # by execution count instead
#   FUZZ_JOBS=1 drills/fuzz.sh     # one target at a time, all cores each
#
# A crasher makes go test write the input to
# verify/testdata/fuzz/<Target>/<hash>; commit it: it is then a seed-corpus
# regression test that plain `go test ./verify` runs.
#
# Go 1.26 (golang/go#75804, fixed in 1.27) can fail a duration-bounded run
# at its very end with a bare "context deadline exceeded" and no crasher, a
# race in the fuzzing coordinator. Such a run fuzzed its full FUZZTIME, so
# it is reported as a pass with a note; any run that wrote a failing input
# fails.
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZTIME=${FUZZTIME:-60s}
FUZZ_JOBS=${FUZZ_JOBS:-2}
PKG=./verify
parallel=$(( $(nproc) / FUZZ_JOBS ))
(( parallel >= 1 )) || parallel=1

targets=$(go test "$PKG" -list '^Fuzz' | grep '^Fuzz' || true)
if [[ -z $targets ]]; then
	echo "fuzz.sh: no fuzz targets in $PKG" >&2
	exit 1
fi
logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT
# Build the instrumented test binary once, before the clock of any target.
go test "$PKG" -run='^$' -fuzz='^FuzzParseGitHubSignature$' -fuzztime=1x >/dev/null

run() {
	local t=$1 log=$logdir/$1.log start end
	start=$(date +%s)
	if go test "$PKG" -run='^$' -fuzz="^$t\$" -fuzztime="$FUZZTIME" -parallel="$parallel" >"$log" 2>&1; then
		end=$(date +%s)
		echo "PASS $t $((end - start))s $(grep -o 'execs: [0-9]*' "$log" | tail -1)"
	elif grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written to' "$log"; then
		end=$(date +%s)
		echo "PASS $t $((end - start))s $(grep -o 'execs: [0-9]*' "$log" | tail -1) (ended by golang/go#75804, no crasher)"
	else
		echo "FAIL $t"
		sed 's/^/    /' "$log"
		return 1
	fi
}

status=0
pids=()
for t in $targets; do
	run "$t" &
	pids+=($!)
	if (( ${#pids[@]} >= FUZZ_JOBS )); then
		wait "${pids[0]}" || status=1
		pids=("${pids[@]:1}")
	fi
done
for p in "${pids[@]}"; do
	wait "$p" || status=1
done
exit $status
