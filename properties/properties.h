// The properties of docs/DESIGN.md §1, one function each (one file each, named as
// the sentence it states). Each draws its inputs with RapidCheck, checks the
// oracle exactly and every target kernel within its bound (property.h).
#ifndef LNV_PROPERTIES_PROPERTIES_H_
#define LNV_PROPERTIES_PROPERTIES_H_

#include "properties/property.h"

namespace lnv::props {

// LN(x + c 1) = LN(x) (LayerNorm).
void ShiftingARowLeavesItsOutputUnchanged(const Targets& t);
// sum xhat = 0 and sum xhat^2 = d sigma^2/(sigma^2 + eps).
void NormalizedRowsHaveZeroMeanAndEpsAdjustedVariance(const Targets& t);
// Constant and near-constant rows: finite, rstd <= 1/sqrt(eps), y = beta exactly.
void NearConstantRowsStayFiniteUnderTheEpsFloor(const Targets& t);
// sum dx = 0 and sum xhat dx = d r b eps/(sigma^2 + eps).
void InputGradientsSumToZeroAndMeetXhatOnlyThroughEps(const Targets& t);
// LN(2^k x) = LN(x) when eps = 0; the exact eps-dependent change otherwise.
void ScalingARowByAPowerOfTwoLeavesItsOutputUnchanged(const Targets& t);
// A row's outputs do not depend on the batch; runs are bit-identical.
void EachRowDependsOnThatRowAlone(const Targets& t);
// Permuting the features of x, gamma, beta, dy permutes every output.
void PermutingFeaturesPermutesTheOutputs(const Targets& t);
// y = gamma xhat + beta; gamma = 1, beta = 0 (given or absent) gives xhat.
void TheOutputIsGammaTimesXhatPlusBeta(const Targets& t);
// NaN/inf in a row: NaN outputs in that row only; finite rows stay finite.
void SpecialValuesStayInTheirRowAndFiniteRowsStayFinite(const Targets& t);

}  // namespace lnv::props

#endif  // LNV_PROPERTIES_PROPERTIES_H_
