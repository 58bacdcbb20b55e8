#!/usr/bin/env bash
# The check a machine with a CUDA GPU runs for the CUDA kernels, start to end:
# every test of impls/cuda/gpu_test.cc (real kernel == host emulation bit for
# bit on every family, within bound against the oracle, deterministic, the
# 2^31-element cases), then the bandwidth bench (bench_cuda). Only sm_90 is
# built by default, to save compile time on an H100/H200.
#
#   impls/cuda/gpu_check.sh [LOGDIR]          build here, then check here
#   impls/cuda/gpu_check.sh --pack BUNDLE     build here and pack the two
#                                             programs with their shared
#                                             libraries into folder BUNDLE
#   BUNDLE/gpu_check.sh --packed [LOGDIR]     check with a packed BUNDLE
#   LNV_GPU_ARCH=80 impls/cuda/gpu_check.sh   an A100
#
# Building needs the Debian packages of scripts/install-deps (this script
# installs nothing) and nvcc; --pack needs no GPU. A GPU machine without those
# packages runs a bundle packed elsewhere: it needs only the driver and a
# glibc at least as new as the packing machine's. --memcheck (after the mode)
# also runs the tests under compute-sanitizer's memcheck, without the
# 2^31-element cases. LOGDIR defaults to build/gpu-check (BUNDLE/logs packed);
# LNV_GPU_BUILD_DIR (default build/default) names the build tree.
# Exit status: 0 all passed, 1 a test or the build failed, 2 bad arguments,
# 77 no usable GPU.
set -euo pipefail
usage() { sed -n '2,24s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

mode=build
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  --pack) mode=pack; bundle="$(realpath -m "${2:?--pack needs a folder}")"; shift 2 ;;
  --packed) mode=packed; shift ;;
esac
memcheck=0
if [[ "${1:-}" == --memcheck ]]; then memcheck=1; shift; fi
if [[ "${1:-}" == -* || $# -gt 1 || ($mode == pack && ($# -gt 0 || $memcheck == 1)) ]]; then
  echo "gpu_check.sh: unexpected argument '${1:---memcheck}' (see --help)" >&2
  exit 2
fi

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ $mode == packed && ! -x "$here/bin/cuda_gpu_test" ]]; then
  echo "gpu_check.sh: --packed runs a bundle's copy of this script; $here holds no bundle" >&2
  exit 2
fi
build="${LNV_GPU_BUILD_DIR:-build/default}"

# Configures $build with CUDA on and builds the two programs.
build_programs() {
  local nvcc
  nvcc="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
  say "nvcc: $("$nvcc" --version | tail -1)"
  say "configure $build (LNV_CUDA=ON, CMAKE_CUDA_ARCHITECTURES=${LNV_GPU_ARCH:-90})"
  cmake --preset default -B "$build" -DLNV_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" \
    "-DCMAKE_CUDA_ARCHITECTURES=${LNV_GPU_ARCH:-90}" >"$out/configure.log" 2>&1 ||
    { tail -20 "$out/configure.log"; exit 1; }
  say "build cuda_gpu_test and bench_cuda ($(nproc) jobs)"
  cmake --build "$build" -j "$(nproc)" --target cuda_gpu_test bench_cuda \
    >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
}

# Whether library path $1 is glibc's own: the one thing a bundle takes from
# the machine it runs on.
is_glibc() {
  case "${1##*/}" in
    libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | ld-linux*) return 0 ;;
  esac
  return 1
}

# The shared libraries programs $@ load, one path a line; a library the
# loader cannot find is its bare name (ldd's "libx.so => not found").
loaded_libs() {
  ldd "$@" | awk '$3 ~ /^\// {print $3} $3 == "not" {print $1}' | sort -u
}

# Copies the programs and every shared library they load, except glibc's own.
pack() {
  rm -rf "$bundle/bin" "$bundle/lib"
  mkdir -p "$bundle/bin" "$bundle/lib"
  local progs=("$build/impls/cuda/cuda_gpu_test" "$build/bench/bench_cuda") lib
  cp "${progs[@]}" "$bundle/bin/"
  strip "$bundle"/bin/*
  for lib in $(loaded_libs "${progs[@]}"); do
    if [[ $lib != /* ]]; then
      say "cannot pack: the programs load $lib, which this machine does not have"
      exit 1
    fi
    is_glibc "$lib" || cp -L "$lib" "$bundle/lib/"
  done
  cp "$here/gpu_check.sh" "$bundle/gpu_check.sh"
  git -C "$here" describe --always --dirty >"$bundle/VERSION" 2>/dev/null || echo unknown >"$bundle/VERSION"
  say "packed $(cat "$bundle/VERSION") into $bundle ($(du -sh "$bundle" | cut -f1))"
}

if [[ $mode == packed ]]; then
  out="${1:-$here/logs}"
  test_bin="$here/bin/cuda_gpu_test" bench_bin="$here/bin/bench_cuda"
  export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
else
  cd "$here/../.."
  out="${1:-build/gpu-check}"
  [[ $mode == pack ]] && out="$bundle"
fi
mkdir -p "$out"
say() { printf '\n==> %s\n' "$*" | tee -a "$out/summary.txt"; }
: >"$out/summary.txt"

start=$SECONDS
if [[ $mode != packed ]]; then
  build_programs
  say "built in $((SECONDS - start)) s"
  if [[ $mode == pack ]]; then pack; exit 0; fi
  test_bin="$build/impls/cuda/cuda_gpu_test" bench_bin="$build/bench/bench_cuda"
else
  say "bundle $(cat "$here/VERSION" 2>/dev/null || echo '(no VERSION)')"
  # Every library but glibc's must come from the bundle: checked before the
  # GPU is looked for, so a machine without one checks the bundle too.
  outside=()
  for lib in $(loaded_libs "$test_bin" "$bench_bin"); do
    [[ $lib == "$here/lib/"* ]] || is_glibc "$lib" || outside+=("$lib")
  done
  if ((${#outside[@]} > 0)); then
    say "the bundle loads libraries from outside it (or finds none): ${outside[*]}"
    exit 1
  fi
fi
say "GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo 'nvidia-smi not available')"

status=0
"$test_bin" --gtest_filter=-* >/dev/null 2>&1 || status=$?
if ((status == 77)); then
  say "no usable CUDA device: nothing to check (exit 77)"
  exit 77
elif ((status != 0)); then
  say "cuda_gpu_test does not start (exit $status):"
  "$test_bin" --gtest_filter=-* 2>&1 | tail -5 | tee -a "$out/summary.txt"
  exit 1
fi

say "cuda_gpu_test (bit-exactness, bounds, determinism, > 2^31 elements)"
status=0
"$test_bin" 2>&1 | tee "$out/gpu-test.log" || status=1
grep -E '^\[  (PASSED|FAILED|SKIPPED) +\]' "$out/gpu-test.log" | tee -a "$out/summary.txt" || true

say "bench_cuda (GB/s next to a device-to-device memcpy)"
"$bench_bin" --benchmark_min_time=0.05 2>&1 | tee "$out/bench.log" |
  sed -n '/^case /,$p' | tee -a "$out/summary.txt" || status=1
if ((memcheck)); then
  sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
  say "compute-sanitizer --tool memcheck cuda_gpu_test (without the 2^31-element cases)"
  if [[ ! -x "$sanitizer" ]]; then
    say "compute-sanitizer not found: --memcheck cannot run"
    status=1
  else
    "$sanitizer" --tool memcheck --error-exitcode 1 "$test_bin" \
      --gtest_filter='-*2To31*' >"$out/memcheck.log" 2>&1 || status=1
    grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED) +\]' "$out/memcheck.log" |
      tee -a "$out/summary.txt" || true
  fi
fi

say "done in $((SECONDS - start)) s; logs in $out; exit $status"
exit "$status"
