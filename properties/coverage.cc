#include "properties/coverage.h"

#include <sstream>

namespace lnv::props {

Coverage& Coverage::Current() {
  static Coverage coverage;
  return coverage;
}

void Coverage::Reset(const std::string& property) {
  *this = Coverage{};
  property_ = property;
}

void Coverage::Count(const std::string& axis, const std::string& bucket) { ++axes_[axis][bucket]; }

void Coverage::Judged(const std::string& kernel) { ++judged_[kernel]; }

void Coverage::Skipped(const std::string& kernel, const std::string& reason) {
  skipped_.insert({kernel, reason});
}

bool Coverage::Covered(const std::string& kernel) const {
  const auto it = judged_.find(kernel);
  return it != judged_.end() && it->second > 0;
}

void Coverage::Finding(const std::string& kernel, const std::string& what) {
  findings_.emplace(kernel, what);  // keeps the first
}

std::string Coverage::Summary() const {
  std::ostringstream os;
  os << "  cases " << cases_ << " (shrink runs included)\n";
  for (const auto& [axis, buckets] : axes_) {
    os << "  " << axis << ":";
    for (const auto& [bucket, n] : buckets) os << "  " << bucket << " " << n;
    os << "\n";
  }
  os << "  kernels judged (runs):";
  for (const auto& [kernel, n] : judged_) os << "  " << kernel << " " << n;
  os << "\n";
  for (const auto& [kernel, reason] : skipped_)
    os << "  skipped " << kernel << ": " << reason << "\n";
  for (const auto& [kernel, what] : findings_) {
    os << "  recorded finding (observed kernel or known open finding, not a failure) " << kernel
       << ": " << what << "\n";
  }
  return os.str();
}

}  // namespace lnv::props
