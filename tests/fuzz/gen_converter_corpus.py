#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpora of the converter fuzz targets (docs/robustness.md):
onnx/ (small models; every one imports and passes shape inference; external
data names w.dat of the fuzz fixture folder), yaml/ (configs of the
fixture's model.onnx, 1x3x32x32 input 'input', calibration folder cal/), and
refused_onnx/, refused_yaml/ (issue 15's hostile inputs: each must be refused
with an error, not crash or hang).

usage: /usr/bin/python3 tests/fuzz/gen_converter_corpus.py tests/fuzz/converter_corpus
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inits=(), out_shape=None, opset=11, ext=False):
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    if ext:
        t = m.graph.initializer[0]
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "w.dat"), ("offset", "0"), ("length", "432")):
            e = t.external_data.add()
            e.key, e.value = k, v
    return m.SerializeToString()


def const(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


W = const("w", np.full((4, 3, 3, 3), 0.1, np.float32))
N = helper.make_node
ONNX = {
    "conv_external.onnx": model([N("Conv", ["input", "w"], ["y"], pads=[1] * 4)], [W], ext=True),
    "conv_strided.onnx": model([N("Conv", ["input", "w"], ["y"], strides=[2, 2], dilations=[1, 1], pads=[1] * 4,
                                  kernel_shape=[3, 3], group=1)], [W]),
    "conv_transpose.onnx": model([N("ConvTranspose", ["input", "wt"], ["y"], strides=[2, 2], output_padding=[1, 1])],
                                 [const("wt", np.full((3, 2, 3, 3), 0.1, np.float32))]),
    "pools.onnx": model([N("MaxPool", ["input"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                         N("AveragePool", ["p"], ["q"], kernel_shape=[3, 3], pads=[1] * 4),
                         N("GlobalAveragePool", ["q"], ["y"])]),
    "depth_to_space.onnx": model([N("SpaceToDepth", ["input"], ["s"], blocksize=2),
                                  N("DepthToSpace", ["s"], ["y"], blocksize=2)]),
    "shape_ops.onnx": model([N("Transpose", ["input"], ["t"], perm=[0, 2, 3, 1]),
                             N("Reshape", ["t", "shape"], ["r"]),
                             N("Split", ["r"], ["a", "b"], axis=1, split=[1000, 2072]),
                             N("Concat", ["b", "a"], ["c"], axis=1),
                             N("Gather", ["c", "idx"], ["y"], axis=1)],
                            [const("shape", np.array([1, 3072], np.int64)), const("idx", np.array([0, 5], np.int64))]),
    "slice_pad_tile.onnx": model([N("Slice", ["input", "st", "en", "ax"], ["s"]),
                                  N("Pad", ["s", "pads"], ["p"]),
                                  N("Tile", ["p", "rep"], ["y"])],
                                 [const("st", np.array([1], np.int64)), const("en", np.array([30], np.int64)),
                                  const("ax", np.array([2], np.int64)), const("pads", np.zeros(8, np.int64)),
                                  const("rep", np.array([1, 1, 2, 1], np.int64))]),
    "resize_softmax.onnx": model([N("Resize", ["input", "roi", "scales"], ["r"], mode="nearest"),
                                  N("Softmax", ["r"], ["y"], axis=1)],
                                 [const("roi", np.zeros(0, np.float32)), const("scales", np.array([1, 1, 2, 2], np.float32))]),
    "gemm_flatten.onnx": model([N("GlobalAveragePool", ["input"], ["g"]), N("Flatten", ["g"], ["f"], axis=1),
                                N("Gemm", ["f", "gw", "gb"], ["y"], transB=1)],
                               [const("gw", np.full((10, 3), 0.01, np.float32)), const("gb", np.zeros(10, np.float32))]),
    "reduce_unsqueeze.onnx": model([N("ReduceMean", ["input"], ["m"], axes=[2, 3], keepdims=0),
                                    N("Unsqueeze", ["m"], ["y"], axes=[2])]),
}



def external(keys):
    """The Conv model with w's external data described by keys."""
    m = helper.make_model(helper.make_graph(
        [N("Conv", ["input", "w"], ["y"], pads=[1] * 4)], "g",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [W]), opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 7
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in keys:
        e = t.external_data.add()
        e.key, e.value = k, v
    return m.SerializeToString()


def renamed_input(name):
    g = helper.make_graph([N("Relu", [name], ["y"])], "g",
                          [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 3, 32, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 7
    return m.SerializeToString()


def shape_input_model(n):
    """ConstantOfShape of a graph input of shape [n] (as the fuzzer found it:
    the output has n axes)."""
    g = helper.make_graph([N("ConstantOfShape", ["input"], ["y"])], "g",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, [n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 7
    return m.SerializeToString()


# Issue 15's converter findings (and their neighbours): each must be refused.
REFUSED_ONNX = {
    "conv_strides_0.onnx": model([N("Conv", ["input", "w"], ["y"], strides=[0, 1])], [W]),
    "maxpool_strides_0.onnx": model([N("MaxPool", ["input"], ["y"], kernel_shape=[2, 2], strides=[0, 0])]),
    "averagepool_kernel_negative.onnx": model([N("AveragePool", ["input"], ["y"], kernel_shape=[-1, 2])]),
    "conv_pads_odd.onnx": model([N("Conv", ["input", "w"], ["y"], pads=[1, 1, 1])], [W]),
    "depth_to_space_blocksize_0.onnx": model([N("DepthToSpace", ["input"], ["y"], blocksize=0)]),
    "depth_to_space_blocksize_2_32.onnx": model([N("DepthToSpace", ["input"], ["y"], blocksize=2 ** 32)]),
    "conv_dilations_2_62.onnx": model([N("Conv", ["input", "w"], ["y"], dilations=[2 ** 62, 1])], [W]),
    "scan_without_body.onnx": model([N("Scan", ["input"], ["y"], num_scan_inputs=1)]),
    "if_without_branches.onnx": model([N("If", ["input"], ["y"])]),
    "loop_without_body.onnx": model([N("Loop", ["", "", "input"], ["y"])]),
    "external_symlink_passwd.onnx": external([("location", "passwd")]),
    "external_absolute.onnx": external([("location", "/etc/passwd")]),
    "external_directory.onnx": external([("location", "cal")]),
    "external_fifo.onnx": external([("location", "fifo")]),
    "external_dotdot.onnx": external([("location", "cal/../../w.dat")]),
    "external_offset_abc.onnx": external([("location", "w.dat"), ("offset", "abc")]),
    "external_length_2_64.onnx": external([("location", "w.dat"), ("length", "18446744073709551616")]),
    "external_range_overflow.onnx": external([("location", "w.dat"), ("offset", str(2 ** 62)), ("length", str(2 ** 62))]),
    "input_name_nul.onnx": renamed_input("in\0put"),
    # found by fuzz_onnx_import: ONNX's Split inference divides by the output count (SIGFPE)
    "split_without_outputs.onnx": model([N("Split", ["input"], []), N("Conv", ["input", "w"], ["y"])], [W]),
    # found by fuzz_onnx_import: a ConstantOfShape of a [1048576] input took 24 s in ONNX's shape inference
    "constant_of_shape_1m_axes.onnx": shape_input_model(2 ** 20),
    # found by fuzz_onnx_import: ONNX's Conv inference indexed a computed rank-4 input with rank-5 weights (SIGSEGV)
    "conv_computed_rank_4_weights_rank_5.onnx": model([N("Conv", ["input", "w"], ["z"]), N("Conv", ["z", "w5"], ["y"])],
                                                      [W, const("w5", np.full((4, 4, 3, 3, 3), 0.1, np.float32))]),
    # ... also when the computed input comes later in the file
    "conv_reads_a_later_rank_4_output.onnx": model([N("Conv", ["z", "w5"], ["y"]), N("Conv", ["input", "w"], ["z"])],
                                                   [W, const("w5", np.full((4, 4, 3, 3, 3), 0.1, np.float32))]),
    "initializer_dims_overflow.onnx": model([N("Conv", ["input", "w"], ["y"])],
                                            [TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2 ** 31] * 3 + [4])]),
}

BASE = """model_parameters:
  onnx_model: 'model.onnx'
  march: '{march}'
  output_model_file_prefix: 'm'
  working_dir: './out'
input_parameters:
  input_name: 'input'
  input_type_train: 'rgb'
  input_layout_train: 'NCHW'
  input_type_rt: '{rt}'
  input_shape: '1x3x32x32'
  norm_type: 'data_mean_and_scale'
  mean_value: '123 116 103'
  scale_value: '0.017 0.017 0.017'
calibration_parameters:
  cal_data_dir: './cal'
  calibration_type: '{cal}'
compiler_parameters:
  optimize_level: 'O3'
"""
YAML = {
    "nv12_default.yaml": BASE.format(march="bernoulli2", rt="nv12", cal="default"),
    "rgb_max_bayes.yaml": BASE.format(march="bayes-e", rt="rgb", cal="max")
    .replace("  input_shape:", "  input_layout_rt: 'NHWC'\n  input_shape:"),
    "featuremap_skip.yaml": BASE.format(march="bernoulli2", rt="featuremap", cal="skip")
    .replace("  input_type_train: 'rgb'", "  input_type_train: 'featuremap'")
    .replace("  norm_type: 'data_mean_and_scale'\n  mean_value: '123 116 103'\n  scale_value: '0.017 0.017 0.017'\n",
             "  norm_type: 'no_preprocess'\n").replace("  input_shape:", "  input_layout_rt: 'NCHW'\n  input_shape:"),
    "node_info.yaml": BASE.format(march="bayes-e", rt="nv12", cal="kl")
    .replace("  working_dir:", "  node_info: {\"conv0\": {'ON': 'BPU', 'InputType': 'int16'}}\n  working_dir:") +
    "  debug: True\n  core_num: 1\n",
}

GOOD = YAML["nv12_default.yaml"]
REFUSED_YAML = {
    "prefix_dotdot.yaml": GOOD.replace("output_model_file_prefix: 'm'", "output_model_file_prefix: '../x'"),
    "prefix_nul.yaml": GOOD.replace("output_model_file_prefix: 'm'", 'output_model_file_prefix: "a\\0b"'),
    "working_dir_root.yaml": GOOD.replace("working_dir: './out'", "working_dir: '/'"),
    "working_dir_nul.yaml": GOOD.replace("working_dir: './out'", 'working_dir: "out\\0x"'),
    "model_symlink_dir.yaml": GOOD.replace("onnx_model: 'model.onnx'", "onnx_model: 'cal'"),
    "shape_overflow.yaml": GOOD.replace("1x3x32x32", "1x3x4294967296x4294967296x4294967296"),
    "deep_nesting.yaml": GOOD + "custom_op:\n  op_register_files: " + "[" * 200 + "]" * 200 + "\n",
    # found by fuzz_yaml_config: std::stoi threw out_of_range (abort)
    "node_info_input_index_overflow.yaml": YAML["node_info.yaml"].replace("'InputType'", "'InputType" + "8" * 40 + "'"),
}


def main():
    root = sys.argv[1]
    for sub, files in (("onnx", ONNX), ("yaml", YAML), ("refused_onnx", REFUSED_ONNX), ("refused_yaml", REFUSED_YAML)):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
        for name, data in files.items():
            mode = "wb" if isinstance(data, bytes) else "w"
            with open(os.path.join(root, sub, name), mode) as f:
                f.write(data)


if __name__ == "__main__":
    main()
