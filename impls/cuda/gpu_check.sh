#!/usr/bin/env bash
# The check a machine with a CUDA GPU runs for the CUDA kernels, start to end:
# build the CUDA targets (LNV_CUDA=ON, only sm_90 by default to save compile
# time on an H100/H200), run every gpu-labelled test (real kernel == host
# emulation bit for bit, within bound against the oracle, deterministic, the
# 2^31-element cases), then the bandwidth bench. Logs go to DIR (default
# build/gpu-check, or $OUT/gpu-check when $OUT is set).
#
#   impls/cuda/gpu_check.sh [DIR]
#   LNV_GPU_ARCH=80 impls/cuda/gpu_check.sh      # an A100
#
# Needs the Debian packages of scripts/install-deps already installed (it
# does not install anything) and a working nvcc and driver. Exit status: 0
# all passed, 1 a test failed, 77 no usable GPU.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
out="${1:-${OUT:+$OUT/gpu-check}}"
out="${out:-build/gpu-check}"
mkdir -p "$out"
say() { printf '\n==> %s\n' "$*" | tee -a "$out/summary.txt"; }

: >"$out/summary.txt"
nvcc="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
say "GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo 'nvidia-smi not available')"
say "nvcc: $("$nvcc" --version | tail -1)"

start=$SECONDS
say "configure build/default (LNV_CUDA=ON, CMAKE_CUDA_ARCHITECTURES=${LNV_GPU_ARCH:-90})"
cmake --preset default -DLNV_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" \
  "-DCMAKE_CUDA_ARCHITECTURES=${LNV_GPU_ARCH:-90}" >"$out/configure.log" 2>&1 ||
  { tail -20 "$out/configure.log"; exit 1; }
say "build the CUDA targets ($(nproc) jobs)"
cmake --build build/default -j "$(nproc)" --target cuda_gpu_test cuda_emulation_test bench_cuda \
  ln_check >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
say "built in $((SECONDS - start)) s"

status=0
build/default/impls/cuda/cuda_gpu_test --gtest_filter=-* >/dev/null 2>&1 || status=$?
if ((status == 77)); then
  say "no usable CUDA device: nothing to check (exit 77)"
  exit 77
fi

say "ctest -L '^gpu\$' (bit-exactness, bounds, determinism, > 2^31 elements)"
status=0
ctest --test-dir build/default -L '^gpu$' --output-on-failure --timeout 900 \
  2>&1 | tee "$out/ctest-gpu.log" || status=$?
grep -E 'tests passed|tests failed|Skipped|Failed' "$out/ctest-gpu.log" | tee -a "$out/summary.txt" || true

say "bench_cuda (GB/s next to a device-to-device memcpy)"
build/default/bench/bench_cuda --benchmark_min_time=0.05 2>&1 | tee "$out/bench.log" |
  sed -n '/^case /,$p' | tee -a "$out/summary.txt" || status=1
say "done in $((SECONDS - start)) s; logs in $out; exit $status"
exit "$status"
