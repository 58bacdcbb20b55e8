// std::vector whose storage starts on a 64-byte (cache line) boundary: the
// benchmark's buffers, and test buffers that must be able to take the
// kernels' aligned paths (streaming stores of whole lines).
#ifndef LNV_IMPLS_ALIGNED_VECTOR_H_
#define LNV_IMPLS_ALIGNED_VECTOR_H_

#include <cstddef>
#include <new>
#include <vector>

namespace lnv {

template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}  // NOLINT: rebinding
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlign); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};

template <typename T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace lnv

#endif  // LNV_IMPLS_ALIGNED_VECTOR_H_
