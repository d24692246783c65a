// One CUTLASS 3.x SM90 FP8 GEMM, built from a configs.def row and the operand/output types:
//   out[b, m, n] = (*a_scale) * (*b_scale) * sum_k A[b, m, k] * B[b, n, k]
// A is [b, m, k] row-major, B is stored [b, n, k] (k contiguous), out is [b, m, n] row-major,
// batches through CUTLASS's L mode. Both scales are read on the device by the epilogue (a
// two-pointer scalar broadcast whose product multiplies the accumulator): no host read, no
// extra kernel.
//
// With swap_ab the kernel computes out^T[n, m] = B * A^T: the weights (n rows) fill the MMA's
// M side, the activations (m, possibly tiny) its N side, and out^T is stored column-major,
// which is exactly out[b, m, n] row-major.
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/gemm/kernel/tile_scheduler.hpp>
#include <cutlass/util/packed_stride.hpp>

#include <atomic>
#include <type_traits>

#include "backends/cutlass/config.h"
#include "backends/cutlass/kernels.h"
#include "fp8gemm/check.h"

namespace fp8gemm::cutlass_backend {

template <DType T> struct CutlassType;
template <> struct CutlassType<DType::kE4M3> { using type = cutlass::float_e4m3_t; };
template <> struct CutlassType<DType::kE5M2> { using type = cutlass::float_e5m2_t; };
template <> struct CutlassType<DType::kBF16> { using type = cutlass::bfloat16_t; };
template <> struct CutlassType<DType::kFP16> { using type = cutlass::half_t; };

// Devices per process whose cluster occupancy is cached (device ids beyond it are not cached).
inline constexpr int kMaxDevices = 64;

// The two-scale product, read by the consumer warps when they store a tile, after its
// mainloop. CUTLASS's Sm90ScalarBroadcast reads a non-batched scalar when the epilogue is
// constructed, at kernel start. Our persistent kernels launch with PDL (programmatic dependent launch):
// they may start before the previous kernel on the stream has finished, and only the producer
// warps' griddepcontrol.wait (before their first load) makes its writes visible. A scale that
// kernel writes (dynamic activation quantization) would then be read stale. Reading after the
// mainloop orders the read after that wait (the tile's data was loaded after it). Test:
// PdlOrdering.ScalesAndActivationsWrittenByThePreviousKernelAreSeen.
template <class Broadcast>
struct ScaleReadAfterMainloop : Broadcast {
  using Params = typename Broadcast::Params;
  CUTLASS_HOST_DEVICE ScaleReadAfterMainloop() {}
  CUTLASS_HOST_DEVICE ScaleReadAfterMainloop(Params const& params, typename Broadcast::SharedStorage const&) {
    this->params_ptr = &params;  // no read here: see above
  }

  template <bool ReferenceSrc, class... Args>
  CUTLASS_DEVICE auto get_consumer_store_callbacks(cutlass::epilogue::fusion::ConsumerStoreArgs<Args...> const&) {
    const Params& p = *this->params_ptr;
    float s = 1.f;
    for (int i = 0; i < 2; ++i) s *= p.scalar_ptrs[i] ? *p.scalar_ptrs[i] : p.scalars[i];
    return typename Broadcast::ConsumerStoreCallbacks(s);
  }
};

template <Schedule S, bool FastAccum> struct MainloopSchedule;
template <> struct MainloopSchedule<Schedule::WarpSpecialized, true> { using type = cutlass::gemm::KernelTmaWarpSpecializedFP8FastAccum; };
template <> struct MainloopSchedule<Schedule::WarpSpecialized, false> { using type = cutlass::gemm::KernelTmaWarpSpecialized; };
template <> struct MainloopSchedule<Schedule::Pingpong, true> { using type = cutlass::gemm::KernelTmaWarpSpecializedPingpongFP8FastAccum; };
template <> struct MainloopSchedule<Schedule::Pingpong, false> { using type = cutlass::gemm::KernelTmaWarpSpecializedPingpong; };
template <> struct MainloopSchedule<Schedule::Cooperative, true> { using type = cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum; };
template <> struct MainloopSchedule<Schedule::Cooperative, false> { using type = cutlass::gemm::KernelTmaWarpSpecializedCooperative; };

template <Schedule S, int TileM, int TileN, int TileK, int ClusterM, int ClusterN, int ClusterK,
          TileScheduler TS, bool SwapAB, bool FastAccum, DType AType, DType BType, DType OutType>
struct Sm90Fp8Gemm {
  static_assert(S != Schedule::Cooperative || TileM % 128 == 0, "cooperative tiles split M over two warpgroups");
  static_assert(TS != TileScheduler::StreamK || S == Schedule::Cooperative, "CUTLASS SM90 stream-K needs the cooperative kernel");

  using ElementA = typename CutlassType<AType>::type;   // activations
  using ElementB = typename CutlassType<BType>::type;   // weights
  using ElementOut = typename CutlassType<OutType>::type;
  // Operands as the kernel sees them: both K-major (row-major "A", column-major "B").
  using KernelA = std::conditional_t<SwapAB, ElementB, ElementA>;
  using KernelB = std::conditional_t<SwapAB, ElementA, ElementB>;
  using LayoutOut = std::conditional_t<SwapAB, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>;
  static constexpr int kAlignFp8 = 16;                        // elements per 16-byte TMA access
  static constexpr int kAlignOut = 16 / sizeof(ElementOut);

  using TileShape = cute::Shape<cute::Int<TileM>, cute::Int<TileN>, cute::Int<TileK>>;
  using ClusterShape = cute::Shape<cute::Int<ClusterM>, cute::Int<ClusterN>, cute::Int<ClusterK>>;

  // PDL needs the kernel's griddepcontrol.wait, compiled in by CUTLASS_ENABLE_GDC_FOR_SM90 (the
  // generated shard files define it for every row but stream-K; CMakeLists.txt says why).
  // Launching with PDL without it would let the kernel read before the previous one finished.
#ifdef CUTLASS_ENABLE_GDC_FOR_SM90
  static constexpr bool kPdl = true;
#else
  static constexpr bool kPdl = false;
#endif
  static_assert(kPdl == (TS != TileScheduler::StreamK), "stream-K kernels build without GDC, all others with it");

  // out = (a_scale * b_scale) * acc: the scalar broadcast reduces its two pointers by product,
  // read after the mainloop (ScaleReadAfterMainloop), so that PDL cannot make it stale.
  using ScaleProduct = ScaleReadAfterMainloop<
      cutlass::epilogue::fusion::Sm90ScalarBroadcast<float, cute::Stride<cute::_0, cute::_0, cute::_0>, 2>>;
  using Epilogue = cutlass::epilogue::fusion::Sm90EVT<
      cutlass::epilogue::fusion::Sm90Compute<cutlass::multiplies, ElementOut, float, cutlass::FloatRoundStyle::round_to_nearest>,
      ScaleProduct, cutlass::epilogue::fusion::Sm90AccFetch>;

  using EpilogueSchedule = std::conditional_t<S == Schedule::Cooperative, cutlass::epilogue::TmaWarpSpecializedCooperative,
                                              cutlass::epilogue::TmaWarpSpecialized>;
  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float,
      void, LayoutOut, kAlignOut,             // no C operand
      ElementOut, LayoutOut, kAlignOut, EpilogueSchedule, Epilogue>::CollectiveOp;

  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
      KernelA, cutlass::layout::RowMajor, kAlignFp8, KernelB, cutlass::layout::ColumnMajor, kAlignFp8,
      float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
      typename MainloopSchedule<S, FastAccum>::type>::CollectiveOp;

  using Scheduler = std::conditional_t<TS == TileScheduler::StreamK, cutlass::gemm::StreamKScheduler,
                                       cutlass::gemm::PersistentScheduler>;
  using GemmKernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, CollectiveMainloop,
                                                          CollectiveEpilogue, Scheduler>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

  // Kernel arguments for p; pointers may be null for the shape-only queries.
  static typename Gemm::Arguments arguments(const Problem& p, const GemmArgs& g, int device, int sm_count) {
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    const int l = static_cast<int>(p.batch);
    const int km = SwapAB ? n : m, kn = SwapAB ? m : n;   // the kernel's M and N
    using StrideA = typename GemmKernel::StrideA;
    using StrideB = typename GemmKernel::StrideB;
    using StrideC = typename GemmKernel::StrideC;
    using StrideD = typename GemmKernel::StrideD;
    const void* ka = SwapAB ? g.b : g.a;
    const void* kb = SwapAB ? g.a : g.b;

    typename Gemm::Arguments args{};
    args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    args.problem_shape = {km, kn, k, l};
    args.mainloop.ptr_A = static_cast<const KernelA*>(ka);
    args.mainloop.dA = cutlass::make_cute_packed_stride(StrideA{}, cute::make_shape(km, k, l));
    args.mainloop.ptr_B = static_cast<const KernelB*>(kb);
    args.mainloop.dB = cutlass::make_cute_packed_stride(StrideB{}, cute::make_shape(kn, k, l));
    auto& scale = args.epilogue.thread.op_0;  // EVT arguments: op_0, op_1 children, op_2 node
    scale.scalar_ptrs[0] = g.a_scale;
    scale.scalar_ptrs[1] = g.b_scale;
    args.epilogue.ptr_C = nullptr;
    args.epilogue.dC = cutlass::make_cute_packed_stride(StrideC{}, cute::make_shape(km, kn, l));
    args.epilogue.ptr_D = static_cast<ElementOut*>(g.out);
    args.epilogue.dD = cutlass::make_cute_packed_stride(StrideD{}, cute::make_shape(km, kn, l));
    args.hw_info.device_id = device;
    args.hw_info.sm_count = sm_count;  // given, so CUTLASS never queries the device per call
    return args;
  }

  static Verdict can_implement(const Problem& p, int sm_count) {
    // Non-null scale pointers: the shape check must not see a "scale from scalars" epilogue.
    static const float dummy = 1.f;
    const cutlass::Status st = Gemm::can_implement(arguments(p, GemmArgs{nullptr, nullptr, &dummy, &dummy, nullptr}, 0, sm_count));
    if (st == cutlass::Status::kSuccess) return Verdict::yes();
    return Verdict::no(std::string("CUTLASS can_implement: ") + cutlassGetStatusString(st));
  }

  static size_t workspace_bytes(const Problem& p, int sm_count) {
    static const float dummy = 1.f;
    return Gemm::get_workspace_size(arguments(p, GemmArgs{nullptr, nullptr, &dummy, &dummy, nullptr}, 0, sm_count));
  }

  // How many clusters of this kernel fit on the device at once, from the occupancy calculator
  // with the kernel's real shared memory (0 if the query fails: CUTLASS then sizes the
  // persistent grid from its 18-SMs-per-GPC heuristic, which on a 132-SM part can launch more
  // clusters than fit, or fewer). Queried once per device; a pure host query, legal in capture.
  static int max_active_clusters(int device) {
    constexpr int kClusterSize = ClusterM * ClusterN * ClusterK;
    if (kClusterSize == 1) return 0;  // the scheduler only uses it for real clusters
    static std::atomic<int> cached[kMaxDevices];  // 0: not queried yet, -1: query failed
    if (device < 0 || device >= kMaxDevices) return 0;
    int n = cached[device].load(std::memory_order_relaxed);
    if (n == 0) {
      const void* kernel = reinterpret_cast<const void*>(cutlass::device_kernel<GemmKernel>);
      const int smem = GemmKernel::SharedStorageSize;
      cudaLaunchConfig_t config{};
      config.gridDim = dim3(ClusterM, ClusterN, ClusterK);
      config.blockDim = dim3(GemmKernel::MaxThreadsPerBlock, 1, 1);
      config.dynamicSmemBytes = smem;
      cudaLaunchAttribute attr{};
      attr.id = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim.x = ClusterM;
      attr.val.clusterDim.y = ClusterN;
      attr.val.clusterDim.z = ClusterK;
      config.attrs = &attr;
      config.numAttrs = 1;
      int clusters = 0;
      const bool ok = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) == cudaSuccess &&
                      cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) == cudaSuccess && clusters > 0;
      if (!ok) (void)cudaGetLastError();  // not sticky; keep the context's error state clean
      n = ok ? clusters : -1;
      cached[device].store(n, std::memory_order_relaxed);
    }
    return n > 0 ? n : 0;
  }

  static void run(const Problem& p, const GemmArgs& g, Workspace ws, cudaStream_t stream, int device, int sm_count,
                  bool pdl) {
    FP8GEMM_REQUIRE(!pdl || kPdl, kUnsupported, "this CUTLASS kernel is built without GDC and cannot launch with PDL");
    typename Gemm::Arguments args = arguments(p, g, device, sm_count);
    args.hw_info.max_active_clusters = max_active_clusters(device);
    Gemm gemm;
    // initialize() builds the TMA descriptors on the host, sets the kernel's shared-memory
    // attribute and (stream-K only) clears the workspace with an async memset on `stream`:
    // all legal in stream capture; nothing allocates or synchronizes.
    cutlass::Status st = gemm.initialize(args, ws.ptr, stream);
    FP8GEMM_REQUIRE(st == cutlass::Status::kSuccess, kCuda, "CUTLASS initialize failed: ", cutlassGetStatusString(st));
    // PDL: the kernel may start while the previous one finishes; CUTLASS's producer warps wait
    // (griddepcontrol.wait) before any load.
    st = gemm.run(stream, /*cuda_adapter=*/nullptr, /*launch_with_pdl=*/pdl);
    if (st != cutlass::Status::kSuccess) {
      const cudaError_t err = cudaGetLastError();
      FP8GEMM_FAIL(kCuda, "CUTLASS launch failed: ", cutlassGetStatusString(st), " (", cudaGetErrorString(err), ")");
    }
  }

  static KernelVariant variant(int row_id) {
    KernelVariant v;
    v.row_id = row_id;
    v.a_type = AType;
    v.b_type = BType;
    v.out_type = OutType;
    v.smem_bytes = GemmKernel::SharedStorageSize;
    v.pdl_capable = kPdl;
    v.can_implement = &can_implement;
    v.workspace_bytes = &workspace_bytes;
    v.run = &run;
    return v;
  }
};

}  // namespace fp8gemm::cutlass_backend
