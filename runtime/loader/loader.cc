// SPDX-License-Identifier: Apache-2.0
// Model loading: file mapping, verification, building Model objects, CPU
// kernels and BPU programs, and the per-task arena plan.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpu_sim/isa/march.h"
#include "bpu_sim/timing.h"
#include "runtime/core/log.h"
#include "runtime/device/device_manager.h"
#include "runtime/loader/custom_layer.h"
#include "runtime/loader/model.h"
#include "schema/model_generated.h"
#include "schema/verify.h"

namespace openbpu::rt {

namespace {

constexpr uint64_t kArenaAlign = 64;

uint64_t align_up(uint64_t v) { return (v + kArenaAlign - 1) / kArenaAlign * kArenaAlign; }

// Cycle estimates come from the file: sums saturate.
uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

TensorDesc make_tensor(const fb::Tensor& t) {
  TensorDesc d;
  d.name = t.name()->str();
  d.data_type = static_cast<int32_t>(t.data_type());
  d.layout = static_cast<int32_t>(t.layout());
  for (int32_t v : *t.valid_shape()) d.valid.push_back(v);
  for (int32_t v : *t.aligned_shape()) d.aligned.push_back(v);
  if (t.strides())
    for (int64_t v : *t.strides()) d.strides.push_back(v);
  d.aligned_byte_size = t.aligned_byte_size();
  if (const auto* q = t.quant()) {
    d.quant.type = static_cast<int32_t>(q->type());
    d.quant.axis = q->axis();
    if (q->scales()) d.quant.scales.assign(q->scales()->begin(), q->scales()->end());
    if (q->shifts()) d.quant.shifts.assign(q->shifts()->begin(), q->shifts()->end());
    if (q->zero_points()) d.quant.zero_points.assign(q->zero_points()->begin(), q->zero_points()->end());
  }
  return d;
}

// A debug record's output (schema/verify.cc checked its region and extent).
LayerOutputDesc make_layer_output(const fb::LayerOutput& o) {
  LayerOutputDesc l;
  l.name = o.name()->str();
  l.value = o.value() ? o.value()->str() : "";
  l.in_scratch = o.region() == 4;
  l.index = o.index();
  l.offset = o.offset();
  TensorDesc& d = l.desc;
  d.name = l.value;
  d.data_type = static_cast<int32_t>(o.data_type());
  d.layout = kNHWC;
  const int es = model::data_type_size(d.data_type);
  int64_t last = 0;
  for (uint32_t k = 0; k < o.dims()->size(); ++k) {
    d.valid.push_back(o.dims()->Get(k));
    d.strides.push_back(o.strides()->Get(k));
    last += (int64_t{o.dims()->Get(k)} - 1) * o.strides()->Get(k);
  }
  d.aligned = d.valid;
  d.aligned_byte_size = last + es;
  d.quant.type = static_cast<int32_t>(o.quant()->type());
  d.quant.axis = o.quant()->axis();
  d.quant.scales.assign(o.quant()->scales()->begin(), o.quant()->scales()->end());
  if (const auto* z = o.quant()->zero_points()) d.quant.zero_points.assign(z->begin(), z->end());
  return l;
}

void add_layer_records(const fb::Model& fm, Model* m) {
  if (fm.layers() == nullptr) return;
  for (const auto* r : *fm.layers()) {
    LayerRecord l;
    l.name = r->name()->str();
    l.op_type = r->op_type() ? r->op_type()->str() : "";
    if (r->nodes())
      for (const auto* n : *r->nodes()) l.nodes += (l.nodes.empty() ? "" : ";") + n->str();
    if (l.nodes.empty()) l.nodes = l.name;
    l.first = r->first_instruction();
    l.count = r->instruction_count();
    if (r->outputs())
      for (const auto* o : *r->outputs()) l.outputs.push_back(make_layer_output(*o));
    m->segments[r->segment()].layers.push_back(std::move(l));
  }
  for (Segment& s : m->segments)
    std::stable_sort(s.layers.begin(), s.layers.end(), [](const LayerRecord& a, const LayerRecord& b) {
      return a.first + a.count < b.first + b.count;
    });
}

CpuOpDef make_cpu_op(const std::string& name, const fb::CpuOp& op, const uint8_t* data_section) {
  CpuOpDef def;
  def.name = name;
  def.op_type = op.op_type()->str();
  def.domain = op.domain() ? op.domain()->str() : "";
  if (op.attrs())
    for (const auto* a : *op.attrs()) {
      AttrValue v;
      v.type = static_cast<AttrValue::Type>(a->type());  // 1..7, checked by verify_model_file
      v.i = a->i();
      v.f = a->f();
      if (a->s()) v.s = a->s()->str();
      if (a->ints()) v.ints.assign(a->ints()->begin(), a->ints()->end());
      if (a->floats()) v.floats.assign(a->floats()->begin(), a->floats()->end());
      if (a->strings())
        for (const auto* s : *a->strings()) v.strings.push_back(s->str());
      if (a->blob()) {
        v.blob = data_section + a->blob()->offset();
        v.blob_size = a->blob()->size();
        if (v.type == AttrValue::kBlob && v.s == "tensor") {
          // A tensor-valued attribute (see converter/writer/bin_writer.cc).
          v.type = AttrValue::kTensor;
          v.tensor = std::make_shared<const std::vector<uint8_t>>(v.blob, v.blob + v.blob_size);
          v.tensor_type = static_cast<int32_t>(v.i);
          v.tensor_dims = v.ints;
        }
      }
      def.attrs.set(a->name()->str(), std::move(v));
    }
  return def;
}

// core_num of files written before Model.core_num existed: CORE_NUM when
// the builder recorded it, else the compiler options echoed in
// hbdk_pass_through_params ("... --core-num 2 ..."); 1 without either.
int legacy_core_num(const std::map<std::string, std::string>& metadata) {
  auto it = metadata.find("CORE_NUM");
  std::string v;
  if (it != metadata.end()) {
    v = it->second;
  } else {
    it = metadata.find("hbdk_pass_through_params");
    if (it == metadata.end()) return 1;
    const std::string key = "--core-num";
    const size_t pos = it->second.find(key);
    if (pos == std::string::npos) return 1;
    size_t b = pos + key.size();
    while (b < it->second.size() && (it->second[b] == ' ' || it->second[b] == '=')) ++b;
    size_t e = b;
    while (e < it->second.size() && it->second[e] >= '0' && it->second[e] <= '9') ++e;
    v = it->second.substr(b, e - b);
  }
  if (v.empty() || v.size() > 3) return 1;
  const int n = std::atoi(v.c_str());
  return n < 1 ? 1 : n;
}

// Byte size a BPU program may touch in a tensor bound to one of its regions.
uint64_t binding_size(const TensorDesc& t) { return static_cast<uint64_t>(t.aligned_byte_size); }

// Greedy first-fit placement of intermediate tensors with liveness: tensors
// whose lifetimes (segment index ranges) overlap never share bytes.
struct Block {
  uint64_t size;
  int first, last;  // segment range during which the bytes are live
  uint64_t offset = 0;
};

uint64_t place_blocks(std::vector<Block*>& blocks) {
  std::sort(blocks.begin(), blocks.end(), [](const Block* a, const Block* b) {
    return a->size != b->size ? a->size > b->size : a->first < b->first;
  });
  std::vector<const Block*> placed;
  uint64_t total = 0;
  for (Block* b : blocks) {
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (const Block* p : placed)
      if (p->first <= b->last && b->first <= p->last) busy.emplace_back(p->offset, p->offset + p->size);
    std::sort(busy.begin(), busy.end());
    uint64_t off = 0;
    for (const auto& r : busy) {
      if (off + b->size <= r.first) break;
      off = std::max(off, align_up(r.second));
    }
    b->offset = off;
    total = std::max(total, off + b->size);
    placed.push_back(b);
  }
  return align_up(total);
}

Status plan_arena(Model* m) {
  const int nseg = static_cast<int>(m->segments.size());
  const size_t nt = m->tensors.size();
  std::vector<int> first(nt, -1), last(nt, -1);
  for (int s = 0; s < nseg; ++s) {
    for (uint32_t t : m->segments[s].outputs)
      if (t != model::kAbsentInput && first[t] < 0) first[t] = s;
    for (uint32_t t : m->segments[s].inputs)
      if (t != model::kAbsentInput) last[t] = std::max(last[t], s);
  }
  std::vector<Block> blocks;
  blocks.reserve(nt + m->segments.size() + m->inputs.size() + m->outputs.size());
  std::vector<std::pair<int, size_t>> owners;  // (kind, index): 0 tensor, 1 scratch, 2 in, 3 out
  m->arena_offset.assign(nt, -1);
  for (size_t t = 0; t < nt; ++t) {
    if (m->is_model_input(static_cast<uint32_t>(t)) || m->is_model_output(static_cast<uint32_t>(t)) ||
        first[t] < 0 || m->constant_data[t] != nullptr)
      continue;
    blocks.push_back({binding_size(m->tensors[t]), first[t], std::max(first[t], last[t])});
    owners.emplace_back(0, t);
  }
  for (int s = 0; s < nseg; ++s)
    if (m->segments[s].bpu && m->segments[s].scratch_size > 0) {
      blocks.push_back({m->segments[s].scratch_size, s, s});
      owners.emplace_back(1, static_cast<size_t>(s));
    }
  // Staging copies of inputs live from the start, of outputs to the end.
  for (size_t i = 0; i < m->inputs.size(); ++i) {
    blocks.push_back({binding_size(m->tensors[m->inputs[i].tensor]), -1, nseg});
    owners.emplace_back(2, i);
  }
  for (size_t i = 0; i < m->outputs.size(); ++i) {
    blocks.push_back({binding_size(m->tensors[m->outputs[i].tensor]), -1, nseg});
    owners.emplace_back(3, i);
  }
  std::vector<Block*> ptrs;
  for (auto& b : blocks) ptrs.push_back(&b);
  const uint64_t total = place_blocks(ptrs);
  m->input_staging.assign(m->inputs.size(), 0);
  m->output_staging.assign(m->outputs.size(), 0);
  for (size_t i = 0; i < blocks.size(); ++i) {
    const auto [kind, idx] = owners[i];
    if (kind == 0) m->arena_offset[idx] = static_cast<int64_t>(blocks[i].offset);
    if (kind == 1) m->segments[idx].scratch_offset = blocks[i].offset;
    if (kind == 2) m->input_staging[idx] = blocks[i].offset;
    if (kind == 3) m->output_staging[idx] = blocks[i].offset;
  }
  // Declared sizes may be absurd (up to 16 GiB per tensor, any number of
  // tensors): fail the load rather than have every task's allocation fail.
  const uint64_t max_alloc = m->device->info().max_alloc;
  if (total > max_alloc)
    return error(kOutOfMemory, "model '" + m->name + "' needs " + std::to_string(total) +
                                   " bytes of task memory (intermediate tensors, scratch, staging), more than "
                                   "the " + std::to_string(max_alloc) + " bytes the device can allocate");
  m->arenas = std::make_unique<ArenaPool>(m->device, std::max<uint64_t>(total, kArenaAlign));
  // One arena at load, so the first inference does not fault its pages in
  // (a failure here is reported by the inference that needs the arena);
  // not for sizes beyond what models need (a file declaring gigabytes is
  // refused or fails at inference, without zeroing them at load).
  constexpr uint64_t kArenaAtLoadMax = uint64_t{64} << 20;
  if (total <= kArenaAtLoadMax) m->arenas->release(m->arenas->acquire());
  return Status::Ok();
}

Status build_model(const fb::Model& fm, const uint8_t* data_section, uint64_t data_size,
                   Pack* pack, std::unique_ptr<Model>* out) {
  auto m = std::make_unique<Model>();
  m->pack = pack;
  m->name = fm.name()->str();
  m->march = fm.march()->str();
  const isa::MarchInfo* march = isa::find_march(m->march);
  if (march == nullptr)
    return error(kIncompatibleModel, "model '" + m->name + "' targets unknown BPU march '" + m->march + "'");
  OBPU_RETURN_IF_ERROR(device_for_march(*march, &m->device));

  for (const auto* t : *fm.tensors()) {
    m->tensors.push_back(make_tensor(*t));
    m->constant_data.push_back(t->constant() ? data_section + t->constant()->offset() : nullptr);
  }
  for (const auto* in : *fm.inputs()) {
    InputInfo i;
    i.tensor = in->tensor();
    i.source = static_cast<int32_t>(in->source());
    if (in->input_type_rt()) i.type_rt = in->input_type_rt()->str();
    if (in->input_type_train()) i.type_train = in->input_type_train()->str();
    if (in->desc()) i.desc = in->desc()->str();
    const TensorDesc& t = m->tensors[i.tensor];
    i.nv12 = t.data_type == kImgNV12 || t.data_type == kImgNV12Separate;
    if (i.nv12 || t.data_type == kImgY) {
      // Image planes: (1,C,H,W) NCHW or (1,H,W,C) NHWC; even sizes for nv12.
      if (t.rank() != 4 || t.valid[0] != 1)
        return error(kInvalidModel, "model '" + m->name + "': image input '" + t.name + "' must be 4-D with batch 1");
      const int h = t.layout == kNHWC ? t.valid[1] : t.valid[2];
      const int w = t.layout == kNHWC ? t.valid[2] : t.valid[3];
      if (i.nv12 && (h % 2 != 0 || w % 2 != 0))
        return error(kInvalidModel, "model '" + m->name + "': nv12 input '" + t.name + "' has an odd size");
      const int64_t need = i.nv12 ? int64_t{h} * w * 3 / 2 : int64_t{h} * w;
      if (t.aligned_byte_size < need)
        return error(kInvalidModel, "model '" + m->name + "': image input '" + t.name + "' byte size too small");
    }
    m->inputs.push_back(std::move(i));
  }
  for (const auto* o : *fm.outputs()) {
    OutputInfo info;
    info.tensor = o->tensor();
    info.operator_type = o->operator_type();
    if (o->desc()) info.desc = o->desc()->str();
    m->outputs.push_back(std::move(info));
  }
  if (fm.metadata())
    for (const auto* kv : *fm.metadata()) m->metadata[kv->key()->str()] = kv->value() ? kv->value()->str() : "";
  if (fm.desc()) m->desc = fm.desc()->str();
  if (fm.tag()) m->tag = fm.tag()->str();
  if (fm.config_yaml()) m->config_yaml = fm.config_yaml()->str();
  // Saturated at INT32_MAX, the most hbDNNGetEstimateLatency can report.
  m->estimated_latency_us = std::min<uint32_t>(fm.estimated_latency_us(), INT32_MAX);
  // A program compiled for more cores than the platform has cannot run
  // (docs/scheduling.md); say so at load rather than at every hbDNNInfer.
  // The typed field; its default (1) also stands for "not recorded" in
  // files written before it, whose metadata may say 2.
  if (fm.core_num() == 0)
    return error(kInvalidModel, "model '" + m->name + "': core_num 0 (the programs need at least one BPU core)");
  m->core_num = fm.core_num() > 1 ? fm.core_num() : legacy_core_num(m->metadata);
  const int cores = m->device->info().cores, model_cores = m->core_num;
  if (model_cores > cores)
    return error(kIncompatibleModel, "model '" + m->name + "' was compiled for " + std::to_string(model_cores) +
                                         " BPU cores (core_num); the " + march->hw_name + " BPU has " +
                                         std::to_string(cores) + ": rebuild it with core_num " +
                                         std::to_string(cores));

  for (const auto* fs : *fm.segments()) {
    Segment seg;
    seg.name = fs->name()->str();
    if (fs->inputs()) seg.inputs.assign(fs->inputs()->begin(), fs->inputs()->end());
    seg.outputs.assign(fs->outputs()->begin(), fs->outputs()->end());
    // Omitted CPU operator inputs/outputs are nullptr (runtime/cpu_ops/
    // kernel_util.h); each kernel rejects the ones it requires.
    std::vector<const TensorDesc*> ins, outs;
    for (uint32_t t : seg.inputs) ins.push_back(t == model::kAbsentInput ? nullptr : &m->tensors[t]);
    for (uint32_t t : seg.outputs) outs.push_back(t == model::kAbsentInput ? nullptr : &m->tensors[t]);
    if (const auto* op = fs->kind_as_CpuOp()) {
      seg.op = make_cpu_op(seg.name, *op, data_section);
      seg.profile_name = seg.op.op_type + "_" + seg.name;
      if (seg.op.domain == kCustomLayerDomain)
        OBPU_RETURN_IF_ERROR(create_custom_layer(seg.op, ins, outs, &seg.kernel));
      else
        OBPU_RETURN_IF_ERROR(create_cpu_kernel(seg.op, ins, outs, &seg.kernel));
      uint64_t elements = 0;
      for (const TensorDesc* t : outs) elements += t ? static_cast<uint64_t>(t->valid_elements()) : 0;
      seg.est_us = sim::estimate_cpu_op_us(seg.op.op_type, elements, *march);
    } else if (const auto* p = fs->kind_as_BpuProgram()) {
      seg.bpu = true;
      seg.profile_name = "BPU_" + seg.name;
      drv::ProgramLayout layout;
      for (const auto* t : ins) layout.input_sizes.push_back(binding_size(*t));
      for (const auto* t : outs) layout.output_sizes.push_back(binding_size(*t));
      seg.code = data_section + p->code()->offset();
      seg.code_size = p->code()->size();
      seg.constants = data_section + p->constants()->offset();
      seg.constants_size = p->constants()->size();
      layout.constants = seg.constants;
      layout.constants_size = seg.constants_size;
      layout.scratch_size = seg.scratch_size = p->scratch_size();
      std::vector<drv::FunctionCall> fcs;
      for (const auto* fc : *p->fcs()) {
        fcs.push_back({fc->first(), fc->count(), fc->est_cycles()});
        seg.est_cycles = sat_add(seg.est_cycles, fc->est_cycles());
      }
      seg.est_us = static_cast<double>(seg.est_cycles) / march->clock_mhz;
      std::string why;
      const drv::Status st = m->device->load_program(data_section + p->code()->offset(),
                                                     p->code()->size(), fcs, layout, &seg.program, &why);
      if (st != drv::Status::kOk)
        return error(kInvalidModel, "model '" + m->name + "', BPU segment '" + seg.name + "': " + why);
    }
    m->segments.push_back(std::move(seg));
  }
  (void)data_size;
  add_layer_records(fm, m.get());
  if (m->estimated_latency_us == 0) {
    // Files without the writer's estimate: the same timing model
    // (bpu_sim/timing.h, estimate_model_us) from the segments.
    double us = sim::task_overhead_us(*march);
    for (const Segment& s : m->segments) us += s.est_us;
    m->estimated_latency_us = us < 2147483647.0 ? static_cast<uint32_t>(us) : 2147483647u;
  }
  OBPU_RETURN_IF_ERROR(plan_arena(m.get()));
  *out = std::move(m);
  return Status::Ok();
}

}  // namespace

bool Model::is_model_input(uint32_t t) const {
  for (const auto& i : inputs)
    if (i.tensor == t) return true;
  return false;
}

bool Model::is_model_output(uint32_t t) const {
  for (const auto& o : outputs)
    if (o.tensor == t) return true;
  return false;
}

ArenaPool::~ArenaPool() {
  for (const auto& b : free_) device_->free(b);
}

drv::DmaBuffer ArenaPool::acquire() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!free_.empty()) {
      drv::DmaBuffer b = free_.back();
      free_.pop_back();
      return b;
    }
  }
  drv::DmaBuffer b;
  if (device_->alloc(size_, true, &b) != drv::Status::kOk) b = drv::DmaBuffer{};
  return b;
}

void ArenaPool::release(const drv::DmaBuffer& buffer) {
  if (buffer.vir == nullptr) return;
  std::lock_guard<std::mutex> lk(mu_);
  free_.push_back(buffer);
}

FileData::~FileData() { std::free(owned_); }

Status FileData::open(const std::string& path, std::unique_ptr<FileData>* out) {
  // O_NONBLOCK: opening a FIFO does not wait for a writer; the type check
  // below refuses it (and directories and devices) before anything is read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return error(kCanNotOpenFile, "cannot open model file '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return error(kCanNotOpenFile, "model file '" + path + "' is not a regular file");
  }
  auto f = std::make_unique<FileData>();
  f->size_ = static_cast<size_t>(st.st_size);
  if (f->size_ == 0) {
    ::close(fd);
    return error(kInvalidModel, "model file '" + path + "' is empty");
  }
  // Read into memory the runtime owns (not mapped): the loaded model keeps
  // pointers into these bytes (constants, programs), and a file truncated or
  // rewritten after loading must not reach them (docs/robustness.md).
  if (::posix_memalign(&f->owned_, 64, f->size_) != 0) {
    ::close(fd);
    return error(kOutOfMemory, "out of memory reading '" + path + "' (" + std::to_string(f->size_) + " bytes)");
  }
  size_t done = 0;
  while (done < f->size_) {
    const ssize_t n =
        ::pread(fd, static_cast<uint8_t*>(f->owned_) + done, f->size_ - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done != f->size_)
    return error(kCanNotOpenFile, "cannot read model file '" + path + "': it shrank while being read");
  f->data_ = static_cast<const uint8_t*>(f->owned_);
  *out = std::move(f);
  return Status::Ok();
}

bool Pack::add_task() {
  std::lock_guard<std::mutex> lk(mu_);
  if (closed_) return false;
  live_tasks.fetch_add(1);
  return true;
}

int Pack::close(bool* first_refusal) {
  std::lock_guard<std::mutex> lk(mu_);
  const int live = live_tasks.load();
  *first_refusal = live > 0 && !refusal_logged_;
  if (*first_refusal) refusal_logged_ = true;
  if (live == 0) closed_ = true;
  return live;
}

Status FileData::copy(const void* data, size_t size, std::unique_ptr<FileData>* out) {
  auto f = std::make_unique<FileData>();
  if (size == 0) return error(kInvalidModel, "model data is empty");
  if (::posix_memalign(&f->owned_, 64, size) != 0) return error(kOutOfMemory, "out of memory copying model data");
  std::memcpy(f->owned_, data, size);
  f->data_ = static_cast<const uint8_t*>(f->owned_);
  f->size_ = size;
  *out = std::move(f);
  return Status::Ok();
}

namespace {

// A file of the other generation: name it, the tool that built it and the
// API that loads it.
Status wrong_generation(const std::string& which, Generation file) {
  if (file == Generation::kB)
    return error(kIncompatibleModel,
                 which + " is a .hbm model of the UCP generation (built by hb_compile for J6/S100); load it "
                         "with the hobot/dnn/hb_dnn.h API (libdnn and libhbucp of openbpu::ucp), or convert "
                         "the float model with hb_mapper makertbin for this API");
  return error(kIncompatibleModel,
               which + " is a .bin model of the libdnn 1.x generation (built by hb_mapper); load it with the "
                       "dnn/hb_dnn.h API (openbpu::dnn), or compile the float model with hb_compile for the "
                       "UCP API");
}

}  // namespace

Status load_pack(std::vector<std::unique_ptr<FileData>> files, std::unique_ptr<Pack>* out,
                 Generation generation) {
  auto pack = std::make_unique<Pack>();
  pack->generation = generation;
  std::set<std::string> names;
  for (size_t i = 0; i < files.size(); ++i) {
    const FileData& f = *files[i];
    const std::string which = "model file " + std::to_string(i);
    switch (model::detect_file_kind(f.data(), f.size())) {
      case model::FileKind::kVendorHorizon:
        return error(kIncompatibleModel,
                     which + " was built by the vendor's toolchain (hbdk/HBRT format), which this "
                             "runtime cannot run; rebuild it from the float model with OpenBPU's " +
                         (generation == Generation::kB ? "hb_compile" : "hb_mapper makertbin"));
      case model::FileKind::kUnknown:
        return error(kInvalidModel, which + " is not a model file (bad magic)");
      case model::FileKind::kOpenBpu: break;
    }
    model::FileHeader h;
    std::string why;
    model::Rejection kind = model::Rejection::kInvalid;
    if (!model::verify_model_file(f.data(), f.size(), &h, &why, &kind)) {
      // A format or ISA version of another toolchain is not damage.
      if (kind == model::Rejection::kUnsupportedVersion)
        return error(kIncompatibleModel, which + " is incompatible with this runtime: " + why);
      return error(kInvalidModel, which + " is invalid: " + why);
    }
    const auto* root = fb::GetModelFile(f.data() + h.meta_offset);
    const auto file_generation = static_cast<Generation>(root->generation());
    if (file_generation != generation) return wrong_generation(which, file_generation);
    pack->file_desc.push_back(root->desc() ? root->desc()->str() : std::string());
    for (const auto* fm : *root->models()) {
      if (!names.insert(fm->name()->str()).second)
        return error(kInvalidModel, "model name '" + fm->name()->str() + "' appears in more than one file");
      std::unique_ptr<Model> m;
      OBPU_RETURN_IF_ERROR(build_model(*fm, f.data() + h.data_offset, h.data_size, pack.get(), &m));
      pack->models.push_back(std::move(m));
    }
  }
  if (pack->models.size() > static_cast<size_t>(model::kMaxModelsPerFile))
    return error(kModelNumberExceedLimit, "too many models in one pack (" +
                                              std::to_string(pack->models.size()) + ")");
  for (const auto& m : pack->models) pack->name_list.push_back(m->name.c_str());
  pack->files = std::move(files);
  *out = std::move(pack);
  return Status::Ok();
}

}  // namespace openbpu::rt
