// How far apart the threads of this process's two-thread OpenMP regions
// are: the time one cache line takes to go from one to the other and back
// (a flag passed back and forth between threads 0 and 1 of such a region;
// without OMP_PROC_BIND the OS may move them between calls).
//
// Two threads on one core, or on two cores under one last-level cache,
// pass a line back quickly. A VM guest's two vCPUs may sit on parts of the
// host with separate caches; there every line one thread writes and the
// other reads costs a long trip. The fast backward's partial sums are such
// lines (impls/cpu/fast/driver.h), so bench_kernels prints this beside its
// two-thread results (bench/README.md, "Why two threads lose to one in the
// small fp32 backward").
#ifndef LNV_BENCH_THREAD_DISTANCE_H_
#define LNV_BENCH_THREAD_DISTANCE_H_

#include <vector>

namespace lnv::bench {

// The mean round trip in nanoseconds of each of `rounds` rounds, each
// round `trips` round trips between threads 0 and 1 of a fresh two-thread
// OpenMP region. A round that runs past its deadline (200 ms + 10 us a
// trip: the two threads sharing one CPU, where each trip waits for the
// scheduler) is left out. Empty when nothing was measured: no OpenMP, one
// CPU available, a region of one thread, or every round past its deadline.
std::vector<double> TwoThreadRoundTripsNs(int trips = 20000, int rounds = 5);

}  // namespace lnv::bench

#endif  // LNV_BENCH_THREAD_DISTANCE_H_
