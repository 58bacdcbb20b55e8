// Test helper of oracle_test: an OracleProblem over the caller's vectors.
#ifndef LNV_ORACLE_TEST_PROBLEMS_H_
#define LNV_ORACLE_TEST_PROBLEMS_H_

#include <cstdint>
#include <vector>

#include "oracle/oracle.h"

namespace lnv {

// `rows` rows of x (x.size() / rows values each), eps, every output in f;
// no gamma, beta or dy. The problem refers to x, which the caller keeps.
inline OracleProblem RowsOf(OracleNorm norm, const std::vector<double>& x, std::int64_t rows,
                            double eps, FloatFormat f) {
  OracleProblem p;
  p.norm = norm;
  p.rows = rows;
  p.d = static_cast<std::int64_t>(x.size()) / rows;
  p.x = x;
  p.eps = eps;
  p.out_format = f;
  p.param_format = f;
  return p;
}

}  // namespace lnv

#endif  // LNV_ORACLE_TEST_PROBLEMS_H_
