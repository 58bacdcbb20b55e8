#include "impls/broken/odd_last_row.h"

#include "impls/broken/broken_common.h"

namespace lnv::broken {
namespace {

struct Policy : Correct {
  static std::int64_t StatisticsRow(std::int64_t r, std::int64_t rows) {
    return rows % 2 == 1 && r > 0 && r == rows - 1 ? r - 1 : r;
  }
};

}  // namespace

int OddLastRowForward(const ForwardArgs* args) { return Forward<DType::kF32, Policy>(args); }
int OddLastRowBackward(const BackwardArgs* args) { return Backward<DType::kF32, Policy>(args); }

}  // namespace lnv::broken
