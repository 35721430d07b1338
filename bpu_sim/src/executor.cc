// SPDX-License-Identifier: Apache-2.0
#include "bpu_sim/executor.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <tuple>

#include "bpu_sim/kernels/kernels.h"
#include "bpu_sim/reference/kernels.h"

namespace openbpu::sim {

namespace kern {
void pin_constants_impl(const uint8_t* base, uint64_t size);
void unpin_constants_impl(const uint8_t* base);
size_t conv_plan_count_impl();
}  // namespace kern

const KernelTable& reference_kernels() {
  static const KernelTable table = {
      .name = "reference", .conv = ref::conv, .deconv = ref::deconv, .pool = ref::pool, .eltwise = ref::eltwise,
      .lut = ref::lut, .resize = ref::resize, .move = ref::move, .fill = ref::fill, .argmax = ref::argmax,
      .preprocess = ref::preprocess, .matmul = ref::matmul, .softmax = ref::softmax, .layernorm = ref::layernorm,
  };
  return table;
}

std::vector<const KernelTable*> available_kernels() {
  kern::TableEntry entries[8];
  const size_t n = kern::kernel_tables(entries, 8);
  std::vector<const KernelTable*> out;
  for (size_t i = 0; i < n && i < 8; ++i)
    if (entries[i].supported) out.push_back(entries[i].table);
  out.push_back(&reference_kernels());
  return out;
}

const KernelTable* find_kernels(const char* name) {
  for (const KernelTable* t : available_kernels())
    if (std::strcmp(t->name, name) == 0) return t;
  return nullptr;
}

const KernelTable& best_kernels() {
  // The first supported optimized table (libdnn's OPENBPU_SIM_KERNELS picks
  // another one through find_kernels).
  static const KernelTable* best = available_kernels().front();
  return *best;
}

int sim_threads() { return kern::conv_threads(); }
void set_sim_threads(int n) { kern::set_conv_threads(n); }
void set_sim_spin_ns(uint64_t ns) { kern::set_conv_spin_ns(ns); }
int64_t sim_split_min_macs() { return kern::conv_split_min_macs(); }
void set_sim_split_min_macs(int64_t macs) { kern::set_conv_split_min_macs(macs); }

void pin_constants(const uint8_t* base, uint64_t size) { kern::pin_constants_impl(base, size); }
void unpin_constants(const uint8_t* base) { kern::unpin_constants_impl(base); }
size_t conv_plan_count() { return kern::conv_plan_count_impl(); }

namespace {

using Place = std::tuple<isa::Region, uint16_t, uint64_t>;

Place place(const isa::TensorRef& t) { return Place{t.region, t.index, t.offset}; }

// Whether an instruction's int8 output holds no negative value: clamped at
// >= 0 (act_min is in the quantized domain), a table without negative
// entries, or a pooling of such values without zero points (M > 0).
bool nonneg_output(const isa::Instruction& ins, const Memory& mem, const std::set<Place>& nonneg) {
  auto clamped = [](const auto& b) { return b.out.dtype == isa::DType::kInt8 && b.act_min >= 0; };
  if (const auto* c = std::get_if<isa::Conv>(&ins.body)) return clamped(*c);
  if (const auto* e = std::get_if<isa::Eltwise>(&ins.body)) return clamped(*e);
  if (const auto* p = std::get_if<isa::Pool>(&ins.body))
    return clamped(*p) || (p->out.dtype == isa::DType::kInt8 && nonneg.count(place(p->in)) != 0 &&
                           p->zero_in == 0 && p->zero_out >= 0);
  if (const auto* l = std::get_if<isa::Lut>(&ins.body)) {
    if (l->out.dtype != isa::DType::kInt8 || l->in.dtype != isa::DType::kInt8 || l->table.count < 256)
      return false;
    const auto* t = reinterpret_cast<const int8_t*>(mem.ptr(l->table));
    return std::all_of(t, t + 256, [](int8_t v) { return v >= 0; });
  }
  return false;
}

Place output_place(const isa::Instruction& ins) {
  return std::visit([](const auto& b) { return place(b.out); }, ins.body);
}

}  // namespace

void prepare(const std::vector<isa::Instruction>& program, const Memory& mem, const KernelTable& k) {
  if (k.prepare_conv == nullptr) return;
  std::set<Place> nonneg;  // outputs written nonnegative so far
  for (const isa::Instruction& ins : program) {
    const bool conv = ins.opcode == isa::Opcode::kConv, deconv = ins.opcode == isa::Opcode::kDeconv;
    if (conv || deconv) {
      const isa::Conv& c = std::get<isa::Conv>(ins.body);
      k.prepare_conv(c, mem, deconv, nonneg.count(place(c.in)) != 0);
    }
    if (nonneg_output(ins, mem, nonneg))
      nonneg.insert(output_place(ins));
    else
      nonneg.erase(output_place(ins));
  }
}

void execute(const isa::Instruction& ins, const Memory& mem, const KernelTable& k) {
  using isa::Opcode;
  switch (ins.opcode) {
    case Opcode::kConv:
      k.conv(std::get<isa::Conv>(ins.body), mem);
      break;
    case Opcode::kDeconv:
      k.deconv(std::get<isa::Conv>(ins.body), mem);
      break;
    case Opcode::kPool:
      k.pool(std::get<isa::Pool>(ins.body), mem);
      break;
    case Opcode::kEltwise:
      k.eltwise(std::get<isa::Eltwise>(ins.body), mem);
      break;
    case Opcode::kLut:
      k.lut(std::get<isa::Lut>(ins.body), mem);
      break;
    case Opcode::kResize:
      k.resize(std::get<isa::Resize>(ins.body), mem);
      break;
    case Opcode::kMove:
      k.move(std::get<isa::Move>(ins.body), mem);
      break;
    case Opcode::kFill:
      k.fill(std::get<isa::Fill>(ins.body), mem);
      break;
    case Opcode::kArgMax:
      k.argmax(std::get<isa::ArgMax>(ins.body), mem);
      break;
    case Opcode::kPreprocess:
      k.preprocess(std::get<isa::Preprocess>(ins.body), mem);
      break;
    case Opcode::kMatMul:
      k.matmul(std::get<isa::MatMul>(ins.body), mem);
      break;
    case Opcode::kSoftmax:
      k.softmax(std::get<isa::Softmax>(ins.body), mem);
      break;
    case Opcode::kLayerNorm:
      k.layernorm(std::get<isa::LayerNorm>(ins.body), mem);
      break;
  }
}

}  // namespace openbpu::sim
