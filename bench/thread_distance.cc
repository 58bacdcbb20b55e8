#include "bench/thread_distance.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace lnv::bench {
namespace {

using Clock = std::chrono::steady_clock;

// A round's limit: 20,000 trips take a few ms where the threads run on
// separate CPUs.
constexpr auto kRoundDeadline = std::chrono::milliseconds(200);
constexpr std::int64_t kAborted = -1;

#ifdef _OPENMP
// Thread 0's side: writes 2i + 1, waits for 2i + 2. Returns the mean round
// trip in ns, or a negative value after giving up (it then leaves kAborted,
// which thread 1 sees whether it is waiting or about to answer).
double Ping(std::atomic<std::int64_t>& flag, int trips) {
  const auto start = Clock::now();
  for (std::int64_t i = 0; i < trips; ++i) {
    flag.store(2 * i + 1, std::memory_order_release);
    for (std::int64_t spins = 1; flag.load(std::memory_order_acquire) != 2 * i + 2; ++spins) {
      if (spins % 4096 == 0 && Clock::now() - start > kRoundDeadline) {
        flag.store(kAborted, std::memory_order_release);
        return -1;
      }
    }
  }
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / trips;
}

// Thread 1's side: turns each 2i + 1 into 2i + 2; stops at kAborted.
void Pong(std::atomic<std::int64_t>& flag, int trips) {
  for (std::int64_t i = 0; i < trips; ++i) {
    std::int64_t expected = 2 * i + 1;
    while (!flag.compare_exchange_weak(expected, 2 * i + 2, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
      if (expected == kAborted) return;
      expected = 2 * i + 1;
    }
  }
}

double OneRound(int trips) {
  alignas(64) std::atomic<std::int64_t> flag{0};
  double ns = -1;
#pragma omp parallel num_threads(2)
  {
    if (omp_get_num_threads() == 2) {
      if (omp_get_thread_num() == 0) {
        ns = Ping(flag, trips);
      } else {
        Pong(flag, trips);
      }
    }
  }
  return ns;
}
#endif

}  // namespace

double TwoThreadRoundTripNs(int trips, int rounds) {
#ifdef _OPENMP
  if (trips < 1 || rounds < 1) return -1;
  std::vector<double> ns;
  for (int r = 0; r < rounds; ++r) {
    const double round_ns = OneRound(trips);
    if (round_ns < 0) return -1;
    ns.push_back(round_ns);
  }
  std::nth_element(ns.begin(), ns.begin() + rounds / 2, ns.end());
  return ns[rounds / 2];
#else
  (void)trips;
  (void)rounds;
  return -1;
#endif
}

}  // namespace lnv::bench
