// SPDX-License-Identifier: Apache-2.0
// Gemm (Y = alpha * op(A) op(B) + beta * C, C broadcast to [M,N]; C optional
// since opset 11) and MatMul (numpy matmul: 1-D operands promoted and the
// promoted dimension removed again, batch dimensions broadcast). float32
// uses the packed sgemm; float64 and integer types a plain loop (integers
// wrap like numpy).
#include <type_traits>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"
#include "runtime/cpu_ops/sgemm.h"

namespace openbpu::rt {

namespace {

// Plain C = alpha * op(A) op(B) + beta * C for non-float32 types.
template <class T>
void gemm_ref(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const T* a,
              int64_t lda, const T* b, int64_t ldb, double beta, T* c, int64_t ldc) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, T>;
  std::vector<Acc> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), Acc(0));
    for (int64_t p = 0; p < k; ++p) {
      const Acc av = static_cast<Acc>(ta ? a[p * lda + i] : a[i * lda + p]);
      if (av == Acc(0)) continue;
      if (!tb) {
        const T* bp = b + p * ldb;
        for (int64_t j = 0; j < n; ++j)
          row[j] = static_cast<Acc>(row[j] + av * static_cast<Acc>(bp[j]));
      } else {
        for (int64_t j = 0; j < n; ++j)
          row[j] = static_cast<Acc>(row[j] + av * static_cast<Acc>(b[j * ldb + p]));
      }
    }
    T* ci = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) {
      if constexpr (std::is_floating_point_v<T>) {
        ci[j] = static_cast<T>(alpha * row[j] + (beta == 0.0 ? 0.0 : beta * ci[j]));
      } else {
        // Integers: alpha/beta are 1/0 or 1/1 (checked at create).
        ci[j] = static_cast<T>(row[j] + (beta == 0.0 ? T(0) : ci[j]));
      }
    }
  }
}

template <class T>
void gemm_any(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const T* a,
              int64_t lda, const T* b, int64_t ldb, double beta, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    sgemm(ta, tb, m, n, k, static_cast<float>(alpha), a, lda, b, ldb, static_cast<float>(beta), c,
          ldc);
  } else {
    gemm_ref<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

class GemmKernel final : public CpuKernel {
 public:
  bool ta = false, tb = false;
  int64_t m = 0, n = 0, k = 0;
  double alpha = 1.0, beta = 1.0;
  bool has_c = false;
  int32_t type = kF32;
  BroadcastLoop<2> c_loop;  // C broadcast into Y

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf a(in[0], type), b(in[1], type);
    OutBuf y(out[0], type);
    visit_numeric(type, [&](auto tag) {
      using T = decltype(tag);
      T* yp = y.as<T>();
      double bt = 0.0;
      if (has_c && beta != 0.0) {
        InBuf c(in[2], type);
        const T* cp = c.as<T>();
        const T bv = static_cast<T>(beta);
        c_loop.run(
            [&](const std::array<int64_t, 2>& off, int64_t cnt, const std::array<int64_t, 2>& st) {
              for (int64_t i = 0; i < cnt; ++i)
                yp[off[0] + i] = static_cast<T>(bv * cp[off[1] + i * st[1]]);
            });
        bt = 1.0;
      }
      gemm_any<T>(ta, tb, m, n, k, alpha, a.as<T>(), ta ? m : k, b.as<T>(), tb ? k : n, bt, yp, n);
    });
    y.commit();
    return Status::Ok();
  }
};

class MatMulKernel final : public CpuKernel {
 public:
  int64_t m = 0, n = 0, k = 0;
  int32_t type = kF32;
  bool fold = false;         // A's batches folded into M (B has no batch dims)
  BroadcastLoop<3> batches;  // over the output batch dims: Y, A, B batch indices

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf a(in[0], type), b(in[1], type);
    OutBuf y(out[0], type);
    visit_numeric(type, [&](auto tag) {
      using T = decltype(tag);
      const T* ap = a.as<T>();
      const T* bp = b.as<T>();
      T* yp = y.as<T>();
      if (fold) {
        const int64_t rows = count_of(dims_of(*out[0].desc)) / std::max<int64_t>(n, 1);
        gemm_any<T>(false, false, rows, n, k, 1.0, ap, k, bp, n, 0.0, yp, n);
        return;
      }
      batches.run(
          [&](const std::array<int64_t, 3>& off, int64_t cnt, const std::array<int64_t, 3>& st) {
            for (int64_t i = 0; i < cnt; ++i)
              gemm_any<T>(false, false, m, n, k, 1.0, ap + (off[1] + i * st[1]) * m * k, k,
                          bp + (off[2] + i * st[2]) * k * n, n, 0.0, yp + (off[0] + i) * m * n, n);
          });
    });
    y.commit();
    return Status::Ok();
  }
};

bool gemm_type_ok(int32_t t) { return is_numeric_type(t); }

}  // namespace

Status create_gemm(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                   const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() < 2 || !in[0] || !in[1] || present_count(in) > 3 || out.size() != 1 || !out[0])
    return op_error(def, "needs inputs A, B (and optional C) and 1 output");
  auto g = std::make_unique<GemmKernel>();
  g->type = compute_type(in[0]->data_type);
  if (!gemm_type_ok(g->type) || compute_type(in[1]->data_type) != g->type ||
      compute_type(out[0]->data_type) != g->type ||
      (has_input(in, 2) && compute_type(in[2]->data_type) != g->type))
    return op_error(def, "A, B, C and Y must have the same numeric data type");
  const Dims a = dims_of(*in[0]), b = dims_of(*in[1]), y = dims_of(*out[0]);
  if (a.size() != 2 || b.size() != 2 || y.size() != 2)
    return op_error(def, "A, B and Y must be 2-D");
  g->ta = def.attrs.get_int("transA", 0) != 0;
  g->tb = def.attrs.get_int("transB", 0) != 0;
  g->alpha = def.attrs.get_float("alpha", 1.0f);
  g->beta = def.attrs.get_float("beta", 1.0f);
  g->m = g->ta ? a[1] : a[0];
  g->k = g->ta ? a[0] : a[1];
  g->n = g->tb ? b[0] : b[1];
  const int64_t kb = g->tb ? b[1] : b[0];
  if (kb != g->k)
    return op_error(def, "inner dimensions differ: " + dims_str(a) + " x " + dims_str(b));
  if (y != Dims{g->m, g->n}) return op_error(def, "output shape must be " + dims_str({g->m, g->n}));
  if (is_int_type(g->type) && (g->alpha != 1.0 || (g->beta != 1.0 && g->beta != 0.0)))
    return op_error(def, "integer Gemm supports alpha=1 and beta in {0,1} only");
  g->has_c = has_input(in, 2);
  if (g->has_c) {
    Dims cs;
    if (!broadcast_strides(dims_of(*in[2]), y, &cs))
      return op_error(
          def, "C of shape " + dims_str(dims_of(*in[2])) + " does not broadcast to " + dims_str(y));
    g->c_loop.init(y, {elem_strides(y), cs});
  }
  *kernel = std::move(g);
  return Status::Ok();
}

Status create_matmul(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                     const std::vector<const TensorDesc*>& out,
                     std::unique_ptr<CpuKernel>* kernel) {
  if (in.size() != 2 || !in[0] || !in[1] || out.size() != 1 || !out[0])
    return op_error(def, "needs 2 inputs and 1 output");
  auto mm = std::make_unique<MatMulKernel>();
  mm->type = compute_type(in[0]->data_type);
  if (!gemm_type_ok(mm->type) || compute_type(in[1]->data_type) != mm->type ||
      compute_type(out[0]->data_type) != mm->type)
    return op_error(def, "A, B and Y must have the same numeric data type");
  Dims a = dims_of(*in[0]), b = dims_of(*in[1]);
  const Dims y = dims_of(*out[0]);
  if (a.empty() || b.empty()) return op_error(def, "inputs must have rank >= 1");
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  mm->m = a[a.size() - 2];
  mm->k = a[a.size() - 1];
  mm->n = b[b.size() - 1];
  if (b[b.size() - 2] != mm->k)
    return op_error(def, "inner dimensions differ: " + dims_str(dims_of(*in[0])) + " x " +
                             dims_str(dims_of(*in[1])));
  const Dims abatch(a.begin(), a.end() - 2), bbatch(b.begin(), b.end() - 2);
  Dims batch;
  if (!broadcast_shape({abatch, bbatch}, &batch))
    return op_error(def, "batch dimensions do not broadcast");
  Dims expect = batch;
  if (!a1) expect.push_back(mm->m);
  if (!b1) expect.push_back(mm->n);
  if (expect != y)
    return op_error(def, "output shape must be " + dims_str(expect) + ", not " + dims_str(y));
  Dims sa, sb;
  broadcast_strides(abatch, batch, &sa);
  broadcast_strides(bbatch, batch, &sb);
  mm->fold = bbatch.empty() || count_of(bbatch) == 1;
  mm->fold = mm->fold && abatch.size() == batch.size() && count_of(abatch) == count_of(batch);
  mm->batches.init(batch, {elem_strides(batch), sa, sb});
  *kernel = std::move(mm);
  return Status::Ok();
}

}  // namespace openbpu::rt
