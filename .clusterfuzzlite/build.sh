#!/bin/bash -eu
# Builds fuzz_ln the OSS-Fuzz way: the compiler, its sanitizer and coverage
# flags and the fuzzing engine come from the environment ($CXX, $CXXFLAGS,
# $LIB_FUZZING_ENGINE); the results go to $OUT: the target, its seed corpus
# zip, dictionary, options file and known-findings list. No GoogleTest,
# RapidCheck or Google Benchmark is needed.
#
# Locally (what CI cannot run): CC=clang CXX=clang++ \
#   LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/out .clusterfuzzlite/build.sh
src="${SRC:+$SRC/lnverify}"
src="${src:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
work="${WORK:-$(mktemp -d)}"
: "${OUT:?set OUT to the output folder}"
: "${LIB_FUZZING_ENGINE:?set LIB_FUZZING_ENGINE, e.g. -fsanitize=fuzzer}"
# Undefined behaviour must stop the run (fuzz/CMakeLists.txt refuses a UBSan
# build that recovers: it would print and go on, never a finding).
CXXFLAGS="${CXXFLAGS:--O1 -g -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined}"
# Division by zero in floating point is legal IEEE (the kernels' NaN contract
# depends on it); OSS-Fuzz's UBSan flags include it.
CXXFLAGS="$CXXFLAGS -fno-sanitize=float-divide-by-zero"
mkdir -p "$OUT"

cmake -S "$src" -B "$work/lnverify-build" -G Ninja \
  -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_COMPILER="${CXX:-clang++}" \
  -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DLNV_BUILD_TESTS=OFF -DLNV_BUILD_BENCH=OFF \
  -DLNV_FAST_KERNELS_SANITIZED=OFF \
  -DLNV_FUZZ_ENGINE="$LIB_FUZZING_ENGINE"
cmake --build "$work/lnverify-build" --target fuzz_ln

cp "$work/lnverify-build/fuzz/fuzz_ln" "$OUT/fuzz_ln"
cp "$src/fuzz/fuzz_ln.dict" "$OUT/fuzz_ln.dict"
cp "$src/fuzz/fuzz_ln.options" "$OUT/fuzz_ln.options"
cp "$src/fuzz/known_findings.txt" "$OUT/fuzz_ln.known_findings"
rm -f "$OUT/fuzz_ln_seed_corpus.zip"
(cd "$src/fuzz/corpus/fuzz_ln" && zip -q -r "$OUT/fuzz_ln_seed_corpus.zip" .)
echo "build.sh: fuzz_ln, its seed corpus ($(ls "$src/fuzz/corpus/fuzz_ln" | wc -l) inputs), dictionary," \
     "options and known findings are in $OUT"
