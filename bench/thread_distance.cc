// TwoThreadRoundTripsNs: thread 0 writes an odd value to one cache line and
// waits for the even one after it, thread 1 waits for the odd value and
// writes the even one (bench/thread_distance.h).
#include "bench/thread_distance.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace lnv::bench {
namespace {

#ifdef _OPENMP
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kAborted = -1;

// A round's limit: 200 ms, plus 10 us a trip (20,000 trips of 500 ns take
// 10 ms where the threads run on separate CPUs; on one CPU each trip waits
// for the scheduler).
Clock::duration RoundDeadline(int trips) {
  return std::chrono::milliseconds(200) + std::chrono::microseconds(10) * trips;
}

// Thread 0's side: writes 2i + 1, waits for 2i + 2. Returns the mean round
// trip in ns, or a negative value after giving up (it then leaves kAborted,
// which thread 1 sees whether it is waiting or about to answer).
double Ping(std::atomic<std::int64_t>& flag, int trips) {
  const auto start = Clock::now();
  const auto deadline = RoundDeadline(trips);
  for (std::int64_t i = 0; i < trips; ++i) {
    flag.store(2 * i + 1, std::memory_order_release);
    for (std::int64_t spins = 1; flag.load(std::memory_order_acquire) != 2 * i + 2; ++spins) {
      if (spins % 4096 == 0 && Clock::now() - start > deadline) {
        flag.store(kAborted, std::memory_order_release);
        return -1;
      }
    }
  }
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / trips;
}

// Thread 1's side: turns each 2i + 1 into 2i + 2; stops at kAborted. It
// waits with plain loads, which share the line, and writes only once the
// value is there: a compare-exchange in the wait would take the line from
// thread 0 on every try and lengthen the trip it measures. The exchange,
// not a store, so that an abort written meanwhile is never overwritten.
void Pong(std::atomic<std::int64_t>& flag, int trips) {
  for (std::int64_t i = 0; i < trips; ++i) {
    std::int64_t seen = flag.load(std::memory_order_acquire);
    while (seen != 2 * i + 1) {
      if (seen == kAborted) return;
      seen = flag.load(std::memory_order_acquire);
    }
    if (!flag.compare_exchange_strong(seen, 2 * i + 2, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
      return;  // only Ping changes 2i + 1, and only to kAborted
    }
  }
}

double OneRound(int trips) {
  alignas(128) std::atomic<std::int64_t> flag{0};  // a line pair of its own
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

std::vector<double> TwoThreadRoundTripsNs(int trips, int rounds) {
  std::vector<double> ns;
#ifdef _OPENMP
  // One CPU: every round would wait for its deadline.
  if (trips < 1 || omp_get_num_procs() < 2) return ns;
  for (int r = 0; r < rounds; ++r) {
    const double round_ns = OneRound(trips);
    if (round_ns >= 0) ns.push_back(round_ns);  // a round past its deadline is left out
  }
#else
  (void)trips;
  (void)rounds;
#endif
  return ns;
}

}  // namespace lnv::bench
