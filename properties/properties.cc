#include "properties/properties.h"

namespace lnv::props {
namespace {

// x + c 1 moves the mean only: RMSNorm has no such invariance.
bool IsLayerNorm(const ImplInfo& k) { return k.norm == Norm::kLayerNorm; }
bool HasBackward(const ImplInfo& k) { return k.backward != nullptr; }

}  // namespace

// THE list of properties: adding one is a line here and a file of its own.
const std::vector<PropertyDef>& AllProperties() {
  static const std::vector<PropertyDef> properties = {
      {"ShiftingARowLeavesItsOutputUnchanged", &ShiftingARowLeavesItsOutputUnchanged, &IsLayerNorm},
      {"NormalizedRowsHaveZeroMeanAndEpsAdjustedVariance",
       &NormalizedRowsHaveZeroMeanAndEpsAdjustedVariance},
      {"NearConstantRowsStayFiniteUnderTheEpsFloor", &NearConstantRowsStayFiniteUnderTheEpsFloor},
      {"InputGradientsSumToZeroAndMeetXhatOnlyThroughEps",
       &InputGradientsSumToZeroAndMeetXhatOnlyThroughEps, &HasBackward},
      {"ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged",
       &ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged},
      {"EachRowDependsOnThatRowAlone", &EachRowDependsOnThatRowAlone},
      {"PermutingFeaturesPermutesTheOutputs", &PermutingFeaturesPermutesTheOutputs},
      {"TheOutputIsGammaTimesXhatPlusBeta", &TheOutputIsGammaTimesXhatPlusBeta},
      {"SpecialValuesStayInTheirRowAndFiniteRowsStayFinite",
       &SpecialValuesStayInTheirRowAndFiniteRowsStayFinite},
  };
  return properties;
}

const PropertyDef* FindProperty(std::string_view name) {
  for (const PropertyDef& p : AllProperties()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace lnv::props
