// Integer feedback for libFuzzer. Its coverage sees branches, not float
// comparisons: an input that pushes a kernel from 0.01 to 0.9 of its bound
// runs the same code. So the target reports, as features, what it measured
// as small integers: the class of every input value, each row's condition
// (kappa) and eps regime, and per kernel and output the verdict, the ULP
// error's bucket and error / bound's bucket. fuzz_ln sets one libFuzzer extra
// counter per feature, so a new error regime counts as new coverage.
#ifndef LNV_FUZZ_FEEDBACK_H_
#define LNV_FUZZ_FEEDBACK_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "harness/formats.h"  // FloatFormat, ExactValue, RoundToFormat (the oracle's types)
#include "harness/judge.h"

namespace lnv::fuzz {

// Number of distinct feature ids (the extra-counter array's size, which
// libFuzzer clears and scans after every input), and the kernel slots whose
// judgement features have counters of their own (feedback.cc).
inline constexpr std::size_t kFeatureSpace = std::size_t{1} << 15;
inline constexpr std::size_t kFeatureSlots = 116;

enum class ValueClass : std::uint8_t {
  kZero,
  kSubnormal,
  kSmall,      // normal, |v| < 2^-32
  kUnit,       // 2^-32 <= |v| < 2^32
  kLarge,      // |v| >= 2^32, below the format's top binade
  kTopBinade,  // the format's largest binade: sums and squares overflow
  kInf,
  kNaN,
};
inline constexpr int kValueClassCount = 8;
ValueClass ClassOf(double v, FloatFormat f);
const char* ValueClassName(ValueClass c);

// Coarse on purpose: every bucket is a feature per kernel and output, and
// each new feature keeps an input and costs libFuzzer a walk over its corpus
// (fuzz/README.md, Speed). 0: exact; 1: <= 0.5 ulp (correctly rounded);
// 2: <= 1 (faithful); 3: <= 2; 4: <= 4; then four binades a bucket: 5 up to
// 2^6, 6 up to 2^10, ..., 12 up to 2^34; 13: beyond; 14: infinite (a
// non-finite mismatch).
int UlpBucket(double ulps);
inline constexpr int kUlpBuckets = 15;

// error / bound, finest where a kernel nears its claim: one bucket a binade
// in [2^-8, 1) (8 to 15), four binades a bucket in [2^-32, 2^-8) (2 to 7),
// 1 below 2^-32; a broken bound, [1, 2) and beyond, is 16 and 17. 0: no
// error or no claim.
int BoundUseBucket(double bound_use);
inline constexpr int kBoundUseBuckets = 18;

// floor(log2(kappa^2)) = ilogb(1 + mu^2/sigma^2) clamped to [0, 60]; 61: sigma^2 = 0.
int KappaBucket(const RowStats& s);

// Features: ids in [0, kFeatureSpace), deduplicated on insert.
class FeatureSet {
 public:
  void Add(std::uint32_t id);
  const std::vector<std::uint32_t>& ids() const { return ids_; }

 private:
  std::vector<std::uint32_t> ids_;
};

// Per value: (array, dtype, class); per row: kappa and ilogb(sigma^2 / eps).
void AddInputFeatures(const Case& c, const std::vector<RowStats>& stats, FeatureSet* out);

// Per judged output of kernel `slot` (its index in the selection): verdict,
// ULP bucket, bound-use bucket; and whether the oracle needed its exact path.
void AddJudgementFeatures(std::size_t slot, const Judgement& j, FeatureSet* out);
void AddOracleFeatures(std::int64_t slow_path, std::int64_t undecided, FeatureSet* out);

}  // namespace lnv::fuzz

#endif  // LNV_FUZZ_FEEDBACK_H_
