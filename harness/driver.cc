#include "harness/driver.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "impls/plugin/loader.h"

namespace lnv {

std::string BudgetName(Budget budget) { return budget == Budget::kQuick ? "quick" : "full"; }

std::vector<std::vector<std::size_t>> GroupBySignature(const std::vector<const ImplInfo*>& impls) {
  std::map<std::tuple<int, int, int>, std::vector<std::size_t>> by_key;
  for (std::size_t k = 0; k < impls.size(); ++k) {
    const ImplInfo& i = *impls[k];
    by_key[{static_cast<int>(i.norm), static_cast<int>(i.x_dtype), static_cast<int>(i.param_dtype)}]
        .push_back(k);
  }
  std::vector<std::vector<std::size_t>> groups;
  for (auto& [key, members] : by_key) groups.push_back(std::move(members));
  return groups;
}

FamilyParams FamilyParamsFor(const ImplInfo& impl) {
  FamilyParams p;
  p.norm = impl.norm;
  p.dtype = impl.x_dtype;
  p.param_dtype = impl.param_dtype;
  return p;
}

bool MeetsExpectation(ImplStatus status, bool any_failure) {
  switch (status) {
    case ImplStatus::kClaimsBound:
      return !any_failure;
    case ImplStatus::kNegativeControl:
      return any_failure;
    case ImplStatus::kObserved:
      return true;  // compared with its baseline (harness/baseline.h)
  }
  return false;
}

std::unique_ptr<Isolator> MakePluginIsolator(const std::vector<const ImplInfo*>& impls,
                                             double timeout_seconds, std::string* error) {
  if (std::none_of(impls.begin(), impls.end(),
                   [](const ImplInfo* i) { return IsPluginImpl(*i); })) {
    return nullptr;
  }
  IsolateOptions io;
  io.timeout_seconds = timeout_seconds;
  auto isolator = std::make_unique<Isolator>(io);
  if (!isolator->error().empty()) {
    *error = isolator->error();
    return nullptr;
  }
  return isolator;
}

}  // namespace lnv
