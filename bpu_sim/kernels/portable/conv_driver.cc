// SPDX-License-Identifier: Apache-2.0
// Convolution drivers shared by every instruction set: plan cache (weights
// packed once per instruction), dense input copies, the indirect-GEMM and
// depthwise loops, host threads, and the generic exact path (int16 inputs,
// transposed convolution).
//
// Paths of an int8 kConv (see docs/kernels.md):
//   depthwise  groups == Cin == Cout: per output row, vectors over channels
//              read the int8 input in place (channel stride 1) or a dense copy;
//   gemm       everything else: every MR-pixel x NR-channel tile is an
//              indirect GEMM over (tap, input channel) whose row pointers
//              address a copy of the input in the ISA's format (int16, int8
//              or int8^0x80):
//                row taps  groups == 1, kernel_w > 1, dilation_w == 1: a
//                          zero-padded [N][Hp][Wp][Cin] copy; a tap is a whole
//                          kernel row (kernel_w * Cin contiguous values);
//                im2col    few channels per group: each pixel's taps gathered
//                          into one K-long row;
//                taps      otherwise a dense [N][IH][IW][Cs] copy, one row
//                          pointer per (tap, pixel), a zero row outside.
//              An ISA may add a variant for inputs without negative values
//              (ConvIsa::nonneg), chosen by a scan of the input per run.
// int16 inputs and kDeconv use conv_generic (int64 accumulators).
//
// Memory: the packed plans, the thread-local workspaces and the helper
// threads are allocated on the first run of a shape and reused; an inference
// after the first one allocates nothing.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "bpu_sim/kernels/kernels.h"

namespace openbpu::sim::kern {
namespace {

__extension__ typedef __int128 int128;

// ---------------------------------------------------------------------------
// Small utilities.

// 64-byte aligned growable buffer (contents are not preserved on growth).
class AlignedBuf {
 public:
  AlignedBuf() = default;
  AlignedBuf(const AlignedBuf&) = delete;
  AlignedBuf& operator=(const AlignedBuf&) = delete;
  ~AlignedBuf() { std::free(p_); }
  uint8_t* get(size_t bytes) {
    if (bytes > cap_) {
      std::free(p_);
      p_ = nullptr;
      const size_t n = (bytes + 4095) / 4096 * 4096;
      void* q = nullptr;
      if (::posix_memalign(&q, 64, n) != 0) std::abort();
      p_ = static_cast<uint8_t*>(q);
      cap_ = n;
    }
    return p_;
  }
  uint8_t* data() const { return p_; }

 private:
  uint8_t* p_ = nullptr;
  size_t cap_ = 0;
};

inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Content fingerprint of constant arrays (guards the plan cache against a new
// program whose constants reuse the address of a freed one). Four independent
// multiply-xorshift lanes over 8-byte words.
uint64_t hash_bytes(const uint8_t* p, size_t n, uint64_t seed) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h[4] = {seed ^ 0x243F6A8885A308D3ull, seed ^ 0x13198A2E03707344ull,
                   seed ^ 0xA4093822299F31D0ull, seed ^ 0x082EFA98EC4E6C89ull};
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int l = 0; l < 4; ++l) {
      uint64_t v;
      std::memcpy(&v, p + i + 8 * l, 8);
      h[l] = (h[l] ^ v) * kMul;
      h[l] ^= h[l] >> 29;
    }
  }
  uint64_t t = 0;
  for (int s = 0; i < n; ++i, s += 8) t ^= static_cast<uint64_t>(p[i]) << (s & 63);
  uint64_t r = h[0] ^ (h[1] * 3) ^ (h[2] * 5) ^ (h[3] * 7) ^ ((t + n) * kMul);
  r ^= r >> 31;
  return r * kMul;
}

// ---------------------------------------------------------------------------
// Host threads: each calling thread (a simulated core) owns helpers.

std::atomic<int> g_threads{0};  // 0 = not read from the environment yet

class HelperPool {
 public:
  explicit HelperPool(int helpers) {
    for (int i = 0; i < helpers; ++i) threads_.emplace_back([this] { loop(); });
  }
  ~HelperPool() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int helpers() const { return static_cast<int>(threads_.size()); }

  // Runs fn(ctx, i) for i in [0, n) on the caller and the helpers; every
  // helper first runs pre(pre_ctx) (sizing its workspace), even when the
  // others took all the tasks.
  void run(int n, void (*fn)(void*, int), void* ctx, void (*pre)(const void*),
           const void* pre_ctx) {
    if (pre != nullptr) pre(pre_ctx);
    if (threads_.empty() || n <= 1) {
      for (int i = 0; i < n; ++i) fn(ctx, i);
      return;
    }
    {
      std::lock_guard<std::mutex> lk(mu_);
      fn_ = fn;
      ctx_ = ctx;
      pre_ = pre;
      pre_ctx_ = pre_ctx;
      n_ = n;
      next_.store(0, std::memory_order_relaxed);
      active_ = static_cast<int>(threads_.size());
      ++gen_;
    }
    cv_.notify_all();
    work();
    std::unique_lock<std::mutex> lk(mu_);
    done_.wait(lk, [&] { return active_ == 0; });
  }

 private:
  void work() {
    for (;;) {
      const int i = next_.fetch_add(1, std::memory_order_relaxed);
      if (i >= n_) return;
      fn_(ctx_, i);
    }
  }
  void loop() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [&] { return stop_ || gen_ != seen; });
        if (stop_) return;
        seen = gen_;
      }
      if (pre_ != nullptr) pre_(pre_ctx_);
      work();
      std::lock_guard<std::mutex> lk(mu_);
      if (--active_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_, done_;
  bool stop_ = false;
  uint64_t gen_ = 0;
  void (*fn_)(void*, int) = nullptr;
  void* ctx_ = nullptr;
  void (*pre_)(const void*) = nullptr;
  const void* pre_ctx_ = nullptr;
  int n_ = 0;
  std::atomic<int> next_{0};
  int active_ = 0;
};

HelperPool& pool_for_this_thread() {
  thread_local std::unique_ptr<HelperPool> pool;
  const int want = conv_threads() - 1;
  if (!pool || pool->helpers() != want) {
    pool.reset();
    pool = std::make_unique<HelperPool>(want);
  }
  return *pool;
}

// Per-thread scratch.
struct Workspace {
  AlignedBuf dense, zero, acc, col;
  std::vector<const void*> rows;
  std::vector<const int8_t*> px;
};
Workspace& workspace() {
  thread_local Workspace ws;
  return ws;
}

template <class T>
T* grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

// The largest per-task scratch of a parallel loop; every participating
// thread sizes its workspace to it first.
struct Needs {
  size_t rows = 0, px = 0, acc_bytes = 0, col_bytes = 0;
};
void size_workspace(const void* n) {
  const Needs& need = *static_cast<const Needs*>(n);
  Workspace& w = workspace();
  grow(w.rows, need.rows);
  grow(w.px, need.px);
  w.acc.get(need.acc_bytes);
  w.col.get(need.col_bytes);
}

template <class F>
void parallel_for(int n, F& f, const Needs* needs = nullptr) {
  if (n <= 0) return;
  if (conv_threads() <= 1 || n == 1) {
    if (needs != nullptr) size_workspace(needs);
    for (int i = 0; i < n; ++i) f(i);
    return;
  }
  pool_for_this_thread().run(
      n, [](void* c, int i) { (*static_cast<F*>(c))(i); }, &f,
      needs != nullptr ? size_workspace : nullptr, needs);
}

// ---------------------------------------------------------------------------
// Plans: an instruction's constants prepared for one ISA.

struct ConvPlan {
  uint64_t fingerprint = 0;
  bool depthwise = false;
  bool im2col = false;  // gemm over one tap of K = taps * cin_g (few input channels)
  bool rowtap = false;  // groups == 1: a tap is a kernel row of K = kernel_w * cin
  int cin_g = 0, cout_g = 0, taps = 0, cin_pad = 0, nblk = 0;  // gemm geometry per group
  size_t block_bytes = 0;                                      // one packed NR block
  int c_full = 0;                                              // depthwise vector channels
  AlignedBuf w;
  std::vector<int32_t> bias, mult, rmult, m_odd, rm_odd, r32, sh32;
  std::vector<int64_t> c1, s64, off;
  std::vector<int8_t> shift;
  bool m_le_2s = true;   // every M <= 2^S
  bool has_s63 = false;  // some S == 63
  bool s_ge33 = true;    // every S >= 33
};

struct PlanKey {
  const ConvIsa* isa;
  const uint8_t* consts;
  uint64_t w, b, m, s, r;
  int32_t cin, cout, groups, kh, kw;
  uint8_t int32_out, residual;
  bool operator==(const PlanKey& o) const {
    return isa == o.isa && consts == o.consts && w == o.w && b == o.b && m == o.m && s == o.s &&
           r == o.r && cin == o.cin && cout == o.cout && groups == o.groups && kh == o.kh &&
           kw == o.kw && int32_out == o.int32_out && residual == o.residual;
  }
};
struct PlanKeyHash {
  size_t operator()(const PlanKey& k) const {
    uint64_t h = reinterpret_cast<uintptr_t>(k.isa) * 31 + reinterpret_cast<uintptr_t>(k.consts);
    for (uint64_t v : {k.w, k.b, k.m, k.s, k.r}) h = (h ^ v) * 0x100000001B3ull;
    h = (h ^ static_cast<uint64_t>(k.cout)) * 0x100000001B3ull;
    h = (h ^ static_cast<uint64_t>(k.cin * 7 + k.kh * 3 + k.kw)) * 0x100000001B3ull;
    return static_cast<size_t>(h ^ (h >> 32));
  }
};

struct PinnedRange {
  const uint8_t* base;
  uint64_t size;
};

struct PlanCache {
  std::mutex mu;
  std::unordered_map<PlanKey, std::shared_ptr<const ConvPlan>, PlanKeyHash> plans;
  std::vector<PinnedRange> pinned;
};
PlanCache& plan_cache() {
  static PlanCache* cache = new PlanCache();  // never destroyed (used by exiting threads)
  return *cache;
}

uint64_t fingerprint(const isa::Conv& c, const Memory& mem, bool int32_out, bool residual) {
  const int64_t cout = c.out.dims[3];
  uint64_t h = hash_bytes(mem.ptr(c.weight), c.weight.count, 1);
  if (c.bias.count != 0) h = hash_bytes(mem.ptr(c.bias), 4 * cout, h);
  if (!int32_out) {
    h = hash_bytes(mem.ptr(c.multiplier), 4 * cout, h);
    h = hash_bytes(mem.ptr(c.shift), cout, h);
    if (residual) h = hash_bytes(mem.ptr(c.residual_multiplier), 4 * cout, h);
  }
  return h;
}

template <class T>
T load_const(const Memory& mem, const isa::ConstRef& r, int64_t i) {
  T v;
  std::memcpy(&v, mem.ptr(r) + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

std::unique_ptr<ConvPlan> build_plan(const ConvIsa& isa, const isa::Conv& c, const Memory& mem,
                                     bool int32_out, bool residual, bool depthwise) {
  auto plan = std::make_unique<ConvPlan>();
  ConvPlan& p = *plan;
  const int cout = c.out.dims[3], cin = c.in.dims[3], groups = c.groups;
  p.cin_g = cin / groups;
  p.cout_g = cout / groups;
  p.taps = c.kernel_h * c.kernel_w;
  p.depthwise = depthwise;
  const int8_t* w = reinterpret_cast<const int8_t*>(mem.ptr(c.weight));
  const int64_t k_per_co = static_cast<int64_t>(p.taps) * p.cin_g;

  // Per-channel arrays, padded to a multiple of 16 channels plus one block.
  const size_t cpad = static_cast<size_t>(round_up(cout, 16) + 16);
  p.bias.assign(cpad, 0);
  p.mult.assign(cpad, 1);
  p.rmult.assign(cpad, 1);
  p.m_odd.assign(cpad, 1);
  p.rm_odd.assign(cpad, 1);
  p.shift.assign(cpad, 0);
  p.c1.assign(cpad, 0);
  p.s64.assign(cpad, 0);
  p.off.assign(cpad, 0);
  for (int co = 0; co < cout; ++co) {
    p.bias[co] = c.bias.count != 0 ? load_const<int32_t>(mem, c.bias, co) : 0;
    if (!int32_out) {
      p.mult[co] = load_const<int32_t>(mem, c.multiplier, co);
      const int s =
          std::min(63, std::max(0, static_cast<int>(load_const<int8_t>(mem, c.shift, co))));
      p.shift[co] = static_cast<int8_t>(s);
      if (residual) p.rmult[co] = load_const<int32_t>(mem, c.residual_multiplier, co);
      if (s < 31 && static_cast<int64_t>(p.mult[co]) > (int64_t{1} << s)) p.m_le_2s = false;
      if (s == 63) p.has_s63 = true;
    }
  }
  p.r32.assign(cpad, 0);
  p.sh32.assign(cpad, 1);
  for (int co = 0; co < cout && !int32_out; ++co) {
    const int s = p.shift[co];
    if (s < 33)
      p.s_ge33 = false;
    else
      p.r32[co] = 1 << (s - 33), p.sh32[co] = s - 32;
  }
  if (int32_out) p.s_ge33 = false;
  for (size_t co = 0; co + 1 < cpad; ++co) {
    p.m_odd[co] = p.mult[co + 1];
    p.rm_odd[co] = p.rmult[co + 1];
  }
  for (size_t co = 0; co < cpad; ++co) {
    const int s = p.shift[co];
    const size_t blk = co / 8 * 8, lane = co % 8;
    const size_t idx = blk + (lane % 2 == 0 ? lane / 2 : 4 + lane / 2);
    const uint64_t half = s > 0 ? uint64_t{1} << (s - 1) : 0;
    p.c1[idx] = static_cast<int64_t>(half + (uint64_t{1} << 63));
    p.s64[idx] = s;
    p.off[idx] = static_cast<int64_t>(uint64_t{1} << (63 - s));
  }

  if (depthwise) {
    p.c_full = cout / 16 * 16;
    const size_t bytes = isa.dw_pack(w, p.c_full, p.taps, nullptr);
    isa.dw_pack(w, p.c_full, p.taps, p.w.get(bytes + 64));
    return plan;
  }

  // GEMM weights: per group, per NR block: [tap][cin_pad/kg][NR][kg]. With
  // few input channels per group the taps are gathered per pixel (im2col)
  // and the weights [co][kh][kw][ci] are already one K-long row per channel.
  const int nr = isa.nr, kg = isa.kg;
  if (groups == 1 && c.kernel_w > 1 && c.dilation_w == 1) {
    // The kernel_w taps of one kernel row read kernel_w consecutive pixels of
    // a padded dense copy: one "tap" per kernel row, [kw][ci] contiguous in
    // both the copy and the weights.
    p.rowtap = true;
    p.cin_g = c.kernel_w * p.cin_g;
    p.taps = c.kernel_h;
  } else if (p.taps > 1 && p.cin_g < 16) {
    p.im2col = true;
    p.cin_g = p.taps * p.cin_g;
    p.taps = 1;
  }
  p.cin_pad = static_cast<int>(round_up(p.cin_g, isa.kpad));
  p.nblk = static_cast<int>(round_up(p.cout_g, nr) / nr);
  p.block_bytes = static_cast<size_t>(p.taps) * p.cin_pad * nr * isa.esize;
  const size_t total = p.block_bytes * p.nblk * groups;
  uint8_t* dst = p.w.get(total + 64);
  std::memset(dst, 0, total);
  for (int g = 0; g < groups; ++g) {
    for (int b = 0; b < p.nblk; ++b) {
      uint8_t* blk = dst + (static_cast<size_t>(g) * p.nblk + b) * p.block_bytes;
      for (int j = 0; j < nr; ++j) {
        const int co_g = b * nr + j;
        if (co_g >= p.cout_g) break;
        const int co = g * p.cout_g + co_g;
        const int8_t* wc = w + co * k_per_co;
        int32_t sum = 0;
        for (int t = 0; t < p.taps; ++t) {
          for (int ci = 0; ci < p.cin_g; ++ci) {
            const int8_t v = wc[t * p.cin_g + ci];
            sum += v;
            const size_t e = (static_cast<size_t>(t) * (p.cin_pad / kg) + ci / kg) * nr * kg +
                             static_cast<size_t>(j) * kg + ci % kg;
            if (isa.esize == 2) {
              const int16_t v16 = v;
              std::memcpy(blk + 2 * e, &v16, 2);
            } else {
              blk[e] = static_cast<uint8_t>(v);
            }
          }
        }
        // VNNI multiplies (x + 128) as uint8: subtract 128 * sum(w) (wrapping).
        if (isa.fmt == InputFormat::kU8)
          p.bias[co] = static_cast<int32_t>(static_cast<uint32_t>(p.bias[co]) -
                                            static_cast<uint32_t>(sum) * 128u);
      }
    }
  }
  return plan;
}

std::shared_ptr<const ConvPlan> get_plan(const ConvIsa& isa, const isa::Conv& c, const Memory& mem,
                                         bool int32_out, bool residual, bool depthwise) {
  PlanCache& cache = plan_cache();
  PlanKey key{&isa,
              mem.constants.data,
              c.weight.offset,
              c.bias.count != 0 ? c.bias.offset + 1 : 0,
              int32_out ? 0 : c.multiplier.offset,
              int32_out ? 0 : c.shift.offset,
              residual ? c.residual_multiplier.offset + 1 : 0,
              c.in.dims[3],
              c.out.dims[3],
              c.groups,
              c.kernel_h,
              c.kernel_w,
              static_cast<uint8_t>(int32_out),
              static_cast<uint8_t>(residual)};
  bool pinned = false;
  std::shared_ptr<const ConvPlan> plan;
  {
    std::lock_guard<std::mutex> lk(cache.mu);
    for (const auto& r : cache.pinned)
      if (mem.constants.data >= r.base && mem.constants.data < r.base + r.size) pinned = true;
    auto it = cache.plans.find(key);
    if (it != cache.plans.end()) plan = it->second;
  }
  if (plan && pinned) return plan;
  const uint64_t fp = fingerprint(c, mem, int32_out, residual);
  if (plan && plan->fingerprint == fp) return plan;
  std::unique_ptr<ConvPlan> fresh = build_plan(isa, c, mem, int32_out, residual, depthwise);
  fresh->fingerprint = fp;
  std::shared_ptr<const ConvPlan> shared(std::move(fresh));
  std::lock_guard<std::mutex> lk(cache.mu);
  cache.plans[key] = shared;
  return shared;
}

RequantParams make_rq(const ConvPlan& p, const isa::Conv& c, bool int32_out, bool residual) {
  RequantParams rq;
  rq.bias = p.bias.data();
  rq.mult = p.mult.data();
  rq.rmult = residual ? p.rmult.data() : nullptr;
  rq.shift = p.shift.data();
  rq.m_odd = p.m_odd.data();
  rq.rm_odd = p.rm_odd.data();
  rq.c1 = p.c1.data();
  rq.s64 = p.s64.data();
  rq.off = p.off.data();
  rq.r32 = p.r32.data();
  rq.sh32 = p.sh32.data();
  rq.shift_ge33 = p.s_ge33 && !residual;
  int64_t tmin = INT32_MIN, tmax = INT32_MAX;
  if (c.out.dtype == isa::DType::kInt8) tmin = -128, tmax = 127;
  if (c.out.dtype == isa::DType::kInt16) tmin = -32768, tmax = 32767;
  rq.lo = static_cast<int32_t>(std::max<int64_t>(c.act_min, tmin));
  rq.hi = static_cast<int32_t>(std::min<int64_t>(c.act_max, tmax));
  if (rq.lo > rq.hi) rq.lo = rq.hi;  // clamp(v, lo, hi) with lo > hi is hi
  rq.fits32 = int32_out || (!residual && p.m_le_2s);
  rq.vector_safe = !(residual && p.has_s63);
  return rq;
}

// ---------------------------------------------------------------------------
// Output addressing.

struct OutView {
  uint8_t* base;
  int64_t s[4];  // element strides N, H, W, C
  int esize;
  isa::DType type;
  uint8_t* at(int64_t n, int64_t h, int64_t w, int64_t c) const {
    return base + (n * s[0] + h * s[1] + w * s[2] + c * s[3]) * esize;
  }
};
OutView out_view(const Memory& mem, const isa::TensorRef& t) {
  OutView v;
  v.base = mem.ptr(t);
  for (int k = 0; k < 4; ++k) v.s[k] = t.strides[k];
  v.esize = isa::dtype_size(t.dtype);
  v.type = t.dtype;
  return v;
}

struct Geometry {
  int64_t n, ih, iw, cin, oh, ow, cout;
  int kh, kw, sh, sw, pt, pl, dh, dw;
};
Geometry geometry(const isa::Conv& c) {
  return {c.in.dims[0],  c.in.dims[1],  c.in.dims[2], c.in.dims[3], c.out.dims[1],
          c.out.dims[2], c.out.dims[3], c.kernel_h,   c.kernel_w,   c.stride_h,
          c.stride_w,    c.pad_top,     c.pad_left,   c.dilation_h, c.dilation_w};
}

// ---------------------------------------------------------------------------
// Depthwise (int8 input, groups == Cin == Cout).

void conv_depthwise(const ConvIsa& isa, const isa::Conv& c, const Memory& mem, const ConvPlan& p,
                    const RequantParams& rq, bool residual) {
  const Geometry g = geometry(c);
  Workspace& ws = workspace();
  const int taps = p.taps;
  const int64_t C = g.cout;
  // Input pixels with channel stride 1 (in place) or a dense int8 copy.
  const int8_t* in_base = reinterpret_cast<const int8_t*>(mem.ptr(c.in));
  int64_t is[3] = {c.in.strides[0], c.in.strides[1], c.in.strides[2]};
  if (c.in.strides[3] != 1) {
    int8_t* d =
        reinterpret_cast<int8_t*>(ws.dense.get(static_cast<size_t>(g.n * g.ih * g.iw * C) + 64));
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t y = 0; y < g.ih; ++y)
        for (int64_t x = 0; x < g.iw; ++x) {
          const int8_t* s = in_base + n * is[0] + y * is[1] + x * is[2];
          int8_t* o = d + ((n * g.ih + y) * g.iw + x) * C;
          for (int64_t ch = 0; ch < C; ++ch) o[ch] = s[ch * c.in.strides[3]];
        }
    in_base = d;
    is[0] = g.ih * g.iw * C, is[1] = g.iw * C, is[2] = C;
  }
  const int8_t* zero = reinterpret_cast<const int8_t*>(ws.zero.get(static_cast<size_t>(C) + 64));
  std::memset(const_cast<int8_t*>(zero), 0, static_cast<size_t>(C) + 64);
  const OutView out = out_view(mem, c.out);
  const OutView res = residual ? out_view(mem, c.residual) : OutView{};
  const int8_t* w8 = reinterpret_cast<const int8_t*>(mem.ptr(c.weight));
  const int acc_stride = static_cast<int>(round_up(C, 16));
  const bool vec_out = c.out.strides[3] == 1 && (!residual || c.residual.strides[3] == 1);
  Needs needs;
  needs.px = static_cast<size_t>(g.ow * taps);
  needs.acc_bytes = static_cast<size_t>(g.ow) * acc_stride * 4 + 64;

  auto row = [&](int r) {
    const int64_t n = r / g.oh, oh = r % g.oh;
    Workspace& tw = workspace();
    const int8_t** px = grow(tw.px, needs.px);
    int32_t* acc = reinterpret_cast<int32_t*>(tw.acc.get(needs.acc_bytes));
    // Input rows of the kernel rows (nullptr outside the image), then the
    // pixel pointers; interior columns need no test.
    const int8_t* rbase[256];
    for (int kh = 0; kh < g.kh; ++kh) {
      const int64_t ih = oh * g.sh - g.pt + static_cast<int64_t>(kh) * g.dh;
      rbase[kh] = ih >= 0 && ih < g.ih ? in_base + n * is[0] + ih * is[1] : nullptr;
    }
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      const int64_t iw0 = ow * g.sw - g.pl;
      const bool interior = iw0 >= 0 && iw0 + static_cast<int64_t>(g.kw - 1) * g.dw < g.iw;
      const int8_t** pp = px + ow * taps;
      for (int kh = 0; kh < g.kh; ++kh) {
        const int8_t* rb = rbase[kh];
        for (int kw = 0; kw < g.kw; ++kw) {
          const int64_t iw = iw0 + static_cast<int64_t>(kw) * g.dw;
          pp[kh * g.kw + kw] =
              rb != nullptr && (interior || (iw >= 0 && iw < g.iw)) ? rb + iw * is[2] : zero;
        }
      }
    }
    if (p.c_full > 0) {
      DwArgs a{px, static_cast<int>(g.ow), taps, p.c_full, acc_stride, p.w.data(), acc};
      isa.dw(a);
    }
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      int32_t* ap = acc + ow * acc_stride;
      for (int64_t ch = p.c_full; ch < C; ++ch) {
        int32_t s = 0;
        for (int t = 0; t < taps; ++t)
          s += static_cast<int32_t>(px[ow * taps + t][ch]) * w8[ch * taps + t];
        ap[ch] = s;
      }
    }
    EpilogueArgs e;
    e.acc = acc;
    e.n = static_cast<int>(C);
    e.co0 = 0;
    e.npix = static_cast<int>(g.ow);
    e.acc_pstride = acc_stride;
    e.out = out.at(n, oh, 0, 0);
    e.out_pstride = c.out.strides[2] * out.esize;
    e.out_cstride = c.out.strides[3];
    e.out_type = c.out.dtype;
    e.residual = residual ? res.at(n, oh, 0, 0) : nullptr;
    e.res_pstride = residual ? c.residual.strides[2] * res.esize : 0;
    e.res_cstride = residual ? c.residual.strides[3] : 0;
    e.res_type = residual ? c.residual.dtype : isa::DType::kInt8;
    e.rq = &rq;
    if (vec_out)
      isa.epilogue(e);
    else
      epilogue_scalar(e);
  };
  parallel_for(static_cast<int>(g.n * g.oh), row, &needs);
}

// ---------------------------------------------------------------------------
// Indirect GEMM (int8 input).

// Copies the input into [N][IH][IW][cs] elements of the ISA's format and
// returns the element stride cs; channels [Cin, cs) are zero.
int64_t dense_input(const ConvIsa& isa, const isa::Conv& c, const Memory& mem, const ConvPlan& p,
                    Workspace& ws, uint8_t** out) {
  const Geometry g = geometry(c);
  const int64_t cs = round_up(std::max<int64_t>(g.cin, (c.groups - 1) * p.cin_g + p.cin_pad), 4);
  const int es = isa.esize;
  uint8_t* d = ws.dense.get(static_cast<size_t>(g.n * g.ih * g.iw * cs * es) + 64);
  const int8_t* src = reinterpret_cast<const int8_t*>(mem.ptr(c.in));
  const int64_t* st = c.in.strides;
  const int64_t rows = g.n * g.ih;
  const int64_t cin = g.cin;
  const InputFormat fmt = isa.fmt;
  auto copy_row = [&](int r) {
    const int64_t n = r / g.ih, y = r % g.ih;
    for (int64_t x = 0; x < g.iw; ++x) {
      const int8_t* s = src + n * st[0] + y * st[1] + x * st[2];
      uint8_t* o = d + ((n * g.ih + y) * g.iw + x) * cs * es;
      if (fmt == InputFormat::kS16) {
        int16_t* o16 = reinterpret_cast<int16_t*>(o);
        if (st[3] == 1) {
          for (int64_t ch = 0; ch < cin; ++ch) o16[ch] = s[ch];
        } else {
          for (int64_t ch = 0; ch < cin; ++ch) o16[ch] = s[ch * st[3]];
        }
        for (int64_t ch = cin; ch < cs; ++ch) o16[ch] = 0;
      } else {
        // Byte stores may alias anything: keep the bounds in locals.
        const uint8_t flip = fmt == InputFormat::kU8 ? 0x80 : 0;
        const int64_t n_in = cin, n_all = cs, s3 = st[3];
        if (s3 == 1 && flip == 0) {
          std::memcpy(o, s, static_cast<size_t>(n_in));
        } else if (s3 == 1) {
          for (int64_t ch = 0; ch < n_in; ++ch) o[ch] = static_cast<uint8_t>(s[ch] ^ -128);
        } else {
          for (int64_t ch = 0; ch < n_in; ++ch) o[ch] = static_cast<uint8_t>(s[ch * s3]) ^ flip;
        }
        std::memset(o + n_in, flip, static_cast<size_t>(n_all - n_in));
      }
    }
  };
  parallel_for(static_cast<int>(rows), copy_row);
  *out = d;
  return cs;
}

// Row-tap mode: copies the input into a zero-padded [N][Hp][Wp][Cin] buffer
// covering every tap of every output pixel (padded coordinates y = ih +
// pad_top, x = iw + pad_left), in the ISA's format.
uint8_t* dense_padded(const ConvIsa& isa, const isa::Conv& c, const Memory& mem, const ConvPlan& p,
                      Workspace& ws, int64_t* hp_out, int64_t* wp_out) {
  const Geometry g = geometry(c);
  const int64_t hp = (g.oh - 1) * g.sh + static_cast<int64_t>(g.kh - 1) * g.dh + 1;
  const int64_t wp = (g.ow - 1) * g.sw + g.kw;
  const int es = isa.esize;
  const int64_t cin = g.cin, row_elems = wp * cin;
  const size_t bytes = static_cast<size_t>(g.n * hp * row_elems * es + (p.cin_pad + 64) * es);
  uint8_t* d = ws.dense.get(bytes);
  const uint8_t zb = isa.fmt == InputFormat::kU8 ? 0x80 : 0;
  std::memset(d + g.n * hp * row_elems * es, zb, static_cast<size_t>((p.cin_pad + 64) * es));
  const int8_t* src = reinterpret_cast<const int8_t*>(mem.ptr(c.in));
  const int64_t* st = c.in.strides;
  auto zero = [&](uint8_t* o, int64_t elems) {
    std::memset(o, es == 2 ? 0 : zb, static_cast<size_t>(elems * es));
  };
  auto copy_row = [&](int r) {
    const int64_t n = r / hp, y = r % hp, ih = y - g.pt;
    uint8_t* o = d + r * row_elems * es;
    if (ih < 0 || ih >= g.ih) {
      zero(o, row_elems);
      return;
    }
    const int64_t x0 = std::min<int64_t>(wp, std::max<int64_t>(0, g.pl));  // first in-image x
    const int64_t x1 =
        std::max<int64_t>(x0, std::min<int64_t>(wp, g.pl + g.iw));  // end of in-image x
    zero(o, x0 * cin);
    zero(o + x1 * cin * es, (wp - x1) * cin);
    for (int64_t x = x0; x < x1; ++x) {
      const int8_t* s = src + n * st[0] + ih * st[1] + (x - g.pl) * st[2];
      uint8_t* px = o + x * cin * es;
      if (es == 2) {
        int16_t* p16 = reinterpret_cast<int16_t*>(px);
        if (st[3] == 1) {
          for (int64_t ch = 0; ch < cin; ++ch) p16[ch] = s[ch];
        } else {
          for (int64_t ch = 0; ch < cin; ++ch) p16[ch] = s[ch * st[3]];
        }
      } else if (st[3] == 1 && zb == 0) {
        std::memcpy(px, s, static_cast<size_t>(cin));
      } else {
        const int64_t n_in = cin, s3 = st[3];
        const uint8_t flip = zb;
        for (int64_t ch = 0; ch < n_in; ++ch) px[ch] = static_cast<uint8_t>(s[ch * s3]) ^ flip;
      }
    }
  };
  parallel_for(static_cast<int>(g.n * hp), copy_row);
  *hp_out = hp;
  *wp_out = wp;
  return d;
}

void conv_gemm(const ConvIsa& isa, const isa::Conv& c, const Memory& mem, const ConvPlan& p,
               const RequantParams& rq, bool residual) {
  const Geometry g = geometry(c);
  Workspace& ws = workspace();
  uint8_t* dense = nullptr;
  int64_t hp = 0, wp = 0;
  int64_t cs = 0;
  if (p.rowtap) {
    dense = dense_padded(isa, c, mem, p, ws, &hp, &wp);
    cs = g.cin;
  } else if (!p.im2col) {
    cs = dense_input(isa, c, mem, p, ws, &dense);
  }
  const int es = isa.esize;
  const int8_t* src = reinterpret_cast<const int8_t*>(mem.ptr(c.in));
  const int64_t* ist = c.in.strides;
  const int cin_g_src = p.im2col ? p.cin_g / (g.kh * g.kw) : p.cin_g;
  // Zero row: the format's zero (0x80 for u8) for taps outside the image.
  uint8_t* zero = ws.zero.get(static_cast<size_t>(cs * es) + 64);
  std::memset(zero, isa.fmt == InputFormat::kU8 ? 0x80 : 0, static_cast<size_t>(cs * es) + 64);

  const int64_t pixels = g.n * g.oh * g.ow;
  int mr = isa.mr;
  void (*gemm)(const GemmArgs&) = isa.gemm;
  if (isa.mr2 > 0) {
    const int64_t rows1 = (pixels + mr - 1) / mr * mr,
                  rows2 = (pixels + isa.mr2 - 1) / isa.mr2 * isa.mr2;
    if (rows2 * 100 < rows1 * 95) mr = isa.mr2, gemm = isa.gemm2;
  }
  const int nr = isa.nr, taps = p.taps;
  const int64_t tiles = (pixels + mr - 1) / mr;
  // Pixel chunks: every weight block of the group sweeps over the tiles of a
  // chunk, so the chunk's input (and the im2col rows) should stay in L2 and
  // its accumulators too; large chunks stream big weight sets fewer times.
  const uint8_t zero_byte = isa.fmt == InputFormat::kU8 ? 0x80 : 0;
  const int64_t px_in_bytes =
      p.im2col ? static_cast<int64_t>(p.cin_pad) * es
               : std::max<int64_t>(1, g.cin * es * std::min<int64_t>(4, int64_t{g.sh} * g.sw));
  const int64_t px_acc_bytes = static_cast<int64_t>(p.nblk) * nr * 4;
  const int64_t chunk_px =
      std::max<int64_t>(mr, std::min((256 * 1024) / px_in_bytes, (192 * 1024) / px_acc_bytes));
  int64_t chunk_tiles = std::max<int64_t>(1, chunk_px / mr);
  const int threads = conv_threads();
  const int64_t chunks_min = threads > 1 ? 2 * threads : 1;
  if (threads > 1 && (tiles + chunk_tiles - 1) / chunk_tiles < chunks_min)
    chunk_tiles = std::max<int64_t>(1, (tiles + chunks_min - 1) / chunks_min);
  const int64_t chunks = (tiles + chunk_tiles - 1) / chunk_tiles;
  // With few chunks and several threads, split the weight blocks too.
  int nsplit = 1;
  if (threads > 1 && chunks * c.groups < 2 * threads)
    nsplit = static_cast<int>(std::min<int64_t>(p.nblk, (2 * threads + chunks - 1) / chunks));
  const OutView out = out_view(mem, c.out);
  const OutView res = residual ? out_view(mem, c.residual) : OutView{};
  const bool vec_out = c.out.strides[3] == 1 && (!residual || c.residual.strides[3] == 1);
  const int64_t pix_per_img = g.oh * g.ow;

  const int max_acc_stride = ((p.nblk + nsplit - 1) / nsplit) * nr;
  Needs needs;
  needs.rows = static_cast<size_t>(chunk_tiles * taps * mr);
  needs.acc_bytes = static_cast<size_t>(chunk_tiles * mr) * max_acc_stride * 4 + 64;
  needs.col_bytes = p.im2col ? static_cast<size_t>(chunk_tiles * mr) * p.cin_pad * es + 64 : 0;
  // Accumulators of a chunk: [chunk pixels][weight blocks of the task * NR].
  auto task = [&](int ti) {
    const int split = ti % nsplit;
    const int64_t chunk = (ti / nsplit) % chunks;
    const int grp = static_cast<int>(ti / nsplit / chunks);
    const int b0 = static_cast<int>(static_cast<int64_t>(p.nblk) * split / nsplit);
    const int b1 = static_cast<int>(static_cast<int64_t>(p.nblk) * (split + 1) / nsplit);
    const int64_t t0 = chunk * chunk_tiles, t1 = std::min(tiles, t0 + chunk_tiles);
    const int64_t px0 = t0 * mr, npx = std::min(pixels, t1 * mr) - px0;
    const int acc_stride = (b1 - b0) * nr;
    // Scratch sized for the largest task, whichever thread runs which task,
    // so that no later run allocates.
    Workspace& tw = workspace();
    const void** rows = grow(tw.rows, needs.rows);
    int32_t* acc = reinterpret_cast<int32_t*>(tw.acc.get(needs.acc_bytes));
    const uint8_t* gbase =
        dense != nullptr ? dense + static_cast<int64_t>(grp) * p.cin_g * es : nullptr;
    // Row pointers of every tile of the chunk: [tile][tap][m]; pixel
    // coordinates advance incrementally (no division per pixel).
    int64_t pn = px0 / pix_per_img, poh = (px0 % pix_per_img) / g.ow, pow_ = px0 % g.ow;
    uint8_t* col = p.im2col ? tw.col.get(needs.col_bytes) : nullptr;
    for (int64_t i = 0; i < (t1 - t0) * mr; ++i) {
      const void** tr = rows + (i / mr) * taps * mr + (i % mr);
      if (px0 + i >= pixels) {  // padding rows of the last tile repeat its first pixel
        for (int t = 0; t < taps; ++t) tr[t * mr] = tr[t * mr - (i % mr)];
        continue;
      }
      const int64_t ih0 = poh * g.sh - g.pt, iw0 = pow_ * g.sw - g.pl;
      if (p.im2col) {
        // One K-long row: for every tap, cin_g converted values or zeros.
        uint8_t* row = col + i * p.cin_pad * es;
        for (int kh = 0; kh < g.kh; ++kh) {
          const int64_t ih = ih0 + static_cast<int64_t>(kh) * g.dh;
          for (int kw = 0; kw < g.kw; ++kw) {
            const int64_t iw = iw0 + static_cast<int64_t>(kw) * g.dw;
            uint8_t* d = row + static_cast<int64_t>(kh * g.kw + kw) * cin_g_src * es;
            if (ih >= 0 && ih < g.ih && iw >= 0 && iw < g.iw) {
              const int8_t* sp = src + pn * ist[0] + ih * ist[1] + iw * ist[2] +
                                 static_cast<int64_t>(grp) * cin_g_src * ist[3];
              if (es == 2) {
                int16_t* d16 = reinterpret_cast<int16_t*>(d);
                const int64_t s3 = ist[3];
                switch (cin_g_src) {  // the usual image inputs, unrolled
                  case 3:
                    d16[0] = sp[0], d16[1] = sp[s3], d16[2] = sp[2 * s3];
                    break;
                  case 4:
                    d16[0] = sp[0], d16[1] = sp[s3], d16[2] = sp[2 * s3], d16[3] = sp[3 * s3];
                    break;
                  default:
                    for (int ci = 0; ci < cin_g_src; ++ci) d16[ci] = sp[ci * s3];
                }
              } else {
                for (int ci = 0; ci < cin_g_src; ++ci)
                  d[ci] = static_cast<uint8_t>(sp[ci * ist[3]]) ^ zero_byte;
              }
            } else if (es == 2) {
              std::memset(d, 0, static_cast<size_t>(cin_g_src) * 2);
            } else {
              std::memset(d, zero_byte, static_cast<size_t>(cin_g_src));
            }
          }
        }
        uint8_t* tail = row + static_cast<int64_t>(p.cin_g) * es;
        if (es == 2)
          std::memset(tail, 0, static_cast<size_t>(p.cin_pad - p.cin_g) * 2);
        else
          std::memset(tail, zero_byte, static_cast<size_t>(p.cin_pad - p.cin_g));
        tr[0] = row;
      } else if (p.rowtap) {
        const uint8_t* base = dense + ((pn * hp + poh * g.sh) * wp + pow_ * g.sw) * cs * es;
        for (int kh = 0; kh < g.kh; ++kh)
          tr[kh * mr] = base + static_cast<int64_t>(kh) * g.dh * wp * cs * es;
      } else {
        for (int kh = 0; kh < g.kh; ++kh) {
          const int64_t ih = ih0 + static_cast<int64_t>(kh) * g.dh;
          const bool row_in = ih >= 0 && ih < g.ih;
          const uint8_t* rp = gbase + ((pn * g.ih + ih) * g.iw) * cs * es;
          for (int kw = 0; kw < g.kw; ++kw) {
            const int64_t iw = iw0 + static_cast<int64_t>(kw) * g.dw;
            tr[(kh * g.kw + kw) * mr] = row_in && iw >= 0 && iw < g.iw ? rp + iw * cs * es : zero;
          }
        }
      }
      if (++pow_ == g.ow) {
        pow_ = 0;
        if (++poh == g.oh) poh = 0, ++pn;
      }
    }
    for (int b = b0; b < b1; ++b) {
      const uint8_t* wb = p.w.data() + (static_cast<size_t>(grp) * p.nblk + b) * p.block_bytes;
      for (int64_t t = t0; t < t1; ++t) {
        GemmArgs a{rows + (t - t0) * taps * mr,
                   taps,
                   p.cin_pad,
                   wb,
                   acc + (t - t0) * mr * acc_stride + (b - b0) * nr,
                   acc_stride};
        gemm(a);
      }
    }
    const int co_g0 = b0 * nr;
    const int nvalid = std::min(b1 * nr, p.cout_g) - co_g0;
    const int co0 = grp * p.cout_g + co_g0;
    pn = px0 / pix_per_img, poh = (px0 % pix_per_img) / g.ow, pow_ = px0 % g.ow;
    EpilogueArgs e;
    e.n = nvalid;
    e.co0 = co0;
    e.out_cstride = c.out.strides[3];
    e.out_type = c.out.dtype;
    e.res_cstride = residual ? c.residual.strides[3] : 0;
    e.res_type = residual ? c.residual.dtype : isa::DType::kInt8;
    e.rq = &rq;
    e.acc_pstride = acc_stride;
    e.out_pstride = c.out.strides[2] * out.esize;
    e.res_pstride = residual ? c.residual.strides[2] * res.esize : 0;
    for (int64_t i = 0; i < npx;) {
      const int64_t run = std::min(npx - i, g.ow - pow_);  // pixels left in this output row
      e.npix = static_cast<int>(run);
      e.acc = acc + i * acc_stride;
      e.out = out.at(pn, poh, pow_, co0);
      e.residual = residual ? res.at(pn, poh, pow_, co0) : nullptr;
      if (vec_out)
        isa.epilogue(e);
      else
        epilogue_scalar(e);
      i += run;
      pow_ += run;
      if (pow_ == g.ow) {
        pow_ = 0;
        if (++poh == g.oh) poh = 0, ++pn;
      }
    }
  };
  parallel_for(static_cast<int>(c.groups * chunks * nsplit), task, &needs);
}

// ---------------------------------------------------------------------------
// Generic exact path: int16 inputs and transposed convolution. Per output
// pixel, int64 accumulators for every output channel; weights transposed per
// call into [group][tap][ci][co_g] int32 so the inner loop runs over channels.

template <class T>
inline int64_t load_elem(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void conv_generic(const isa::Conv& c, const Memory& mem, bool transposed) {
  const Geometry g = geometry(c);
  const int groups = c.groups;
  const int64_t cin_g = g.cin / groups, cout_g = g.cout / groups;
  const int taps = g.kh * g.kw;
  const bool int32_out = c.out.dtype == isa::DType::kInt32;
  const bool residual = c.has_residual != 0 && !int32_out;
  Workspace& ws = workspace();
  const size_t wcount = static_cast<size_t>(g.cout) * taps * cin_g;
  int32_t* wt =
      reinterpret_cast<int32_t*>(ws.dense.get(wcount * 4 + static_cast<size_t>(g.cout) * 8 + 64));
  int64_t* acc = reinterpret_cast<int64_t*>(wt + wcount + (wcount & 1));
  const int8_t* w = reinterpret_cast<const int8_t*>(mem.ptr(c.weight));
  for (int gi = 0; gi < groups; ++gi)
    for (int64_t j = 0; j < cout_g; ++j)
      for (int t = 0; t < taps; ++t)
        for (int64_t ci = 0; ci < cin_g; ++ci)
          wt[((gi * taps + t) * cin_g + ci) * cout_g + j] =
              w[((gi * cout_g + j) * taps + t) * cin_g + ci];
  const uint8_t* in = mem.ptr(c.in);
  const int ies = isa::dtype_size(c.in.dtype);
  const int64_t* is = c.in.strides;
  const OutView out = out_view(mem, c.out);
  const OutView res = residual ? out_view(mem, c.residual) : OutView{};
  int64_t tmin = INT32_MIN, tmax = INT32_MAX;
  if (c.out.dtype == isa::DType::kInt8) tmin = -128, tmax = 127;
  if (c.out.dtype == isa::DType::kInt16) tmin = -32768, tmax = 32767;
  int64_t lo = std::max<int64_t>(c.act_min, tmin), hi = std::min<int64_t>(c.act_max, tmax);
  if (lo > hi) lo = hi;

  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t oh = 0; oh < g.oh; ++oh) {
      for (int64_t ow = 0; ow < g.ow; ++ow) {
        for (int64_t co = 0; co < g.cout; ++co) acc[co] = 0;
        for (int kh = 0; kh < g.kh; ++kh) {
          for (int kw = 0; kw < g.kw; ++kw) {
            int64_t ih, iw;
            if (!transposed) {
              ih = oh * g.sh - g.pt + static_cast<int64_t>(kh) * g.dh;
              iw = ow * g.sw - g.pl + static_cast<int64_t>(kw) * g.dw;
            } else {
              const int64_t nh = oh + g.pt - static_cast<int64_t>(kh) * g.dh;
              const int64_t nw = ow + g.pl - static_cast<int64_t>(kw) * g.dw;
              if (nh < 0 || nw < 0 || nh % g.sh != 0 || nw % g.sw != 0) continue;
              ih = nh / g.sh;
              iw = nw / g.sw;
            }
            if (ih < 0 || ih >= g.ih || iw < 0 || iw >= g.iw) continue;
            const uint8_t* px = in + (n * is[0] + ih * is[1] + iw * is[2]) * ies;
            const int t = kh * g.kw + kw;
            for (int gi = 0; gi < groups; ++gi) {
              int64_t* ag = acc + gi * cout_g;
              for (int64_t ci = 0; ci < cin_g; ++ci) {
                const uint8_t* xp = px + (gi * cin_g + ci) * is[3] * ies;
                const int64_t x = ies == 1 ? static_cast<int8_t>(*xp) : load_elem<int16_t>(xp);
                if (x == 0) continue;
                const int32_t* wr = wt + ((gi * taps + t) * cin_g + ci) * cout_g;
                for (int64_t j = 0; j < cout_g; ++j) ag[j] += x * wr[j];
              }
            }
          }
        }
        for (int64_t co = 0; co < g.cout; ++co) {
          const int64_t a =
              acc[co] + (c.bias.count != 0 ? load_const<int32_t>(mem, c.bias, co) : 0);
          int64_t y;
          if (int32_out) {
            y = a < lo ? lo : (a > hi ? hi : a);
          } else {
            const int s =
                std::min(63, std::max(0, static_cast<int>(load_const<int8_t>(mem, c.shift, co))));
            int128 v = static_cast<int128>(a) * load_const<int32_t>(mem, c.multiplier, co);
            if (residual) {
              const uint8_t* rp = res.at(n, oh, ow, co);
              const int64_t r = res.esize == 1 ? static_cast<int8_t>(*rp) : load_elem<int16_t>(rp);
              v += static_cast<int128>(r) * load_const<int32_t>(mem, c.residual_multiplier, co);
            }
            if (s > 0) v = (v + (static_cast<int128>(1) << (s - 1))) >> s;
            y = v < lo ? lo : (v > hi ? hi : static_cast<int64_t>(v));
          }
          uint8_t* op = out.at(n, oh, ow, co);
          if (out.esize == 1) {
            *reinterpret_cast<int8_t*>(op) = static_cast<int8_t>(y);
          } else if (out.esize == 2) {
            const int16_t v16 = static_cast<int16_t>(y);
            std::memcpy(op, &v16, 2);
          } else {
            const int32_t v32 = static_cast<int32_t>(y);
            std::memcpy(op, &v32, 4);
          }
        }
      }
    }
  }
}

// True when no input element of the int8 view is negative. With channel
// stride 1 each image row is scanned as one byte span (pixel padding
// included, which can only make the answer conservative), 8 bytes at a time.
bool nonnegative(const isa::Conv& c, const Memory& mem) {
  const uint8_t* src = mem.ptr(c.in);
  const int64_t* st = c.in.strides;
  const int64_t cin = c.in.dims[3];
  for (int64_t n = 0; n < c.in.dims[0]; ++n) {
    for (int64_t y = 0; y < c.in.dims[1]; ++y) {
      const uint8_t* row = src + n * st[0] + y * st[1];
      uint64_t any = 0;
      if (st[3] == 1) {
        const int64_t span = (c.in.dims[2] - 1) * st[2] + cin;
        int64_t i = 0;
        for (; i + 8 <= span; i += 8) {
          uint64_t v;
          std::memcpy(&v, row + i, 8);
          any |= v;
        }
        for (; i < span; ++i) any |= row[i];
      } else {
        for (int64_t x = 0; x < c.in.dims[2]; ++x)
          for (int64_t ch = 0; ch < cin; ++ch) any |= row[x * st[2] + ch * st[3]];
      }
      if (any & 0x8080808080808080ull) return false;
    }
  }
  return true;
}

bool structurally_valid(const isa::Conv& c) {
  const int64_t cin = c.in.dims[3], cout = c.out.dims[3];
  return c.groups >= 1 && cin >= 1 && cout >= 1 && cin % c.groups == 0 && cout % c.groups == 0 &&
         c.kernel_h >= 1 && c.kernel_w >= 1 && c.stride_h >= 1 && c.stride_w >= 1 &&
         c.dilation_h >= 1 && c.dilation_w >= 1;
}

}  // namespace

int conv_threads() {
  int n = g_threads.load(std::memory_order_relaxed);
  if (n == 0) {
    n = 1;
    if (const char* e = std::getenv("OPENBPU_SIM_THREADS")) {
      const int v = std::atoi(e);
      n = v < 1 ? 1 : (v > 64 ? 64 : v);
    }
    g_threads.store(n, std::memory_order_relaxed);
  }
  return n;
}

void set_conv_threads(int n) { g_threads.store(n < 1 ? 1 : (n > 64 ? 64 : n)); }

void conv(const ConvIsa& isa, const isa::Conv& c, const Memory& mem) {
  if (!structurally_valid(c)) return;
  if (c.in.dtype != isa::DType::kInt8) {
    conv_generic(c, mem, false);
    return;
  }
  const bool int32_out = c.out.dtype == isa::DType::kInt32;
  const bool residual = c.has_residual != 0 && !int32_out;
  const bool depthwise = c.groups == c.in.dims[3] && c.groups == c.out.dims[3] && c.kernel_h <= 256;
  // GEMMs over inputs without negative values may use the ISA's variant
  // for them (one pass over the input decides).
  const ConvIsa& gi =
      !depthwise && isa.nonneg != nullptr && nonnegative(c, mem) ? *isa.nonneg : isa;
  const std::shared_ptr<const ConvPlan> plan = get_plan(gi, c, mem, int32_out, residual, depthwise);
  const RequantParams rq = make_rq(*plan, c, int32_out, residual);
  if (depthwise)
    conv_depthwise(gi, c, mem, *plan, rq, residual);
  else
    conv_gemm(gi, c, mem, *plan, rq, residual);
}

void deconv(const isa::Conv& c, const Memory& mem) {
  if (!structurally_valid(c)) return;
  conv_generic(c, mem, true);
}

void pin_constants_impl(const uint8_t* base, uint64_t size) {
  PlanCache& cache = plan_cache();
  std::lock_guard<std::mutex> lk(cache.mu);
  // Plans made for earlier bytes at these addresses (a freed blob, unpinned
  // so far) would be served unchecked once pinned: drop them.
  for (auto it = cache.plans.begin(); it != cache.plans.end();) {
    if (it->first.consts >= base && it->first.consts < base + std::max<uint64_t>(size, 1))
      it = cache.plans.erase(it);
    else
      ++it;
  }
  cache.pinned.push_back({base, size});
}

void unpin_constants_impl(const uint8_t* base) {
  PlanCache& cache = plan_cache();
  std::lock_guard<std::mutex> lk(cache.mu);
  uint64_t size = 0;
  for (auto it = cache.pinned.begin(); it != cache.pinned.end(); ++it) {
    if (it->base == base) {
      size = it->size;
      cache.pinned.erase(it);
      break;
    }
  }
  for (auto it = cache.plans.begin(); it != cache.plans.end();) {
    if (it->first.consts >= base && it->first.consts < base + std::max<uint64_t>(size, 1))
      it = cache.plans.erase(it);
    else
      ++it;
  }
}

}  // namespace openbpu::sim::kern
