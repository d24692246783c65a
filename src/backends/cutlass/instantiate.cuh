// Expands configs.def into the kernels of one shard. Each generated shard_<S>.cu is
//   #include "backends/cutlass/instantiate.cuh"
//   FP8GEMM_CUTLASS_SHARD_BEGIN(S)
//   #include "backends/cutlass/configs.def"
//   FP8GEMM_CUTLASS_SHARD_END
// and compiles only the (row, type) variants whose index falls in shard S, so the expensive
// template instantiations spread over FP8GEMM_CUTLASS_SHARD_COUNT files that build in parallel.
#pragma once

#include <utility>
#include <vector>

#include "backends/cutlass/kernel.cuh"

#ifndef FP8GEMM_CUTLASS_SHARD_COUNT
#error "FP8GEMM_CUTLASS_SHARD_COUNT must be defined by the build"
#endif
#ifndef FP8GEMM_CUTLASS_FULL
#error "FP8GEMM_CUTLASS_FULL must be defined by the build (1: full set, 0: reduced)"
#endif

namespace fp8gemm::cutlass_backend {

// The (A, B, out) types a row is instantiated for; the first two for every row, the others
// only for rows marked mixed_fp8.
struct TypeTriple { DType a, b, out; };
constexpr TypeTriple kTypeTriples[] = {
    {DType::kE4M3, DType::kE4M3, DType::kBF16}, {DType::kE4M3, DType::kE4M3, DType::kFP16},
    {DType::kE4M3, DType::kE5M2, DType::kBF16}, {DType::kE4M3, DType::kE5M2, DType::kFP16},
    {DType::kE5M2, DType::kE4M3, DType::kBF16}, {DType::kE5M2, DType::kE4M3, DType::kFP16},
};
constexpr int kTypeTriplesPerRow = sizeof(kTypeTriples) / sizeof(kTypeTriples[0]);

// Stream-K rows all go to the last shard, built without GDC (see CMakeLists.txt); the others
// spread over shards 0..COUNT-1.
constexpr int kStreamKShard = FP8GEMM_CUTLASS_SHARD_COUNT;

constexpr bool variant_in_shard(int shard, int row_id, int triple, bool reduced_row, bool mixed_row, bool stream_k) {
  if (!(FP8GEMM_CUTLASS_FULL || reduced_row) || !(triple < 2 || mixed_row)) return false;
  if (stream_k) return shard == kStreamKShard;
  return (row_id * kTypeTriplesPerRow + triple) % FP8GEMM_CUTLASS_SHARD_COUNT == shard;
}

// Adds the kernel only when Build is true; the false case never names the kernel type, so
// variants of other shards cost nothing to compile here.
template <bool Build, int RowId, int Triple, Schedule S, int TM, int TN, int TK, int CM, int CN, int CK,
          TileScheduler TS, bool Swap, bool Fast>
struct AddVariant {
  static void add(std::vector<KernelVariant>&) {}
};
template <int RowId, int Triple, Schedule S, int TM, int TN, int TK, int CM, int CN, int CK, TileScheduler TS,
          bool Swap, bool Fast>
struct AddVariant<true, RowId, Triple, S, TM, TN, TK, CM, CN, CK, TS, Swap, Fast> {
  static void add(std::vector<KernelVariant>& out) {
    constexpr TypeTriple t = kTypeTriples[Triple];
    out.push_back(Sm90Fp8Gemm<S, TM, TN, TK, CM, CN, CK, TS, Swap, Fast, t.a, t.b, t.out>::variant(RowId));
  }
};

template <int Shard, int RowId, Schedule S, int TM, int TN, int TK, int CM, int CN, int CK, TileScheduler TS,
          bool Swap, bool Fast, bool Reduced, bool Mixed, int... Triples>
void add_row(std::vector<KernelVariant>& out, std::integer_sequence<int, Triples...>) {
  (AddVariant<variant_in_shard(Shard, RowId, Triples, Reduced, Mixed, TS == TileScheduler::StreamK), RowId, Triples, S, TM, TN, TK, CM, CN, CK, TS,
              Swap, Fast>::add(out),
   ...);
}

}  // namespace fp8gemm::cutlass_backend

// A shard file brackets configs.def with these; each row becomes one add_row call.
#define FP8GEMM_CUTLASS_SHARD_BEGIN(shard)                               \
  namespace fp8gemm::cutlass_backend {                                   \
  void add_shard_kernels_##shard(std::vector<KernelVariant>& out) {      \
    constexpr int kShard = shard;
#define FP8GEMM_CUTLASS_CONFIG(id, sched, tm, tn, tk, cm, cn, ck, tsched, swap, fast, reduced, mixed) \
  add_row<kShard, id, Schedule::sched, tm, tn, tk, cm, cn, ck, TileScheduler::tsched, swap != 0, fast != 0, \
          reduced != 0, mixed != 0>(out, std::make_integer_sequence<int, kTypeTriplesPerRow>{});
#define FP8GEMM_CUTLASS_SHARD_END \
  }                               \
  }
