// Baselines of the observed (third-party) kernels, like glibc's
// libm-test-ulps: what each one is known to get wrong, and by how much, so
// that ln_check fails on any change (a new finding, a recorded one that
// vanished, or a magnitude that moved) rather than on the known ones.
//
// A finding is (family, output, verdict): the kernel broke its bound or its
// contract on `output` ("y", "mean", ..., or "call" when it did not return
// normally) in some case of `family`, and `verdict` is that output's worst
// verdict in that case. A magnitude is, per family x output judged, failing
// or not, the binade (floor(log2)) of the largest error in ULPs and of the
// largest bound use over the family's cases: a verdict alone cannot show a
// kernel that stays bound_exceeded while it gets a thousand times worse.
// Both are recorded per run (budget and seed: the cases they come from);
// each finding names the smallest case found that shows it, stored beside
// the baseline.
//
// Format (one file per kernel, <dir>/<kernel with / and : as _>.baseline):
//   # comment lines
//   lnv-baseline 2
//   kernel f32/native_layer_norm/aten
//   run quick 20240611                       # budget seed; its lines follow
//   finding d_one y bound_exceeded f32_native_layer_norm_aten__d_one__y__bound_exceeded.case
//   magnitude d_one y ulp 2^3 use 2^0        # max ULP in [8, 16), bound use in [1, 2)
//   magnitude standard_normal mean ulp 2^-2 use 0
//   ...
//   end
// A binade is written 2^N (N = floor(log2 v), subnormals included), 0 when
// the largest value is 0 (no element off at all, or none with a claim: bound
// use is 0 where the bound is +inf), or inf. The magnitudes are those of
// OutputResult::max_ulp and max_bound_use: over the elements with a finite
// error. A NaN or infinity where the exact value differs (an infinite error)
// is not a magnitude: its verdict (nan_mismatch, not_finite, ...) is the
// finding. 0 and inf compare as beyond every binade, below and above: 0
// against any non-zero value is a change, and so is inf against any finite
// one. Outputs not judged in a family (dx without dy) have no line.
//
// Version 1 had findings only. ln_check reads it, refuses to compare with it
// (the run's magnitudes have nothing to be compared with, and passing them
// silently would hide exactly the regressions version 2 exists for) and says
// the command that re-records it; --write-baselines rewrites it as version
// 2, keeping its cases and dropping its other runs (which have no magnitudes).
#ifndef LNV_HARNESS_BASELINE_H_
#define LNV_HARNESS_BASELINE_H_

#include <compare>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/case_file.h"
#include "harness/judge.h"

namespace lnv {

struct Finding {
  std::string family;
  std::string output;   // OutputName, or "call"
  std::string verdict;  // VerdictName
  auto operator<=>(const Finding&) const = default;
};
std::string FindingText(const Finding& f);  // "d_one y bound_exceeded"

// ---- Magnitudes, as binades. ----

// 0 and inf as binades beyond every double's (-1074 .. 1023), so that
// "more than one binade apart" needs no special case for them.
inline constexpr int kBinadeOfZero = -10000;
inline constexpr int kBinadeOfInf = 10000;
// floor(log2 v) for finite v > 0; kBinadeOfZero for v <= 0; kBinadeOfInf
// for +inf or NaN (a NaN magnitude would be a judge bug: never "better").
int Binade(double v);
std::string BinadeText(int binade);  // "2^-3", "0", "inf"
bool ParseBinade(const std::string& text, int* binade);
// The change rule: more than one binade apart, in either direction.
bool BinadesDiffer(int recorded, int observed);

struct Magnitude {
  int ulp = kBinadeOfZero;  // binade of the largest error in ULPs
  int use = kBinadeOfZero;  // binade of the largest error / bound
  auto operator<=>(const Magnitude&) const = default;
};
std::string MagnitudeText(const Magnitude& m);  // "ulp 2^3 use 2^-1"

struct FamilyOutput {
  std::string family;
  std::string output;  // OutputName (never "call": a call has no magnitude)
  auto operator<=>(const FamilyOutput&) const = default;
};
using Magnitudes = std::map<FamilyOutput, Magnitude>;

struct BaselineRun {
  std::string budget;  // "quick" or "full"
  std::uint64_t seed = 0;
  std::set<Finding> findings;
  Magnitudes magnitudes;  // every family x output judged, failing or not
};

inline constexpr int kBaselineVersion = 2;

struct Baseline {
  int version = kBaselineVersion;  // as read; 1: findings only (see the top)
  std::string kernel;
  std::vector<BaselineRun> runs;
  std::map<Finding, std::string>
      cases;  // case file of each finding, relative to the baseline's dir
  const BaselineRun* FindRun(const std::string& budget, std::uint64_t seed) const;
};

// The directory of the recorded baselines in this source tree.
std::string DefaultBaselinesDir();
// <dir>/<kernel, file-safe>.baseline, and the case file name of a finding.
std::string BaselinePath(const std::string& dir, const std::string& kernel);
std::string FindingCaseName(const std::string& kernel, const Finding& f);

std::string FormatBaseline(const Baseline& b);
// On failure returns false with a one-line reason (with the line number).
bool ParseBaseline(const std::string& text, Baseline* out, std::string* error);
bool ReadBaseline(const std::string& path, Baseline* out, std::string* error);
bool WriteBaseline(const std::string& path, const Baseline& b, std::string* error);

// The findings a judgement of a case of `family` shows: one per failing
// output, or ("call", verdict) when the kernel did not return normally.
std::set<Finding> FindingsOf(const std::string& family, const Judgement& j);

// Recorded versus observed, both restricted to the families matching
// `families_glob` (a run over fewer families cannot see the others).
struct BaselineDiff {
  std::vector<Finding> added;     // observed, not recorded
  std::vector<Finding> vanished;  // recorded, not observed
  bool Changed() const { return !added.empty() || !vanished.empty(); }
};
BaselineDiff CompareFindings(const std::set<Finding>& recorded, const std::set<Finding>& observed,
                             const std::string& families_glob);

// A family x output whose magnitude moved by more than one binade (in
// either measure, either way), or that is judged on one side only.
struct MagnitudeChange {
  FamilyOutput at;
  std::optional<Magnitude> recorded, observed;  // nullopt: none on that side
};
// "d_one y: ulp 2^3 -> 2^6 (worse)", "d_one dx: none recorded, now ulp ..."
std::string MagnitudeChangeText(const MagnitudeChange& c);
std::vector<MagnitudeChange> CompareMagnitudes(const Magnitudes& recorded,
                                               const Magnitudes& observed,
                                               const std::string& families_glob);

// A smaller case for which still_fails holds: first single rows (in the
// order given by `rows_first`, then the others), then chunks of rows, then
// chunks of columns (delta debugging), until nothing more can go or
// max_tries calls of still_fails are spent. still_fails(c) must hold.
// Columns stop at 2 unless c.d is 1: d = 1 is a family of its own (x-hat
// is exactly 0), and a case that slid into it would show that family's
// failure instead of its own.
Case ShrinkCase(const Case& c, const std::function<bool(const Case&)>& still_fails,
                const std::vector<std::int64_t>& rows_first = {}, int max_tries = 400);

// The case restricted to the given columns (in order): x, gamma, beta, dy.
Case SelectColumns(const Case& c, const std::vector<std::int64_t>& cols);

// ---- What ln_check does with an observed kernel after its run. ----

// Where the baselines are, and the run that is compared or recorded.
struct BaselineSetting {
  std::string dir;           // the baselines directory
  std::string case_ref_dir;  // how replay commands name that directory
  std::string budget;        // "quick" or "full"
  std::uint64_t seed = 0;
  std::string families_glob = "*";
  std::string program = "ln_check";
  std::string found_by;  // provenance of the cases RecordBaseline writes
};

// The first case of this run that showed a finding, and its judgement.
struct ObservedCase {
  Case c;
  Judgement j;
};
using ObservedFindings = std::map<Finding, ObservedCase>;

// What one ln_check run saw of an observed kernel: its findings and, per
// family x output, the largest error in ULPs and bound use.
class ObservedRun {
 public:
  // Adds a judged case of `family` (every case, failing or not).
  void Observe(const std::string& family, const Case& c, const Judgement& j);
  // Adds what a run of later cases saw: its findings not seen here, and its
  // magnitudes (the larger of the two).
  void Merge(const ObservedRun& later);
  const ObservedFindings& findings() const { return findings_; }
  Magnitudes magnitudes() const;  // as binades
  double max_ulp(const FamilyOutput& at) const;
  double max_bound_use(const FamilyOutput& at) const;

 private:
  struct Max {
    double ulp = 0.0;
    double use = 0.0;
  };
  ObservedFindings findings_;
  std::map<FamilyOutput, Max> max_;
};

// Compares this run's findings and magnitudes with the kernel's baseline
// (a missing, unreadable or version 1 baseline is a change; a baseline
// without this budget and seed is reported and not compared), and replays
// every recorded case of the families run: it must still show its finding.
// Prints one line per change, calls on_new for each new finding, sets
// *status for the table ("matches, 5 finding(s), 40 magnitude(s)",
// "CHANGED: 1 new, 0 vanished, 2 moved", ...). Returns whether nothing
// changed.
bool CompareWithBaseline(const BaselineSetting& setting, const ImplInfo& impl,
                         const ObservedRun& found, std::string* status, std::ostream& out,
                         const std::function<void(const Finding&, const ObservedCase&)>& on_new);

// --write-baselines: records this run's findings and magnitudes as the
// kernel's baseline for this budget and seed (other runs, and the lines of
// families outside families_glob, are kept; a version 1 file keeps only its
// cases), each finding with the smallest case found (ShrinkCase; a recorded
// case that still shows its finding is kept, for stable diffs). Deletes the
// cases no run lists any more. Returns whether it was written.
bool RecordBaseline(const BaselineSetting& setting, const ImplInfo& impl, const ObservedRun& found,
                    std::string* status, std::ostream& out);

}  // namespace lnv

#endif  // LNV_HARNESS_BASELINE_H_
