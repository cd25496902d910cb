#!/usr/bin/env bash
# Packs what the GPU tests and benchmarks need into one archive, for a GPU machine that cannot
# build weft (no LLVM 19 there, say): the test binaries that have GPU cases, weftc,
# weft_cuda_bench, weft_tune_cuda, CTest's files, and every shared library they load except
# glibc's (so libLLVM, protobuf, ... travel along; libstdc++ and libgcc_s go to a fallback
# folder), and libxgboost (the model tuner opens it with dlopen).
# Build first: ./scripts/test.sh (or cmake --build build, with -DWEFT_BUILD_BENCHMARKS=ON for
# weft_tune_cuda) and benchmarks/run_cuda.sh --build-only.
#   scripts/gpu_bundle.sh [OUT.tar.xz]        (default: build/gpu-bundle.tar.xz)
# On the GPU machine, from a copy of this repository: scripts/gpu_run.sh OUT.tar.xz
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
out="${1:-build/gpu-bundle.tar.xz}"
bench="${WEFT_CUDA_BENCH:-build-cuda-bench/benchmarks/weft_cuda_bench}"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
bins="test_cuda test_cuda_runtime test_cuda_topi test_cuda_graph test_error test_weftc"
tree="$stage/tree$root/build"  # CTest's files name the build folder by its absolute path
mkdir -p "$tree/tests" "$tree/tools/weftc" "$stage/lib" "$stage/lib-fallback" "$stage/bin"
for b in $bins; do cp "build/tests/$b" "$tree/tests/"; done
# Run by tests in error/ and weftc/ that the GPU run includes: the error catalogue's check and
# the mock driver (tests that must see "no device" open it by its build path).
for f in error_catalog libweft_mock_cuda.so; do [[ -e "build/tests/$f" ]] && cp "build/tests/$f" "$tree/tests/"; done
cp build/tests/*.cmake "$tree/tests/"
cp build/tools/weftc/weftc "$tree/tools/weftc/"
if [[ -x "$bench" ]]; then cp "$bench" "$stage/bin/"; else echo "gpu_bundle.sh: no $bench (benchmarks/run_cuda.sh --build-only makes it)" >&2; fi
tune="${WEFT_TUNE_CUDA:-build/benchmarks/weft_tune_cuda}"
if [[ -x "$tune" ]]; then cp "$tune" "$stage/bin/"; else echo "gpu_bundle.sh: no $tune (cmake --build build --target weft_tune_cuda makes it)" >&2; fi
# Opened with dlopen, so ldd does not list it: the model tuner's XGBoost (and what it needs).
if xgb="$(ldconfig -p | awk '/libxgboost\.so\.0 / && !found {print $NF; found = 1}')" && [[ -n "$xgb" ]]; then
  cp -L "$xgb" "$stage/lib/"
  ldd "$xgb" | awk '$3 ~ /^\// {print $3}' | grep -Ev "/(libc|libm|libpthread|libdl|librt|ld-linux)[.-]" | xargs -r -I{} cp -L {} "$stage/lib/"
fi
echo "$root" > "$stage/root"
for f in "$tree"/tests/test_* "$tree"/tests/error_catalog "$tree"/tests/*.so "$tree/tools/weftc/weftc" "$stage"/bin/*; do
  [[ -x "$f" && ! -d "$f" ]] && ldd "$f" | awk '$3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libpthread*|libdl.so*|librt.so*|ld-linux*) ;;
    libstdc++*|libgcc_s*) cp -L "$lib" "$stage/lib-fallback/" ;;
    *) cp -L "$lib" "$stage/lib/" ;;
  esac
done
strip --strip-unneeded "$tree"/tests/test_* "$tree"/tests/error_catalog "$tree/tools/weftc/weftc" "$stage"/bin/* 2>/dev/null || true
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cf - . | xz -T0 -6 > "$out"
echo "wrote $out ($(du -h "$out" | cut -f1))"
