#!/bin/sh
# CTest's bounded fuzz run: run_fuzzer.sh CORPUS FINDINGS FUZZER [FLAGS AND SEED FOLDERS...]
# CORPUS (where libFuzzer writes the new inputs it finds) starts empty each run, so that the
# run's time goes to fuzzing, not to re-reading what earlier runs found; FINDINGS receives
# crash-*, timeout-* and oom-* files (-artifact_prefix).
set -eu
corpus=$1 findings=$2 fuzzer=$3
shift 3
rm -rf "$corpus"
mkdir -p "$corpus" "$findings"
# libFuzzer writes new inputs to the first folder it is given: CORPUS, never a seed folder.
exec "$fuzzer" -artifact_prefix="$findings/" "$corpus" "$@"
