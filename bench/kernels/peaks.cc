// SPDX-License-Identifier: Apache-2.0
// Same-run machine figures for the kernel benchmarks (peaks.h). Each peak
// loop keeps enough independent accumulators to hide the latencies and
// hides its operands from the optimizer (empty asm with register
// constraints), so it measures the throughput of exactly that instruction
// mix; the result is the best of five tries (CPU time of this thread).
#include "bench/kernels/peaks.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <vector>

#include "bpu_sim/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif
#if defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace openbpu::bench {

double thread_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

namespace {

template <class F>
double best_rate(F&& loop) {  // loop() returns units done; best units per second
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    const double t0 = thread_seconds();
    const double units = loop(rep);
    best = std::max(best, units / (thread_seconds() - t0));
  }
  return best;
}

#if defined(__x86_64__)
// vpmaddwd + vpaddd on 8 accumulators (16 MACs per pair): the int16 GEMM.
__attribute__((target("avx2"))) double avx2_s16_macs(int rep) {
  __m256i a0 = _mm256_set1_epi32(rep), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
          a7 = a0;
  __m256i x0 = _mm256_set1_epi16(3), x1 = _mm256_set1_epi16(5), x2 = _mm256_set1_epi16(7),
          x3 = _mm256_set1_epi16(9), w0 = _mm256_set1_epi16(2), w1 = _mm256_set1_epi16(4);
  const int64_t n = 20000000;
  for (int64_t i = 0; i < n; ++i) {
    a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(x0, w0));
    a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(x1, w0));
    a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(x2, w0));
    a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(x3, w0));
    a4 = _mm256_add_epi32(a4, _mm256_madd_epi16(x0, w1));
    a5 = _mm256_add_epi32(a5, _mm256_madd_epi16(x1, w1));
    a6 = _mm256_add_epi32(a6, _mm256_madd_epi16(x2, w1));
    a7 = _mm256_add_epi32(a7, _mm256_madd_epi16(x3, w1));
    asm volatile(""
                 : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6), "+x"(a7),
                   "+x"(x0), "+x"(x1), "+x"(x2), "+x"(x3), "+x"(w0), "+x"(w1));
  }
  int32_t sink[8];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(sink),
                      _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)));
  benchmark::DoNotOptimize(sink);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(sink),
                      _mm256_add_epi32(_mm256_add_epi32(a4, a5), _mm256_add_epi32(a6, a7)));
  benchmark::DoNotOptimize(sink);
  return 8.0 * 16.0 * static_cast<double>(n);
}

// vpmaddubsw + vpmaddwd(ones) + vpaddd on 6 accumulators (32 MACs per
// triple): the GEMM for inputs without negative values.
__attribute__((target("avx2"))) double avx2_u8_macs(int rep) {
  __m256i a0 = _mm256_set1_epi32(rep), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
  __m256i x0 = _mm256_set1_epi8(3), x1 = _mm256_set1_epi8(4), x2 = _mm256_set1_epi8(5),
          w0 = _mm256_set1_epi8(7), w1 = _mm256_set1_epi8(9), one = _mm256_set1_epi16(1);
  const int64_t n = 20000000;
  for (int64_t i = 0; i < n; ++i) {
    a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_maddubs_epi16(x0, w0), one));
    a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_maddubs_epi16(x1, w0), one));
    a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_maddubs_epi16(x2, w0), one));
    a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_maddubs_epi16(x0, w1), one));
    a4 = _mm256_add_epi32(a4, _mm256_madd_epi16(_mm256_maddubs_epi16(x1, w1), one));
    a5 = _mm256_add_epi32(a5, _mm256_madd_epi16(_mm256_maddubs_epi16(x2, w1), one));
    asm volatile(""
                 : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(x0), "+x"(x1),
                   "+x"(x2), "+x"(w0), "+x"(w1), "+x"(one));
  }
  int32_t sink[8];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(sink),
                      _mm256_add_epi32(_mm256_add_epi32(a0, a1), _mm256_add_epi32(a2, a3)));
  benchmark::DoNotOptimize(sink);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(sink), _mm256_add_epi32(a4, a5));
  benchmark::DoNotOptimize(sink);
  return 6.0 * 32.0 * static_cast<double>(n);
}

// AMX tdpbusd on four independent 16 x 16 int32 C tiles (16384 MACs each),
// the amx table's GEMM step: two A and two B tiles, no loads in the loop.
struct alignas(64) AmxPeakConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
__attribute__((target("amx-tile,amx-int8"))) double amx_macs(int rep) {
  AmxPeakConfig c;
  for (int t = 0; t < 8; ++t) c.rows[t] = 16, c.colsb[t] = 64;
  _tile_loadconfig(&c);
  alignas(64) static uint8_t x[16 * 64];
  alignas(64) static int32_t sink[16 * 16];
  std::memset(x, rep + 1, sizeof x);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, x, 64);
  _tile_loadd(5, x, 64);
  _tile_loadd(6, x, 64);
  _tile_loadd(7, x, 64);
  const int64_t n = 500000;
  for (int64_t i = 0; i < n; ++i) {
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    _tile_dpbusd(2, 5, 6);
    _tile_dpbusd(3, 5, 7);
  }
  _tile_stored(0, sink, 64);
  _tile_release();
  benchmark::DoNotOptimize(sink);
  return 4.0 * 16384.0 * static_cast<double>(n);
}

// vpdpbusd zmm on 16 accumulators (64 MACs each): the AVX-512 VNNI GEMM.
// Its latency (5-6 cycles) at two per cycle (Intel server cores) needs at
// least 12 independent chains: 8 measured two thirds of the peak.
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) double vnni_macs(int rep) {
  // Named accumulators (an array would live in memory).
  __m512i a0 = _mm512_set1_epi32(rep), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
          a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0, a12 = a0, a13 = a0, a14 = a0, a15 = a0;
  __m512i x0 = _mm512_set1_epi8(3), x1 = _mm512_set1_epi8(5), w0 = _mm512_set1_epi8(7),
          w1 = _mm512_set1_epi8(9);
  const int64_t n = 20000000;
  for (int64_t i = 0; i < n; ++i) {
    a0 = _mm512_dpbusd_epi32(a0, x0, w0);
    a1 = _mm512_dpbusd_epi32(a1, x1, w0);
    a2 = _mm512_dpbusd_epi32(a2, x0, w1);
    a3 = _mm512_dpbusd_epi32(a3, x1, w1);
    a4 = _mm512_dpbusd_epi32(a4, w0, x0);
    a5 = _mm512_dpbusd_epi32(a5, w1, x0);
    a6 = _mm512_dpbusd_epi32(a6, w0, x1);
    a7 = _mm512_dpbusd_epi32(a7, w1, x1);
    a8 = _mm512_dpbusd_epi32(a8, x0, w0);
    a9 = _mm512_dpbusd_epi32(a9, x1, w0);
    a10 = _mm512_dpbusd_epi32(a10, x0, w1);
    a11 = _mm512_dpbusd_epi32(a11, x1, w1);
    a12 = _mm512_dpbusd_epi32(a12, w0, x0);
    a13 = _mm512_dpbusd_epi32(a13, w1, x0);
    a14 = _mm512_dpbusd_epi32(a14, w0, x1);
    a15 = _mm512_dpbusd_epi32(a15, w1, x1);
    // (an asm statement takes at most 30 operands, a "+" one counting twice)
    asm volatile(""
                 : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), "+v"(a6),
                   "+v"(a7), "+v"(x0), "+v"(x1));
    asm volatile(""
                 : "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11), "+v"(a12), "+v"(a13), "+v"(a14),
                   "+v"(a15), "+v"(w0), "+v"(w1));
  }
  const __m512i s0 = _mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3));
  const __m512i s1 = _mm512_add_epi32(_mm512_add_epi32(a4, a5), _mm512_add_epi32(a6, a7));
  const __m512i s2 = _mm512_add_epi32(_mm512_add_epi32(a8, a9), _mm512_add_epi32(a10, a11));
  const __m512i s3 = _mm512_add_epi32(_mm512_add_epi32(a12, a13), _mm512_add_epi32(a14, a15));
  int32_t sink[16];
  _mm512_storeu_si512(sink, _mm512_add_epi32(_mm512_add_epi32(s0, s1), _mm512_add_epi32(s2, s3)));
  benchmark::DoNotOptimize(sink);
  return 16.0 * 64.0 * static_cast<double>(n);
}

// The least a 3x3 depthwise convolution does per 16 int8 outputs on the
// VNNI table, from registers only: 3 vpdpbusd (9 taps in groups of 4), the
// fp32 requantization (vcvtdq2ps, vfmadd, vcvtps2dq) and a quarter of the
// packs and clamps of 4 zmm of results (2 vpackssdw, 1 vpacksswb, vpmaxsb,
// vpminsb). Counts 9 useful MACs per output: its rate bounds what any
// depthwise kernel with this mix can reach (docs/kernels.md).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni"))) double vnni_dw_macs(int rep) {
  __m512i a0 = _mm512_set1_epi32(rep), a1 = a0, a2 = a0, a3 = a0;
  __m512i x0 = _mm512_set1_epi8(3), x1 = _mm512_set1_epi8(5), w0 = _mm512_set1_epi8(7),
          w1 = _mm512_set1_epi8(9), w2 = _mm512_set1_epi8(11);
  __m512 m = _mm512_set1_ps(0.01f), b = _mm512_set1_ps(0.5f);
  __m512i lo = _mm512_set1_epi8(-128), hi = _mm512_set1_epi8(127), out = lo;
  const int64_t n = 10000000;
  for (int64_t i = 0; i < n; ++i) {
    __m512i acc[4] = {a0, a1, a2, a3};
    for (int k = 0; k < 4; ++k) {
      acc[k] = _mm512_dpbusd_epi32(acc[k], k % 2 ? x1 : x0, w0);
      acc[k] = _mm512_dpbusd_epi32(acc[k], k % 2 ? x0 : x1, w1);
      acc[k] = _mm512_dpbusd_epi32(acc[k], k % 2 ? x1 : x0, w2);
      acc[k] = _mm512_cvtps_epi32(_mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[k]), m, b));
    }
    const __m512i p = _mm512_packs_epi16(_mm512_packs_epi32(acc[0], acc[1]), _mm512_packs_epi32(acc[2], acc[3]));
    out = _mm512_add_epi8(out, _mm512_min_epi8(_mm512_max_epi8(p, lo), hi));
    asm volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(x0), "+v"(x1), "+v"(w0), "+v"(w1), "+v"(w2));
    asm volatile("" : "+v"(m), "+v"(b), "+v"(lo), "+v"(hi), "+v"(out));
  }
  int8_t sink[64];
  _mm512_storeu_si512(sink, out);
  benchmark::DoNotOptimize(sink);
  return 64.0 * 9.0 * static_cast<double>(n);
}
#endif

#if defined(__aarch64__)
// smlal by lane (4 MACs each) on 8 accumulators: the NEON int16 GEMM.
double neon_macs(int rep) {
  int32x4_t acc[8];
  for (auto& a : acc) a = vdupq_n_s32(rep);
  int16x4_t x0 = vdup_n_s16(3), x1 = vdup_n_s16(5);
  int16x8_t w = vdupq_n_s16(7);
  const int64_t n = 20000000;
  for (int64_t i = 0; i < n; ++i) {
    acc[0] = vmlal_laneq_s16(acc[0], x0, w, 0);
    acc[1] = vmlal_laneq_s16(acc[1], x1, w, 1);
    acc[2] = vmlal_laneq_s16(acc[2], x0, w, 2);
    acc[3] = vmlal_laneq_s16(acc[3], x1, w, 3);
    acc[4] = vmlal_laneq_s16(acc[4], x0, w, 4);
    acc[5] = vmlal_laneq_s16(acc[5], x1, w, 5);
    acc[6] = vmlal_laneq_s16(acc[6], x0, w, 6);
    acc[7] = vmlal_laneq_s16(acc[7], x1, w, 7);
    asm volatile(""
                 : "+w"(acc[0]), "+w"(acc[1]), "+w"(acc[2]), "+w"(acc[3]), "+w"(acc[4]),
                   "+w"(acc[5]), "+w"(acc[6]), "+w"(acc[7]), "+w"(x0), "+w"(x1), "+w"(w));
  }
  int32_t sink[4];
  vst1q_s32(sink, vaddq_s32(acc[0], acc[7]));
  benchmark::DoNotOptimize(sink);
  return 8.0 * 4.0 * static_cast<double>(n);
}

// sdot by lane (16 MACs each) on 8 accumulators: the dot-product GEMM.
__attribute__((target("arch=armv8.2-a+dotprod"))) double neondot_macs(int rep) {
  int32x4_t acc[8];
  for (auto& a : acc) a = vdupq_n_s32(rep);
  int8x16_t x = vdupq_n_s8(3), w0 = vdupq_n_s8(5), w1 = vdupq_n_s8(7);
  const int64_t n = 20000000;
  for (int64_t i = 0; i < n; ++i) {
    acc[0] = vdotq_laneq_s32(acc[0], w0, x, 0);
    acc[1] = vdotq_laneq_s32(acc[1], w0, x, 1);
    acc[2] = vdotq_laneq_s32(acc[2], w0, x, 2);
    acc[3] = vdotq_laneq_s32(acc[3], w0, x, 3);
    acc[4] = vdotq_laneq_s32(acc[4], w1, x, 0);
    acc[5] = vdotq_laneq_s32(acc[5], w1, x, 1);
    acc[6] = vdotq_laneq_s32(acc[6], w1, x, 2);
    acc[7] = vdotq_laneq_s32(acc[7], w1, x, 3);
    asm volatile(""
                 : "+w"(acc[0]), "+w"(acc[1]), "+w"(acc[2]), "+w"(acc[3]), "+w"(acc[4]),
                   "+w"(acc[5]), "+w"(acc[6]), "+w"(acc[7]), "+w"(x), "+w"(w0), "+w"(w1));
  }
  int32_t sink[4];
  vst1q_s32(sink, vaddq_s32(acc[0], acc[7]));
  benchmark::DoNotOptimize(sink);
  return 8.0 * 16.0 * static_cast<double>(n);
}
#endif

// The portable GEMM's inner loop (plain C++, vectorized by the compiler for
// the baseline ISA): 4 pixels x 16 channels of int16 products into int32.
double portable_macs(int rep) {
  alignas(64) int16_t w[64][16];
  alignas(64) int16_t x[4][64];
  for (int k = 0; k < 64; ++k) {
    for (int n = 0; n < 16; ++n) w[k][n] = static_cast<int16_t>((k * 7 + n + rep) % 255 - 127);
    for (int m = 0; m < 4; ++m) x[m][k] = static_cast<int16_t>((k * 3 + m) % 255 - 127);
  }
  int32_t acc[4][16] = {};
  const int64_t n = 300000;
  for (int64_t i = 0; i < n; ++i) {
    benchmark::DoNotOptimize(&w[0][0]);
    for (int k = 0; k < 64; ++k)
      for (int m = 0; m < 4; ++m) {
        const int32_t xv = x[m][k];
        for (int c = 0; c < 16; ++c) acc[m][c] += xv * w[k][c];
      }
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(acc);
  return 64.0 * 4 * 16 * static_cast<double>(n);
}

TablePeak measure_peak(const std::string& name) {
  const double hz = core_hz();
  TablePeak p;
#if defined(__x86_64__)
  const sim::CpuFeatures& f = sim::cpu_features();
  if (name == "amx" && f.amx) {
    p.macs_per_cycle = best_rate(amx_macs) / hz;
    p.what = "AMX tdpbusd, 4 C tiles";
    return p;
  }
  if (name == "avx512vnni" && f.avx512vnni) {
    p.macs_per_cycle = best_rate(vnni_macs) / hz;
    p.what = "AVX-512 vpdpbusd";
    p.dw_bound_macs_per_cycle = best_rate(vnni_dw_macs) / hz;
    return p;
  }
  if (name == "avx2" && f.avx2) {
    // The table's best exact mix: int16 madd for any input, maddubs for
    // inputs without negative values.
    const double s16 = best_rate(avx2_s16_macs) / hz, u8 = best_rate(avx2_u8_macs) / hz;
    p.macs_per_cycle = std::max(s16, u8);
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "AVX2 vpmaddubsw+vpmaddwd+vpaddd (%.1f; int16 vpmaddwd+vpaddd %.1f)", u8, s16);
    p.what = buf;
    return p;
  }
#endif
#if defined(__aarch64__)
  const sim::CpuFeatures& f = sim::cpu_features();
  if (name == "neondot" && f.neon_dot) {
    p.macs_per_cycle = best_rate(neondot_macs) / hz;
    p.what = "NEON sdot by lane";
    return p;
  }
  if (name == "neon") {
    p.macs_per_cycle = best_rate(neon_macs) / hz;
    p.what = "NEON smlal by lane";
    return p;
  }
#endif
  p.macs_per_cycle = best_rate(portable_macs) / hz;
  p.what = "portable int16 loop (compiler-vectorized)";
  return p;
}

}  // namespace

double core_hz() {
  // The increment is a register, not an immediate: recent Intel cores
  // (Golden Cove, Sapphire Rapids) fold chains of add-immediate at rename,
  // several per cycle, which measured 11.5 GHz on a 2.9 GHz core.
  static const double hz = best_rate([](int) {
    uint64_t x = 1, one = 1;
    const uint64_t n = 50000000;
    for (uint64_t i = 0; i < n; ++i) {
#if defined(__x86_64__)
      asm volatile("add %1, %0" : "+r"(x) : "r"(one));
      asm volatile("add %1, %0" : "+r"(x) : "r"(one));
      asm volatile("add %1, %0" : "+r"(x) : "r"(one));
      asm volatile("add %1, %0" : "+r"(x) : "r"(one));
#elif defined(__aarch64__)
      asm volatile("add %0, %0, %1" : "+r"(x) : "r"(one));
      asm volatile("add %0, %0, %1" : "+r"(x) : "r"(one));
      asm volatile("add %0, %0, %1" : "+r"(x) : "r"(one));
      asm volatile("add %0, %0, %1" : "+r"(x) : "r"(one));
#else
      x = x * 3 + one;
      benchmark::DoNotOptimize(x);
#endif
    }
    benchmark::DoNotOptimize(x);
    return 4.0 * static_cast<double>(n);
  });
  return hz;
}

const TablePeak& table_peak(const sim::KernelTable& table) {
  static std::mutex mu;
  static std::map<std::string, TablePeak> peaks;
  std::lock_guard<std::mutex> lk(mu);
  auto it = peaks.find(table.name);
  if (it == peaks.end()) it = peaks.emplace(table.name, measure_peak(table.name)).first;
  return it->second;
}

double copy_bytes_per_cycle() {
  static const double v = [] {
    // Source and destination at different offsets within a 4 KB page (the
    // same offset makes loads wait on unrelated stores: 4K aliasing).
    constexpr size_t kBytes = 256 << 10;
    std::vector<uint8_t> buf(2 * kBytes + 8192, 1);
    uint8_t* a = buf.data();
    uint8_t* b = buf.data() + kBytes + 2048 + 64;
    const double rate = best_rate([&](int) {
      for (int i = 0; i < 400; ++i) {
        std::memcpy(b, a, kBytes);
        benchmark::ClobberMemory();
        std::swap(a, b);
      }
      return 400.0 * 2.0 * static_cast<double>(kBytes);
    });
    return rate / core_hz();
  }();
  return v;
}

}  // namespace openbpu::bench
