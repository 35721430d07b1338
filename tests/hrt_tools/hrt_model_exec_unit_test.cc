// SPDX-License-Identifier: Apache-2.0
// Unit tests of hrt_model_exec internals that the CLI tests cannot reach with
// the generated models: gflags-compatible parsing, dequantization of padded
// integer outputs (SCALE per axis, SHIFT), the dump formats and fp16.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hrt_tools/hrt_model_exec/dump.h"
#include "hrt_tools/hrt_model_exec/numeric.h"
#include "hrt_tools/hrt_model_exec/options.h"

namespace openbpu::tools {
namespace {

ParseResult parse(std::vector<std::string> args, Options* opt, std::string* err = nullptr) {
  args.insert(args.begin(), "hrt_model_exec");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::testing::internal::CaptureStderr();
  const ParseResult r = parse_options(static_cast<int>(args.size()), argv.data(), opt);
  const std::string e = ::testing::internal::GetCapturedStderr();
  if (err != nullptr) *err = e;
  return r;
}

TEST(HrtOptions, GflagsForms) {
  Options o;
  ASSERT_EQ(parse({"infer", "--model_file", "a.bin", "--input_file=x.bin", "--enable_dump",
                   "--frame_count", "3", "-dump_format=txt", "stray", "--core_id=1"},
                  &o),
            ParseResult::kRun);
  EXPECT_EQ(o.mode, Mode::kInfer);
  EXPECT_EQ(o.model_file, "a.bin");
  EXPECT_EQ(o.input_file, "x.bin");
  EXPECT_TRUE(o.enable_dump);
  EXPECT_EQ(o.frame_count, 3);
  EXPECT_EQ(o.dump_format, "txt");
  EXPECT_EQ(o.core_id, 1);
}

TEST(HrtOptions, BooleansAndLastWins) {
  Options o;
  ASSERT_EQ(parse({"infer", "--model_file=a.bin", "--model_file=b.bin", "--input_file=x",
                   "--enable_dump", "--enable_dump=false", "--hybrid_dequantize_process=1",
                   "--noenable_cls_post_process", "--dequantize_process=no"},
                  &o),
            ParseResult::kRun);
  EXPECT_EQ(o.model_file, "b.bin");
  EXPECT_FALSE(o.enable_dump);
  EXPECT_TRUE(o.hybrid_dequantize_process);
  EXPECT_FALSE(o.enable_cls_post_process);
  // gflags: a bool flag never takes the next token, "false" is a stray token.
  Options p;
  ASSERT_EQ(parse({"infer", "--model_file=a.bin", "--input_file=x", "--enable_dump", "false"}, &p),
            ParseResult::kRun);
  EXPECT_TRUE(p.enable_dump);
}

TEST(HrtOptions, ModeDefaults) {
  Options perf, infer;
  ASSERT_EQ(parse({"perf", "--model_file=a.bin"}, &perf), ParseResult::kRun);
  EXPECT_EQ(perf.frame_count, 200);
  EXPECT_EQ(perf.thread_num, 1);
  ASSERT_EQ(parse({"infer", "--model_file=a.bin", "--input_file=i.bin"}, &infer),
            ParseResult::kRun);
  EXPECT_EQ(infer.frame_count, 1);
  EXPECT_EQ(infer.dump_precision, 9);
  EXPECT_EQ(infer.dump_txt_axis, 4);
  EXPECT_EQ(infer.dump_format, "bin");
}

TEST(HrtOptions, ThreadNumClamped) {
  Options o;
  std::string err;
  ASSERT_EQ(parse({"perf", "--model_file=a.bin", "--thread_num=12"}, &o, &err), ParseResult::kRun);
  EXPECT_EQ(o.thread_num, 8);
  EXPECT_NE(err.find("thread_num 12"), std::string::npos) << err;
}

TEST(HrtOptions, Errors) {
  struct Case {
    std::vector<std::string> args;
    const char* message;
  } cases[] = {
      {{"perf", "--model_file=a.bin", "--frame_count=abc"},
       "ERROR: illegal value 'abc' specified for int32 flag 'frame_count'"},
      {{"perf", "--model_file=a.bin", "--bogus=1"}, "ERROR: unknown command line flag 'bogus'"},
      {{"perf", "--model_file=a.bin", "--enable_dump=maybe"},
       "ERROR: illegal value 'maybe' specified for bool flag 'enable_dump'"},
      {{"perf", "--model_file"}, "ERROR: flag 'model_file' is missing its argument"},
      {{"perf", "--model_file=a.bin", "--thread_num=0"}, "flag 'thread_num'"},
      {{"perf", "--model_file=a.bin", "--frame_count=0"}, "flag 'frame_count'"},
      {{"perf", "--model_file=a.bin", "--core_id=-1"}, "flag 'core_id'"},
      {{"infer", "--model_file=a.bin", "--input_file=i", "--dump_format=npy"},
       "flag 'dump_format'"},
      {{"perf", "--model_file=a.bin", "--dump_intermediate=2"}, "per-layer dumps are written by infer"},
      {{"infer", "--model_file=a.bin", "--input_file=i", "--dump_intermediate=7"},
       "flag 'dump_intermediate'"},
      {{"infer", "--model_file=a.bin", "--input_file=i", "--input_img_properties=Y,UV"},
       "flag 'input_img_properties'"},
      {{"infer", "--model_file=a.bin"}, "flag 'input_file' is required"},
      {{"perf"}, "flag 'model_file' is required"},
      {{"--model_file=a.bin"}, "no mode given"},
      {{"run", "--model_file=a.bin"}, "unknown mode 'run'"},
  };
  for (const Case& c : cases) {
    Options o;
    std::string err;
    EXPECT_EQ(parse(c.args, &o, &err), ParseResult::kError) << c.message;
    EXPECT_NE(err.find(c.message), std::string::npos) << "got: " << err;
  }
}

TEST(HrtOptions, HelpAndVersion) {
  Options o;
  EXPECT_EQ(parse({}, &o), ParseResult::kHelp);
  EXPECT_EQ(parse({"perf", "-h"}, &o), ParseResult::kHelp);
  EXPECT_EQ(parse({"--help"}, &o), ParseResult::kHelp);
  EXPECT_EQ(parse({"-v"}, &o), ParseResult::kVersion);
  EXPECT_EQ(parse({"--version"}, &o), ParseResult::kVersion);
}

TEST(HrtOptions, SplitList) {
  EXPECT_EQ(split_list("a.bin, b.bin,,c", ','), (std::vector<std::string>{"a.bin", "b.bin", "c"}));
  EXPECT_TRUE(split_list("", ',').empty());
}

// An S32 NHWC output (1,2,3,3) stored with padding: W 3 -> 4, C 3 -> 8.
struct PaddedS32 {
  std::vector<int32_t> mem = std::vector<int32_t>(1 * 2 * 4 * 8, 0x7eadbeef);
  std::vector<float> scales{0.5f, 0.25f, 2.0f};
  hbDNNTensor t;

  PaddedS32() {
    std::memset(&t, 0, sizeof(t));
    hbDNNTensorProperties& p = t.properties;
    p.validShape = {{1, 2, 3, 3}, 4};
    p.alignedShape = {{1, 2, 4, 8}, 4};
    p.tensorLayout = HB_DNN_LAYOUT_NHWC;
    p.tensorType = HB_DNN_TENSOR_TYPE_S32;
    p.quantiType = SCALE;
    p.quantizeAxis = 3;
    p.scale.scaleLen = 3;
    p.scale.scaleData = scales.data();
    p.alignedByteSize = static_cast<int32_t>(mem.size() * 4);
    const int32_t stride[4] = {2 * 4 * 8 * 4, 4 * 8 * 4, 8 * 4, 4};
    std::memcpy(p.stride, stride, sizeof(stride));
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 3; ++w)
        for (int c = 0; c < 3; ++c) mem[static_cast<size_t>((h * 4 + w) * 8 + c)] = value(h, w, c);
    t.sysMem[0].virAddr = mem.data();
    t.sysMem[0].memSize = static_cast<uint32_t>(mem.size() * 4);
  }
  static int32_t value(int h, int w, int c) { return (h * 100 + w * 10 + c) * (c == 1 ? -1 : 1); }
};

TEST(HrtDequantize, ScalePerChannelSkipsPadding) {
  PaddedS32 o;
  std::vector<float> v;
  ASSERT_TRUE(output_to_float(o.t, &v));
  ASSERT_EQ(v.size(), 18u);
  size_t k = 0;
  for (int h = 0; h < 2; ++h)
    for (int w = 0; w < 3; ++w)
      for (int c = 0; c < 3; ++c, ++k)
        EXPECT_EQ(v[k], static_cast<float>(PaddedS32::value(h, w, c) * o.scales[c])) << k;
}

TEST(HrtDequantize, ScaleWithZeroPointAndShift) {
  PaddedS32 o;
  std::vector<int8_t> zp{1, -2, 3};
  o.t.properties.scale.zeroPointLen = 3;
  o.t.properties.scale.zeroPointData = zp.data();
  std::vector<float> v;
  ASSERT_TRUE(output_to_float(o.t, &v));
  EXPECT_EQ(v[4], static_cast<float>((PaddedS32::value(0, 1, 1) + 2) * 0.25));

  std::vector<uint8_t> shifts{1, 2, 3};
  o.t.properties.quantiType = SHIFT;
  o.t.properties.shift.shiftLen = 3;
  o.t.properties.shift.shiftData = shifts.data();
  ASSERT_TRUE(output_to_float(o.t, &v));
  EXPECT_EQ(v[5], static_cast<float>(PaddedS32::value(0, 1, 2)) / 8.0f);
  EXPECT_EQ(v[3], static_cast<float>(PaddedS32::value(0, 1, 0)) / 2.0f);
}

TEST(HrtDequantize, RejectsPropertiesLargerThanTheBuffer) {
  PaddedS32 o;
  o.t.sysMem[0].memSize = 64;
  std::vector<float> v;
  ::testing::internal::CaptureStderr();
  EXPECT_FALSE(output_to_float(o.t, &v));
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("does not fit"), std::string::npos);
}

std::string temp_dir() {
  char tmpl[] = "/tmp/hrt_unit_XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d != nullptr ? d : "/tmp";
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(HrtDump, FormatsAndNames) {
  PaddedS32 o;
  DumpConfig cfg;
  cfg.dir = temp_dir();
  // Raw: the aligned buffer as produced.
  ASSERT_TRUE(dump_output(cfg, 2, "a/b", o.t));
  const std::string raw = slurp(cfg.dir + "/model_infer_output_2_a_b.bin");
  ASSERT_EQ(raw.size(), o.mem.size() * 4);
  EXPECT_EQ(std::memcmp(raw.data(), o.mem.data(), raw.size()), 0);
  // Valid data of the own type.
  cfg.remove_padding = true;
  ASSERT_TRUE(dump_output(cfg, 0, "out", o.t));
  const std::string valid = slurp(cfg.dir + "/model_infer_output_0_out.bin");
  ASSERT_EQ(valid.size(), 18u * 4);
  int32_t last;
  std::memcpy(&last, valid.data() + 17 * 4, 4);
  EXPECT_EQ(last, PaddedS32::value(1, 2, 2));
  // Dequantized txt, 2 decimals, a line per (h, w): axis 3.
  cfg.remove_padding = false;
  cfg.dequantize = true;
  cfg.format = "txt";
  cfg.precision = 2;
  cfg.txt_axis = 3;
  ASSERT_TRUE(dump_output(cfg, 0, "out", o.t));
  const std::string txt = slurp(cfg.dir + "/model_infer_output_0_out.txt");
  EXPECT_EQ(txt.substr(0, 33), "0.00 -0.25 4.00\n5.00 -2.75 24.00\n");
  // Default axis 4 on 4-D: one number per line; axis 0: one line.
  cfg.txt_axis = 4;
  ASSERT_TRUE(dump_output(cfg, 0, "out", o.t));
  std::string t4 = slurp(cfg.dir + "/model_infer_output_0_out.txt");
  EXPECT_EQ(std::count(t4.begin(), t4.end(), '\n'), 18);
  cfg.txt_axis = 0;
  ASSERT_TRUE(dump_output(cfg, 0, "out", o.t));
  std::string t0 = slurp(cfg.dir + "/model_infer_output_0_out.txt");
  EXPECT_EQ(std::count(t0.begin(), t0.end(), '\n'), 1);
  const int rc = std::system(("rm -rf " + cfg.dir).c_str());
  (void)rc;
}

TEST(HrtDump, Top5) {
  std::vector<float> scores{0.1f, 0.3f, NAN, 0.05f, 0.3f, 0.2f, 0.05f};
  hbDNNTensor t;
  std::memset(&t, 0, sizeof(t));
  t.properties.validShape = {{1, 7}, 2};
  t.properties.alignedShape = t.properties.validShape;
  t.properties.tensorType = HB_DNN_TENSOR_TYPE_F32;
  t.properties.stride[0] = 28;
  t.properties.stride[1] = 4;
  t.sysMem[0].virAddr = scores.data();
  t.sysMem[0].memSize = 28;
  ::testing::internal::CaptureStdout();
  ASSERT_TRUE(print_top5(t, "prob"));
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("class result: [id]1, [score]0.300000\nclass result: [id]4, [score]0.300000\n"
                     "class result: [id]5, [score]0.200000\nclass result: [id]0, [score]0.100000\n"
                     "class result: [id]3, [score]0.050000\n"),
            std::string::npos)
      << out;
}

TEST(HrtNumeric, HalfRoundTrip) {
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f,
                  0.333251953125f}) {
    EXPECT_EQ(half_to_float(float_to_half(f)), f) << f;
  }
  EXPECT_EQ(float_to_half(1.0f + 1.0f / 2048), 0x3C00);  // ties to even
  EXPECT_EQ(float_to_half(1.0f + 3.0f / 2048), 0x3C02);
  EXPECT_EQ(float_to_half(70000.0f), 0x7C00);  // overflow -> inf
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(NAN))));
  uint8_t b[8];
  store_element(300.0, HB_DNN_TENSOR_TYPE_S8, b);
  EXPECT_EQ(static_cast<int8_t>(b[0]), 127);
  store_element(-2.5, HB_DNN_TENSOR_TYPE_S16, b);
  EXPECT_EQ(load_element(b, HB_DNN_TENSOR_TYPE_S16), -2.0);  // nearest even
}

}  // namespace
}  // namespace openbpu::tools
