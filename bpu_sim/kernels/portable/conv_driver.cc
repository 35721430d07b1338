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
//                          short rows (image stems) instead run one tap
//                          over a per-output-row copy of kernel columns
//                          (ConvPlan::columns);
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
#include <cfenv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "bpu_sim/kernels/kernels.h"
#include "bpu_sim/spin.h"

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
      // (at least doubling: a workspace grown layer by layer reallocates,
      // and faults in fresh pages, a few times rather than at every layer)
      const size_t n = (std::max(bytes, 2 * cap_) + 4095) / 4096 * 4096;
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

std::atomic<int> g_threads{1};  // set_conv_threads (libdnn: OPENBPU_SIM_THREADS)
std::atomic<uint64_t> g_spin_ns{20'000};  // set_conv_spin_ns (libdnn: OPENBPU_SPIN_US)

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
    // Helpers finish within a convolution's tail: poll before sleeping (a
    // wake-up costs tens of microseconds on a VM, as much as a small layer).
    if (active_ != 0) done_.poll(lk, g_spin_ns.load(std::memory_order_relaxed));
    done_.cv().wait(lk, [&] { return active_ == 0; });
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
        // The next convolution usually follows within microseconds.
        if (!stop_ && gen_ == seen) cv_.poll(lk, g_spin_ns.load(std::memory_order_relaxed));
        cv_.cv().wait(lk, [&] { return stop_ || gen_ != seen; });
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
  PollingCondition cv_, done_;
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
  AlignedBuf dense, zero, acc, col, ring, scratch;
  AlignedBuf rows, px, outp;  // pointer arrays (grow<T>), written before read
};
Workspace& workspace() {
  thread_local Workspace ws;
  return ws;
}

// n elements of T in b (not initialized, not preserved when it grows).
template <class T>
T* grow(AlignedBuf& b, size_t n) {
  return reinterpret_cast<T*>(b.get(n * sizeof(T)));
}

// The largest per-task scratch of a parallel loop; every participating
// thread sizes its workspace to it first.
struct Needs {
  size_t rows = 0, px = 0, outp = 0, acc_bytes = 0, col_bytes = 0, ring_bytes = 0;
  size_t scratch_bytes = 0;  // ConvIsa::gemm_scratch
};
void size_workspace(const void* n) {
  const Needs& need = *static_cast<const Needs*>(n);
  Workspace& w = workspace();
  grow<const void*>(w.rows, need.rows);
  grow<const int8_t*>(w.px, need.px);
  grow<int8_t*>(w.outp, need.outp);
  w.acc.get(need.acc_bytes);
  w.col.get(need.col_bytes);
  w.ring.get(need.ring_bytes);
  w.scratch.get(need.scratch_bytes);
}

// Host threads for one convolution: OPENBPU_SIM_THREADS, but 1 below
// g_split_min_macs multiply-accumulates (default 2^21), where handing tasks
// to the helpers costs more than it saves (the PP-OCR classifier's layers,
// 0.05-1.2 M each, took 0.56 ms per frame with 2 threads against 0.40 with 1).
std::atomic<int64_t> g_split_min_macs{int64_t{1} << 21};
int split_threads(const isa::Conv& c, bool transposed = false) {
  return isa::conv_macs(c, transposed) < g_split_min_macs.load(std::memory_order_relaxed) ? 1
                                                                                           : conv_threads();
}

// f(i) for i in [0, n) on `threads` host threads (the caller and its helpers).
template <class F>
void parallel_for(int n, F& f, int threads, const Needs* needs = nullptr) {
  if (n <= 0) return;
  if (threads <= 1 || n == 1) {
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
  bool columns = false;  // row taps as one tap of K = kw * kh * cin, [kw][kh][ci] (GemmRun)
  int cin_g = 0, cout_g = 0, taps = 0, cin_pad = 0, nblk = 0;  // gemm geometry per group
  size_t block_bytes = 0;                                      // one packed NR block
  int c_full = 0;                                              // depthwise vector channels
  bool dw4 = false;  // depthwise through ConvIsa::dw4_row (no weight is -128)
  int dw4_cp = 0;
  int dw4_gstep = 2;  // DwPackArgs::gstep
  size_t flat_bytes = 0, flat_off = 0;  // depthwise 1x1: ConvIsa::dwflat constants in w
  bool flat_float = false;  // the dwflat pack uses float_requant (any S)
  AlignedBuf w;
  std::vector<int32_t> bias, mult, rmult, m_odd, rm_odd, r32, sh32, s32;
  std::vector<int64_t> c1, s64, off;
  std::vector<int8_t> shift;
  bool has_m128 = false;  // a weight equals -128 (ConvIsa::sign_abs GEMMs are not exact)
  bool m_le_2s = true;   // every M <= 2^S
  bool has_s63 = false;  // some S == 63
  bool s_ge33 = true;    // every S >= 33
  // float_requant (kernels.h) proven exact for every channel: its constants.
  bool float_rq = false;
  bool float3 = false;  // and every lo == 0: the 3-operation form
  std::vector<float> fhi, flo;
  // RequantParams::hi32 proven for every channel: 32 - k and its constants.
  bool hi32 = false;
  int32_t hi32_srl = 32;
  std::vector<int32_t> hi32_r, hi32_sh;
};

struct PlanKey {
  const ConvIsa* isa;
  const uint8_t* consts;
  uint64_t w, b, m, s, r;
  int32_t cin, cout, groups, kh, kw;
  int64_t ps;  // input pixel stride (the flat depthwise period)
  uint8_t int32_out, residual, transposed;
  bool operator==(const PlanKey& o) const {
    return isa == o.isa && consts == o.consts && w == o.w && b == o.b && m == o.m && s == o.s &&
           r == o.r && cin == o.cin && cout == o.cout && groups == o.groups && kh == o.kh &&
           kw == o.kw && ps == o.ps && int32_out == o.int32_out && residual == o.residual &&
           transposed == o.transposed;
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

// requant(acc, M, S) = requant(acc, M * 2^k, S + k) exactly (numerator and
// denominator times 2^k): a shift below 33 becomes 33 where M * 2^(33 - S)
// stays below 2^31 (the converter's 24-bit multipliers from S = 26 on), so
// the S >= 33 forms apply (a residual's Mr shares S: not there).
void widen_shift(int32_t* m, int* s) {
  if (*s >= 33 || *s <= 2 || (int64_t{*m} << (33 - *s)) >= (int64_t{1} << 31)) return;
  *m = static_cast<int32_t>(int64_t{*m} << (33 - *s));
  *s = 33;
}

// |bias| + 128 * sum |w| over a channel's k weights: its accumulators' bound
// for inputs in [-128, 127] (a loop the compiler vectorizes).
int64_t acc_bound(int32_t bias, const int8_t* w, int64_t k) {
  int64_t s = 0;
  for (int64_t i = 0; i < k; ++i) s += w[i] < 0 ? -w[i] : w[i];
  return std::llabs(int64_t{bias}) + 128 * s;
}

// float_requant for every output channel of weights w ([cout][k] int8):
// |acc| <= |bias| + 128 * sum |w| (inputs in [-128, 127]); float3 when
// every lo is 0 (multipliers of at most 24 significant bits).
void plan_float_requant(ConvPlan* p, const int8_t* w, int cout, int64_t k) {
  p->fhi.assign(p->mult.size(), 0.0f);
  p->flo.assign(p->mult.size(), 0.0f);
  bool lo0 = true;
  for (int co = 0; co < cout; ++co) {
    const int64_t amax = acc_bound(p->bias[co], w + co * k, k);
    FloatRequant f;
    if (!float_requant_channel(amax, p->mult[co], p->shift[co], &f)) return;
    p->fhi[co] = f.hi, p->flo[co] = f.lo;
    lo0 = lo0 && f.lo == 0.0f;
  }
  p->float_rq = true;
  p->float3 = lo0;
}

// RequantParams::hi32 for every output channel of weights w ([cout][k]
// int8), before the VNNI compensation changes the bias: k = max(0, 33 -
// min S); every S + k <= 62 and (|bias| + 128 * sum |w|) * M + 128 * Mr
// < 2^(62 - k) (Mr with a residual).
void plan_hi32(ConvPlan* p, const int8_t* w, int cout, int64_t k, bool residual) {
  int smin = 63;
  for (int co = 0; co < cout; ++co) smin = std::min<int>(smin, p->shift[co]);
  const int sk = std::max(0, 33 - smin);
  if (sk > 32) return;  // (a shift of 0: hi32_srl would be negative)
  p->hi32_r.assign(p->mult.size(), 0);
  p->hi32_sh.assign(p->mult.size(), 1);
  for (int co = 0; co < cout; ++co) {
    const int s = p->shift[co] + sk;
    int128 v = acc_bound(p->bias[co], w + co * k, k);
    v = v * p->mult[co] + (residual ? int128{128} * p->rmult[co] : 0);
    if (s > 62 || v >= (int128{1} << (62 - sk))) return;
    p->hi32_r[co] = int32_t{1} << (s - 33), p->hi32_sh[co] = s - 32;
  }
  p->hi32 = true;
  p->hi32_srl = 32 - sk;
}

// ConvPlan::columns: the weight index ([kh][kw][ci]) of K position k
// ([kw][kh][ci]).
int64_t column_index(const isa::Conv& c, int64_t k) {
  const int64_t cin = c.in.dims[3], kh = c.kernel_h;
  const int64_t ci = k % cin, h = k / cin % kh, w = k / cin / kh;
  return (h * c.kernel_w + w) * cin + ci;
}

// The depthwise part of build_plan: dw4 (ConvIsa::dw4_row) when no weight
// is -128 and dilation_w is 1, its gstep 4 for stride-2 3x3 / 5x5 where the
// ISA asks (ConvIsa::dw4_step4), the flat 1x1 constants after it; else dw.
void plan_depthwise(const ConvIsa& isa, const isa::Conv& c, const int8_t* w, bool int32_out,
                    bool residual, ConvPlan& p) {
  const int cout = c.out.dims[3];
  bool m128 = false;
  for (int64_t i = 0; i < static_cast<int64_t>(cout) * p.taps; ++i) m128 |= w[i] == -128;
  if (isa.dw4_row != nullptr && !m128 && c.dilation_w == 1) {
    p.dw4 = true;
    p.dw4_cp = isa.dw4_cpad(cout);
    p.dw4_gstep = isa.dw4_step4 && c.stride_w == 2 && (c.kernel_w == 3 || c.kernel_w == 5) ? 4 : 2;
    if (!int32_out && !residual) plan_float_requant(&p, w, cout, p.taps);
    DwPackArgs a{w,         cout,          c.kernel_h,   c.kernel_w,
                 p.bias.data(), p.mult.data(), p.r32.data(), p.sh32.data()};
    if (p.float_rq) a.fhi = p.fhi.data(), a.flo = p.flo.data();
    a.gstep = p.dw4_gstep;
    const size_t bytes = round_up(static_cast<int64_t>(isa.dw4_pack(a, nullptr)), 64);
    // 1x1 kernels may also run flat (per-channel scales): its constants follow.
    DwFlatPackArgs f{w, cout, static_cast<int>(c.in.strides[2]), p.bias.data(), p.mult.data(),
                     p.r32.data(), p.sh32.data()};
    if (p.float_rq) f.fhi = p.fhi.data(), f.flo = p.flo.data(), f.float3 = p.float3;
    f.float_out = &p.flat_float;
    if (isa.dwflat_pack != nullptr && c.kernel_h == 1 && c.kernel_w == 1 &&
        c.in.strides[2] >= cout && c.in.strides[2] <= 256)
      p.flat_bytes = isa.dwflat_pack(f, nullptr);
    p.flat_off = bytes;
    uint8_t* dst = p.w.get(bytes + p.flat_bytes + 64);
    isa.dw4_pack(a, dst);
    if (p.flat_bytes != 0) isa.dwflat_pack(f, dst + bytes);
    return;
  }
  p.c_full = cout / 16 * 16;
  const size_t bytes = isa.dw_pack(w, p.c_full, p.taps, nullptr);
  isa.dw_pack(w, p.c_full, p.taps, p.w.get(bytes + 64));
}

// One output channel's weights wc into its NR block: [tap][cin_pad/kg][NR][kg]
// (element size isa.esize) at column j; returns their sum and notes a -128.
int32_t pack_gemm_channel(const ConvIsa& isa, const isa::Conv& c, ConvPlan& p, const int8_t* wc, int j,
                          uint8_t* blk) {
  const int nr = isa.nr, kg = isa.kg;
  int32_t sum = 0;
  bool m128 = false;
  for (int t = 0; t < p.taps; ++t) {
    // element of (t, ci): ((t * cin_pad / kg + ci / kg) * nr + j) * kg + ci % kg
    size_t e0 = (static_cast<size_t>(t) * (p.cin_pad / kg) * nr + static_cast<size_t>(j)) * kg;
    for (int q = 0; q < p.cin_g; q += kg, e0 += static_cast<size_t>(nr) * kg) {
      for (int k = 0; k < kg && q + k < p.cin_g; ++k) {
        const int ci = q + k;
        const int8_t v = wc[p.columns ? column_index(c, ci) : t * p.cin_g + ci];
        sum += v;
        m128 |= v == -128;
        if (isa.esize == 2) {
          const int16_t v16 = v;
          std::memcpy(blk + 2 * (e0 + k), &v16, 2);
        } else {
          blk[e0 + k] = static_cast<uint8_t>(v);
        }
      }
    }
  }
  p.has_m128 |= m128;
  return sum;
}

std::unique_ptr<ConvPlan> build_plan(const ConvIsa& isa, const isa::Conv& c, const Memory& mem,
                                     bool int32_out, bool residual, bool depthwise,
                                     bool transposed) {
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
      int s = std::min(63, std::max(0, static_cast<int>(load_const<int8_t>(mem, c.shift, co))));
      if (!residual) widen_shift(&p.mult[co], &s);
      p.shift[co] = static_cast<int8_t>(s);
      if (residual) p.rmult[co] = load_const<int32_t>(mem, c.residual_multiplier, co);
      if (s < 31 && static_cast<int64_t>(p.mult[co]) > (int64_t{1} << s)) p.m_le_2s = false;
      if (s == 63) p.has_s63 = true;
    }
  }
  p.r32.assign(cpad, 0);
  p.sh32.assign(cpad, 1);
  p.s32.assign(cpad, 0);
  for (int co = 0; co < cout; ++co) p.s32[co] = p.shift[co];
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
    plan_depthwise(isa, c, w, int32_out, residual, p);
    return plan;
  }

  // Before the VNNI compensation below changes the bias.
  if (isa.float_gemm && !int32_out && !residual) plan_float_requant(&p, w, cout, k_per_co);
  if (isa.fused64 && !int32_out) plan_hi32(&p, w, cout, k_per_co, residual);

  // GEMM weights: per group, per NR block: [tap][cin_pad/kg][NR][kg]. With
  // few input channels per group the taps are gathered per pixel (im2col)
  // and the weights [co][kh][kw][ci] are already one K-long row per channel.
  const int nr = isa.nr;
  if (transposed) {
    // Transposed convolution: one row per (tap, output pixel), the input
    // pixel that tap reaches or the zero row.
  } else if (groups == 1 && c.kernel_w > 1 && c.dilation_w == 1) {
    // The kernel_w taps of one kernel row read kernel_w consecutive pixels of
    // a padded dense copy: one "tap" per kernel row, [kw][ci] contiguous in
    // both the copy and the weights.
    p.rowtap = true;
    p.cin_g = c.kernel_w * p.cin_g;
    p.taps = c.kernel_h;
    // Short kernel rows (image inputs): padding each one to kpad wastes much
    // of K; one tap over the kernel's columns of all its rows does not, but
    // costs a copy of about sw * kh * cin bytes per output pixel: taken when
    // it saves 20 multiply-adds per byte (ResNet18's 7x7 s2 of 3 channels:
    // 30, 5 % faster; MobileNetV2's 3x3 s2 stem: 14, 10 % slower).
    const int64_t saved = (p.taps * round_up(p.cin_g, isa.kpad) - round_up(k_per_co, isa.kpad)) *
                          int64_t{cout};
    if (p.cin_g < 32 && p.taps > 1 && c.dilation_h == 1 &&
        saved >= 20 * int64_t{c.stride_w} * c.kernel_h * cin) {
      p.columns = true;
      p.cin_g = static_cast<int>(k_per_co);
      p.taps = 1;
    }
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
        const int32_t sum = pack_gemm_channel(isa, c, p, w + co * k_per_co, j, blk);
        // VNNI multiplies (x + 128) as uint8: subtract 128 * sum(w) (wrapping).
        if (isa.fmt == InputFormat::kU8)
          p.bias[co] = static_cast<int32_t>(static_cast<uint32_t>(p.bias[co]) -
                                            static_cast<uint32_t>(sum) * 128u);
      }
    }
  }
  return plan;
}

// Bumped (under the cache's mutex) whenever pinning changes: each thread's
// front cache of pinned plans is valid while the epoch it saw is current.
std::atomic<uint64_t> g_plan_epoch{1};

PlanKey plan_key(const ConvIsa& isa, const isa::Conv& c, const Memory& mem, bool int32_out, bool residual,
                 bool transposed) {
  return PlanKey{&isa,
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
                 c.in.strides[2],
                 static_cast<uint8_t>(int32_out),
                 static_cast<uint8_t>(residual),
                 static_cast<uint8_t>(transposed)};
}

// The shared cache's plan for this key, built when missing. A pinned blob's
// bytes do not change while pinned (and unpinning drops its plans), so its
// plans are built once and never fingerprinted; others are checked against
// the fingerprint of the constants on every call.
std::shared_ptr<const ConvPlan> shared_plan(const PlanKey& key, const ConvIsa& isa, const isa::Conv& c,
                                            const Memory& mem, bool depthwise, bool* pinned) {
  PlanCache& cache = plan_cache();
  std::shared_ptr<const ConvPlan> plan;
  *pinned = false;
  {
    std::lock_guard<std::mutex> lk(cache.mu);
    for (const auto& r : cache.pinned)
      if (mem.constants.data >= r.base && mem.constants.data < r.base + r.size) *pinned = true;
    auto it = cache.plans.find(key);
    if (it != cache.plans.end()) plan = it->second;
  }
  if (plan && *pinned) return plan;
  const bool int32_out = key.int32_out != 0, residual = key.residual != 0;
  const uint64_t fp = *pinned ? 0 : fingerprint(c, mem, int32_out, residual);
  if (plan && plan->fingerprint == fp) return plan;
  std::unique_ptr<ConvPlan> fresh = build_plan(isa, c, mem, int32_out, residual, depthwise, key.transposed != 0);
  fresh->fingerprint = fp;
  plan = std::shared_ptr<const ConvPlan>(std::move(fresh));
  std::lock_guard<std::mutex> lk(cache.mu);
  cache.plans[key] = plan;
  return plan;
}

// The plan of an instruction for one ISA. Pinned blobs' plans are served
// from a per-thread front cache without a lock; they stay alive in it until
// this thread's next call after the epoch changed, so the pointer is valid
// for the caller's instruction. Others are checked by fingerprint; the last
// one stays held for this thread.
const ConvPlan* get_plan(const ConvIsa& isa, const isa::Conv& c, const Memory& mem, bool int32_out,
                         bool residual, bool depthwise, bool transposed) {
  struct Local {
    uint64_t epoch = 0;
    std::unordered_map<PlanKey, std::shared_ptr<const ConvPlan>, PlanKeyHash> plans;
    std::shared_ptr<const ConvPlan> held;
  };
  thread_local Local local;
  const PlanKey key = plan_key(isa, c, mem, int32_out, residual, transposed);
  const uint64_t epoch = g_plan_epoch.load(std::memory_order_acquire);
  if (local.epoch != epoch) {
    local.plans.clear();
    local.epoch = epoch;
  }
  auto hit = local.plans.find(key);
  if (hit != local.plans.end()) return hit->second.get();
  bool pinned = false;
  std::shared_ptr<const ConvPlan> plan = shared_plan(key, isa, c, mem, depthwise, &pinned);
  // The epoch is rechecked: a pin or unpin since the lookup may concern
  // this blob, and the plan must then not outlive this call in the front.
  if (pinned && g_plan_epoch.load(std::memory_order_acquire) == epoch) {
    local.plans[key] = plan;
    return plan.get();
  }
  local.held = std::move(plan);
  return local.held.get();
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
  rq.s32 = p.s32.data();
  rq.shift_ge33 = p.s_ge33 && !residual;
  int64_t tmin = INT32_MIN, tmax = INT32_MAX;
  if (c.out.dtype == isa::DType::kInt8) tmin = -128, tmax = 127;
  if (c.out.dtype == isa::DType::kInt16) tmin = -32768, tmax = 32767;
  rq.lo = static_cast<int32_t>(std::max<int64_t>(c.act_min, tmin));
  rq.hi = static_cast<int32_t>(std::min<int64_t>(c.act_max, tmax));
  if (rq.lo > rq.hi) rq.lo = rq.hi;  // clamp(v, lo, hi) with lo > hi is hi
  rq.fits32 = int32_out || (!residual && p.m_le_2s);
  rq.vector_safe = !(residual && p.has_s63);
  rq.float_rq = p.float_rq && !residual && !int32_out;
  rq.float3 = rq.float_rq && p.float3;
  rq.fhi = p.fhi.data(), rq.flo = p.flo.data();
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

// Requantizes the accumulators of npix pixels of one output row (pixel
// stride acc_stride), channels [co0, co0 + nch), into output pixels
// (n, oh, ow0 ...); res is null without a residual.
void epilogue_run(const ConvIsa& isa, bool vec_out, const isa::Conv& c, const RequantParams& rq,
                  const OutView& out, const OutView* res, const int32_t* acc, int acc_stride,
                  int npix, int co0, int nch, int64_t n, int64_t oh, int64_t ow0) {
  EpilogueArgs e;
  e.acc = acc;
  e.n = nch;
  e.co0 = co0;
  e.npix = npix;
  e.acc_pstride = acc_stride;
  e.out = out.at(n, oh, ow0, co0);
  e.out_pstride = c.out.strides[2] * out.esize;
  e.out_cstride = c.out.strides[3];
  e.out_type = c.out.dtype;
  e.residual = res != nullptr ? res->at(n, oh, ow0, co0) : nullptr;
  e.res_pstride = res != nullptr ? c.residual.strides[2] * res->esize : 0;
  e.res_cstride = res != nullptr ? c.residual.strides[3] : 0;
  e.res_type = res != nullptr ? c.residual.dtype : isa::DType::kInt8;
  e.rq = &rq;
  if (vec_out)
    isa.epilogue(e);
  else
    epilogue_scalar(e);
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
  // Taps outside the image read the pad value.
  const int8_t* zero = reinterpret_cast<const int8_t*>(ws.zero.get(static_cast<size_t>(C) + 64));
  std::memset(const_cast<int8_t*>(zero), static_cast<uint8_t>(c.pad_value), static_cast<size_t>(C) + 64);
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
    const int8_t** px = grow<const int8_t*>(tw.px, needs.px);
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
    epilogue_run(isa, vec_out, c, rq, out, residual ? &res : nullptr, acc, acc_stride,
                 static_cast<int>(g.ow), 0, static_cast<int>(C), n, oh, 0);
  };
  parallel_for(static_cast<int>(g.n * g.oh), row, split_threads(c), &needs);
}

// ---------------------------------------------------------------------------
// Depthwise through ConvIsa::dw4_row (int8 input, dilation_w 1, no weight
// equal to -128). Each task (a band of output rows) keeps a ring of the
// input rows it reads, each converted once: copied into a zero-padded row of
// pixel stride cp (channels [C, cp) zero) that covers every tap of the
// row's outputs, then into column groups (ConvIsa::dw4_convert). Per ring
// row a flag says whether it holds a negative value, so output rows of
// non-negative inputs (after ReLU) take the kernel's cheaper variant.

struct Dw4Geometry {
  int64_t hp;          // padded rows per image
  int64_t cols;        // columns of a padded row (gstep * (ngc - 1) + 4)
  int ngc;             // column groups per row
  int gstep;           // columns between two groups (ConvPlan::dw4_gstep)
  int64_t group_bytes;  // one converted row
  int span;            // ring rows: the padded rows one output row reads
};

// Fills n pixels of cp channels with the pad value in channels [0, C) and
// zero in [C, cp) (they meet zero weights).
void dw4_pad_pixels(int8_t* dst, int64_t n, int cp, int64_t C, int8_t pad) {
  if (pad == 0) {
    std::memset(dst, 0, static_cast<size_t>(n * cp));
    return;
  }
  for (int64_t x = 0; x < n; ++x, dst += cp) {
    std::memset(dst, static_cast<uint8_t>(pad), static_cast<size_t>(C));
    std::memset(dst + C, 0, static_cast<size_t>(cp - C));
  }
}

// count dense pixels of C channels (s, pixel stride C) into slots of cp
// (a multiple of 16) bytes, channels [C, cp) zero: 16-byte moves, reading
// up to 15 bytes past the last pixel (the caller checked the region) and
// writing up to 15 zero bytes past the last slot (a buffer's slack, or
// pixels the caller writes afterwards); each slot's excess is zeroed
// before the next pixel's moves.
void dw4_dense_pixels(const int8_t* s, int64_t count, int64_t C, int cp, int8_t* o) {
  const int64_t k16 = (C + 15) / 16, tail = cp - C;
  for (int64_t x = 0; x < count; ++x, s += C, o += cp) {
    for (int64_t k = 0; k < k16; ++k) std::memcpy(o + 16 * k, s + 16 * k, 16);
    for (int64_t k = 0; k < tail; k += 16) std::memset(o + C + k, 0, 16);
  }
}

// The image pixels [x0, x1) of input row `row` (x - pl its column) into
// slots of cp bytes at dst + x * cp, channels [C, cp) zero; may write up to
// 15 bytes past slot x1 - 1 (dw4_dense_pixels).
void dw4_image_pixels(const isa::Conv& c, const Geometry& g, int cp, const int8_t* row,
                      const uint8_t* src_end, int64_t x0, int64_t x1, int8_t* dst) {
  const int64_t* st = c.in.strides;
  const int64_t C = g.cin;
  if (cp == C && st[2] == C && st[3] == 1) {  // dense pixels: one copy
    std::memcpy(dst + x0 * cp, row + (x0 - g.pl) * C, static_cast<size_t>((x1 - x0) * C));
    return;
  }
  if (st[2] == C && st[3] == 1 && cp % 16 == 0 && x1 > x0 &&
      reinterpret_cast<const uint8_t*>(row + (x1 - g.pl) * C) + 16 <= src_end) {
    dw4_dense_pixels(row + (x0 - g.pl) * C, x1 - x0, C, cp, dst + x0 * cp);
    return;
  }
  const int64_t words = (C + 7) / 8;
  const int64_t pstride = st[2], pl = g.pl;
  if (st[3] == 1 && x1 > x0 && cp % 8 == 0 &&
      reinterpret_cast<const uint8_t*>(row + (x1 - 1 - pl) * pstride) + words * 8 <= src_end) {
    // Every pixel's whole words lie in the region: cp / 8 words per pixel,
    // the input's words (the last one masked to channel C - 1), then zeros;
    // everything in locals (the int8 stores could alias the arguments).
    const int64_t cw = cp / 8;
    const uint64_t last = C % 8 != 0 ? (uint64_t{1} << (8 * (C % 8))) - 1 : ~uint64_t{0};
    const int8_t* s = row + (x0 - pl) * pstride;
    int8_t* o = dst + x0 * cp;
    for (int64_t x = x0; x < x1; ++x, s += pstride, o += cp) {
      for (int64_t k = 0; k < cw; ++k) {
        uint64_t v = 0;
        if (k < words) std::memcpy(&v, s + 8 * k, 8);
        if (k == words - 1) v &= last;
        std::memcpy(o + 8 * k, &v, 8);
      }
    }
    return;
  }
  for (int64_t x = x0; x < x1; ++x) {
    const int8_t* s = row + (x - g.pl) * st[2];
    int8_t* o = dst + x * cp;
    if (st[3] != 1) {
      for (int64_t k = 0; k < C; ++k) o[k] = s[k * st[3]];
    } else if (reinterpret_cast<const uint8_t*>(s) + words * 8 <= src_end) {
      for (int64_t k = 0; k < words; ++k) {  // whole words (cp >= words * 8; the tail is cleared)
        uint64_t v;
        std::memcpy(&v, s + 8 * k, 8);
        std::memcpy(o + 8 * k, &v, 8);
      }
    } else {
      for (int64_t k = 0; k < C; ++k) o[k] = s[k];
    }
    fill_bytes(o + C, 0, static_cast<size_t>(cp - C));
  }
}

// Copies columns [xa, xb) of padded row y (image n, inside the image: rows
// outside are never converted) into dst ([cols][cp], the pad value outside
// the image's columns, zero in channels [C, cp)). (Whether the row holds a
// negative value is found by ConvIsa::dw4_convert, which reads every byte
// of it anyway.)
void dw4_fill_row(const isa::Conv& c, const Geometry& g, int cp, const int8_t* src,
                  const uint8_t* src_end, int64_t n, int64_t y, int64_t xa, int64_t xb, int8_t* dst) {
  const int64_t iy = y - g.pt;
  const int8_t pad = static_cast<int8_t>(c.pad_value);
  const int64_t x0 = std::min<int64_t>(xb, std::max<int64_t>(xa, g.pl));  // first in-image x
  const int64_t x1 = std::max<int64_t>(x0, std::min<int64_t>(xb, g.pl + g.iw));
  dw4_image_pixels(c, g, cp, src + n * c.in.strides[0] + iy * c.in.strides[1], src_end, x0, x1, dst);
  dw4_pad_pixels(dst + xa * cp, x0 - xa, cp, g.cin, pad);  // (after: the copy may write past x1)
  dw4_pad_pixels(dst + x1 * cp, xb - x1, cp, g.cin, pad);
}

// Converts padded row y (image n; inside the image) into column groups gr;
// returns whether a byte read is negative (ConvIsa::dw4_convert). Rows of
// dense pixels (cp == C) convert their groups that read image columns only
// straight from the input, from a multiple of the ISA's group alignment on;
// the groups at either end go through plain (filled at those columns only).
bool dw4_convert_row(const ConvIsa& isa, const isa::Conv& c, const Geometry& g,
                     const Dw4Geometry& d, int cp, const int8_t* src, const uint8_t* src_end,
                     int64_t n, int64_t y, int8_t* plain, int8_t* gr) {
  const int C = static_cast<int>(g.cin), gs = d.gstep;
  const int64_t* st = c.in.strides;
  const int64_t iy = y - g.pt, al = isa.dw4_galign != nullptr ? isa.dw4_galign(C) : 1;
  // Groups [ga, gb): columns gs gc .. gs gc + 3 all inside [pl, pl + iw).
  const int64_t ga = round_up((g.pl + gs - 1) / gs, al);
  const int64_t last = g.pl + g.iw - 4;  // the last group's first column: <= last
  const int64_t gb = last < 0 ? 0 : std::min<int64_t>(d.ngc, last / gs + 1) / al * al;
  if (cp != C || st[2] != C || st[3] != 1 || gb <= ga) {
    dw4_fill_row(c, g, cp, src, src_end, n, y, 0, d.cols, plain);
    return isa.dw4_convert(plain, d.ngc, C, gs, gr);
  }
  const int64_t gbytes = static_cast<int64_t>(cp) * 4;
  dw4_fill_row(c, g, cp, src, src_end, n, y, 0, gs * ga + 4 - gs, plain);
  dw4_fill_row(c, g, cp, src, src_end, n, y, gs * gb, d.cols, plain);
  const int8_t* row = src + n * st[0] + iy * st[1] + (gs * ga - g.pl) * C;
  bool neg = ga > 0 && isa.dw4_convert(plain, static_cast<int>(ga), C, gs, gr);
  neg = isa.dw4_convert(row, static_cast<int>(gb - ga), C, gs, gr + ga * gbytes) || neg;
  if (gb < d.ngc)
    neg = isa.dw4_convert(plain + gs * gb * cp, static_cast<int>(d.ngc - gb), C, gs, gr + gb * gbytes) || neg;
  return neg;
}

// Output rows [r0, r1) (over n * oh) of a dw4 convolution.
struct Dw4Run {
  const ConvIsa& isa;
  const isa::Conv& c;
  const ConvPlan& p;
  const RequantParams& rq;
  Geometry g;
  Dw4Geometry d;
  const int8_t* src;
  const uint8_t* src_end;
  OutView out, res;
  bool residual, fused, vec_out;
  int acc_stride;
  Needs needs;

  void rows(int64_t r0, int64_t r1) const {
    Workspace& tw = workspace();
    const int8_t** rp = grow<const int8_t*>(tw.px, needs.px);
    int32_t* acc = fused ? nullptr : reinterpret_cast<int32_t*>(tw.acc.get(needs.acc_bytes));
    int8_t* ring = reinterpret_cast<int8_t*>(tw.ring.get(needs.ring_bytes));
    int8_t* plain = ring + static_cast<int64_t>(d.span) * d.group_bytes;
    int64_t* tag = reinterpret_cast<int64_t*>(plain + d.cols * p.dw4_cp + 64);
    uint8_t* neg = reinterpret_cast<uint8_t*>(tag + d.span);
    for (int k = 0; k < d.span; ++k) tag[k] = -1;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / g.oh, oy = r % g.oh;
      bool nonneg = true;
      int kh_lo = g.kh, kh_hi = 0;  // the kernel rows reading image rows
      for (int kh = 0; kh < g.kh; ++kh) {
        const int64_t y = oy * g.sh + static_cast<int64_t>(kh) * g.dh;
        const int slot = static_cast<int>(y % d.span);
        int8_t* gr = ring + slot * d.group_bytes;
        const int64_t iy = y - g.pt;
        if (iy < 0 || iy >= g.ih) {  // outside the image: the kernel adds pad * its weights
          rp[kh] = nullptr;
          continue;
        }
        if (tag[slot] != n * d.hp + y) {
          neg[slot] = dw4_convert_row(isa, c, g, d, p.dw4_cp, src, src_end, n, y, plain, gr);
          tag[slot] = n * d.hp + y;
        }
        nonneg = nonneg && neg[slot] == 0;
        rp[kh] = gr;
        kh_lo = std::min(kh_lo, kh), kh_hi = kh + 1;
      }
      DwRowArgs a;
      a.rows = rp;
      a.kh = g.kh, a.kw = g.kw, a.stride = g.sw;
      a.npix = static_cast<int>(g.ow);
      a.c = static_cast<int>(g.cout);
      a.cp = p.dw4_cp;
      a.nonneg = nonneg;
      a.kh_lo = std::min(kh_lo, kh_hi), a.kh_hi = kh_hi, a.pad = c.pad_value;
      a.pack = p.w.data();
      a.out = fused ? reinterpret_cast<int8_t*>(out.at(n, oy, 0, 0)) : nullptr;
      a.out_pstride = c.out.strides[2] * out.esize;
      a.lo = rq.lo, a.hi = rq.hi;
      a.acc = acc;
      a.acc_stride = acc_stride;
      a.float_requant = p.float_rq;
      a.float3 = p.float3;
      a.gstep = d.gstep;
      isa.dw4_row(a);
      if (!fused) epilogue_row(n, oy, acc);
    }
  }

  void epilogue_row(int64_t n, int64_t oy, const int32_t* acc) const {
    epilogue_run(isa, vec_out, c, rq, out, residual ? &res : nullptr, acc, acc_stride,
                 static_cast<int>(g.ow), 0, static_cast<int>(g.cout), n, oy, 0);
  }
};

void conv_dw4(const ConvIsa& isa, const isa::Conv& c, const Memory& mem, const ConvPlan& p,
              const RequantParams& rq, bool residual) {
  const Geometry g = geometry(c);
  const int cp = p.dw4_cp;
  Dw4Geometry d;
  d.hp = (g.oh - 1) * g.sh + static_cast<int64_t>(g.kh - 1) * g.dh + 1;
  // Groups per kernel row: ceil((kw + parity) / 4); the last one a pixel
  // reads starts at column (ow - 1) * sw - parity + 4 * (groups - 1).
  // With gstep 4 (stride 2) the last group holds column (ow - 1) * sw + kw - 1.
  d.gstep = p.dw4_gstep;
  d.ngc = d.gstep == 4 ? static_cast<int>(((g.ow - 1) * g.sw + g.kw - 1) / 4 + 1)
                       : static_cast<int>(((g.ow - 1) * g.sw) / 2 + 2 * ((g.kw + 1 + 3) / 4 - 1) + 1);
  if (isa.dw4_galign != nullptr) d.ngc = static_cast<int>(round_up(d.ngc, isa.dw4_galign(static_cast<int>(g.cout))));
  d.cols = d.gstep * static_cast<int64_t>(d.ngc - 1) + 4;
  d.group_bytes = round_up(static_cast<int64_t>(d.ngc) * cp * 4, 64);
  d.span = (g.kh - 1) * g.dh + 1;
  const Buffer* reg = mem.region(c.in.region, c.in.index);
  const bool fused = c.out.dtype == isa::DType::kInt8 && c.out.strides[3] == 1 && !residual &&
                     (rq.shift_ge33 || p.float_rq);
  Dw4Run run{isa,
             c,
             p,
             rq,
             g,
             d,
             reinterpret_cast<const int8_t*>(mem.ptr(c.in)),
             reg->data + reg->size,
             out_view(mem, c.out),
             residual ? out_view(mem, c.residual) : OutView{},
             residual,
             fused,
             c.out.strides[3] == 1 && (!residual || c.residual.strides[3] == 1),
             static_cast<int>(round_up(cp, 16)),
             Needs{}};
  run.needs.px = static_cast<size_t>(g.kh);
  run.needs.acc_bytes = fused ? 0 : static_cast<size_t>(g.ow) * run.acc_stride * 4 + 64;
  // Ring rows, the padded row, then the rows' tags and sign flags.
  run.needs.ring_bytes = static_cast<size_t>(d.span * d.group_bytes + d.cols * cp + 64 + 9 * d.span + 64);
  const int64_t rows = g.n * g.oh;
  const int threads = split_threads(c);
  const int64_t ntasks = threads > 1 ? std::min<int64_t>(rows, 2 * threads) : 1;
  const int64_t band = (rows + ntasks - 1) / ntasks;
  auto task = [&](int ti) { run.rows(ti * band, std::min(rows, (ti + 1) * band)); };
  parallel_for(static_cast<int>((rows + band - 1) / band), task, threads, &run.needs);
}

// Depthwise 1x1 stride 1 over dense int8 maps with the same pixel stride P
// in and out, requantized in place (every S >= 33, no residual): one run of
// bytes through ConvIsa::dwflat (whole periods of lcm(P, 32) bytes, inside
// both regions), the last pixels through the scalar epilogue. False when
// the instruction does not qualify.
bool conv_dwflat(const ConvIsa& isa, const isa::Conv& c, const Memory& mem, const ConvPlan& p,
                 const RequantParams& rq, bool residual) {
  const int64_t P = c.in.strides[2], H = c.in.dims[1], W = c.in.dims[2];
  auto dense = [&](const isa::TensorRef& t) {
    return t.strides[3] == 1 && t.strides[2] == P && t.strides[1] == W * P &&
           (t.dims[0] == 1 || t.strides[0] == H * W * P);
  };
  // Bottom / right padding makes the output larger than the input (its
  // padded pixels are bias-only results): the flat run covers only the
  // input's pixels, so those take the dw4 path.
  const bool same_map = c.out.dims[0] == c.in.dims[0] && c.out.dims[1] == H && c.out.dims[2] == W;
  if (p.flat_bytes == 0 || residual || !(rq.shift_ge33 || p.flat_float) ||
      c.out.dtype != isa::DType::kInt8 ||
      c.stride_h != 1 || c.stride_w != 1 || c.pad_top != 0 || c.pad_left != 0 ||
      c.pad_bottom != 0 || c.pad_right != 0 || !same_map || !dense(c.in) || !dense(c.out))
    return false;
  const int64_t pixels = c.in.dims[0] * H * W, C = c.out.dims[3];
  // Whole periods that stay inside both regions (the last pixel's padding
  // bytes may lie past a region's end).
  const Buffer* ri = mem.region(c.in.region, c.in.index);
  const Buffer* ro = mem.region(c.out.region, c.out.index);
  const int64_t room = static_cast<int64_t>(
      std::min(ri->size - c.in.offset, ro->size - c.out.offset));
  int64_t period = 32;
  while (period % P != 0) period += 32;
  const int64_t n = std::min(pixels * P, room) / period * period;
  const int8_t* in = reinterpret_cast<const int8_t*>(mem.ptr(c.in));
  int8_t* out = reinterpret_cast<int8_t*>(mem.ptr(c.out));
  DwFlatArgs a{in, out, n, p.w.data() + p.flat_off, static_cast<int>(P), rq.lo, rq.hi};
  const int64_t done = isa.dwflat(a);
  const int8_t* w8 = reinterpret_cast<const int8_t*>(mem.ptr(c.weight));
  int32_t acc[256];
  EpilogueArgs e;
  e.n = static_cast<int>(C);
  e.co0 = 0;
  e.out_cstride = 1;
  e.out_type = isa::DType::kInt8;
  e.residual = nullptr;
  e.rq = &rq;
  e.acc = acc;
  for (int64_t q = done / P; q < pixels; ++q) {
    for (int64_t ch = 0; ch < C; ++ch) acc[ch] = in[q * P + ch] * w8[ch];
    e.out = reinterpret_cast<uint8_t*>(out + q * P);
    epilogue_scalar(e);
  }
  return true;
}

// ---------------------------------------------------------------------------
// Indirect GEMM (int8 input).
//
// The output pixels are cut into chunks (whole MR tiles) sized so that a
// chunk's input, row pointers and accumulators stay in L2; a task is one
// chunk of one group (and, with few chunks and several threads, a share of
// its weight blocks). Each task copies the input rows its chunk reads into
// a band in its thread's workspace, in the ISA's format:
//   row taps  zero-padded rows [Hp rows][Wp][Cin] (padded coordinates
//             y = ih + pad_top, x = iw + pad_left): a tap is a kernel row;
//   taps      image rows [rows][IW][cs] of the group's channels, zero past
//             cin_g; taps outside the image read the zero row;
//   in place  taps mode on int8 data (the u8 variant) reads the input view
//             itself when its channel stride is 1 and reading cin_pad values
//             from any pixel stays inside the region (extra channels meet
//             zero weights);
//   im2col    each pixel's taps gathered into one K-long row.
// Rows are indexed globally as image * rows_per_image + row, so a chunk that
// spans two images copies one contiguous range too.

enum class Band : uint8_t { kRowTap, kTaps, kInPlace, kIm2col };

struct GemmRun {
  const ConvIsa& isa;
  const isa::Conv& c;
  const ConvPlan& p;
  const RequantParams& rq;
  Geometry g;
  bool residual, transposed, fused, vec_out;
  Band band = Band::kTaps;
  int es = 0, mr = 0, nr = 0, nsplit = 1;
  void (*gemm)(const GemmArgs&) = nullptr;
  int64_t cs = 0;  // band pixel stride in elements
  int64_t hp = 0, wp = 0;  // row-tap geometry
  int64_t pixels = 0, tiles = 0, chunk_tiles = 0, chunks = 0;
  // ConvIsa::gemm_scratch per tile, and whether a task keeps every tile's
  // (blocks outer: each weight block streamed once per task).
  size_t tile_scratch = 0;
  bool scratch_slots = false;
  int threads = 1;  // split_threads
  const int8_t* src = nullptr;
  const uint8_t* src_end = nullptr;  // end of the input's region
  const uint8_t* zero = nullptr;
  uint8_t zero_byte = 0;  // 0 in the format (0x80 for u8)
  uint8_t pad_byte = 0;   // the pad value in the format (int8 input)
  OutView out{}, res{};
  Needs needs{};

  // Global input rows (image * rows per image + row) of output pixels
  // [px0, px0 + npx), and the rows per image of the band's coordinates.
  void band_rows(int64_t px0, int64_t npx, int64_t* lo, int64_t* hi, int64_t* per_img) const;
  void copy_band(int grp, int64_t lo, int64_t hi, uint8_t* dst) const;
  void build_columns(int64_t px0, int64_t npx, const uint8_t* bandp, int64_t lo,
                     uint8_t* col) const;
  void column_row(const uint8_t* b, const uint8_t* prev, uint8_t* d) const;
  void fill_pad(uint8_t* dst, int64_t elements) const;
  void copy_pixels(const int8_t* s, int64_t count, int64_t n_in, uint8_t* o) const;
  void copy_pixels_small(const int8_t* s, int64_t count, int64_t n_in, uint8_t* o) const;
  void make_rows(int grp, int64_t px0, int64_t count, const uint8_t* bandp, int64_t lo,
                 const void** rows, int8_t** outp, uint8_t* col) const;
  void rowtap_rows(int64_t px0, int64_t count, const uint8_t* bandp, int64_t lo, const void** rows,
                   int8_t** outp) const;
  void epilogue(int64_t px0, int64_t npx, int co0, int nvalid, const int32_t* acc,
                int acc_stride) const;
  void task(int ti) const;
};

void GemmRun::band_rows(int64_t px0, int64_t npx, int64_t* lo, int64_t* hi,
                        int64_t* per_img) const {
  const int64_t pimg = g.oh * g.ow;
  const int64_t n0 = px0 / pimg, oh0 = (px0 % pimg) / g.ow;
  const int64_t last = px0 + npx - 1;
  const int64_t n1 = last / pimg, oh1 = (last % pimg) / g.ow;
  const int64_t span = static_cast<int64_t>(g.kh - 1) * g.dh;
  if (band == Band::kRowTap) {
    *per_img = hp;
    *lo = n0 * hp + oh0 * g.sh;
    *hi = n1 * hp + oh1 * g.sh + span;
    return;
  }
  *per_img = g.ih;
  int64_t r0, r1;
  if (transposed) {  // ih = (oh + pt - kh*dh) / sh for the taps that divide
    r0 = oh0 + g.pt - span;
    r0 = r0 >= 0 ? r0 / g.sh : -((-r0 + g.sh - 1) / g.sh);
    r1 = (oh1 + g.pt) / g.sh;
  } else {
    r0 = oh0 * g.sh - g.pt;
    r1 = oh1 * g.sh - g.pt + span;
  }
  *lo = n0 * g.ih + std::min<int64_t>(g.ih - 1, std::max<int64_t>(0, r0));
  *hi = n1 * g.ih + std::max<int64_t>(0, std::min<int64_t>(g.ih - 1, r1));
  if (*hi < *lo) *hi = *lo;
}

// count pixels of n_in channels (input channel stride c.in.strides[3], pixel
// stride c.in.strides[2]) into cs-element pixels of the band format.
void GemmRun::copy_pixels(const int8_t* s, int64_t count, int64_t n_in, uint8_t* o) const {
  const int64_t s2 = c.in.strides[2], s3 = c.in.strides[3];
  if (es == 2 && s3 == 1 && s2 == n_in && cs == n_in) {  // dense pixels: one widening run
    int16_t* o16 = reinterpret_cast<int16_t*>(o);
    const int64_t n = count * n_in;
    for (int64_t i = 0; i < n; ++i) o16[i] = s[i];
    return;
  }
  if (es == 1 && s3 == 1 && s2 == n_in && cs == n_in) {  // dense pixels: one run
    const uint8_t flip = zero_byte;
    const int64_t n = count * n_in;
    const uint8_t* su = reinterpret_cast<const uint8_t*>(s);
    if (flip == 0) {
      copy_bytes(o, s, static_cast<size_t>(n));
    } else {
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<uint8_t>(su[i] ^ flip);
    }
    return;
  }
  if (es == 1 && s3 == 1 && s2 > 0 && cs <= 8) {
    // Few channels (image inputs): 8 elements written per pixel, the next
    // pixels overwriting the excess: the last ceil(8 / cs) - 1 pixels, and
    // those whose 8-byte read would leave the region, go the exact way.
    const int64_t room = src_end - reinterpret_cast<const uint8_t*>(s);
    const int64_t readable = room < 8 ? 0 : (room - 8) / s2 + 1;
    const int64_t fast =
        std::max<int64_t>(0, std::min(readable, count - (8 + cs - 1) / cs + 1));
    copy_pixels_small(s, fast, n_in, o);
    s += fast * s2, o += fast * cs * es, count -= fast;
  }
  for (int64_t x = 0; x < count; ++x, s += s2, o += cs * es) {
    if (es == 2) {
      int16_t* o16 = reinterpret_cast<int16_t*>(o);
      if (s3 == 1) {
        for (int64_t ch = 0; ch < n_in; ++ch) o16[ch] = s[ch];
      } else {
        for (int64_t ch = 0; ch < n_in; ++ch) o16[ch] = s[ch * s3];
      }
      for (int64_t ch = n_in; ch < cs; ++ch) o16[ch] = 0;
      continue;
    }
    // Byte stores may alias anything: keep the bounds in locals.
    const uint8_t flip = zero_byte;
    const int64_t all = cs;
    if (s3 == 1 && flip == 0) {
      copy_bytes(o, s, static_cast<size_t>(n_in));
    } else if (s3 == 1) {
      for (int64_t ch = 0; ch < n_in; ++ch) o[ch] = static_cast<uint8_t>(s[ch] ^ -128);
    } else {
      for (int64_t ch = 0; ch < n_in; ++ch) o[ch] = static_cast<uint8_t>(s[ch * s3]) ^ flip;
    }
    fill_bytes(o + n_in, flip, static_cast<size_t>(all - n_in));
  }
}

// count pixels of n_in <= cs <= 8 channels (channel stride 1) into an int8
// band, reading 8 bytes from each (the caller checked they lie inside the
// region) and writing 8 at each (the caller makes sure the pixels after
// them overwrite what lies past a pixel's cs).
void GemmRun::copy_pixels_small(const int8_t* s, int64_t count, int64_t n_in, uint8_t* o) const {
  const int64_t s2 = c.in.strides[2];
  const uint64_t keep = n_in >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * n_in)) - 1;
  const uint64_t flip = 0x0101010101010101ull * zero_byte;
  const int64_t step = cs;  // (a local: the stores could alias the member)
  for (int64_t x = 0; x < count; ++x, s += s2, o += step) {
    uint64_t v;
    std::memcpy(&v, s, 8);
    v = ((v ^ flip) & keep) | (flip & ~keep);
    std::memcpy(o, &v, 8);
  }
}

// elements values of the band format holding the pad value.
void GemmRun::fill_pad(uint8_t* dst, int64_t elements) const {
  if (es == 1 || c.pad_value == 0) {
    fill_bytes(dst, es == 1 ? pad_byte : 0, static_cast<size_t>(elements * es));
    return;
  }
  const int16_t v = static_cast<int16_t>(c.pad_value);
  for (int64_t i = 0; i < elements; ++i) std::memcpy(dst + 2 * i, &v, 2);
}

void GemmRun::copy_band(int grp, int64_t lo, int64_t hi, uint8_t* dst) const {
  const int64_t* st = c.in.strides;
  if (band == Band::kRowTap) {
    const int64_t row_bytes = wp * cs * es;
    for (int64_t r = lo; r <= hi; ++r) {
      const int64_t n = r / hp, ih = r % hp - g.pt;
      uint8_t* o = dst + (r - lo) * row_bytes;
      if (ih < 0 || ih >= g.ih) {
        fill_pad(o, wp * cs);
        continue;
      }
      const int64_t x0 = std::min<int64_t>(wp, std::max<int64_t>(0, g.pl));  // first in-image x
      const int64_t x1 = std::max<int64_t>(x0, std::min<int64_t>(wp, g.pl + g.iw));
      fill_pad(o, x0 * cs);
      fill_pad(o + x1 * cs * es, (wp - x1) * cs);
      copy_pixels(src + n * st[0] + ih * st[1] + (x0 - g.pl) * st[2], x1 - x0, g.cin,
                  o + x0 * cs * es);
    }
    return;
  }
  const int64_t cin_g = p.cin_g;
  for (int64_t r = lo; r <= hi; ++r) {
    const int64_t n = r / g.ih, ih = r % g.ih;
    copy_pixels(src + n * st[0] + ih * st[1] + grp * cin_g * st[3], g.iw, cin_g,
                dst + (r - lo) * g.iw * cs * es);
  }
}

// ConvPlan::columns: for each output row of pixels [px0, px0 + npx), a
// row of wp columns, column x holding the kernel's kh band rows at x
// ([kh][cin], kh * cs values): pixel ow's K values start at column ow * sw.
void GemmRun::build_columns(int64_t px0, int64_t npx, const uint8_t* bandp, int64_t lo,
                            uint8_t* col) const {
  const int64_t r0 = px0 / g.ow, r1 = (px0 + npx - 1) / g.ow;
  const int64_t band_row = wp * cs * es, col_row = wp * g.kh * cs * es;
  for (int64_t r = r0; r <= r1; ++r) {
    const int64_t n = r / g.oh, oh = r % g.oh;
    const uint8_t* b = bandp + (n * hp + oh * g.sh - lo) * band_row;
    const bool shift = r > r0 && oh > 0 && g.sh < g.kh;  // the previous row shares kh - sh rows
    column_row(b, shift ? col + (r - 1 - r0) * col_row : nullptr, col + (r - r0) * col_row);
  }
}

// One row of columns from the band rows at b (kh rows apart), or from prev
// (the output row above: its columns without their first sh rows) and the
// last sh band rows. Fixed-size copies where they fit; each one's excess is
// overwritten by the next (the row's last by the next row; 64 bytes slack).
void GemmRun::column_row(const uint8_t* b, const uint8_t* prev, uint8_t* d) const {
  const int64_t px = cs * es, band_row = wp * px, colw = g.kh * px;
  if (prev != nullptr) {
    const int64_t keep = (g.kh - g.sh) * px, fresh = g.sh * px;
    const uint8_t* nb = b + (g.kh - g.sh) * band_row;
    const bool fast = keep <= 16 && px <= 8;  // (bytes past keep: the fresh ones)
    for (int64_t x = 0; x < wp; ++x, d += colw, prev += colw) {
      const uint8_t* p0 = prev + fresh;
      if (fast) {
        std::memcpy(d, p0, 16);
        for (int k = 0; k < g.sh; ++k) std::memcpy(d + keep + k * px, nb + k * band_row + x * px, 8);
      } else {
        std::memcpy(d, p0, static_cast<size_t>(keep));
        for (int k = 0; k < g.sh; ++k)
          std::memcpy(d + keep + k * px, nb + k * band_row + x * px, static_cast<size_t>(px));
      }
    }
    return;
  }
  for (int64_t x = 0; x < wp; ++x, d += colw) {
    for (int k = 0; k < g.kh; ++k) {
      if (px <= 4)
        std::memcpy(d + k * px, b + k * band_row + x * px, 4);
      else
        std::memcpy(d + k * px, b + k * band_row + x * px, static_cast<size_t>(px));
    }
  }
}

// Row pointers [tile][tap][m] (and output pointers) of count pixels from px0.
void GemmRun::make_rows(int grp, int64_t px0, int64_t count, const uint8_t* bandp, int64_t lo,
                        const void** rows, int8_t** outp, uint8_t* col) const {
  const int taps = p.taps;
  const int64_t* ist = c.in.strides;
  const int64_t pimg = g.oh * g.ow;
  const int cin_g_src = p.im2col ? p.cin_g / (g.kh * g.kw) : p.cin_g;
  int64_t pn = px0 / pimg, poh = (px0 % pimg) / g.ow, pow_ = px0 % g.ow;
  const int64_t pix_bytes = cs * es;
  if (taps == 1 && !transposed && (band == Band::kTaps || band == Band::kInPlace)) {
    // 1x1 kernels: one row per pixel, a fixed step along an output row.
    const int64_t step =
        (band == Band::kInPlace ? ist[2] : pix_bytes) * g.sw;
    const int64_t ostep = c.out.strides[2] * out.esize;
    // One tap: pixel i's row is rows[i] (tile i / mr, row i % mr).
    int64_t i = 0;
    while (i < count) {
      const int64_t run = std::min(count - i, g.ow - pow_);  // pixels left in this output row
      const int64_t real = std::clamp<int64_t>(pixels - (px0 + i), 0, run);  // the others pad the last tile
      const int64_t ih = poh * g.sh - g.pt, iw0 = pow_ * g.sw - g.pl;
      const bool row_in = ih >= 0 && ih < g.ih;
      const uint8_t* rp =
          band == Band::kInPlace
              ? reinterpret_cast<const uint8_t*>(src + pn * ist[0] + ih * ist[1] +
                                                 static_cast<int64_t>(grp) * p.cin_g) + iw0 * ist[2]
              : bandp + ((pn * g.ih + ih - lo) * g.iw + iw0) * pix_bytes;
      if (row_in && iw0 >= 0 && iw0 + (real - 1) * g.sw < g.iw) {  // the whole run in the image
        for (int64_t k = 0; k < real; ++k) rows[i + k] = rp + k * step;
      } else {
        for (int64_t k = 0; k < real; ++k) {
          const int64_t iw = iw0 + k * g.sw;
          rows[i + k] = row_in && iw >= 0 && iw < g.iw ? rp + k * step : zero;
        }
      }
      if (fused && real > 0) {
        int8_t* op = reinterpret_cast<int8_t*>(out.at(pn, poh, pow_, 0));
        for (int64_t k = 0; k < real; ++k) outp[i + k] = op + k * ostep;
      }
      for (int64_t k = real; k < run; ++k) {  // padding rows of the last tile repeat its first pixel
        const int64_t m = (i + k) % mr;
        rows[i + k] = rows[i + k - m];
        if (fused) outp[i + k] = outp[i + k - m];
      }
      i += run;
      pow_ += run;
      if (pow_ == g.ow) {
        pow_ = 0;
        if (++poh == g.oh) poh = 0, ++pn;
      }
    }
    return;
  }
  if (band == Band::kRowTap && !p.columns && !transposed) {
    rowtap_rows(px0, count, bandp, lo, rows, outp);
    return;
  }
  int m = 0;  // pixel i is row m of its tile (no division per pixel)
  const void** tile = rows;
  for (int64_t i = 0; i < count; ++i, m = m + 1 == mr ? (tile += taps * mr, 0) : m + 1) {
    const void** tr = tile + m;
    if (px0 + i >= pixels) {  // padding rows of the last tile repeat its first pixel
      for (int t = 0; t < taps; ++t) tr[t * mr] = tr[t * mr - m];
      if (fused) outp[i] = outp[i - m];  // the same values again
      continue;
    }
    if (fused) outp[i] = reinterpret_cast<int8_t*>(out.at(pn, poh, pow_, 0));
    const int64_t ih0 = poh * g.sh - g.pt, iw0 = pow_ * g.sw - g.pl;
    if (band == Band::kIm2col) {
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
          } else {
            fill_pad(d, cin_g_src);
          }
        }
      }
      fill_bytes(row + static_cast<int64_t>(p.cin_g) * es, es == 2 ? 0 : zero_byte,
                 static_cast<size_t>(p.cin_pad - p.cin_g) * es);
      tr[0] = row;
    } else if (band == Band::kRowTap && p.columns) {
      const int64_t orow = (pn * g.oh + poh) - px0 / g.ow;
      tr[0] = col + (orow * wp + pow_ * g.sw) * g.kh * pix_bytes;
    } else if (band == Band::kRowTap) {
      const uint8_t* base = bandp + ((pn * hp + poh * g.sh - lo) * wp + pow_ * g.sw) * pix_bytes;
      for (int kh = 0; kh < g.kh; ++kh)
        tr[kh * mr] = base + static_cast<int64_t>(kh) * g.dh * wp * pix_bytes;
    } else {
      // Taps: the input pixel of each tap, or the zero row.
      for (int kh = 0; kh < g.kh; ++kh) {
        int64_t ih;
        if (transposed) {  // output row oh takes input (oh + pt - kh*dh) / sh when exact
          const int64_t nh = poh + g.pt - static_cast<int64_t>(kh) * g.dh;
          ih = nh >= 0 && nh % g.sh == 0 ? nh / g.sh : -1;
        } else {
          ih = ih0 + static_cast<int64_t>(kh) * g.dh;
        }
        const bool row_in = ih >= 0 && ih < g.ih;
        const uint8_t* rp =
            band == Band::kInPlace
                ? reinterpret_cast<const uint8_t*>(src + pn * ist[0] + ih * ist[1] +
                                                   static_cast<int64_t>(grp) * p.cin_g)
                : bandp + ((pn * g.ih + ih - lo) * g.iw) * pix_bytes;
        const int64_t px_step = band == Band::kInPlace ? ist[2] : pix_bytes;
        for (int kw = 0; kw < g.kw; ++kw) {
          int64_t iw;
          if (transposed) {
            const int64_t nw = pow_ + g.pl - static_cast<int64_t>(kw) * g.dw;
            iw = nw >= 0 && nw % g.sw == 0 ? nw / g.sw : -1;
          } else {
            iw = iw0 + static_cast<int64_t>(kw) * g.dw;
          }
          tr[(kh * g.kw + kw) * mr] = row_in && iw >= 0 && iw < g.iw ? rp + iw * px_step : zero;
        }
      }
    }
    if (++pow_ == g.ow) {
      pow_ = 0;
      if (++poh == g.oh) poh = 0, ++pn;
    }
  }
}

// make_rows of row taps (Band::kRowTap, no columns): kernel row t of a
// pixel reads the band at its first tap column plus t * dh band rows; the
// pointers advance by sw pixels along each run of one output row.
void GemmRun::rowtap_rows(int64_t px0, int64_t count, const uint8_t* bandp, int64_t lo,
                          const void** rows, int8_t** outp) const {
  const int taps = p.taps;
  const int64_t pimg = g.oh * g.ow, pix_bytes = cs * es;
  const int64_t tap_step = g.dh * wp * pix_bytes, px_step = g.sw * pix_bytes;
  const int64_t ostep = c.out.strides[2] * out.esize;
  int64_t pn = px0 / pimg, poh = (px0 % pimg) / g.ow, pow_ = px0 % g.ow;
  const int64_t real = std::min(count, pixels - px0);
  int m = 0;
  const void** tile = rows;
  int64_t i = 0;
  while (i < real) {
    const int64_t run = std::min(real - i, g.ow - pow_);  // pixels left in this output row
    const uint8_t* base = bandp + ((pn * hp + poh * g.sh - lo) * wp + pow_ * g.sw) * pix_bytes;
    int8_t* op = fused ? reinterpret_cast<int8_t*>(out.at(pn, poh, pow_, 0)) : nullptr;
    for (int64_t k = 0; k < run; ++k, ++i, base += px_step) {
      for (int t = 0; t < taps; ++t) tile[t * mr + m] = base + t * tap_step;
      if (fused) outp[i] = op + k * ostep;
      if (++m == mr) m = 0, tile += taps * mr;
    }
    if ((pow_ += run) == g.ow) {
      pow_ = 0;
      if (++poh == g.oh) poh = 0, ++pn;
    }
  }
  for (; i < count; ++i) {  // padding rows of the last tile repeat its first pixel
    for (int t = 0; t < taps; ++t) tile[t * mr + m] = tile[t * mr];
    if (fused) outp[i] = outp[i - m];
    if (++m == mr) m = 0, tile += taps * mr;
  }
}

// Requantizes a chunk's accumulators a whole output row run at a time.
void GemmRun::epilogue(int64_t px0, int64_t npx, int co0, int nvalid, const int32_t* acc,
                       int acc_stride) const {
  const int64_t pimg = g.oh * g.ow;
  int64_t pn = px0 / pimg, poh = (px0 % pimg) / g.ow, pow_ = px0 % g.ow;
  for (int64_t i = 0; i < npx;) {
    const int64_t run = std::min(npx - i, g.ow - pow_);  // pixels left in this output row
    epilogue_run(isa, vec_out, c, rq, out, residual ? &res : nullptr, acc + i * acc_stride,
                 acc_stride, static_cast<int>(run), co0, nvalid, pn, poh, pow_);
    i += run;
    pow_ += run;
    if (pow_ == g.ow) {
      pow_ = 0;
      if (++poh == g.oh) poh = 0, ++pn;
    }
  }
}

// Rounding toward -infinity for the life of the object when `on` (the
// float_requant tiles of ConvIsa::float_mxcsr), the previous mode after.
struct RoundDown {
  int old = -1;
  explicit RoundDown(bool on) {
    if (!on) return;
    old = std::fegetround();
    std::fesetround(FE_DOWNWARD);
  }
  ~RoundDown() {
    if (old != -1) std::fesetround(old);
  }
  RoundDown(const RoundDown&) = delete;
  RoundDown& operator=(const RoundDown&) = delete;
};

void GemmRun::task(int ti) const {
  const RoundDown rd(fused && rq.float_rq && isa.float_mxcsr);
  const int split = ti % nsplit;
  const int64_t chunk = (ti / nsplit) % chunks;
  const int grp = static_cast<int>(ti / nsplit / chunks);
  const int b0 = static_cast<int>(static_cast<int64_t>(p.nblk) * split / nsplit);
  const int b1 = static_cast<int>(static_cast<int64_t>(p.nblk) * (split + 1) / nsplit);
  const int64_t t0 = chunk * chunk_tiles, t1 = std::min(tiles, t0 + chunk_tiles);
  const int64_t px0 = t0 * mr, npx = std::min(pixels, t1 * mr) - px0;
  const int acc_stride = (b1 - b0) * nr;
  const int taps = p.taps;
  // Scratch sized for the largest task, whichever thread runs which task,
  // so that no later run allocates.
  Workspace& tw = workspace();
  const void** rows = grow<const void*>(tw.rows, needs.rows);
  int8_t** outp = fused ? grow<int8_t*>(tw.outp, needs.outp) : nullptr;
  int32_t* acc = fused ? nullptr : reinterpret_cast<int32_t*>(tw.acc.get(needs.acc_bytes));
  uint8_t* col = band == Band::kIm2col || p.columns ? tw.col.get(needs.col_bytes) : nullptr;
  uint8_t* scratch = needs.scratch_bytes != 0 ? tw.scratch.get(needs.scratch_bytes) : nullptr;
  int64_t lo = 0, hi = 0, per_img = 0;
  uint8_t* bandp = nullptr;
  if (band == Band::kRowTap || band == Band::kTaps) {
    band_rows(px0, npx, &lo, &hi, &per_img);
    bandp = tw.ring.get(needs.ring_bytes);
    copy_band(grp, lo, hi, bandp);
    if (p.columns) build_columns(px0, npx, bandp, lo, col);
  }
  make_rows(grp, px0, (t1 - t0) * mr, bandp, lo, rows, outp, col);
  auto tile = [&](int b, int64_t t, bool same_rows) {
    const uint8_t* wb = p.w.data() + (static_cast<size_t>(grp) * p.nblk + b) * p.block_bytes;
    GemmArgs a{rows + (t - t0) * taps * mr,
               taps,
               p.cin_pad,
               wb,
               fused ? nullptr : acc + (t - t0) * mr * acc_stride + (b - b0) * nr,
               acc_stride};
    if (fused) {
      a.out = outp + (t - t0) * mr;
      a.co0 = grp * p.cout_g + b * nr;
      a.n = std::min(nr, p.cout_g - b * nr);
      a.rq = &rq;
    }
    a.same_rows = same_rows;
    a.scratch = scratch_slots ? scratch + (t - t0) * tile_scratch : scratch;
    gemm(a);
  };
  if (scratch_slots) {  // every tile prepared in its own slot by the first block
    for (int b = b0; b < b1; ++b)
      for (int64_t t = t0; t < t1; ++t) tile(b, t, b > b0);
  } else if (isa.tiles_outer) {
    for (int64_t t = t0; t < t1; ++t)
      for (int b = b0; b < b1; ++b) tile(b, t, b > b0);
  } else {
    for (int b = b0; b < b1; ++b)
      for (int64_t t = t0; t < t1; ++t) tile(b, t, false);
  }
  if (!fused)
    epilogue(px0, npx, grp * p.cout_g + b0 * nr, std::min(b1 * nr, p.cout_g) - b0 * nr, acc,
             acc_stride);
}

// True when the u8 GEMM may read the int8 input view in place: channel
// stride 1 and cin_pad values from any pixel (past the group's first
// channel) stay inside the region.
bool in_place_ok(const isa::Conv& c, const Memory& mem, const ConvPlan& p) {
  if (c.in.strides[3] != 1) return false;
  const Buffer* reg = mem.region(c.in.region, c.in.index);
  int64_t last = 0;
  for (int k = 0; k < 3; ++k) last += (c.in.dims[k] - 1) * c.in.strides[k];
  const uint64_t end = c.in.offset + static_cast<uint64_t>(last) +
                       static_cast<uint64_t>((c.groups - 1) * p.cin_g + p.cin_pad);
  return end <= reg->size;
}

// Whether the ISA's fused tiles can requantize in 64-bit lanes
// (RequantParams::fused64): int8 output, every S <= 62, an int8 residual
// with the output's strides or none.
bool fusable64(const ConvIsa& isa, const isa::Conv& c, const ConvPlan& p, bool residual) {
  if (!isa.fused64 || p.has_s63 || c.out.dtype != isa::DType::kInt8) return false;
  if (!residual) return true;
  if (c.residual.dtype != isa::DType::kInt8) return false;
  for (int k = 0; k < 4; ++k)
    if (c.residual.strides[k] != c.out.strides[k]) return false;
  return true;
}

void conv_gemm(const ConvIsa& isa, const isa::Conv& c, const Memory& mem, const ConvPlan& p,
               const RequantParams& rq_in, bool residual, bool transposed) {
  const Geometry g = geometry(c);
  RequantParams rq = rq_in;
  if (!isa.float_gemm) rq.float_rq = false, rq.float3 = false;
  if ((residual || !rq.shift_ge33) && !rq.float_rq && fusable64(isa, c, p, residual)) {
    rq.fused64 = true;
    if (p.hi32)
      rq.hi32 = true, rq.hi32_srl = p.hi32_srl, rq.hi32_r = p.hi32_r.data(),
      rq.hi32_sh = p.hi32_sh.data();
    // (addresses as integers: the residual and the output may be different buffers)
    if (residual)
      rq.res_delta = static_cast<intptr_t>(reinterpret_cast<uintptr_t>(mem.ptr(c.residual)) -
                                           reinterpret_cast<uintptr_t>(mem.ptr(c.out)));
  }
  // Requantization in the tile kernel: int8 output with channel stride 1,
  // and every S >= 33 without a residual, float_requant, or the ISA's
  // 64-bit form.
  const bool fused = isa.gemm_q != nullptr && c.out.dtype == isa::DType::kInt8 &&
                     c.out.strides[3] == 1 &&
                     (rq.fused64 || (!residual && (rq.shift_ge33 || rq.float_rq)));
  GemmRun r{isa, c, p, rq, g, residual, transposed, fused,
            c.out.strides[3] == 1 && (!residual || c.residual.strides[3] == 1)};
  r.es = isa.esize;
  r.nr = isa.nr;
  r.zero_byte = isa.fmt == InputFormat::kU8 ? 0x80 : 0;
  r.pad_byte = static_cast<uint8_t>(static_cast<uint8_t>(c.pad_value) ^ r.zero_byte);
  r.src = reinterpret_cast<const int8_t*>(mem.ptr(c.in));
  const Buffer* in_reg = mem.region(c.in.region, c.in.index);
  r.src_end = in_reg->data + in_reg->size;
  r.band = p.im2col ? Band::kIm2col : p.rowtap ? Band::kRowTap : Band::kTaps;
  if (r.band == Band::kTaps && isa.fmt == InputFormat::kS8 && in_place_ok(c, mem, p))
    r.band = Band::kInPlace;
  r.cs = r.band == Band::kRowTap ? g.cin : round_up(p.cin_pad, 4);
  r.hp = (g.oh - 1) * g.sh + static_cast<int64_t>(g.kh - 1) * g.dh + 1;
  r.wp = (g.ow - 1) * g.sw + g.kw;
  Workspace& ws = workspace();
  // Zero row: the pad value in the format (0 is 0x80 for u8) for taps
  // outside the image (the channels past cin_g meet zero weights).
  const size_t zbytes = static_cast<size_t>(std::max<int64_t>(r.cs, p.cin_pad) * r.es) + 64;
  uint8_t* zero = ws.zero.get(zbytes);
  r.fill_pad(zero, static_cast<int64_t>(zbytes) / r.es);
  r.zero = zero;

  r.pixels = g.n * g.oh * g.ow;
  r.mr = isa.mr;
  r.gemm = fused ? isa.gemm_q : isa.gemm;
  if (isa.mr3 > 0 && static_cast<int64_t>(p.taps) * p.cin_pad < isa.small_k)
    r.mr = isa.mr3, r.gemm = fused ? isa.gemm3_q : isa.gemm3;
  if (isa.mr2 > 0) {
    const int64_t rows1 = (r.pixels + r.mr - 1) / r.mr * r.mr,
                  rows2 = (r.pixels + isa.mr2 - 1) / isa.mr2 * isa.mr2;
    if (rows2 * 100 < rows1 * 95) r.mr = isa.mr2, r.gemm = fused ? isa.gemm2_q : isa.gemm2;
  }
  if (r.pixels == 1 && (fused ? isa.gemv_q : isa.gemv) != nullptr)
    r.mr = 1, r.gemm = fused ? isa.gemv_q : isa.gemv;
  const int mr = r.mr, nr = r.nr, es = r.es;
  r.tiles = (r.pixels + mr - 1) / mr;
  // Pixel chunks: every weight block of the group sweeps over the tiles of a
  // chunk, so the chunk's input (and the im2col rows) should stay in L2 and
  // its accumulators too; large chunks stream big weight sets fewer times.
  const int64_t px_in_bytes =
      p.im2col    ? static_cast<int64_t>(p.cin_pad) * es
      : p.columns ? static_cast<int64_t>(g.kh) * r.cs * es * g.sw
               : std::max<int64_t>(1, r.cs * es * std::min<int64_t>(4, int64_t{g.sh} * g.sw));
  const int64_t px_acc_bytes = fused ? 1 : static_cast<int64_t>(p.nblk) * nr * 4;
  const int64_t chunk_px =
      std::max<int64_t>(mr, std::min((256 * 1024) / px_in_bytes, (192 * 1024) / px_acc_bytes));
  // (never more than the image: the workspace is sized for a whole chunk)
  r.chunk_tiles = std::max<int64_t>(1, std::min<int64_t>(r.tiles, chunk_px / mr));
  const int threads = split_threads(c, transposed);
  r.threads = threads;
  const int64_t chunks_min = threads > 1 ? 2 * threads : 1;
  if (threads > 1 && (r.tiles + r.chunk_tiles - 1) / r.chunk_tiles < chunks_min)
    r.chunk_tiles = std::max<int64_t>(1, (r.tiles + chunks_min - 1) / chunks_min);
  r.chunks = (r.tiles + r.chunk_tiles - 1) / r.chunk_tiles;
  // With few chunks and several threads, split the weight blocks too.
  r.nsplit = 1;
  if (threads > 1 && r.chunks * c.groups < 2 * threads)
    r.nsplit = static_cast<int>(std::min<int64_t>(p.nblk, (2 * threads + r.chunks - 1) / r.chunks));
  r.out = out_view(mem, c.out);
  r.res = residual ? out_view(mem, c.residual) : OutView{};

  const int max_acc_stride = ((p.nblk + r.nsplit - 1) / r.nsplit) * nr;
  const int64_t chunk_px_all = r.chunk_tiles * mr;
  r.needs.rows = static_cast<size_t>(chunk_px_all * p.taps);
  r.needs.outp = fused ? static_cast<size_t>(chunk_px_all) : 0;
  r.needs.acc_bytes = fused ? 0 : static_cast<size_t>(chunk_px_all) * max_acc_stride * 4 + 64;
  r.needs.col_bytes = p.im2col ? static_cast<size_t>(chunk_px_all) * p.cin_pad * es + 64 : 0;
  // A chunk's tiles each keep their prepared operands when that fits half an
  // L2 beside a weight block: 7x7 and 14x14 maps of 256-512 channels, whose
  // weights (0.6-2.4 MB) would otherwise be streamed once per tile.
  r.tile_scratch = isa.gemm_scratch != nullptr ? isa.gemm_scratch(p.taps, p.cin_pad) : 0;
  r.scratch_slots = r.tile_scratch != 0 && isa.tiles_outer && p.nblk > 1 &&
                    static_cast<size_t>(r.chunk_tiles) * r.tile_scratch <= (size_t{1} << 20);
  r.needs.scratch_bytes = r.scratch_slots ? r.tile_scratch * r.chunk_tiles : r.tile_scratch;
  if (p.columns)  // a chunk's output rows (at most one partial row at each end)
    r.needs.col_bytes = static_cast<size_t>(((chunk_px_all + g.ow - 1) / g.ow + 1) * r.wp *
                                            g.kh * r.cs * es + (p.cin_pad + 64) * es);
  if (r.band == Band::kRowTap || r.band == Band::kTaps) {
    // The largest band: a chunk's output rows (at most one partial row at
    // each end) and the kernel's reach, plus the over-read of a tap.
    const int64_t out_rows = std::min<int64_t>(g.n * g.oh, (chunk_px_all + g.ow - 1) / g.ow + 1);
    const int64_t span = static_cast<int64_t>(g.kh - 1) * g.dh + 1;
    // (a band across two images holds the end of one and the start of the next)
    const int64_t in_rows = r.band == Band::kRowTap || !transposed
                                ? out_rows * g.sh + 2 * span + 1
                                : out_rows / g.sh + 2 * span + 2;
    const int64_t row_px = r.band == Band::kRowTap ? r.wp : g.iw;
    r.needs.ring_bytes =
        static_cast<size_t>(in_rows * row_px * r.cs * es + (p.cin_pad + 64) * es);
  }
  auto task = [&r](int ti) { r.task(ti); };
  parallel_for(static_cast<int>(c.groups * r.chunks * r.nsplit), task, r.threads, &r.needs);
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
            const bool inside = ih >= 0 && ih < g.ih && iw >= 0 && iw < g.iw;
            if (!inside && (transposed || c.pad_value == 0)) continue;
            const int64_t px = inside ? (n * is[0] + ih * is[1] + iw * is[2]) * ies : 0;
            const int t = kh * g.kw + kw;
            for (int gi = 0; gi < groups; ++gi) {
              int64_t* ag = acc + gi * cout_g;
              for (int64_t ci = 0; ci < cin_g; ++ci) {
                const uint8_t* xp = in + px + (gi * cin_g + ci) * is[3] * ies;
                const int64_t x = !inside  ? c.pad_value
                                  : ies == 1 ? static_cast<int8_t>(*xp)
                                             : load_elem<int16_t>(xp);
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

int conv_threads() { return g_threads.load(std::memory_order_relaxed); }

void set_conv_threads(int n) { g_threads.store(n < 1 ? 1 : (n > 64 ? 64 : n)); }
void set_conv_spin_ns(uint64_t ns) { g_spin_ns.store(ns, std::memory_order_relaxed); }
int64_t conv_split_min_macs() { return g_split_min_macs.load(std::memory_order_relaxed); }
void set_conv_split_min_macs(int64_t macs) { g_split_min_macs.store(macs, std::memory_order_relaxed); }

namespace {

// What an instruction's plan key and kernel choice derive from it.
struct ConvKind {
  bool int32_out, residual, depthwise;
};
ConvKind conv_kind(const isa::Conv& c, bool transposed) {
  const bool int32_out = c.out.dtype == isa::DType::kInt32;
  return {int32_out, c.has_residual != 0 && !int32_out,
          !transposed && c.groups == c.in.dims[3] && c.groups == c.out.dims[3] && c.kernel_h <= 256};
}

// GEMM variants (ConvIsa): for inputs without negative values (one pass over
// the input decides at run time); 8-channel blocks for groups of at most 8
// output channels, for any input when no weight is -128 (the plan says).
const ConvIsa& gemm_variant(const ConvIsa& isa, const isa::Conv& c, bool nonneg_input) {
  const bool narrow = c.out.dims[3] / c.groups <= 8;
  if (isa.nonneg != nullptr && c.pad_value >= 0 && nonneg_input)
    return narrow && isa.nonneg->narrow != nullptr ? *isa.nonneg->narrow : *isa.nonneg;
  if (narrow && isa.signed8 != nullptr) return *isa.signed8;
  if (isa.narrow16 != nullptr && c.out.dims[3] / c.groups <= 16 &&
      c.out.dims[0] * c.out.dims[1] * c.out.dims[2] >= isa.narrow16->mr)
    return *isa.narrow16;
  return isa;
}

// The variant and plan that run this instruction, plans from get(variant):
// a sign_abs variant falls back to the ISA's own GEMM when a weight is -128.
template <class Get>
std::pair<const ConvIsa*, const ConvPlan*> variant_plan(const ConvIsa& isa, const isa::Conv& c,
                                                         const ConvKind& k, bool nonneg_input, Get&& get) {
  const ConvIsa* gp = k.depthwise ? &isa : &gemm_variant(isa, c, nonneg_input);
  const ConvPlan* plan = get(*gp);
  if (gp->sign_abs && plan->has_m128) {
    gp = &isa;
    plan = get(isa);
  }
  return {gp, plan};
}

void conv_any(const ConvIsa& isa, const isa::Conv& c, const Memory& mem, bool transposed) {
  if (!structurally_valid(c)) return;
  if (c.in.dtype != isa::DType::kInt8) {
    conv_generic(c, mem, transposed);
    return;
  }
  const ConvKind k = conv_kind(c, transposed);
  const bool depthwise = k.depthwise, residual = k.residual;
  const bool nonneg_input = !depthwise && isa.nonneg != nullptr && c.pad_value >= 0 && nonnegative(c, mem);
  const auto [gp, plan] = variant_plan(isa, c, k, nonneg_input, [&](const ConvIsa& i) {
    return get_plan(i, c, mem, k.int32_out, residual, depthwise, transposed);
  });
  const ConvIsa& gi = *gp;
  const RequantParams rq = make_rq(*plan, c, k.int32_out, residual);
  if (depthwise && plan->dw4) {
    if (!conv_dwflat(gi, c, mem, *plan, rq, residual)) conv_dw4(gi, c, mem, *plan, rq, residual);
  }
  else if (depthwise)
    conv_depthwise(gi, c, mem, *plan, rq, residual);
  else
    conv_gemm(gi, c, mem, *plan, rq, residual, transposed);
}

}  // namespace

void conv(const ConvIsa& isa, const isa::Conv& c, const Memory& mem) {
  conv_any(isa, c, mem, false);
}

void deconv(const ConvIsa& isa, const isa::Conv& c, const Memory& mem) {
  conv_any(isa, c, mem, true);
}

void prepare_conv(const ConvIsa& isa, const isa::Conv& c, const Memory& mem, bool transposed,
                  bool nonneg_input) {
  if (!structurally_valid(c) || c.in.dtype != isa::DType::kInt8) return;
  const ConvKind k = conv_kind(c, transposed);
  // (the shared cache only: the caller's thread keeps no front entries; the
  // cache holds the plan after the call)
  variant_plan(isa, c, k, nonneg_input, [&](const ConvIsa& i) {
    bool pinned = false;
    return shared_plan(plan_key(i, c, mem, k.int32_out, k.residual, transposed), i, c, mem, k.depthwise, &pinned)
        .get();
  });
}

void pin_constants_impl(const uint8_t* base, uint64_t size) {
  PlanCache& cache = plan_cache();
  std::lock_guard<std::mutex> lk(cache.mu);
  g_plan_epoch.fetch_add(1, std::memory_order_acq_rel);
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

size_t conv_plan_count_impl() {
  PlanCache& cache = plan_cache();
  std::lock_guard<std::mutex> lk(cache.mu);
  return cache.plans.size();
}

void unpin_constants_impl(const uint8_t* base) {
  PlanCache& cache = plan_cache();
  std::lock_guard<std::mutex> lk(cache.mu);
  g_plan_epoch.fetch_add(1, std::memory_order_acq_rel);
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
