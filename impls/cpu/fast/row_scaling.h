// How the fast CPU kernels keep the full finite input range: rows are scaled
// by a power of two where fp32 sums of squares would overflow.
//
// Forward. The statistics are first computed on the row as it is. If the
// result is not finite (sum(x), sum((x - mean)^2) or sum(x^2), or var + eps,
// overflowed) and the row itself is finite, the row is computed again on
// x * s, s = 2^min(0, kScaledExponent - ilogb(max|x|)), so max|x s| lies in
// [2^40, 2^41): every intermediate is then at most 4 d 2^82 (valid_range.h's
// derivation), finite for d < 2^43. Scaling by a power of two is exact, so
// the scaled pass has the same roundings as the unscaled one and is held to
// the same model. The one exception is gradual underflow: an element with
// |x s| < 2^-126 loses bits, at most 2^-150 / s absolutely, i.e. at most
// 2^-(150 + 40) max|x|; next to the model's mean error gamma_k mean|x| >=
// gamma_k max|x| / d this is negligible for any d < 2^100. Then
//   mean = mean_s / s                              (exact)
//   rstd = float(1 / sqrt(double(var_s) + double(eps) s^2)) * s
// The variance step runs in double from the fp32 var_s (eps s^2 may be far
// below fp32's range), which is more accurate than the three fp32 roundings
// the model allows for it; the last product is exact unless rstd < 2^-126
// (sigma > 2^126), where it is rounded to a subnormal float: its absolute
// error is then at most 2^-150 (harness/bounds.cc counts it). y is computed in
// scaled units: y = gamma ((x s - mean_s) rstd_s) + beta, rstd_s = rstd / s.
// A row holding NaN or +-inf is not rescaled: its rstd is NaN, so every
// output of the row is NaN (the contract of oracle.h).
//
// Backward. The backward only has the stored mean and rstd. Deviations obey
// |x_i - mean| <= sqrt(d) sigma ~ sqrt(d) / rstd, so when rstd < 2^-60 they
// may overflow fp32; then x and mean are scaled by s = 2^(ilogb(rstd) + 60)
// (rstd / s lies in [2^-60, 2^-59)) and xhat = (x s - mean s)(rstd / s). All
// three scalings are exact (rstd may be subnormal; rstd / s is a normal
// float), and x s underflows only where sigma > 2^60, negligibly as above.
// dx = rstd ((g - a) - xhat b) uses the stored rstd itself.
#ifndef LNV_IMPLS_CPU_FAST_ROW_SCALING_H_
#define LNV_IMPLS_CPU_FAST_ROW_SCALING_H_

namespace lnv::fast {

// Forward: a rescaled row's largest magnitude is in [2^40, 2^41).
inline constexpr int kScaledExponent = 40;

// Backward: rows whose stored rstd is below 2^-kBackwardRstdExponent are
// computed in scaled units.
inline constexpr int kBackwardRstdExponent = 60;

}  // namespace lnv::fast

#endif  // LNV_IMPLS_CPU_FAST_ROW_SCALING_H_
