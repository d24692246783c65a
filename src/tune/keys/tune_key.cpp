#include "tune/keys/tune_key.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "fp8gemm/check.h"
#include "core/validate.h"

namespace fp8gemm {

const std::vector<int64_t>& m_bucket_edges() {
  // Dense at small M, where the best kernel changes quickly (tile height, split-K, swap A/B),
  // about x1.5 apart above 16 so that wave quantization inside a bucket stays small.
  static const std::vector<int64_t> edges = {1,    2,    4,    8,    16,   24,   32,    48,   64,
                                             96,   128,  192,  256,  384,  512,  768,   1024, 1536,
                                             2048, 3072, 4096, 6144, 8192, 12288, 16384};
  return edges;
}

int64_t m_bucket(int64_t m) {
  if (m <= 1) return 1;
  FP8GEMM_REQUIRE(m <= kLargestProblemM, kInvalidArgument, "m = ", m, " exceeds ", kLargestProblemM,
                  " (2^31-1): sizes must fit in 32 bits");
  const auto& edges = m_bucket_edges();
  auto it = std::lower_bound(edges.begin(), edges.end(), m);
  if (it != edges.end()) return *it;
  // Beyond the table: powers of two, the last bucket ending at kLargestProblemM (2^31 would not be an M).
  int64_t edge = edges.back();
  while (edge < m && edge < kLargestProblemM / 2 + 1) edge *= 2;
  return edge < m ? kLargestProblemM : edge;
}

namespace tuning {

int alignment_class(int alignment) {
  for (int c : {16, 8, 4, 2})
    if (alignment >= c && alignment % c == 0) return c;
  return 1;
}

TuneKey key_of(const Problem& p) {
  TuneKey k;
  k.a_type = p.a_type;
  k.b_type = p.b_type;
  k.out_type = p.out_type;
  k.batch = p.batch;
  k.m_bucket = m_bucket(p.m);
  k.n = p.n;
  k.k = p.k;
  k.alignment = alignment_class(p.alignment);
  k.scale_alignment = p.scale_alignment;
  k.bias = p.bias;
  if (p.is_layer()) {
    k.op = kLayerOp;
    k.prologue = p.prologue;
    k.x_type = p.x_type;
  }
  return k;
}

namespace {
auto fields(const TuneKey& k) {
  return std::tie(k.op, k.a_type, k.b_type, k.out_type, k.batch, k.m_bucket, k.n, k.k, k.alignment,
                  k.scale_alignment, k.bias, k.prologue, k.x_type);
}
}  // namespace

bool TuneKey::operator<(const TuneKey& o) const { return fields(*this) < fields(o); }
bool TuneKey::operator==(const TuneKey& o) const { return fields(*this) == fields(o); }

std::string TuneKey::to_string() const {
  std::ostringstream os;
  os << op << ' ';
  if (prologue != Problem::Prologue::kNone)
    os << fp8gemm::to_string(x_type) << (prologue == Problem::Prologue::kQuantizeStatic ? " static " : " dynamic ");
  os << fp8gemm::to_string(a_type) << 'x' << fp8gemm::to_string(b_type) << "->"
     << fp8gemm::to_string(out_type) << " b=" << batch << " m<=" << m_bucket << " n=" << n
     << " k=" << k << " align=" << alignment;
  if (scale_alignment != 16) os << " scale_align=" << scale_alignment;
  if (bias) os << " bias";
  return os.str();
}

Problem gemm_of(const Problem& p) {
  Problem g = p;
  g.prologue = Problem::Prologue::kNone;
  g.x_type = DType::kBF16;
  return g;
}

int64_t bucket_lower(int64_t m) {
  const int64_t edge = m_bucket(m);
  const auto& edges = m_bucket_edges();
  int64_t lower = 0;
  for (int64_t e : edges)
    if (e < edge) lower = e;
  // Beyond the table the previous edge is the largest power of two below this one.
  while (lower * 2 < edge && lower * 2 > lower) lower *= 2;
  return lower;
}

std::vector<int64_t> bucket_sample_ms(int64_t m, int count) {
  const int64_t edge = m_bucket(m);
  const int64_t lower = bucket_lower(m);
  std::vector<int64_t> out;
  // Equal parts: each sample's choice covers the part that ends at it, and the edge's the last
  // (docs/tuning.md "Where the samples go": the bucket's lowest M and its middle did worse).
  for (int i = 1; i <= count; ++i) {
    const int64_t s = lower + std::max<int64_t>(1, std::llround(double(edge - lower) * i / (count + 1)));
    if (s < edge && (out.empty() || out.back() < s)) out.push_back(s);
  }
  return out;
}

Problem TuneKey::representative() const {
  Problem p;
  p.batch = batch;
  // No call runs more rows than one backend call takes (larger ones run as parts: fp8gemm/row_chunks.h).
  p.m = std::min(m_bucket, max_call_rows(n, k));
  p.n = n;
  p.k = k;
  p.a_type = a_type;
  p.b_type = b_type;
  p.out_type = out_type;
  p.alignment = alignment;
  p.scale_alignment = scale_alignment;
  p.bias = bias;
  p.prologue = prologue;
  p.x_type = x_type;
  return p;
}

}  // namespace tuning
}  // namespace fp8gemm
