#!/usr/bin/env bash
# Writes the node test cases of PyPI's `onnx` (the second conformance suite, ctest
# onnx/conformance_pypi; tests/onnx/node_cases/README.md) into BUILD/onnx-node-cases/node.
# A virtual environment BUILD/onnx-venv holds the pinned onnx and numpy (PyPI is reached
# once; a stamp file skips the work when the cases of these versions are there already).
#
#   scripts/onnx_node_cases.sh BUILD
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build="${1:?usage: scripts/onnx_node_cases.sh BUILD}"
# The versions the expected list (tests/onnx/node_cases/expected_pass.txt) was made with
# (ml_dtypes too: 0.7 rounds float to int4 / int2 otherwise, and 24 cast cases then differ).
pins=(onnx==1.23.2 numpy==2.4.6 ml_dtypes==0.6.0)
out="$build/onnx-node-cases"
stamp="$out/stamp"
if [[ -f "$stamp" && "$(cat "$stamp")" == "${pins[*]}" ]]; then exit 0; fi

venv="$build/onnx-venv"
if [[ ! -x "$venv/bin/python" ]]; then python3 -m venv "$venv"; fi
ok=0
for attempt in 1 2 3; do  # PyPI over a shared network: a retry or two before giving up
  if "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}"; then ok=1; break; fi
  echo "onnx_node_cases: pip install failed (attempt $attempt)" >&2
  sleep 5
done
((ok)) || { echo "onnx_node_cases: could not install ${pins[*]} from PyPI" >&2; exit 1; }
rm -f "$stamp"
"$venv/bin/python" tests/onnx/node_cases/generate.py "$out"
echo "${pins[*]}" > "$stamp"
