// Operand buffers aligned to cache lines, so that every backend sees the same
// alignment whatever the heap did before (malloc alone gives 16 bytes).
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace nkbench {

template <class T, std::size_t kAlignment = 64>
struct AlignedAllocator {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = AlignedAllocator<U, kAlignment>;
  };
  AlignedAllocator() = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U, kAlignment>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kAlignment})); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{kAlignment}); }
  template <class U>
  bool operator==(const AlignedAllocator<U, kAlignment>&) const { return true; }
};

template <class T>
using AlignedBuffer = std::vector<T, AlignedAllocator<T>>;
using FloatBuffer = AlignedBuffer<float>;

}  // namespace nkbench
