#!/usr/bin/env bash
# fuzz_ln overnight: fuzz in parallel for hours, then do the morning's work:
# merge the corpus, sort the crashes into distinct findings, minimize one
# input per finding, turn each into a case file that `ln_check --replay`
# reproduces, and print a short summary. See usage() or fuzz/README.md.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

usage() {
  cat <<'EOF'
usage: fuzz/overnight.sh [options]

Runs fuzz_ln (the clang `fuzz-fast` preset by default: libFuzzer and UBSan
without ASan; built first) with -fork=JOBS, -entropic=1 (see --entropic) and
-ignore_crashes=1 for the given time in a work folder, then:
  1. merges the new inputs into WORK/corpus (libFuzzer -merge=1, set cover);
  2. runs every crash/timeout/oom input once and groups them by finding key
     (kernel | verdict | output | input class; sanitizer crashes by their
     summary line);
  3. minimizes the smallest input of each group (-minimize_crash=1; one input
     often stands for several keys, e.g. one cause in several kernels) and
     keeps the result only if it still gives all of its keys;
  4. writes each finding's case file under WORK/findings/N/ and replays it
     with ln_check --replay (whose exit status says whether it reproduces);
  5. prints the morning summary: the distinct findings, each with its case file
     and replay command, the known (recorded) findings, and the corpus sizes.

Options:
  --hours H       how long to fuzz (default 8)
  --seconds S     how long to fuzz, in seconds (overrides --hours)
  --jobs N        parallel fuzzing jobs (default: the number of cores)
  --work DIR      work folder (default build/PRESET/overnight-<date>); reusing one
                  continues from its corpus
  --impls GLOB    LNV_FUZZ_IMPLS for the run (default: every kernel but the
                  negative controls)
  --max-d N       LNV_FUZZ_MAX_D (default 4096)
  --seed N        libFuzzer's -seed (default: from the clock; always printed)
  --timeout S     per-input timeout in seconds (default 120)
  --rss-mb N      per-job RSS limit (default 4096)
  --minimize-seconds S  time to minimize each finding's input (default 30)
  --no-known      trap on the known findings too (fuzz/known_findings.txt)
  --preset NAME   the build: fuzz-fast (default; no ASan) or fuzz (ASan + UBSan,
                  as CI: also catches memory errors, at a fraction of the rate)
                  or fuzz-bare (no sanitizer: blind to undefined behaviour,
                  for the most inputs a second; fuzz/README.md, Speed)
  --entropic 0|1  libFuzzer's entropic power schedule (default 1, with its
                  rare-feature list kept short as in CI:
                  -entropic_feature_frequency_threshold=8. With d up to 4096
                  it gave 280 inputs a second against 125 with it off, whose
                  corpus drifts to larger, slower inputs; with
                  LNV_FUZZ_MAX_D=64, 0 is faster: 1,723 against 1,344.
                  One run each, fuzz/README.md, Speed.) With 1, each input's
                  energy is also scaled by its execution time
                  (-entropic_scale_per_exec_time=1): 1.2 to 3.1 times the
                  inputs a second at equal coverage, in both builds; the
                  seed then does not replay a run, a finding's crash
                  file does.
  --hit-counts 0|1  libFuzzer's hit-count features (-use_counters; default 0
                  with --max-d 64 or less, else 1). At d <= 64 an edge's hit
                  counts mostly tell row lengths apart; without them
                  fuzz-bare ran at 1.21 to 1.42 times the inputs a second
                  in seven pairs of runs, with as many edges in the five
                  whose edges were compared.
                  With d up to 4096 they kept the corpus's inputs short,
                  and dropping them cost rate (fuzz/README.md, Speed).
  --no-build      use the existing build of the preset
  --help          this text

Exit status: 0 no new finding, 1 at least one finding or a crash input that
gave none when run again (listed as unreproduced), 2 bad usage.
EOF
}

die_usage() { echo "overnight.sh: $1 (see --help)" >&2; exit 2; }
say() { printf '\n==> %s\n' "$*"; }

seconds=$((8 * 3600))
jobs="$(nproc)"
work=""
impls="${LNV_FUZZ_IMPLS:-}"
max_d=4096
seed=""
timeout=120
rss_mb=4096
minimize_s=30
known="$root/fuzz/known_findings.txt"
build=1
preset=fuzz-fast
entropic=1
hit_counts=""
while (($# > 0)); do
  case "$1" in
    --help) usage; exit 0 ;;
    --hours) [[ $# -ge 2 && "$2" =~ ^[0-9]+([.][0-9]+)?$ ]] || die_usage "--hours needs a number"
             seconds="$(awk -v h="$2" 'BEGIN { printf "%d", h * 3600 }')"; shift 2 ;;
    --seconds) [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || die_usage "--seconds needs an integer"; seconds="$2"; shift 2 ;;
    --jobs) [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || die_usage "--jobs needs a positive integer"; jobs="$2"; shift 2 ;;
    --work) [[ $# -ge 2 ]] || die_usage "--work needs a folder"; work="$2"; shift 2 ;;
    --impls) [[ $# -ge 2 ]] || die_usage "--impls needs a glob"; impls="$2"; shift 2 ;;
    --max-d) [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || die_usage "--max-d needs a positive integer"; max_d="$2"; shift 2 ;;
    --seed) [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || die_usage "--seed needs an integer"; seed="$2"; shift 2 ;;
    --timeout) [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || die_usage "--timeout needs seconds"; timeout="$2"; shift 2 ;;
    --rss-mb) [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || die_usage "--rss-mb needs megabytes"; rss_mb="$2"; shift 2 ;;
    --minimize-seconds) [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || die_usage "--minimize-seconds needs seconds"
                        minimize_s="$2"; shift 2 ;;
    --no-known) known=""; shift ;;
    --preset) [[ $# -ge 2 && "$2" =~ ^(fuzz|fuzz-fast|fuzz-bare)$ ]] || die_usage "--preset is fuzz, fuzz-fast or fuzz-bare"
              preset="$2"; shift 2 ;;
    --entropic) [[ $# -ge 2 && "$2" =~ ^[01]$ ]] || die_usage "--entropic is 0 or 1"; entropic="$2"; shift 2 ;;
    --hit-counts) [[ $# -ge 2 && "$2" =~ ^[01]$ ]] || die_usage "--hit-counts is 0 or 1"; hit_counts="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    *) die_usage "unknown option $1" ;;
  esac
done
((seconds >= 1)) || die_usage "the run must last at least one second"
seed="${seed:-$(( $(date +%s) % 2147483647 ))}"
if [[ -z "$hit_counts" ]]; then hit_counts=$((max_d > 64)); fi
work="${work:-$root/build/$preset/overnight-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"

fuzz_ln="$root/build/$preset/fuzz/fuzz_ln"
ln_check="$root/build/$preset/harness/ln_check"
if ((build)); then
  say "building the $preset preset (fuzz_ln, ln_check)"
  (cd "$root" && cmake --preset "$preset" >/dev/null &&
    cmake --build --preset "$preset" --target fuzz_ln ln_check)
fi
[[ -x "$fuzz_ln" && -x "$ln_check" ]] || die_usage "no build/$preset/fuzz/fuzz_ln or ln_check; run without --no-build"

mkdir -p "$work"/{corpus,new,artifacts,cases,logs,triage,findings}
export LNV_FUZZ_MAX_D="$max_d" LNV_FUZZ_IMPLS="$impls" LNV_FUZZ_KNOWN_FINDINGS="$known"
# Heap allocation stacks cost the oracle's big integers a fifth of the time;
# the morning's re-runs below keep the full context.
fast_asan="${ASAN_OPTIONS:-malloc_context_size=0}"
common=(-max_len=16384 "-dict=$root/fuzz/fuzz_ln.dict" "-timeout=$timeout" "-rss_limit_mb=$rss_mb"
  "-entropic=$entropic" -entropic_feature_frequency_threshold=8)
if ((entropic)); then common+=(-entropic_scale_per_exec_time=1); fi
common+=("-use_counters=$hit_counts")
corpus_before="$(find "$work/corpus" -type f | wc -l)"

say "fuzzing for ${seconds} s with ${jobs} jobs, seed ${seed}, d <= ${max_d}, kernels '${impls:-default}', hit counts ${hit_counts}"
echo "work folder: $work"
start=$(date +%s)
set +e
(cd "$work" && ASAN_OPTIONS="$fast_asan" LNV_FUZZ_CASES_DIR="$work/cases" \
  "$fuzz_ln" "${common[@]}" -seed="$seed" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
  -max_total_time="$seconds" -artifact_prefix="$work/artifacts/" \
  "$work/new" "$work/corpus" "$root/fuzz/corpus/fuzz_ln" >"$work/logs/fuzz.log" 2>&1)
fuzz_rc=$?
set -e
elapsed=$(( $(date +%s) - start ))
last_status="$(grep -E '^#[0-9]+' "$work/logs/fuzz.log" | tail -1 || true)"
echo "fuzz_ln exited with $fuzz_rc after ${elapsed} s; last status: ${last_status:-none}"

say "merging the corpus (set cover)"
rm -rf "$work/merged" && mkdir -p "$work/merged"
(cd "$work" && ASAN_OPTIONS="$fast_asan" LNV_FUZZ_CASES_DIR="$work/logs/merge-cases" \
  "$fuzz_ln" "${common[@]}" -merge=1 -merge_control_file="$work/logs/merge.control" \
  "$work/merged" "$work/corpus" "$work/new" >"$work/logs/merge.log" 2>&1) || echo "merge exited with $? (see $work/logs/merge.log)"
if [[ -n "$(ls -A "$work/merged")" ]]; then
  rm -rf "$work/corpus" && mv "$work/merged" "$work/corpus" && rm -rf "$work/new" && mkdir -p "$work/new"
fi
corpus_after="$(find "$work/corpus" -type f | wc -l)"

# libFuzzer looks at a running input every timeout/2 + 1 s, so its own
# timeout fires up to 1.5 timeout + 1 s in; the outer limit leaves it room.
run_limit=$((timeout * 2 + 10))

# The key of one input: the finding lines it prints, else its SUMMARY line
# (a sanitizer's, or libFuzzer's for a timeout, an out-of-memory or a deadly
# signal: the ERROR line above it names the process and the seconds, which
# would make every input its own finding), else that it ran past run_limit.
keys_of() {  # INPUT OUTDIR -> prints keys, one a line
  local input="$1" out="$2" log rc
  mkdir -p "$out"
  log="$out/run.log"
  (cd "$out" && LNV_FUZZ_CASES_DIR="$out" LNV_FUZZ_PREWRITE=1 timeout "$run_limit" \
    "$fuzz_ln" -timeout="$timeout" -rss_limit_mb="$rss_mb" "$input" >"$log" 2>&1) && rc=0 || rc=$?
  local keys
  keys="$(grep -E '^==lnv-finding== ' "$log" | sed 's/^==lnv-finding== //' | sort -u || true)"
  if [[ -z "$keys" ]]; then
    local summary
    summary="$(grep -m1 -E '^SUMMARY: ' "$log" | sed 's/ (.*//' || true)"
    if [[ -z "$summary" ]] && ((rc == 124)); then summary="ran past ${run_limit} s"; fi
    local pre
    pre="$(ls "$out"/*__crash__*.case 2>/dev/null | head -1 | xargs -r -n1 basename || true)"
    [[ -n "$summary" ]] && keys="crash|${pre%%__crash__*}|${summary}"
  fi
  printf '%s\n' "$keys"
}

say "sorting the crashes into findings"
declare -A best_input=() best_size=() count=()
unreproduced=()  # crash inputs that gave no key when run again: listed, never dropped
n_artifacts=0
for a in "$work"/artifacts/*; do
  [[ -f "$a" ]] || continue
  case "$(basename "$a")" in crash-*|timeout-*|oom-*|leak-*) ;; *) continue ;; esac
  n_artifacts=$((n_artifacts + 1))
  t="$work/triage/$(basename "$a")"
  got_key=0
  while IFS= read -r key; do
    [[ -n "$key" ]] || continue
    got_key=1
    size=$(stat -c %s "$a")
    count[$key]=$(( ${count[$key]:-0} + 1 ))
    if [[ -z "${best_size[$key]:-}" || $size -lt ${best_size[$key]} ]]; then
      best_size[$key]=$size
      best_input[$key]="$a"
    fi
  done < <(keys_of "$a" "$t")
  ((got_key)) || unreproduced+=("$(basename "$a")")
done
echo "$n_artifacts crash inputs, ${#best_input[@]} distinct findings, ${#unreproduced[@]} inputs that gave none again"

# One input stands for every key it is the smallest input of: minimize
# those inputs, not one per key (one cause can give several keys on one kernel).
declare -A keys_of_input=()
for key in "${!best_input[@]}"; do
  keys_of_input[${best_input[$key]}]+="$key"$'\n'
done
say "minimizing ${#keys_of_input[@]} inputs (at most ${minimize_s} s each) and writing the case files"
declare -A case_of=() replay_of=()
n=0
mapfile -t reps < <(printf '%s\n' "${!keys_of_input[@]}" | sort)
for input in "${reps[@]}"; do
  [[ -n "$input" ]] || continue  # no crash input at all
  n=$((n + 1))
  dir="$work/findings/$n"
  mkdir -p "$dir"
  cp "$input" "$dir/input"
  wanted="$(printf '%s' "${keys_of_input[$input]}" | sort -u)"
  (cd "$dir" && LNV_FUZZ_CASES_DIR="$dir/minimize-cases" "$fuzz_ln" -minimize_crash=1 \
    -max_total_time="$minimize_s" -timeout="$timeout" -exact_artifact_path="$dir/input.min" "$input" \
    >"$dir/minimize.log" 2>&1) || true
  # Keep the smaller input only if it still gives every key it stands for.
  if [[ -f "$dir/input.min" ]]; then
    got="$(keys_of "$dir/input.min" "$dir/check")"
    if [[ -z "$(comm -23 <(printf '%s\n' "$wanted") <(printf '%s\n' "$got" | sort -u))" ]]; then
      cp "$dir/input.min" "$dir/input"
    fi
  fi
  keys_of "$dir/input" "$dir/run" >/dev/null
  while IFS= read -r key; do
    [[ -n "$key" ]] || continue
    if [[ "$key" == crash\|* ]]; then
      c="$(ls "$dir"/run/*__crash__*.case 2>/dev/null | head -1 || true)"
    else
      c="$(awk -v k="==lnv-finding== $key" '$0 == k { f = 1; next } f && /^case +\// { print $2; exit }' "$dir/run/run.log")"
    fi
    [[ -n "$c" && -f "$c" ]] || { replay_of[$key]="(no case file: see $dir/run/run.log)"; continue; }
    case_of[$key]="$c"
    if [[ "$(sed -n 's/^kernel //p' "$c")" == "-" ]]; then
      replay_of[$key]="build/default/fuzz/fuzz_ln_replay $c"
      continue
    fi
    set +e
    timeout "$run_limit" "$ln_check" --replay "$c" >"$c.replay.log" 2>&1
    rc=$?
    set -e
    if [[ "$key" == crash\|* ]]; then
      # A sanitizer's report or libFuzzer's: only this preset's build makes
      # it (the default build has no sanitizer), and a sanitizer exits 1 too,
      # so the exit status alone would read as a broken claim.
      report="${key##*|}"
      if [[ -n "$report" ]] && grep -qF -- "$report" "$c.replay.log"; then
        verdict="reproduces: ln_check stops with the same report"
      elif [[ "$report" == "SUMMARY: libFuzzer: timeout" || "$report" == "ran past"* ]] && ((rc == 124)); then
        verdict="reproduces: ln_check --replay runs past ${run_limit} s"
      elif [[ "$report" == "SUMMARY: libFuzzer: deadly signal" ]] && ((rc > 128)); then
        verdict="reproduces: ln_check dies from signal $((rc - 128))"
      else
        verdict="ln_check --replay exits $rc without the report: see $c.replay.log"
      fi
      replay_of[$key]="build/$preset/harness/ln_check --replay $c   [$verdict]"
      continue
    fi
    if ((rc == 1)); then
      verdict="reproduces: ln_check exits 1, the claim is broken"
    elif ((rc == 0)) && grep -q 'negative_control' "$c.replay.log"; then
      verdict="reproduces: a caught negative control, ln_check exits 0"
    else
      verdict="ln_check --replay exits $rc: see $c.replay.log"
    fi
    replay_of[$key]="build/default/harness/ln_check --replay $c   [$verdict]"
  done <<<"$wanted"
done
summary_lines=()
i=0
mapfile -t keys < <(printf '%s\n' "${!best_input[@]}" | sort)
for key in "${keys[@]}"; do
  [[ -n "$key" ]] || continue
  i=$((i + 1))
  summary_lines+=("$i. $key  (${count[$key]} inputs)")
  summary_lines+=("   replay ${replay_of[$key]:-(not converted)}")
done

known_cases="$(grep -l '^note known finding:' "$work"/cases/*.case 2>/dev/null || true)"
say "morning summary"
echo "run      ${elapsed} s, ${jobs} jobs, seed ${seed}, d <= ${max_d}, kernels '${impls:-default}'"
echo "status   ${last_status:-none}"
echo "corpus   $work/corpus: $corpus_before inputs before, $corpus_after after the merge"
echo "crashes  $n_artifacts inputs in $work/artifacts"
echo "findings ${#best_input[@]} distinct"
for line in "${summary_lines[@]}"; do echo "  $line"; done
if ((${#unreproduced[@]} > 0)); then
  echo "unreproduced ${#unreproduced[@]} crash inputs gave no finding when run again (each one's log: $work/triage/NAME/run.log):"
  printf '  %s\n' "${unreproduced[@]}"
fi
if [[ -n "$known_cases" ]]; then
  echo "known    $(echo "$known_cases" | wc -l) case files of known findings (recorded, not trapped) in $work/cases:"
  grep -h '^note known finding:' $known_cases | sort | uniq -c | sed 's/^/  /'
fi
echo
echo "keep the corpus:       cp -n $work/corpus/* $root/fuzz/corpus/fuzz_ln/"
echo "keep a finding:        see fuzz/README.md, \"Adding a finding to the regression folder\""
((${#best_input[@]} == 0 && ${#unreproduced[@]} == 0)) || exit 1
