// What fuzz_ln does with one input, without libFuzzer: decode it, compute the
// oracle's answer once, judge every chosen kernel against it (harness/judge),
// check the oracle itself, and report findings and integer features. The
// libFuzzer entry points (fuzz_ln.cc) and the g++ replay driver
// (replay_main.cc) are thin shells around this.
//
// A finding is:
//   * a claims_bound kernel whose verdict is a failure (bound exceeded, NaN
//     mismatch, a non-finite result for finite inputs in its claimed range,
//     a kernel error);
//   * a negative control whose verdict is a failure: the control was caught
//     (controls are fuzzed only when LNV_FUZZ_IMPLS names them);
//   * an observed (third-party) kernel's failure outside its baseline's
//     classes (ObservedClasses below); a failure inside them is what
//     ln_check already knows: recorded as a case file, not trapped;
//   * the oracle returning `undecided` for any element, or (inputs with the
//     cross-check flag) its two backends disagreeing on any bit.
#ifndef LNV_FUZZ_TARGET_H_
#define LNV_FUZZ_TARGET_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "fuzz/feedback.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/known_findings.h"
#include "harness/baseline.h"
#include "harness/case_file.h"
#include "harness/isolate.h"
#include "harness/judge.h"
#include "impls/registry.h"

namespace lnv::fuzz {

// What fuzz_ln holds an observed kernel to, from its baseline
// (harness/baseline.h): the outputs that fail in some family of some run,
// whatever the verdict, and "call <verdict>" for each recorded call that did
// not return.
//
// A failing judgement is outside them when a call ends in a verdict never
// recorded, or when an output fails that no family has seen fail and the
// rows that matter for it (FindingClass, finding_class.h) are within the
// range this project's own kernels claim: x finite or subnormal (not huge:
// the exact sum of squares below the accumulation format's max / 8), gamma
// and beta finite, and for the backward dy finite and g ok. Beyond that
// range the families say little (huge_magnitude and nan_inf_rows only) and
// a claims_bound kernel would have no claim to break either: there an
// observed kernel's finding is recorded, never trapped.
//
// Coarser than ln_check's comparison on purpose. Fuzz inputs belong to no
// family, and one known cause shows on other outputs, with other verdicts
// and at any size as the input moves: oneDNN's overflow of the sum of
// squares, a NaN on dx in huge_magnitude, is bound_exceeded on dx for the
// seed corpus's huge_magnitude input; ATen's error on a y whose exact value
// is 0 (d_one, bound use 2^12) reaches bound use 2^67 once eps is tiny. So
// neither the (output, verdict) pairs nor the magnitudes of the families
// bound what the fuzzer finds (fuzz/README.md has the numbers).
struct ObservedClasses {
  std::set<std::string> failing;
};
ObservedClasses ClassesOf(const Baseline& b);

// "" when the failing judgement j of case c (ref: its oracle answer, acc:
// the kernel's accumulation format) is inside the classes, else why not.
std::string OutsideClasses(const ObservedClasses& classes, const Case& c, const Reference& ref,
                           const Judgement& j, FloatFormat acc);

// The backend cross-check runs on an input's leading rows that hold at most
// this many elements (none when d is larger): its two exact-path oracle runs
// cost about a hundred fast-path runs.
inline constexpr std::int64_t kCrossCheckMaxElements = 64;
// fuzz_ln cross-checks one flagged input in kCrossCheckEvery (FuzzConfig::
// cross_check_every), chosen by the input's hash (CrossCheckSampled) so that a
// rerun checks the same ones. Under AddressSanitizer a check (big integers on
// the heap) costs about five times what it does without: in two 5-minute runs
// of the `fuzz` build at d <= 64, one in 8 took 13 to 18 % of the wall time,
// about as much as the kernels and the judge (15 %), and one in 32 took 4 to
// 7 % (a quarter and a seventh of the rest of the oracle's time; about 1,500
// to 2,150 checks a minute) (fuzz/README.md, Speed).
inline constexpr std::int64_t kCrossCheckEvery = 32;
// One fast decision of the oracle in kRecheckEvery (OracleOptions::
// recheck_every) is decided again on its exact path, on every input; a
// different rounding is an oracle finding. An exact decision costs as much
// as thousands of fast ones, hence the low rate (fuzz/README.md has the
// count a run reaches).
inline constexpr std::int64_t kRecheckEvery = 4096;

struct FuzzConfig {
  std::vector<ImplInfo> impls;  // the kernels to fuzz
  std::string impls_glob;       // "" when the default selection is used
  DecodeConfig decode;
  std::string cases_dir = "lnv-cases";
  // Write each kernel's case file before running it and delete it after: a
  // kernel that crashes or hangs leaves its case behind (crash conversion).
  bool prewrite = false;
  // Open findings that are recorded but do not trap (known_findings.h).
  std::vector<KnownFinding> known;
  // The recorded classes of each observed kernel of `impls`, by name
  // (LoadBaselines). An observed kernel without an entry has no classes:
  // every finding of it traps.
  std::map<std::string, ObservedClasses> baselines;
  // LNV_FUZZ_ISOLATE=1: plugin kernels run in a child process (harness/
  // isolate.h), so one that crashes, hangs or writes outside its buffers is a
  // finding with its case rather than a dead fuzzer; a fork per call costs
  // throughput, so it is an option. nullptr: every kernel in this process.
  std::shared_ptr<Isolator> isolator;
  // Judge every compatible kernel on each input, whatever its selector byte
  // (fuzz_ln_replay --every-kernel: the corpus replay test). fuzz_ln judges
  // the one the selector picks.
  bool every_kernel = false;
  // One in this many inputs with the cross-check flag, by CrossCheckSampled,
  // is cross-checked (kCrossCheckEvery); 1: every flagged input (the replay).
  std::int64_t cross_check_every = kCrossCheckEvery;
};

// The selection: every entry of `all` whose name matches `glob`; with an
// empty glob, every entry except the negative controls. Sets the
// signatures inputs snap to. Returns "" or why no kernel was selected.
std::string SelectKernels(const std::vector<ImplInfo>& all, const std::string& glob,
                          FuzzConfig* config);

// Reads the baseline (harness/baseline.h) of every observed kernel of
// config->impls from `dir` into config->baselines (ClassesOf). Returns "" or
// a one-line reason: a baseline missing, unreadable or in the old format
// (without magnitudes) would make every finding of its kernel trap, so it is
// an error at the start rather than a stop at the first finding.
std::string LoadBaselines(const std::string& dir, FuzzConfig* config);

// Reads LNV_FUZZ_IMPLS, LNV_PLUGINS, LNV_FUZZ_MAX_D, LNV_FUZZ_CROSS_CHECK_EVERY
// (cross_check_every; 1 for minimizing a backend finding), LNV_FUZZ_CASES_DIR,
// LNV_FUZZ_PREWRITE, LNV_FUZZ_ISOLATE (1: plugin kernels in a child process;
// it is made here, before any kernel runs) and LNV_FUZZ_KNOWN_FINDINGS (a
// file), and the selected
// observed kernels' baselines from the source tree (DefaultBaselinesDir).
// Returns "" or a one-line reason (bad value, unreadable file, plugin that
// did not load, no kernel selected, baseline missing).
std::string ConfigFromEnv(FuzzConfig* config);

enum class FindingKind { kKernel, kOracleUndecided, kOracleBackends };

struct Finding {
  FindingKind kind = FindingKind::kKernel;
  std::string kernel = "-";        // registry name; "-" for the oracle's findings
  const ImplInfo* impl = nullptr;  // that kernel (a FuzzConfig::impls entry); null for the oracle's
  ImplStatus status = ImplStatus::kClaimsBound;
  Verdict verdict = Verdict::kPass;
  Output output = Output::kY;
  bool traps = true;   // false: recorded only (known findings, observed ones inside their baseline)
  std::string key;     // de-duplication: kernel|verdict|output|class (finding_class.h)
  std::string known;   // the reason, when the key is on the known-findings list
  std::string detail;  // worst element, error, bound, summary (lines)
  Case c;              // reduced to the failing row when rows are independent
};

struct RunStats {
  double oracle_seconds = 0.0;  // ComputeReference and the cross-check
  double kernel_seconds = 0.0;  // kernels and judging
  std::int64_t kernels_judged = 0;
  std::int64_t elements = 0;  // rows * d
  // Over every judged kernel and output: elements judged, and those judged
  // without a claim (bound +inf, or outside the kernel's claimed range).
  std::int64_t judged_elements = 0, unclaimed_elements = 0;
  // Elements judged under the statistical tier (random-data inputs), those
  // beyond its bound, and of these the ones of kernels it only reports
  // (observed kernels, TypicalTierFor): not findings.
  std::int64_t typical_elements = 0, beyond_typical_elements = 0, beyond_typical_reported = 0;
  // The oracle's sampled exact re-decisions (kRecheckEvery), and those that differed.
  std::int64_t rechecked = 0, recheck_disagreements = 0;
  // Oracle outputs its fast path could not decide (OracleForwardResult::slow_path
  // and the backward's); whether the backends were cross-checked, and the
  // seconds that took (part of oracle_seconds).
  std::int64_t slow_path = 0;
  bool cross_checked = false;
  double cross_check_seconds = 0.0;
};

struct RunResult {
  std::vector<Finding> findings;
  FeatureSet features;
  RunStats stats;
};

// One case against the given kernels (each compatible with it).
RunResult RunCase(const FuzzConfig& config, const Case& c,
                  const std::vector<const ImplInfo*>& kernels, bool cross_check_oracle);

// One fuzz input: decode, choose the kernel by the selector, cross-check the
// oracle when the input is flagged and sampled (cross_check_every), RunCase.
RunResult RunInput(const FuzzConfig& config, const std::uint8_t* data, std::size_t size);

// The kernels of the selection that can run c, and the one the selector
// picks (selector % their count), or all of them with config.every_kernel.
std::vector<const ImplInfo*> CompatibleKernels(const FuzzConfig& config, const Case& c);
std::vector<const ImplInfo*> ChosenKernels(const FuzzConfig& config, const Case& c,
                                           std::uint8_t selector);

// Writes the finding's case file under config.cases_dir (directories made as
// needed), with provenance; returns its path, or "" with *error set.
std::string WriteFindingCase(const FuzzConfig& config, const Finding& f, std::string* error);

// The lines fuzz_ln prints for a finding: a header with the key, the worst
// element, the case file and its replay command, and the case in hex floats.
std::string FormatFinding(const Finding& f, const std::string& case_path);

// "" when two oracle answers agree: on every field (rounded, hi, lo, status)
// with every_field, else on the rounded value and status; otherwise the first
// difference, "output[i]: <a_name> ... vs <b_name> ...".
std::string CompareReferences(const Reference& a, const Reference& b, const char* a_name,
                              const char* b_name, bool every_field);

// The oracle's self-check on c: its Boost and MPFR backends (exact paths)
// agree on every field, and `fast` (the default options) agrees with them on
// every rounded value. "" or the first difference.
std::string CrossCheckOracle(const Case& c, const Reference& fast);

// A stable 64-bit hash (FNV-1a) of an input, for provenance and file names.
std::uint64_t InputHash(const std::uint8_t* data, std::size_t size);

// Whether an input with this InputHash is one of the 1 in `every` that are
// cross-checked. FNV-1a's low bits depend only on the low bits of each byte
// (its multiplier is odd), so the hash is mixed first: otherwise a mutant that
// changes only high bits (a sign, an exponent, a header flag) would always
// share its parent's choice.
bool CrossCheckSampled(std::uint64_t input_hash, std::int64_t every);

}  // namespace lnv::fuzz

#endif  // LNV_FUZZ_TARGET_H_
