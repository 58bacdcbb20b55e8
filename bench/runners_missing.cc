// Stand-ins for the runners of libraries not found at configure time: the
// bench still builds and says what it skipped.
#include "bench/kernel_runners.h"

namespace lnv::bench {

#ifndef LNV_BENCH_HAVE_ONEDNN
std::unique_ptr<Runner> MakeOneDnnRunner(const Inputs&) { return nullptr; }
std::string OneDnnStatus() { return "oneDNN skipped: libdnnl-dev was not found at configure time"; }
std::string OneDnnSkipReason(const Inputs&) { return OneDnnStatus(); }
#endif

#ifndef LNV_BENCH_HAVE_TORCH
std::unique_ptr<Runner> MakeTorchRunner(const Inputs&) { return nullptr; }
std::string TorchStatus() {
  return "PyTorch skipped: libtorch-dev was not found at configure time";
}
#endif

}  // namespace lnv::bench
