// The LayerNorm implementations bench_kernels times, behind one interface:
// each runner is built once per problem (primitives, tensors and outputs
// made up front, its forward run once so the backward has its statistics),
// then Forward() and Backward() do only the timed work.
#ifndef LNV_BENCH_KERNEL_RUNNERS_H_
#define LNV_BENCH_KERNEL_RUNNERS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "impls/aligned_vector.h"
#include "impls/api.h"

namespace lnv::bench {

// Every buffer a runner reads or writes starts on a 64-byte boundary, as
// framework tensors do (PyTorch's CPU allocator aligns to 64 bytes). A plain
// std::vector of this size sits 16 bytes past a page boundary (glibc's mmap
// chunk header), so every 64-byte vector access of an AVX-512 kernel would
// straddle two cache lines.
using lnv::AlignedVector;

// rows x d LayerNorm with gamma and beta, fp32 or bf16 storage.
struct Problem {
  std::int64_t rows = 0;
  std::int64_t d = 0;
  DType dtype = DType::kF32;
  int threads = 1;
  float eps = 1e-5f;
};

// Inputs every runner reads: x and dy in the storage dtype, gamma and beta
// in the storage dtype and in fp32 (oneDNN takes fp32 scale and shift).
struct Inputs {
  Problem p;
  AlignedVector<unsigned char> x, dy, gamma, beta;
  AlignedVector<float> gamma_f32, beta_f32;
};

class Runner {
 public:
  virtual ~Runner() = default;
  virtual void Forward() = 0;
  virtual void Backward() = 0;
};

// nullptr when the library was not found at configure time; oneDNN's also
// when the library has no layer normalization for the problem on this CPU
// (oneDNN 2.6's bf16 one needs AVX-512).
std::unique_ptr<Runner> MakeOneDnnRunner(const Inputs& in);
std::unique_ptr<Runner> MakeTorchRunner(const Inputs& in);

// One line: the library's version, or why it was skipped.
std::string OneDnnStatus();
std::string TorchStatus();

// One line: why MakeOneDnnRunner(in) gave nullptr.
std::string OneDnnSkipReason(const Inputs& in);

}  // namespace lnv::bench

#endif  // LNV_BENCH_KERNEL_RUNNERS_H_
