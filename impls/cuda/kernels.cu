// The CUDA kernels of layer_norm.h and rms_norm.h (their header comments
// state algorithm, accumulation, bound and range). Everything that decides a
// bit of the result is in the shared headers (row_ops.h, reduction.h,
// storage.h); this file adds only what the GPU needs around it: 16-byte
// granule accesses, the shuffle trees in reduction.h's order, grid-stride
// loops over rows with 64-bit offsets, and the launchers. The one CUDA
// translation unit of the project (nvcc is slow): every dtype x norm x kernel
// is instantiated here.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "impls/cuda/args.h"
#include "impls/cuda/device_api.h"
#include "impls/cuda/reduction.h"
#include "impls/cuda/row_ops.h"
#include "impls/cuda/storage_for.h"

namespace lnv::cuda {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpRowThreads = kWarpRowWarpsPerBlock * kWarpSize;

// ---- Granule access: one 16-byte transaction when full and aligned ----

template <typename S>
__device__ void Unpack(const uint4& raw, float* v) {
  if constexpr (std::is_same_v<S, F32Storage>) {
    v[0] = __uint_as_float(raw.x);
    v[1] = __uint_as_float(raw.y);
    v[2] = __uint_as_float(raw.z);
    v[3] = __uint_as_float(raw.w);
  } else {
    const unsigned w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      v[2 * i] = S::ToFloat(static_cast<std::uint16_t>(w[i] & 0xffffu));
      v[2 * i + 1] = S::ToFloat(static_cast<std::uint16_t>(w[i] >> 16));
    }
  }
}

template <typename S>
__device__ uint4 Pack(const float* v) {
  uint4 raw;
  if constexpr (std::is_same_v<S, F32Storage>) {
    raw.x = __float_as_uint(S::FromFloat(v[0]));
    raw.y = __float_as_uint(S::FromFloat(v[1]));
    raw.z = __float_as_uint(S::FromFloat(v[2]));
    raw.w = __float_as_uint(S::FromFloat(v[3]));
  } else {
    unsigned w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      w[i] = static_cast<unsigned>(S::FromFloat(v[2 * i])) |
             (static_cast<unsigned>(S::FromFloat(v[2 * i + 1])) << 16);
    }
    raw = make_uint4(w[0], w[1], w[2], w[3]);
  }
  return raw;
}

template <typename P>
__device__ bool Aligned16(const P* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0;
}

struct DeviceMemory {
  template <typename S>
  __device__ static int Load(const typename S::Bits* base, std::int64_t g, std::int64_t d,
                             float* v) {
    const std::int64_t begin = g * S::kGranule;
    const typename S::Bits* p = base + begin;
    if (d - begin >= S::kGranule && Aligned16(p)) {
      Unpack<S>(*reinterpret_cast<const uint4*>(p), v);
      return S::kGranule;
    }
    const int n = static_cast<int>(MinI64(S::kGranule, d - begin));
#pragma unroll
    for (int k = 0; k < S::kGranule; ++k) {
      if (k < n) v[k] = S::ToFloat(p[k]);
    }
    return n;
  }
  template <typename S>
  __device__ static void Store(typename S::Bits* base, std::int64_t g, std::int64_t d,
                               const float* v) {
    const std::int64_t begin = g * S::kGranule;
    typename S::Bits* p = base + begin;
    if (d - begin >= S::kGranule && Aligned16(p)) {
      *reinterpret_cast<uint4*>(p) = Pack<S>(v);
      return;
    }
    const int n = static_cast<int>(MinI64(S::kGranule, d - begin));
#pragma unroll
    for (int k = 0; k < S::kGranule; ++k) {
      if (k < n) p[k] = S::FromFloat(v[k]);
    }
  }
};

// ---- Shuffles of the reduced states ----

__device__ WelfordState ShflDown(const WelfordState& s, int offset) {
  WelfordState o;
  o.count = __shfl_down_sync(kFullMask, s.count, offset);
  o.mean = __shfl_down_sync(kFullMask, s.mean, offset);
  o.m2 = __shfl_down_sync(kFullMask, s.m2, offset);
  return o;
}
__device__ WelfordState ShflFrom0(const WelfordState& s) {
  WelfordState o;
  o.count = __shfl_sync(kFullMask, s.count, 0);
  o.mean = __shfl_sync(kFullMask, s.mean, 0);
  o.m2 = __shfl_sync(kFullMask, s.m2, 0);
  return o;
}
__device__ SumState ShflDown(const SumState& s, int offset) {
  return {__shfl_down_sync(kFullMask, s.s, offset)};
}
__device__ SumState ShflFrom0(const SumState& s) { return {__shfl_sync(kFullMask, s.s, 0)}; }
__device__ SumPairState ShflDown(const SumPairState& s, int offset) {
  return {__shfl_down_sync(kFullMask, s.a, offset), __shfl_down_sync(kFullMask, s.b, offset)};
}
__device__ SumPairState ShflFrom0(const SumPairState& s) {
  return {__shfl_sync(kFullMask, s.a, 0), __shfl_sync(kFullMask, s.b, 0)};
}

// reduction.h's warp tree: at offset o, lane i < o takes Merge(lane i, lane i + o).
// The result is in lane 0. Every lane must call it (full-mask shuffles).
template <typename State>
__device__ State WarpTree(State s, int lane, int first_offset = kWarpSize / 2) {
  for (int offset = first_offset; offset >= 1; offset /= 2) {
    const State other = ShflDown(s, offset);
    if (lane < offset) s = Merge(s, other);
  }
  return s;
}

// The row's result in every lane of a warp-per-row kernel.
template <typename State>
__device__ State WarpRowReduce(const State& s, int lane) {
  return ShflFrom0(WarpTree(s, lane));
}

// The row's result in every thread of a block-per-row kernel: each warp's
// tree, then warp 0 merges the warps' results (reduction.h's EmulateRowTree).
// `scratch` holds kBlockRowWarps + 1 states.
template <typename State>
__device__ State BlockRowReduce(const State& s, State* scratch) {
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  const State mine = WarpTree(s, lane);
  if (lane == 0) scratch[warp] = mine;
  __syncthreads();
  if (warp == 0) {
    State w = lane < kBlockRowWarps ? scratch[lane] : State{};
    w = WarpTree(w, lane, kBlockRowWarps / 2);
    if (lane == 0) scratch[kBlockRowWarps] = w;
  }
  __syncthreads();
  const State total = scratch[kBlockRowWarps];
  __syncthreads();  // the next row reuses scratch
  return total;
}

// ---- Kernels ----

template <typename S>
struct ForwardParams {
  using Bits = typename S::Bits;
  const Bits* x;
  const Bits* gamma;
  const Bits* beta;
  Bits* y;
  float* mean;
  float* rstd;
  std::int64_t rows;
  std::int64_t d;
  float eps;
};

template <typename S>
struct BackwardParams {
  using Bits = typename S::Bits;
  const Bits* x;
  const Bits* gamma;
  const Bits* dy;
  const float* mean;
  const float* rstd;
  Bits* dx;
  std::int64_t rows;
  std::int64_t d;
};

template <typename S>
__device__ RowRefs<S> ForwardRow(const ForwardParams<S>& p, std::int64_t r) {
  RowRefs<S> row;
  row.x = p.x + r * p.d;
  row.gamma = p.gamma;
  row.beta = p.beta;
  row.out = p.y + r * p.d;
  row.d = p.d;
  return row;
}

template <typename S>
__device__ RowRefs<S> BackwardRow(const BackwardParams<S>& p, std::int64_t r) {
  RowRefs<S> row;
  row.x = p.x + r * p.d;
  row.gamma = p.gamma;
  row.dy = p.dy + r * p.d;
  row.out = p.dx + r * p.d;
  row.d = p.d;
  return row;
}

template <typename S, typename N>
__device__ void WriteStats(const ForwardParams<S>& p, std::int64_t r, const RowStatsF& st) {
  if (N::kLayer && p.mean != nullptr) p.mean[r] = CanonicalF32(st.mean);
  if (p.rstd != nullptr) p.rstd[r] = CanonicalF32(st.rstd);
}

template <typename State>
struct BlockScratch {
  alignas(State) unsigned char bytes[sizeof(State) * (kBlockRowWarps + 1)];
  __device__ State* get() { return reinterpret_cast<State*>(bytes); }
};

template <typename S, typename N>
__global__ void __launch_bounds__(kWarpRowThreads) ForwardWarpRows(ForwardParams<S> p) {
  const int lane = threadIdx.x % kWarpSize;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kWarpRowWarpsPerBlock;
  for (std::int64_t r =
           static_cast<std::int64_t>(blockIdx.x) * kWarpRowWarpsPerBlock + threadIdx.x / kWarpSize;
       r < p.rows; r += stride) {
    const RowRefs<S> row = ForwardRow(p, r);
    const auto total = WarpRowReduce(LaneStats<S, N, DeviceMemory>(row, lane, kWarpSize), lane);
    RowStatsF st = N::Finish(total, p.d, p.eps);
    if constexpr (N::kLayer) {
      if (N::NeedsCenteredPass(total, p.d)) {  // total is the same in every lane
        const SumPairState c = WarpRowReduce(
            LaneCenteredSums<S, DeviceMemory>(row, lane, kWarpSize, total.mean), lane);
        st = N::FinishCentered(total, c, p.d, p.eps);
      }
    }
    LaneForwardOutput<S, N, DeviceMemory>(row, lane, kWarpSize, st);
    if (lane == 0) WriteStats<S, N>(p, r, st);
  }
}

template <typename S, typename N>
__global__ void __launch_bounds__(kBlockRowThreads) ForwardBlockRows(ForwardParams<S> p) {
  __shared__ BlockScratch<typename N::State> scratch;
  __shared__ BlockScratch<SumPairState> pair_scratch;  // the centered pass
  for (std::int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
    const RowRefs<S> row = ForwardRow(p, r);
    const auto total = BlockRowReduce(
        LaneStats<S, N, DeviceMemory>(row, threadIdx.x, kBlockRowThreads), scratch.get());
    RowStatsF st = N::Finish(total, p.d, p.eps);
    if constexpr (N::kLayer) {
      if (N::NeedsCenteredPass(total, p.d)) {  // total is the same in every thread
        const SumPairState c = BlockRowReduce(
            LaneCenteredSums<S, DeviceMemory>(row, threadIdx.x, kBlockRowThreads, total.mean),
            pair_scratch.get());
        st = N::FinishCentered(total, c, p.d, p.eps);
      }
    }
    LaneForwardOutput<S, N, DeviceMemory>(row, threadIdx.x, kBlockRowThreads, st);
    if (threadIdx.x == 0) WriteStats<S, N>(p, r, st);
  }
}

template <typename S, typename N>
__device__ RowStatsF SavedStats(const BackwardParams<S>& p, std::int64_t r) {
  return {N::kLayer ? p.mean[r] : 0.0f, p.rstd[r]};
}

template <typename S, typename N>
__global__ void __launch_bounds__(kWarpRowThreads) BackwardWarpRows(BackwardParams<S> p) {
  const int lane = threadIdx.x % kWarpSize;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kWarpRowWarpsPerBlock;
  for (std::int64_t r =
           static_cast<std::int64_t>(blockIdx.x) * kWarpRowWarpsPerBlock + threadIdx.x / kWarpSize;
       r < p.rows; r += stride) {
    const RowRefs<S> row = BackwardRow(p, r);
    const RowStatsF st = SavedStats<S, N>(p, r);
    const SumPairState total =
        WarpRowReduce(LaneBackwardSums<S, N, DeviceMemory>(row, lane, kWarpSize, st), lane);
    LaneDx<S, N, DeviceMemory>(row, lane, kWarpSize, st, BackwardMeans(total, p.d));
  }
}

template <typename S, typename N>
__global__ void __launch_bounds__(kBlockRowThreads) BackwardBlockRows(BackwardParams<S> p) {
  __shared__ BlockScratch<SumPairState> scratch;
  for (std::int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
    const RowRefs<S> row = BackwardRow(p, r);
    const RowStatsF st = SavedStats<S, N>(p, r);
    const SumPairState total =
        BlockRowReduce(LaneBackwardSums<S, N, DeviceMemory>(row, threadIdx.x, kBlockRowThreads, st),
                       scratch.get());
    LaneDx<S, N, DeviceMemory>(row, threadIdx.x, kBlockRowThreads, st, BackwardMeans(total, p.d));
  }
}

// Block (x: a tile of kParamColumnsPerBlock columns, y: a chunk of rows):
// each thread one column's partials over the chunk (coalesced across threads).
template <typename S, typename N>
__global__ void __launch_bounds__(kParamColumnsPerBlock)
    ParamPartials(BackwardParams<S> p, std::int64_t chunk_rows, float* dgamma_partials,
                  float* dbeta_partials) {
  const std::int64_t j =
      static_cast<std::int64_t>(blockIdx.x) * kParamColumnsPerBlock + threadIdx.x;
  if (j >= p.d) return;
  const std::int64_t c = blockIdx.y;
  const std::int64_t r0 = c * chunk_rows;
  const std::int64_t r1 = MinI64(p.rows, r0 + chunk_rows);
  const ColumnPartial part = ParamPartialColumn<S, N>(p.x, p.dy, p.mean, p.rstd, p.d, j, r0, r1);
  if (dgamma_partials != nullptr) dgamma_partials[c * p.d + j] = part.dgamma;
  if (dbeta_partials != nullptr) dbeta_partials[c * p.d + j] = part.dbeta;
}

template <typename S>
__global__ void __launch_bounds__(kParamColumnsPerBlock)
    ParamFinal(const float* dgamma_partials, const float* dbeta_partials, std::int64_t chunks,
               std::int64_t d, typename S::Bits* dgamma, typename S::Bits* dbeta) {
  const std::int64_t j =
      static_cast<std::int64_t>(blockIdx.x) * kParamColumnsPerBlock + threadIdx.x;
  if (j >= d) return;
  if (dgamma != nullptr) dgamma[j] = S::FromFloat(SumPartials(dgamma_partials, chunks, d, j));
  if (dbeta != nullptr) dbeta[j] = S::FromFloat(SumPartials(dbeta_partials, chunks, d, j));
}

template <typename S>
__global__ void StoreFloats(const float* in, typename S::Bits* out, std::int64_t n) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = S::FromFloat(in[i]);
  }
}

// ---- Launchers ----

unsigned GridFor(std::int64_t units) {
  return static_cast<unsigned>(MinI64(units, kMaxGridBlocks));
}

int LaunchStatus() { return cudaGetLastError() == cudaSuccess ? kOk : kCudaError; }

template <DType kX, Norm kNorm>
int LaunchForward(const ForwardArgs* a, cudaStream_t stream) {
  using S = StorageFor<kX>;
  using N = PolicyFor<kNorm>;
  using Bits = typename S::Bits;
  if (const int rc = CheckForward(a, kNorm); rc != kOk) return rc;
  if (a->rows == 0) return kOk;
  const ForwardParams<S> p{static_cast<const Bits*>(a->x),
                           static_cast<const Bits*>(a->gamma),
                           static_cast<const Bits*>(a->beta),
                           static_cast<Bits*>(a->y),
                           a->mean,
                           a->rstd,
                           a->rows,
                           a->d,
                           a->eps};
  if (a->d <= kWarpRowMaxD) {
    ForwardWarpRows<S, N>
        <<<GridFor(CeilDiv(a->rows, kWarpRowWarpsPerBlock)), kWarpRowThreads, 0, stream>>>(p);
  } else {
    ForwardBlockRows<S, N><<<GridFor(a->rows), kBlockRowThreads, 0, stream>>>(p);
  }
  return LaunchStatus();
}

template <DType kX, Norm kNorm>
int LaunchBackward(const BackwardArgs* a, cudaStream_t stream) {
  using S = StorageFor<kX>;
  using N = PolicyFor<kNorm>;
  using Bits = typename S::Bits;
  if (const int rc = CheckBackward(a, kNorm); rc != kOk) return rc;
  const BackwardParams<S> p{static_cast<const Bits*>(a->x),
                            static_cast<const Bits*>(a->gamma),
                            static_cast<const Bits*>(a->dy),
                            a->mean,
                            a->rstd,
                            static_cast<Bits*>(a->dx),
                            a->rows,
                            a->d};
  if (a->rows > 0) {
    if (a->d <= kWarpRowMaxD) {
      BackwardWarpRows<S, N>
          <<<GridFor(CeilDiv(a->rows, kWarpRowWarpsPerBlock)), kWarpRowThreads, 0, stream>>>(p);
    } else {
      BackwardBlockRows<S, N><<<GridFor(a->rows), kBlockRowThreads, 0, stream>>>(p);
    }
    if (const int rc = LaunchStatus(); rc != kOk) return rc;
  }
  if (a->dgamma == nullptr && a->dbeta == nullptr) return kOk;
  const std::int64_t chunks = ParamChunks(a->rows);
  const std::int64_t col_blocks = CeilDiv(a->d, kParamColumnsPerBlock);
  float* partials = nullptr;  // [2][chunks][d]: dgamma's, then dbeta's
  const std::size_t per = static_cast<std::size_t>(chunks * a->d);
  if (chunks > 0) {
    if (cudaMallocAsync(reinterpret_cast<void**>(&partials), 2 * per * sizeof(float), stream) !=
        cudaSuccess) {
      cudaGetLastError();  // clear the sticky-free error state of a failed allocation
      return kOutOfMemory;
    }
    const dim3 grid(static_cast<unsigned>(col_blocks), static_cast<unsigned>(chunks));
    ParamPartials<S, N><<<grid, kParamColumnsPerBlock, 0, stream>>>(p, ParamChunkRows(a->rows),
                                                                    partials, partials + per);
  }
  ParamFinal<S><<<static_cast<unsigned>(col_blocks), kParamColumnsPerBlock, 0, stream>>>(
      partials, partials == nullptr ? nullptr : partials + per, chunks, a->d,
      static_cast<Bits*>(a->dgamma), static_cast<Bits*>(a->dbeta));
  const int rc = LaunchStatus();
  if (partials != nullptr && cudaFreeAsync(partials, stream) != cudaSuccess) return kCudaError;
  return rc;
}

template <Norm kNorm>
int ForwardFor(DType t, const ForwardArgs* a, cudaStream_t s) {
  switch (t) {
    case DType::kF32:
      return LaunchForward<DType::kF32, kNorm>(a, s);
    case DType::kBF16:
      return LaunchForward<DType::kBF16, kNorm>(a, s);
    case DType::kF16:
      return LaunchForward<DType::kF16, kNorm>(a, s);
    default:
      return kInvalidArgs;
  }
}

template <Norm kNorm>
int BackwardFor(DType t, const BackwardArgs* a, cudaStream_t s) {
  switch (t) {
    case DType::kF32:
      return LaunchBackward<DType::kF32, kNorm>(a, s);
    case DType::kBF16:
      return LaunchBackward<DType::kBF16, kNorm>(a, s);
    case DType::kF16:
      return LaunchBackward<DType::kF16, kNorm>(a, s);
    default:
      return kInvalidArgs;
  }
}

template <typename S>
int LaunchStoreFloats(const float* in, void* out, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return kOk;
  StoreFloats<S>
      <<<GridFor(CeilDiv(n, 256)), 256, 0, stream>>>(in, static_cast<typename S::Bits*>(out), n);
  return LaunchStatus();
}

}  // namespace

int DeviceStoreFloats(DType dtype, const float* device_in, void* device_out, std::int64_t n,
                      void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case DType::kF32:
      return LaunchStoreFloats<F32Storage>(device_in, device_out, n, s);
    case DType::kBF16:
      return LaunchStoreFloats<Bf16Storage>(device_in, device_out, n, s);
    case DType::kF16:
      return LaunchStoreFloats<F16Storage>(device_in, device_out, n, s);
    default:
      return kInvalidArgs;
  }
}

int DeviceForward(DType dtype, Norm norm, const ForwardArgs* device_args, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  return norm == Norm::kLayerNorm ? ForwardFor<Norm::kLayerNorm>(dtype, device_args, s)
                                  : ForwardFor<Norm::kRmsNorm>(dtype, device_args, s);
}

int DeviceBackward(DType dtype, Norm norm, const BackwardArgs* device_args, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  return norm == Norm::kLayerNorm ? BackwardFor<Norm::kLayerNorm>(dtype, device_args, s)
                                  : BackwardFor<Norm::kRmsNorm>(dtype, device_args, s);
}

}  // namespace lnv::cuda
