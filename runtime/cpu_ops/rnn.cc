// SPDX-License-Identifier: Apache-2.0
// Recurrent layers: RNN, GRU and LSTM (opsets 7..14), float32.
//
// Inputs X, W, R (, B, sequence_lens, initial_h (, initial_c, P for LSTM));
// outputs Y, Y_h (, Y_c), each optional. Gate order: LSTM i o f c (peepholes
// P = i o f), GRU z r h, RNN one gate. direction forward / reverse /
// bidirectional; layout 0 ([seq, batch, ...]) or 1 ([batch, seq, ...],
// opset 14); activations (Sigmoid Tanh Relu HardSigmoid LeakyRelu
// ThresholdedRelu ScaledTanh Affine Elu Softsign Softplus with
// activation_alpha/beta), clip, LSTM input_forget, GRU linear_before_reset.
// sequence_lens: steps past a batch entry's length output 0 and keep the
// state. X * W^T for all steps is one sgemm; each step one sgemm with R.
#include <cmath>
#include <cstring>

#include "runtime/cpu_ops/kernel_util.h"
#include "runtime/cpu_ops/ops.h"
#include "runtime/cpu_ops/sgemm.h"

namespace openbpu::rt {

namespace {

enum class Cell { kRnn, kGru, kLstm };
enum class Act {
  kSigmoid,
  kTanh,
  kRelu,
  kHardSigmoid,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kAffine,
  kElu,
  kSoftsign,
  kSoftplus
};

struct Activation {
  Act act = Act::kSigmoid;
  float alpha = 0, beta = 0;
  float operator()(float x) const {
    switch (act) {
      case Act::kSigmoid:
        return 1.0f / (1.0f + std::exp(-x));
      case Act::kTanh:
        return std::tanh(x);
      case Act::kRelu:
        return x > 0 ? x : 0.0f;
      case Act::kHardSigmoid:
        return std::max(0.0f, std::min(1.0f, alpha * x + beta));
      case Act::kLeakyRelu:
        return x < 0 ? alpha * x : x;
      case Act::kThresholdedRelu:
        return x > alpha ? x : 0.0f;
      case Act::kScaledTanh:
        return alpha * std::tanh(beta * x);
      case Act::kAffine:
        return alpha * x + beta;
      case Act::kElu:
        return x < 0 ? alpha * (std::exp(x) - 1.0f) : x;
      case Act::kSoftsign:
        return x / (1.0f + std::abs(x));
      case Act::kSoftplus:
        return std::log1p(std::exp(x));
    }
    return x;
  }
};

bool parse_act(const std::string& name, Act* a, int* params) {
  static const struct {
    const char* name;
    Act act;
    int params;  // how many of activation_alpha/beta it consumes (alpha, beta)
  } kActs[] = {{"Sigmoid", Act::kSigmoid, 0},
               {"Tanh", Act::kTanh, 0},
               {"Relu", Act::kRelu, 0},
               {"HardSigmoid", Act::kHardSigmoid, 2},
               {"LeakyRelu", Act::kLeakyRelu, 1},
               {"ThresholdedRelu", Act::kThresholdedRelu, 1},
               {"ScaledTanh", Act::kScaledTanh, 2},
               {"Affine", Act::kAffine, 2},
               {"Elu", Act::kElu, 1},
               {"Softsign", Act::kSoftsign, 0},
               {"Softplus", Act::kSoftplus, 0}};
  for (const auto& e : kActs)
    if (name == e.name) {
      *a = e.act;
      *params = e.params;
      return true;
    }
  return false;
}

class RnnKernel final : public CpuKernel {
 public:
  Cell cell = Cell::kLstm;
  int64_t seq = 1, batch = 1, input = 1, hidden = 1, dirs = 1, gates = 4;
  bool reverse_only = false, layout1 = false, input_forget = false, linear_before_reset = false;
  float clip = 0.0f;             // 0 = none
  std::vector<Activation> acts;  // per direction: f, g, h (as many as the cell uses)
  int acts_per_dir = 3;
  bool in_b = false, in_lens = false, in_h0 = false, in_c0 = false, in_p = false;

  Status run(const std::vector<CpuTensor>& in, const std::vector<CpuTensor>& out) const override {
    InBuf xb(in[0], kF32), wb(in[1], kF32), rb(in[2], kF32);
    std::unique_ptr<InBuf> bb, h0b, c0b, pb;
    if (in_b) bb = std::make_unique<InBuf>(in[3], kF32);
    if (in_h0) h0b = std::make_unique<InBuf>(in[5], kF32);
    if (in_c0) c0b = std::make_unique<InBuf>(in[6], kF32);
    if (in_p) pb = std::make_unique<InBuf>(in[7], kF32);
    std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
    if (in_lens) lens = read_ints(in[4]);
    // X in [seq, batch, input] order.
    std::vector<float> x(static_cast<size_t>(seq * batch * input));
    for (int64_t t = 0; t < seq; ++t)
      for (int64_t b = 0; b < batch; ++b)
        std::memcpy(x.data() + (t * batch + b) * input,
                    xb.as<float>() + (layout1 ? b * seq + t : t * batch + b) * input,
                    sizeof(float) * input);
    const int64_t gh = gates * hidden;
    std::vector<float> y(static_cast<size_t>(seq * dirs * batch * hidden), 0.0f);
    std::vector<float> yh(static_cast<size_t>(dirs * batch * hidden)), yc(yh.size());
    std::vector<float> gx(static_cast<size_t>(seq * batch * gh)),
        gr(static_cast<size_t>(batch * gh));
    std::vector<float> h(static_cast<size_t>(batch * hidden)), c(h.size());
    std::vector<float> scratch(static_cast<size_t>(4 * hidden));
    for (int64_t d = 0; d < dirs; ++d) {
      const bool rev = reverse_only || d == 1;
      const float* w = wb.as<float>() + d * gh * input;
      const float* r = rb.as<float>() + d * gh * hidden;
      const float* wbias = bb ? bb->as<float>() + d * 2 * gh : nullptr;
      const float* rbias = wbias ? wbias + gh : nullptr;
      const float* p = pb ? pb->as<float>() + d * 3 * hidden : nullptr;
      const Activation* f = &acts[static_cast<size_t>(d * acts_per_dir)];
      // Gates from the inputs for every step: [seq*batch, gh] = X W^T (+ Wb).
      sgemm(false, true, seq * batch, gh, input, 1.0f, x.data(), input, w, input, 0.0f, gx.data(),
            gh);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < hidden; ++j) {
          const int64_t hi = layout1 ? (b * dirs + d) * hidden + j : (d * batch + b) * hidden + j;
          h[b * hidden + j] = h0b ? h0b->as<float>()[hi] : 0.0f;
          c[b * hidden + j] = c0b ? c0b->as<float>()[hi] : 0.0f;
        }
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t t = rev ? seq - 1 - s : s;
        // Recurrent part: [batch, gh] = H R^T (GRU with linear_before_reset
        // also needs it for the h gate; without, that gate is redone below).
        sgemm(false, true, batch, gh, hidden, 1.0f, h.data(), hidden, r, hidden, 0.0f, gr.data(),
              gh);
        for (int64_t b = 0; b < batch; ++b) {
          const int64_t len = lens[b];
          // With reverse direction the sequence starts at its own last step.
          const int64_t tt = rev ? (len - 1 - s) : t;
          if (s >= len || tt < 0) continue;
          const float* gxs = gx.data() + (tt * batch + b) * gh;
          const float* grs = gr.data() + b * gh;
          float* hb = h.data() + b * hidden;
          float* cb = c.data() + b * hidden;
          step(gxs, grs, wbias, rbias, p, f, r, hb, cb, scratch.data());
          float* yo = y.data() + ((tt * dirs + d) * batch + b) * hidden;
          std::memcpy(yo, hb, sizeof(float) * hidden);
        }
      }
      std::memcpy(yh.data() + d * batch * hidden, h.data(), sizeof(float) * batch * hidden);
      std::memcpy(yc.data() + d * batch * hidden, c.data(), sizeof(float) * batch * hidden);
    }
    write_outputs(out, y, yh, yc);
    return Status::Ok();
  }

 private:
  float clipped(float v) const { return clip > 0 ? std::max(-clip, std::min(clip, v)) : v; }

  // One cell update of batch entry `b`: gxs/grs are X W^T and H R^T for it.
  void step(const float* gxs, const float* grs, const float* wb, const float* rb, const float* p,
            const Activation* f, const float* r, float* hb, float* cb, float* scratch) const {
    auto pre = [&](int gate, int64_t j) {
      float v = gxs[gate * hidden + j] + grs[gate * hidden + j];
      if (wb) v += wb[gate * hidden + j] + rb[gate * hidden + j];
      return v;
    };
    if (cell == Cell::kRnn) {
      for (int64_t j = 0; j < hidden; ++j) hb[j] = f[0](clipped(pre(0, j)));
    } else if (cell == Cell::kLstm) {
      for (int64_t j = 0; j < hidden; ++j) {
        const float cprev = cb[j];
        float fi = pre(2, j) + (p ? p[2 * hidden + j] * cprev : 0.0f);
        const float ft = f[0](clipped(fi));
        float ii = pre(0, j) + (p ? p[j] * cprev : 0.0f);
        const float it = input_forget ? 1.0f - ft : f[0](clipped(ii));
        const float ct = f[1](clipped(pre(3, j)));
        const float cn = ft * cprev + it * ct;
        const float ot = f[0](clipped(pre(1, j) + (p ? p[hidden + j] * cn : 0.0f)));
        cb[j] = cn;
        hb[j] = ot * f[2](cn);
      }
    } else {
      float* z = scratch;
      float* rg = scratch + hidden;
      float* hn = scratch + 2 * hidden;
      for (int64_t j = 0; j < hidden; ++j) {
        z[j] = f[0](clipped(pre(0, j)));
        rg[j] = f[0](clipped(pre(1, j)));
      }
      if (linear_before_reset) {
        for (int64_t j = 0; j < hidden; ++j) {
          const float rec = grs[2 * hidden + j] + (rb ? rb[2 * hidden + j] : 0.0f);
          const float v = gxs[2 * hidden + j] + (wb ? wb[2 * hidden + j] : 0.0f) + rg[j] * rec;
          hn[j] = f[1](clipped(v));
        }
      } else {
        // (r * H) R_h^T, row j of R_h is r[(2*hidden + j) * hidden ...].
        float* rh = scratch + 3 * hidden;
        for (int64_t k = 0; k < hidden; ++k) rh[k] = rg[k] * hb[k];
        for (int64_t j = 0; j < hidden; ++j) {
          const float* row = r + (2 * hidden + j) * hidden;
          float acc = 0.0f;
          for (int64_t k = 0; k < hidden; ++k) acc += rh[k] * row[k];
          const float v =
              gxs[2 * hidden + j] + acc + (wb ? wb[2 * hidden + j] + rb[2 * hidden + j] : 0.0f);
          hn[j] = f[1](clipped(v));
        }
      }
      for (int64_t j = 0; j < hidden; ++j) hb[j] = (1.0f - z[j]) * hn[j] + z[j] * hb[j];
    }
  }

  void write_outputs(const std::vector<CpuTensor>& out, const std::vector<float>& y,
                     const std::vector<float>& yh, const std::vector<float>& yc) const {
    if (has_input(out, 0)) {
      OutBuf o(out[0], kF32);
      for (int64_t t = 0; t < seq; ++t)
        for (int64_t d = 0; d < dirs; ++d)
          for (int64_t b = 0; b < batch; ++b) {
            const int64_t dst = layout1 ? ((b * seq + t) * dirs + d) : ((t * dirs + d) * batch + b);
            std::memcpy(o.as<float>() + dst * hidden,
                        y.data() + ((t * dirs + d) * batch + b) * hidden, sizeof(float) * hidden);
          }
      o.commit();
    }
    for (size_t k = 1; k <= 2; ++k) {
      if (!has_input(out, k)) continue;
      const std::vector<float>& src = k == 1 ? yh : yc;
      OutBuf o(out[k], kF32);
      for (int64_t d = 0; d < dirs; ++d)
        for (int64_t b = 0; b < batch; ++b) {
          const int64_t dst = layout1 ? (b * dirs + d) : (d * batch + b);
          std::memcpy(o.as<float>() + dst * hidden, src.data() + (d * batch + b) * hidden,
                      sizeof(float) * hidden);
        }
      o.commit();
    }
  }
};

}  // namespace

Status create_rnn(const CpuOpDef& def, const std::vector<const TensorDesc*>& in,
                  const std::vector<const TensorDesc*>& out, std::unique_ptr<CpuKernel>* kernel) {
  auto k = std::make_unique<RnnKernel>();
  k->cell = def.op_type == "LSTM" ? Cell::kLstm : def.op_type == "GRU" ? Cell::kGru : Cell::kRnn;
  k->gates = k->cell == Cell::kLstm ? 4 : k->cell == Cell::kGru ? 3 : 1;
  const size_t max_in = k->cell == Cell::kLstm ? 8 : 6, max_out = k->cell == Cell::kLstm ? 3 : 2;
  if (in.size() < 3 || !in[0] || !in[1] || !in[2] || present_count(in) > max_in ||
      present_count(out) > max_out || present_count(out) == 0)
    return op_error(def,
                    "needs X, W, R (, B, sequence_lens, initial_h ...) and at least one output");
  for (size_t i = 0; i < in.size(); ++i)
    if (has_input(in, i) && i != 4 && compute_type(in[i]->data_type) != kF32)
      return op_error(def, "float32 tensors expected");
  for (const TensorDesc* t : out)
    if (!is_absent(t) && compute_type(t->data_type) != kF32) return op_error(def, "float32 outputs expected");
  const std::string dir = def.attrs.get_string("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return op_error(def, "bad direction");
  k->dirs = dir == "bidirectional" ? 2 : 1;
  k->reverse_only = dir == "reverse";
  k->layout1 = def.attrs.get_int("layout", 0) == 1;
  k->input_forget = def.attrs.get_int("input_forget", 0) != 0;
  k->linear_before_reset = def.attrs.get_int("linear_before_reset", 0) != 0;
  k->clip = def.attrs.has("clip") ? def.attrs.get_float("clip", 0.0f) : 0.0f;
  const Dims x = dims_of(*in[0]), w = dims_of(*in[1]), r = dims_of(*in[2]);
  if (x.size() != 3 || w.size() != 3 || r.size() != 3)
    return op_error(def, "X, W and R must be 3-D");
  k->seq = k->layout1 ? x[1] : x[0];
  k->batch = k->layout1 ? x[0] : x[1];
  k->input = x[2];
  k->hidden = def.attrs.get_int("hidden_size", r[2]);
  const int64_t gh = k->gates * k->hidden;
  if (w != Dims{k->dirs, gh, k->input} || r != Dims{k->dirs, gh, k->hidden})
    return op_error(
        def, "W/R must be [" + std::to_string(k->dirs) + ", " + std::to_string(gh) + ", ...]");
  const Dims state =
      k->layout1 ? Dims{k->batch, k->dirs, k->hidden} : Dims{k->dirs, k->batch, k->hidden};
  k->in_b = has_input(in, 3);
  k->in_lens = has_input(in, 4);
  k->in_h0 = has_input(in, 5);
  k->in_c0 = has_input(in, 6) && k->cell == Cell::kLstm;
  k->in_p = has_input(in, 7) && k->cell == Cell::kLstm;
  if (k->in_b && dims_of(*in[3]) != Dims{k->dirs, 2 * gh})
    return op_error(def, "B must be [dirs, 2*gates*hidden]");
  if (k->in_lens && (dims_of(*in[4]) != Dims{k->batch} || !is_int_type(in[4]->data_type)))
    return op_error(def, "sequence_lens must be integer [batch]");
  if ((k->in_h0 && dims_of(*in[5]) != state) || (k->in_c0 && dims_of(*in[6]) != state))
    return op_error(def, "initial_h/initial_c must be " + dims_str(state));
  if (k->in_p && dims_of(*in[7]) != Dims{k->dirs, 3 * k->hidden})
    return op_error(def, "P must be [dirs, 3*hidden]");
  const Dims ydims = k->layout1 ? Dims{k->batch, k->seq, k->dirs, k->hidden}
                                : Dims{k->seq, k->dirs, k->batch, k->hidden};
  if (has_input(out, 0) && dims_of(*out[0]) != ydims)
    return op_error(def, "Y must be " + dims_str(ydims));
  for (size_t o = 1; o < out.size(); ++o)
    if (has_input(out, o) && dims_of(*out[o]) != state)
      return op_error(def, "Y_h/Y_c must be " + dims_str(state));
  // Activations: f (, g (, h)) per direction.
  k->acts_per_dir = k->cell == Cell::kLstm ? 3 : k->cell == Cell::kGru ? 2 : 1;
  std::vector<std::string> names;
  if (const AttrValue* a = def.attrs.find("activations"); a && a->type == AttrValue::kStrings)
    names = a->strings;
  if (names.empty()) {
    const std::vector<std::string> def_acts =
        k->cell == Cell::kLstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
        : k->cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                : std::vector<std::string>{"Tanh"};
    for (int64_t d = 0; d < k->dirs; ++d)
      names.insert(names.end(), def_acts.begin(), def_acts.end());
  }
  if (static_cast<int64_t>(names.size()) != k->acts_per_dir * k->dirs)
    return op_error(
        def, "activations must list " + std::to_string(k->acts_per_dir * k->dirs) + " functions");
  const std::vector<float> alphas = def.attrs.get_floats("activation_alpha"),
                           betas = def.attrs.get_floats("activation_beta");
  size_t ai = 0, bi = 0;
  for (const auto& n : names) {
    Activation a;
    int params = 0;
    if (!parse_act(n, &a.act, &params)) return op_error(def, "unsupported activation '" + n + "'");
    if (params >= 1)
      a.alpha = ai < alphas.size() ? alphas[ai++]
                                   : (a.act == Act::kLeakyRelu     ? 0.01f
                                      : a.act == Act::kHardSigmoid ? 0.2f
                                                                   : 1.0f);
    if (params >= 2)
      a.beta = bi < betas.size() ? betas[bi++]
                                 : (a.act == Act::kHardSigmoid ? 0.5f
                                    : a.act == Act::kAffine    ? 0.0f
                                                               : 1.0f);
    k->acts.push_back(a);
  }
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace openbpu::rt
