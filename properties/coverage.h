// What one property run covered, beyond RapidCheck's own RC_CLASSIFY table:
// the marginal counts per axis (dtype, kappa, d, eps), how many cases each
// kernel was judged on, every kernel skipped with its reason, and the
// findings recorded for observed kernels. Reset when a property starts,
// printed when it ends (properties_main.cc). Counts include the cases that
// RapidCheck re-runs while shrinking a failure.
#ifndef LNV_PROPERTIES_COVERAGE_H_
#define LNV_PROPERTIES_COVERAGE_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

namespace lnv::props {

class Coverage {
 public:
  static Coverage& Current();

  void Reset(const std::string& property);
  const std::string& property() const { return property_; }

  void Count(const std::string& axis, const std::string& bucket);
  void Judged(const std::string& kernel);
  void Skipped(const std::string& kernel, const std::string& reason);
  // An observed kernel broke a property, or a kernel met a known open finding
  // (property.h): a recorded finding, not a failure.
  void Finding(const std::string& kernel, const std::string& what);

  const std::map<std::string, std::int64_t>& judged() const { return judged_; }
  // Judged at least once.
  bool Covered(const std::string& kernel) const;
  const std::map<std::string, std::string>& findings() const { return findings_; }
  std::int64_t cases() const { return cases_; }
  void CountCase() { ++cases_; }

  // Several lines, each starting with "  ".
  std::string Summary() const;

 private:
  std::string property_;
  std::int64_t cases_ = 0;
  std::map<std::string, std::map<std::string, std::int64_t>> axes_;
  std::map<std::string, std::int64_t> judged_;
  std::set<std::pair<std::string, std::string>> skipped_;
  std::map<std::string, std::string> findings_;  // kernel -> first finding
};

}  // namespace lnv::props

#endif  // LNV_PROPERTIES_COVERAGE_H_
