// SPDX-License-Identifier: Apache-2.0
// Per-instruction and per-layer-kind profile of a model's BPU programs
// (layers.h).
#include "bench/kernels/layers.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench/kernels/peaks.h"
#include "bpu_sim/executor.h"
#include "bpu_sim/isa/codec.h"
#include "schema/writer.h"

namespace openbpu::bench {
namespace {

struct Program {
  std::string name;
  std::vector<isa::Instruction> ins;
  std::vector<std::vector<uint8_t>> inputs, outputs;
  std::vector<uint8_t> scratch;
  sim::Memory mem;
};

// Bytes a view spans from its region's start (offset + extent).
uint64_t view_end(const isa::TensorRef& t) {
  int64_t last = 0;
  for (int k = 0; k < isa::kMaxRank; ++k) last += (t.dims[k] - 1) * t.strides[k];
  return t.offset + static_cast<uint64_t>(last + 1) * isa::dtype_size(t.dtype);
}

template <class F>
void for_views(const isa::Instruction& ins, F&& f) {
  std::visit(
      [&](const auto& b) {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, isa::Conv>) {
          f(b.in), f(b.out);
          if (b.has_residual) f(b.residual);
        } else if constexpr (std::is_same_v<T, isa::Eltwise> || std::is_same_v<T, isa::MatMul>) {
          f(b.a), f(b.b), f(b.out);
        } else if constexpr (std::is_same_v<T, isa::Fill>) {
          f(b.out);
        } else if constexpr (std::is_same_v<T, isa::Preprocess>) {
          f(b.in), f(b.out);
          if (b.src_format == isa::ImageFormat::kNV12) {  // the UV plane: (H+1)/2 rows of W bytes
            isa::TensorRef uv;
            uv.region = b.in.region, uv.index = b.in.index, uv.dtype = isa::DType::kUInt8;
            uv.offset = b.in.offset + b.uv_offset;
            uv.dims[1] = (b.in.dims[1] + 1) / 2, uv.dims[2] = b.in.dims[2];
            uv.strides[1] = b.uv_row_stride, uv.strides[2] = 1;
            f(uv);
          }
        } else {
          f(b.in), f(b.out);
        }
      },
      ins.body);
}

bool load_programs(const std::string& path, std::vector<uint8_t>* data,
                   std::vector<std::unique_ptr<Program>>* out) {
  FILE* fp = std::fopen(path.c_str(), "rb");
  if (fp == nullptr) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    return false;
  }
  std::vector<uint8_t> file;
  std::fseek(fp, 0, SEEK_END);
  file.resize(static_cast<size_t>(std::ftell(fp)));
  std::fseek(fp, 0, SEEK_SET);
  const bool read_ok = std::fread(file.data(), 1, file.size(), fp) == file.size();
  std::fclose(fp);
  fb::ModelFileT f;
  std::string err;
  if (!read_ok || !model::unpack_model_file(file.data(), file.size(), &f, data, &err) ||
      f.models.empty()) {
    std::fprintf(stderr, "%s: not a model file (%s)\n", path.c_str(), err.c_str());
    return false;
  }
  std::mt19937 rng(7);
  for (const auto& seg : f.models[0]->segments) {
    const fb::BpuProgramT* bpu = seg->kind.AsBpuProgram();
    if (bpu == nullptr) continue;
    auto p = std::make_unique<Program>();
    p->name = seg->name;
    if (!isa::decode_program(data->data() + bpu->code->offset(), bpu->code->size(), &p->ins, &err)) {
      std::fprintf(stderr, "%s: %s\n", p->name.c_str(), err.c_str());
      return false;
    }
    // Regions as large as the views reach; inputs hold random bytes.
    std::map<std::pair<int, int>, uint64_t> need;
    for (const auto& ins : p->ins)
      for_views(ins, [&](const isa::TensorRef& t) {
        auto& n = need[{static_cast<int>(t.region), t.index}];
        n = std::max(n, view_end(t));
      });
    for (const auto& [key, bytes] : need) {
      auto& list = key.first == static_cast<int>(isa::Region::kInput) ? p->inputs : p->outputs;
      if (key.first != static_cast<int>(isa::Region::kInput) &&
          key.first != static_cast<int>(isa::Region::kOutput))
        continue;
      if (list.size() <= static_cast<size_t>(key.second)) list.resize(key.second + 1);
      list[key.second].resize(bytes + 64);
      for (auto& b : list[key.second]) b = static_cast<uint8_t>(rng());
    }
    p->scratch.assign(bpu->scratch_size + 64, 0);
    for (auto& v : p->inputs) p->mem.inputs.push_back({v.data(), v.size()});
    for (auto& v : p->outputs) p->mem.outputs.push_back({v.data(), v.size()});
    p->mem.constants = {data->data() + bpu->constants->offset(), bpu->constants->size()};
    p->mem.scratch = {p->scratch.data(), p->scratch.size()};
    out->push_back(std::move(p));
  }
  if (out->empty()) std::fprintf(stderr, "%s: the first model has no BPU program\n", path.c_str());
  return !out->empty();
}

int64_t elems(const isa::TensorRef& t) { return t.elements(); }
int64_t bytes(const isa::TensorRef& t) { return t.elements() * isa::dtype_size(t.dtype); }

struct Info {
  std::string kind, desc;
  double macs = 0, bytes = 0;
};

Info describe(const isa::Instruction& ins) {
  Info r;
  if (const auto* c = std::get_if<isa::Conv>(&ins.body)) {
    const int64_t cin = c->in.dims[3], cout = c->out.dims[3];
    const int64_t pixels = static_cast<int64_t>(c->out.dims[0]) * c->out.dims[1] * c->out.dims[2];
    const bool deconv = ins.opcode == isa::Opcode::kDeconv;
    r.macs = static_cast<double>(isa::conv_macs(*c, deconv));
    r.bytes = static_cast<double>(bytes(c->in) + bytes(c->out));
    const bool k1 = c->kernel_h == 1 && c->kernel_w == 1;
    if (deconv)
      r.kind = "deconv";
    else if (c->groups == cin && c->groups == cout)
      r.kind = "depthwise";
    else if (c->groups > 1)
      r.kind = "grouped";
    else if (pixels == c->out.dims[0] && k1)
      r.kind = "fc";
    else if (k1)
      r.kind = c->stride_h > 1 || c->stride_w > 1 ? "1x1 strided" : "1x1";
    else
      r.kind = "3x3 (KxK)";
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s>%s%s %dx%dx%d->%d k%dx%d s%d g%d ps%lld",
                  isa::dtype_name(c->in.dtype), isa::dtype_name(c->out.dtype),
                  c->has_residual ? "+r" : "", c->in.dims[1], c->in.dims[2], c->in.dims[3],
                  c->out.dims[3], c->kernel_h, c->kernel_w, c->stride_h, c->groups,
                  static_cast<long long>(c->in.strides[2]));
    r.desc = buf;
    return r;
  }
  std::visit(
      [&](const auto& b) {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, isa::Eltwise>) {
          r.kind = "eltwise";
          r.bytes = static_cast<double>(bytes(b.a) + bytes(b.b) + bytes(b.out));
        } else if constexpr (std::is_same_v<T, isa::MatMul>) {
          r.kind = "matmul";
          r.bytes = static_cast<double>(bytes(b.a) + bytes(b.b) + bytes(b.out));
          r.desc = std::to_string(b.out.dims[0] * b.out.dims[1]) + "x(" + std::to_string(b.a.dims[2]) + "x" +
                   std::to_string(b.a.dims[3]) + " * " + std::to_string(b.b.dims[2]) + "x" +
                   std::to_string(b.b.dims[3]) + ")";
        } else if constexpr (std::is_same_v<T, isa::Lut>) {
          r.kind = "lut";
          r.bytes = static_cast<double>(bytes(b.in) + bytes(b.out));
        } else if constexpr (std::is_same_v<T, isa::Pool>) {
          r.kind = "pool";
          r.bytes = static_cast<double>(bytes(b.in) + bytes(b.out));
        } else if constexpr (std::is_same_v<T, isa::Resize>) {
          r.kind = "resize";
          r.bytes = static_cast<double>(bytes(b.in) + bytes(b.out));
        } else if constexpr (std::is_same_v<T, isa::Preprocess>) {
          r.kind = "preprocess";
          const double in = static_cast<double>(elems(b.in)) *
                            (b.src_format == isa::ImageFormat::kNV12 ? 1.5 : 1.0);
          r.bytes = in + static_cast<double>(bytes(b.out));
        } else if constexpr (std::is_same_v<T, isa::Fill>) {
          r.kind = "move/fill/argmax";
          r.bytes = static_cast<double>(bytes(b.out));
        } else if constexpr (std::is_same_v<T, isa::Conv>) {
        } else {
          r.kind = "move/fill/argmax";
          r.bytes = static_cast<double>(bytes(b.in) + bytes(b.out));
        }
        if constexpr (std::is_same_v<T, isa::Eltwise>) {
          static const char* const kKinds[] = {"?", "add", "sub", "mul", "max", "min"};
          const int kind = static_cast<int>(b.kind) <= 5 ? static_cast<int>(b.kind) : 0;
          auto bc = [](const isa::TensorRef& t) {
            return t.strides[3] == 0 && t.strides[2] == 0 ? " scalar" : t.strides[2] == 0 ? " per-channel" : "";
          };
          r.desc = std::string(kKinds[kind]) + " " + std::to_string(b.out.dims[1]) + "x" +
                   std::to_string(b.out.dims[2]) + "x" + std::to_string(b.out.dims[3]) +
                   (*bc(b.a) ? " a" + std::string(bc(b.a)) : "") +
                   (*bc(b.b) ? " b" + std::string(bc(b.b)) : "");
        } else if constexpr (!std::is_same_v<T, isa::Fill> && !std::is_same_v<T, isa::Conv> &&
                             !std::is_same_v<T, isa::MatMul>) {
          r.desc = std::to_string(b.in.dims[1]) + "x" + std::to_string(b.in.dims[2]) + "x" +
                   std::to_string(b.in.dims[3]) + " -> " + std::to_string(b.out.dims[1]) + "x" +
                   std::to_string(b.out.dims[2]) + "x" + std::to_string(b.out.dims[3]);
          if (b.in.region == b.out.region && b.in.index == b.out.index && b.in.offset == b.out.offset)
            r.desc += " in place";
        }
      },
      ins.body);
  return r;
}

}  // namespace

int run_layers(int argc, char** argv) {
  std::string path, json_path, table_name;
  int reps = 10;
  bool quiet = false, peaks = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--json" && i + 1 < argc)
      json_path = argv[++i];
    else if (a == "--table" && i + 1 < argc)
      table_name = argv[++i];
    else if (a == "--quiet")
      quiet = true;
    else if (a == "--no-peaks")  // e.g. under valgrind: instruction counts only
      peaks = false;
    else if (path.empty() && a.rfind("--", 0) != 0)
      path = a;
    else {
      std::fprintf(stderr,
                   "usage: bench_kernels --layers <model.bin> [--reps N] [--json FILE] [--quiet] "
                   "[--no-peaks] [--table NAME]\n");
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "--layers needs a model file\n");
    return 2;
  }
  std::vector<uint8_t> data;
  std::vector<std::unique_ptr<Program>> programs;
  if (!load_programs(path, &data, &programs)) return 1;
  const sim::KernelTable* chosen = table_name.empty() ? &sim::best_kernels() : sim::find_kernels(table_name.c_str());
  if (chosen == nullptr) {
    std::fprintf(stderr, "--table %s: no such kernel table usable on this CPU (available:", table_name.c_str());
    for (const sim::KernelTable* t : sim::available_kernels()) std::fprintf(stderr, " %s", t->name);
    std::fprintf(stderr, ")\n");
    return 2;
  }
  const sim::KernelTable& table = *chosen;
  TablePeak none;
  none.macs_per_cycle = 1, none.what = "not measured";
  const double hz = peaks ? core_hz() : 1e9;
  const TablePeak& peak = peaks ? table_peak(table) : none;
  const double copy = peaks ? copy_bytes_per_cycle() : 1;
  if (peaks)
    std::printf("table %s; core clock %.2f GHz; peak %.1f MACs/cycle (%s); L2 copy %.1f bytes/cycle\n",
                table.name, hz / 1e9, peak.macs_per_cycle, peak.what.c_str(), copy);
  else  // per cycle of a nominal 1 GHz clock: MACs and bytes per ns, no fraction of a peak
    std::printf("table %s; clock and peaks not measured (--no-peaks): \"MACs/cycle\" and \"B/cycle\" below are "
                "per ns, %%peak and %%copy are not given\n", table.name);
  if (peak.dw_bound_macs_per_cycle > 0)
    std::printf("depthwise 3x3 bound: %.1f MACs/cycle (%.1f%% of the peak; 3 vpdpbusd + requantization and packs "
                "per 16 outputs, registers only)\n",
                peak.dw_bound_macs_per_cycle, 100 * peak.dw_bound_macs_per_cycle / peak.macs_per_cycle);

  struct Kind {
    double s = 0, macs = 0, bytes = 0;
    int count = 0;
  };
  std::map<std::string, Kind> kinds;
  double total = 0, whole_best = 1e30;
  for (auto& p : programs) {
    // As the device does: constants fixed while the program is loaded.
    sim::pin_constants(p->mem.constants.data, p->mem.constants.size);
    sim::execute_range(p->ins, 0, p->ins.size(), p->mem, table);  // plans, workspaces
    // Thread CPU time (a shared machine preempts us; wall time would count
    // the other processes), minus the cost of reading that clock.
    double clock_cost = 1e30;
    for (int k = 0; k < 20; ++k) {
      const double t0 = thread_seconds();
      clock_cost = std::min(clock_cost, thread_seconds() - t0);
    }
    std::vector<double> best(p->ins.size(), 1e30);
    for (int rep = 0; rep < reps; ++rep) {
      const double w0 = thread_seconds();
      for (size_t i = 0; i < p->ins.size(); ++i) {
        const double t0 = thread_seconds();
        sim::execute(p->ins[i], p->mem, table);
        best[i] = std::min(best[i], std::max(1e-9, thread_seconds() - t0 - clock_cost));
      }
      whole_best = std::min(whole_best, thread_seconds() - w0);
    }
    for (size_t i = 0; i < p->ins.size(); ++i) {
      const Info inf = describe(p->ins[i]);
      Kind& k = kinds[inf.kind];
      k.s += best[i], k.macs += inf.macs, k.bytes += inf.bytes, ++k.count;
      total += best[i];
      if (!quiet)
        std::printf("%-24s %3zu %-10s %-42s %8.1f us %6.2f MACs/cycle %6.2f B/cycle\n",
                    p->name.c_str(), i, isa::opcode_name(p->ins[i].opcode), inf.desc.c_str(),
                    best[i] * 1e6, inf.macs / (best[i] * hz), inf.bytes / (best[i] * hz));
    }
    sim::unpin_constants(p->mem.constants.data);
  }
  nlohmann::json j;
  j["model"] = path;
  j["table"] = table.name;
  j["core_ghz"] = hz / 1e9;
  j["peak_macs_per_cycle"] = peak.macs_per_cycle;
  j["peak_what"] = peak.what;
  j["depthwise_bound_macs_per_cycle"] = peak.dw_bound_macs_per_cycle;
  j["copy_bytes_per_cycle"] = copy;
  j["sum_of_instructions_ms"] = total * 1e3;
  j["programs_cpu_ms"] = whole_best * 1e3;
  std::printf("\n%-18s %5s %9s %6s %11s %7s %9s %7s\n", "kind", "count", "ms", "share",
              "MACs/cycle", "%peak", "B/cycle", "%copy");
  // A fraction of the measured peak or copy rate as "12.3%"; "-" when the
  // peaks were not measured (--no-peaks).
  auto percent = [&](double fraction) {
    char b[16] = "-";
    if (peaks) std::snprintf(b, sizeof(b), "%.1f%%", 100 * fraction);
    return std::string(b);
  };
  for (const auto& [name, k] : kinds) {
    const double mpc = k.macs / (k.s * hz), bpc = k.bytes / (k.s * hz);
    nlohmann::json e = {{"count", k.count}, {"ms", k.s * 1e3}, {"share", k.s / total}};
    if (k.macs > 0) {
      e["macs_per_cycle"] = mpc;
      if (peaks) e["fraction_of_peak"] = mpc / peak.macs_per_cycle;
      std::printf("%-18s %5d %9.3f %5.1f%% %11.2f %7s\n", name.c_str(), k.count, k.s * 1e3, 100 * k.s / total, mpc,
                  percent(mpc / peak.macs_per_cycle).c_str());
    } else {
      e["bytes_per_cycle"] = bpc;
      if (peaks) e["fraction_of_copy"] = bpc / copy;
      std::printf("%-18s %5d %9.3f %5.1f%% %11s %7s %9.2f %7s\n", name.c_str(), k.count, k.s * 1e3,
                  100 * k.s / total, "", "", bpc, percent(bpc / copy).c_str());
    }
    j["kinds"][name] = e;
  }
  std::printf("sum of instruction minimums %.3f ms; best whole run %.3f ms CPU (%s)\n", total * 1e3,
              whole_best * 1e3, table.name);
  if (!json_path.empty()) {
    FILE* fp = std::fopen(json_path.c_str(), "w");
    if (fp == nullptr) {
      std::fprintf(stderr, "cannot write %s\n", json_path.c_str());
      return 1;
    }
    std::fprintf(fp, "%s\n", j.dump(1).c_str());
    std::fclose(fp);
  }
  return 0;
}

}  // namespace openbpu::bench
