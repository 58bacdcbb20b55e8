// ln_check --list: the kernels a selection names and what each is held to,
// without running anything. One line per kernel (text), or a JSON array of
// objects with the same fields.
#ifndef LNV_HARNESS_KERNEL_LIST_H_
#define LNV_HARNESS_KERNEL_LIST_H_

#include <ostream>
#include <string>
#include <vector>

#include "impls/registry.h"

namespace lnv {

// Prints the kernels of `impls` whose name matches `glob` to `out`. Returns
// how many; 0 means nothing printed (the caller reports the empty selection).
int ListKernels(const std::vector<ImplInfo>& impls, const std::string& glob, bool json,
                std::ostream& out);

}  // namespace lnv

#endif  // LNV_HARNESS_KERNEL_LIST_H_
