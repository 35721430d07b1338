// SPDX-License-Identifier: Apache-2.0
// infer: runs the model --frame_count times on the --input_file data,
// prints "Infer time: <x> ms" per frame and, on request, dumps inputs and
// outputs or prints the top-5 classes. Frames after the first are compared
// with it, which is what repeating a frame is for. --dump_intermediate runs
// one more inference first that writes every layer's output (dump.h).
#include <cstdio>
#include <cstring>

#include "commands.h"
#include "dump.h"
#include "input_data.h"
#include "log.h"
#include "model.h"

namespace openbpu::tools {

bool open_run_model(const Options& opt, RunModel* m) {
  return m->pack.load(split_list(opt.model_file, ',')) && m->pack.select(opt.model_name, &m->name, &m->handle) &&
         describe_model(m->handle, m->name, &m->desc) && check_core_id(m->desc, opt.core_id) &&
         apply_input_options(opt, &m->desc) && (!opt.roi_infer || parse_rois(opt.roi, m->desc, &m->rois));
}

int run_infer(const Options& opt) {
  RunModel run;
  if (!open_run_model(opt, &run)) return 1;
  const hbDNNHandle_t handle = run.handle;
  const ModelDesc& desc = run.desc;
  const std::vector<Roi>& rois = run.rois;
  std::vector<InputData> inputs;
  if (!load_inputs(desc, split_list(opt.input_file, ','), opt.roi_infer, &inputs)) return 1;

  TensorSet tensors;
  for (const InputData& in : inputs)
    if (!tensors.add_input(in.props, in.bytes)) return 1;
  for (const hbDNNTensorProperties& p : desc.outputs)
    if (!tensors.add_output(p)) return 1;

  DumpConfig cfg;
  cfg.dir = opt.dump_path;
  cfg.format = opt.dump_format;
  cfg.precision = opt.dump_precision;
  cfg.txt_axis = opt.dump_txt_axis;
  cfg.dequantize = opt.hybrid_dequantize_process;
  cfg.remove_padding = opt.remove_padding_process;
  if (opt.enable_dump) {
    if (!prepare_dump_dir(cfg)) return 1;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!dump_input(cfg, static_cast<int>(i), desc.input_names[i], inputs[i])) return 1;
  }

  const int layer_level = opt.dump_intermediate[0] - '0';
  std::vector<std::vector<uint8_t>> layered;  // outputs of the per-layer run
  if (layer_level > 0) {
    if (!dump_layers(cfg, layer_level, handle, tensors.inputs, &tensors.outputs)) return 1;
    tensors.invalidate_outputs();
    for (const hbDNNTensor& t : tensors.outputs) {
      const auto* p = static_cast<const uint8_t*>(tensor_mem(t).virAddr);
      layered.emplace_back(p, p + tensor_mem(t).memSize);
    }
  }

  std::vector<std::vector<uint8_t>> first;  // frame 0 outputs, for the consistency check
  for (int frame = 0; frame < opt.frame_count; ++frame) {
    double ms = 0.0;
    // The UCP tool frames each run (TOOLS.md 1.5).
    if (kUcp) std::printf("---------------------Frame %d begin---------------------\n", frame);
    if (run_inference(desc, &tensors, opt.core_id, opt.roi_infer ? &rois : nullptr, &ms) != 0)
      return 1;
    std::printf("Infer time: %.3f ms\n", ms);
    if (kUcp) std::printf("---------------------Frame %d end---------------------\n", frame);
    std::fflush(stdout);
    if (frame == 0) {
      // The per-layer run computed the BPU subgraphs on the host: its
      // outputs must be the device's, bit for bit.
      for (size_t i = 0; i < layered.size(); ++i)
        if (std::memcmp(layered[i].data(), tensor_mem(tensors.outputs[i]).virAddr, layered[i].size()) != 0) {
          log_error("output[%zu] '%s' of the per-layer run differs from the normal run", i,
                    desc.output_names[i].c_str());
          return 1;
        }
      if (opt.enable_dump)
        for (size_t i = 0; i < tensors.outputs.size(); ++i)
          if (!dump_output(cfg, static_cast<int>(i), desc.output_names[i], tensors.outputs[i]))
            return 1;
      if (opt.enable_cls_post_process &&
          (tensors.outputs.empty() || !print_top5(tensors.outputs[0], desc.output_names[0])))
        return 1;
      if (opt.frame_count > 1)
        for (const hbDNNTensor& t : tensors.outputs) {
          const auto* p = static_cast<const uint8_t*>(tensor_mem(t).virAddr);
          first.emplace_back(p, p + tensor_mem(t).memSize);
        }
    } else {
      for (size_t i = 0; i < tensors.outputs.size(); ++i)
        if (std::memcmp(first[i].data(), tensor_mem(tensors.outputs[i]).virAddr, first[i].size()) != 0)
          log_warn("frame %d: output[%zu] '%s' differs from frame 0", frame, i,
                   desc.output_names[i].c_str());
    }
  }
  return 0;
}

}  // namespace openbpu::tools
