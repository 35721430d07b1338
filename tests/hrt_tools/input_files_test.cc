// SPDX-License-Identifier: Apache-2.0
// hrt_model_exec's input readers on hostile files (issue 15, findings 6-7):
// FIFOs, devices, symlinks to devices, sparse multi-GiB files, txt files
// far larger than the input, images whose header claims a huge size, files
// that are not images. Each is refused with an error naming the file, fast,
// before it is read or decoded; no hang, no exception, no allocation of the
// claimed size.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "hrt_tools/hrt_model_exec/input_data.h"
#include "tests/common/fifo_call.h"

namespace {

using namespace openbpu::tools;  // NOLINT
using Clock = std::chrono::steady_clock;

// Suffixes whose files are read (images only with OpenCV: without it they
// are refused as a whole, unread).
std::vector<std::string> suffixes() {
#ifdef OPENBPU_WITH_OPENCV
  return {"bin", "txt", "png"};
#else
  return {"bin", "txt"};
#endif
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "obpu_hrt_" + std::to_string(::getpid()) + "_" + name;
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

// One input: a float 1x3x8x8 tensor (NCHW), or an image input of that size.
ModelDesc model(ImageKind kind = ImageKind::kNone) {
  ModelDesc d;
  d.name = "m";
  hbDNNTensorProperties p{};
  p.tensorType = kind == ImageKind::kNV12 ? HB_DNN_IMG_TYPE_NV12 : HB_DNN_TENSOR_TYPE_F32;
  p.tensorLayout = HB_DNN_LAYOUT_NCHW;
  p.validShape.numDimensions = 4;
  const int32_t dims[4] = {1, 3, 8, 8};
  for (int k = 0; k < 4; ++k) p.validShape.dimensionSize[k] = dims[k];
  p.alignedShape = p.validShape;
  d.inputs = {p};
  d.input_names = {"data"};
  d.input_sources = {0};
  d.input_resizer = {false};
  d.input_kinds = {kind};
  return d;
}

struct Outcome {
  bool ok = true;
  std::string log;
  double seconds = 0;
};

Outcome load(const ModelDesc& d, const std::string& file) {
  Outcome o;
  std::vector<InputData> data;
  ::testing::internal::CaptureStderr();
  const auto t0 = Clock::now();
  o.ok = load_inputs(d, {file}, false, &data);
  o.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  o.log = ::testing::internal::GetCapturedStderr();
  return o;
}

::testing::AssertionResult Refused(const Outcome& o, const std::string& file, const std::string& needle) {
  if (o.ok) return ::testing::AssertionFailure() << "accepted";
  if (o.log.find(file) == std::string::npos)
    return ::testing::AssertionFailure() << "the error does not name the file: " << o.log;
  if (o.log.find(needle) == std::string::npos)
    return ::testing::AssertionFailure() << "the error does not say '" << needle << "': " << o.log;
  if (o.seconds > 2.0) return ::testing::AssertionFailure() << "took " << o.seconds << " s";
  return ::testing::AssertionSuccess();
}

TEST(HrtInputFiles, FifoIsRefusedWithoutBlocking) {
  for (const std::string& suffix : suffixes()) {
    const std::string fifo = temp_path("fifo." + suffix);
    ::unlink(fifo.c_str());
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    Outcome o;
    const ModelDesc d = model(suffix == "png" ? ImageKind::kNV12 : ImageKind::kNone);
    const bool hung = openbpu::testing::blocked_on_fifo(fifo, [&] { o = load(d, fifo); });
    ::unlink(fifo.c_str());
    EXPECT_FALSE(hung) << suffix << ": blocked on a FIFO";
    EXPECT_TRUE(Refused(o, fifo, "not a regular file")) << suffix;
  }
}

TEST(HrtInputFiles, DevicesAndSymlinksToDevicesAreRefused) {
  const std::string zero = temp_path("zero.bin"), urandom = temp_path("urandom.txt");
  ::unlink(zero.c_str());
  ::unlink(urandom.c_str());
  ASSERT_EQ(::symlink("/dev/zero", zero.c_str()), 0);
  ASSERT_EQ(::symlink("/dev/urandom", urandom.c_str()), 0);
  EXPECT_TRUE(Refused(load(model(), zero), zero, "not a regular file"));
  EXPECT_TRUE(Refused(load(model(), urandom), urandom, "not a regular file"));
  const std::string dir = temp_path("dir.bin");
  ::mkdir(dir.c_str(), 0700);
  EXPECT_TRUE(Refused(load(model(), dir), dir, "not a regular file"));
  ::unlink(zero.c_str());
  ::unlink(urandom.c_str());
  ::rmdir(dir.c_str());
}

// 3 GiB sparse files: refused from their size, nothing read.
TEST(HrtInputFiles, HugeFilesAreRefusedFromTheirSize) {
  for (const std::string& suffix : suffixes()) {
    const std::string path = temp_path("sparse." + suffix);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, off_t{3} << 30), 0);
    ::close(fd);
    const bool image = suffix == "png";
    const Outcome o = load(model(image ? ImageKind::kNV12 : ImageKind::kNone), path);
    EXPECT_TRUE(Refused(o, path, "3221225472 bytes")) << suffix;
    ::unlink(path.c_str());
  }
  // A txt input takes text of a bounded size: 1x3x8x8 numbers.
  const std::string txt = temp_path("long.txt");
  write_file(txt, std::vector<uint8_t>(4u << 20, ' '));
  EXPECT_TRUE(Refused(load(model(), txt), txt, "more than the"));
  ::unlink(txt.c_str());
}

#ifdef OPENBPU_WITH_OPENCV
// A PNG header (signature, IHDR) claiming w x h, then junk.
std::vector<uint8_t> png_header(uint32_t w, uint32_t h) {
  std::vector<uint8_t> b = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
  for (uint32_t v : {w, h})
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
  for (uint8_t c : {8, 2, 0, 0, 0, 0x12, 0x34, 0x56, 0x78}) b.push_back(c);  // depth, RGB, CRC (wrong)
  b.resize(b.size() + 1000, 0x5a);
  return b;
}

// A JPEG (SOI, an APP0 segment, SOF0) claiming w x h, then junk.
std::vector<uint8_t> jpeg_header(uint32_t w, uint32_t h) {
  std::vector<uint8_t> b = {0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0};
  const std::vector<uint8_t> sof = {0xFF, 0xC0, 0, 17, 8, static_cast<uint8_t>(h >> 8), static_cast<uint8_t>(h),
                                    static_cast<uint8_t>(w >> 8), static_cast<uint8_t>(w), 3, 1, 0x22, 0, 2, 0x11, 1,
                                    3, 0x11, 1};
  b.insert(b.end(), sof.begin(), sof.end());
  b.resize(b.size() + 1000, 0x5a);
  return b;
}

TEST(HrtInputFiles, ImagesClaimingAHugeSizeAreRefusedFromTheirHeader) {
  const ModelDesc d = model(ImageKind::kNV12);
  const std::string png = temp_path("huge.png"), png2 = temp_path("big.png"), jpg = temp_path("big.jpg");
  write_file(png, png_header(100000, 100000));
  write_file(png2, png_header(32000, 32000));
  write_file(jpg, jpeg_header(32000, 32000));
  EXPECT_TRUE(Refused(load(d, png), png, "100000x100000"));
  EXPECT_TRUE(Refused(load(d, png2), png2, "32000x32000"));
  EXPECT_TRUE(Refused(load(d, jpg), jpg, "32000x32000"));
  // Within the limit but damaged: OpenCV's error, caught, naming the file.
  const std::string bad = temp_path("damaged.png");
  write_file(bad, png_header(64, 64));
  EXPECT_TRUE(Refused(load(d, bad), bad, "cannot decode"));
  // Not an image at all.
  const std::string text = temp_path("text.jpg");
  write_file(text, std::vector<uint8_t>(100, 'x'));
  EXPECT_TRUE(Refused(load(d, text), text, "not a PNG or JPEG"));
  for (const std::string& p : {png, png2, jpg, bad, text}) ::unlink(p.c_str());
}
#endif  // OPENBPU_WITH_OPENCV

TEST(HrtInputFiles, ExactBinStillLoads) {
  const std::string path = temp_path("ok.bin");
  write_file(path, std::vector<uint8_t>(3 * 8 * 8 * 4, 0));
  std::vector<InputData> data;
  ASSERT_TRUE(load_inputs(model(), {path}, false, &data));
  EXPECT_EQ(data.at(0).bytes.size(), 3u * 8 * 8 * 4);
  ::unlink(path.c_str());
}

}  // namespace
