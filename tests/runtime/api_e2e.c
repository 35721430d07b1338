/* SPDX-License-Identifier: Apache-2.0
 * End-to-end through the public C API, written in C99 the way applications
 * use libdnn: load writer-built models, run them and compare with outputs
 * computed independently by the test generator (openbpu_testgen).
 * Usage: api_e2e <dir with the generated files> */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_ext.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"
#include "tests/runtime/c_check.h"

static char g_dir[1024];

static const char *path_of(const char *name) {
  static char buf[2048];
  snprintf(buf, sizeof(buf), "%s/%s", g_dir, name);
  return buf;
}

/* Prepares input/output tensors from the model's properties (sample-code style). */
static void prepare(hbDNNHandle_t h, hbDNNTensor *in, int nin, hbDNNTensor *out, int nout) {
  int i;
  for (i = 0; i < nin; ++i) {
    REQUIRE(hbDNNGetInputTensorProperties(&in[i].properties, h, i) == 0);
    REQUIRE(hbSysAllocCachedMem(&in[i].sysMem[0], (uint32_t)in[i].properties.alignedByteSize) == 0);
  }
  for (i = 0; i < nout; ++i) {
    REQUIRE(hbDNNGetOutputTensorProperties(&out[i].properties, h, i) == 0);
    REQUIRE(hbSysAllocCachedMem(&out[i].sysMem[0], (uint32_t)out[i].properties.alignedByteSize) == 0);
  }
}

static void release_tensors(hbDNNTensor *t, int n) {
  int i;
  for (i = 0; i < n; ++i) CHECK_EQ_INT(hbSysFreeMem(&t[i].sysMem[0]), 0);
}

static int run_sync(hbDNNHandle_t h, hbDNNTensor *in, hbDNNTensor *out) {
  hbDNNTaskHandle_t task = NULL;
  hbDNNInferCtrlParam param;
  hbDNNTensor *out_ptr = out;
  int rc;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  rc = hbDNNInfer(&task, &out_ptr, in, h, &param);
  if (rc != 0) return rc;
  CHECK(task != NULL);
  rc = hbDNNWaitTaskDone(task, 0);
  CHECK_EQ_INT(hbDNNReleaseTask(task), 0);
  return rc;
}

/* Compares float output with an expected file; exact equality is expected
 * (same integer arithmetic, same float dequantization). */
static void compare_output(const hbDNNTensor *out, const char *expected_file) {
  long size = 0;
  float *exp = (float *)read_all(path_of(expected_file), &size);
  const float *got = (const float *)out->sysMem[0].virAddr;
  long i, n = size / (long)sizeof(float), mismatches = 0;
  REQUIRE(exp != NULL);
  CHECK_EQ_INT(out->properties.alignedByteSize, size);
  for (i = 0; i < n; ++i)
    if (got[i] != exp[i]) {
      if (mismatches < 5) fprintf(stderr, "  [%ld] got %.9g expected %.9g\n", i, got[i], exp[i]);
      ++mismatches;
    }
  CHECK_EQ_INT(mismatches, 0);
  free(exp);
}

static void fill_input(hbDNNTensor *in, const char *file) {
  long size = 0;
  void *data = read_all(path_of(file), &size);
  REQUIRE(data != NULL);
  REQUIRE(size <= (long)in->sysMem[0].memSize);
  memcpy(in->sysMem[0].virAddr, data, (size_t)size);
  CHECK_EQ_INT(hbSysFlushMem(&in->sysMem[0], HB_SYS_MEM_CACHE_CLEAN), 0);
  free(data);
}

static void test_tiny(void) {
  hbPackedDNNHandle_t pack = NULL;
  const char *file = path_of("tiny_cnn.bin");
  const char **names = NULL;
  int count = 0, nin = 0, nout = 0;
  hbDNNHandle_t h = NULL;
  hbDNNTensor in[1], out[1];
  const char *name = NULL;

  REQUIRE(hbDNNInitializeFromFiles(&pack, &file, 1) == 0);
  REQUIRE(hbDNNGetModelNameList(&names, &count, pack) == 0);
  CHECK_EQ_INT(count, 1);
  CHECK(strcmp(names[0], "tiny_cnn") == 0);
  REQUIRE(hbDNNGetModelHandle(&h, pack, names[0]) == 0);
  CHECK_EQ_INT(hbDNNGetInputCount(&nin, h), 0);
  CHECK_EQ_INT(hbDNNGetOutputCount(&nout, h), 0);
  CHECK_EQ_INT(nin, 1);
  CHECK_EQ_INT(nout, 1);
  CHECK_EQ_INT(hbDNNGetInputName(&name, h, 0), 0);
  CHECK(strcmp(name, "data") == 0);
  CHECK_EQ_INT(hbDNNGetOutputName(&name, h, 0), 0);
  CHECK(strcmp(name, "output") == 0);

  memset(in, 0, sizeof(in));
  memset(out, 0, sizeof(out));
  prepare(h, in, 1, out, 1);
  CHECK_EQ_INT(in[0].properties.tensorType, HB_DNN_TENSOR_TYPE_F32);
  CHECK_EQ_INT(in[0].properties.tensorLayout, HB_DNN_LAYOUT_NCHW);
  CHECK_EQ_INT(in[0].properties.validShape.numDimensions, 4);
  CHECK_EQ_INT(in[0].properties.validShape.dimensionSize[1], 3);
  CHECK_EQ_INT(in[0].properties.alignedByteSize, 3 * 8 * 8 * 4);
  CHECK_EQ_INT(in[0].properties.quantiType, NONE);
  CHECK_EQ_INT(out[0].properties.validShape.dimensionSize[1], 4);
  CHECK_EQ_INT(out[0].properties.validShape.dimensionSize[2], 4);

  fill_input(&in[0], "tiny_cnn_input.bin");
  CHECK_EQ_INT(run_sync(h, in, out), 0);
  CHECK_EQ_INT(hbSysFlushMem(&out[0].sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE), 0);
  compare_output(&out[0], "tiny_cnn_expected.bin");

  /* The sample idiom: alignedShape = validShape on inputs. */
  in[0].properties.alignedShape = in[0].properties.validShape;
  memset(out[0].sysMem[0].virAddr, 0, out[0].sysMem[0].memSize);
  CHECK_EQ_INT(run_sync(h, in, out), 0);
  compare_output(&out[0], "tiny_cnn_expected.bin");

  {
    int32_t latency = -1;
    CHECK_EQ_INT(hbDNNGetEstimateLatency(&latency, h), 0);
    CHECK(latency >= 0);
  }
  release_tensors(in, 1);
  release_tensors(out, 1);
  CHECK_EQ_INT(hbDNNRelease(pack), 0);
}

static void test_from_ddr(void) {
  long size = 0;
  void *data = read_all(path_of("tiny_cnn.bin"), &size);
  const void *ptrs[1];
  int32_t lens[1];
  hbPackedDNNHandle_t pack = NULL;
  hbDNNHandle_t h = NULL;
  hbDNNTensor in[1], out[1];
  REQUIRE(data != NULL);
  ptrs[0] = data;
  lens[0] = (int32_t)size;
  REQUIRE(hbDNNInitializeFromDDR(&pack, ptrs, lens, 1) == 0);
  memset(data, 0xAB, (size_t)size); /* the library copied the image */
  free(data);
  REQUIRE(hbDNNGetModelHandle(&h, pack, "tiny_cnn") == 0);
  memset(in, 0, sizeof(in));
  memset(out, 0, sizeof(out));
  prepare(h, in, 1, out, 1);
  fill_input(&in[0], "tiny_cnn_input.bin");
  CHECK_EQ_INT(run_sync(h, in, out), 0);
  compare_output(&out[0], "tiny_cnn_expected.bin");
  release_tensors(in, 1);
  release_tensors(out, 1);
  CHECK_EQ_INT(hbDNNRelease(pack), 0);
}

static volatile int g_cb_calls = 0;
static volatile int g_cb_status = -1;
static void on_done(hbDNNTaskHandle_t task, int32_t status, void *userdata) {
  (void)task;
  g_cb_status = status;
  g_cb_calls += *(int *)userdata;
}

/* Packed file, chained runs of two models in one task, completion callback. */
static void test_packed_chain(void) {
  hbPackedDNNHandle_t pack = NULL;
  const char *file = path_of("packed.bin");
  const char **names = NULL;
  int count = 0, one = 1;
  hbDNNHandle_t a = NULL, b = NULL;
  hbDNNTensor ina[1], outa[1], inb[1], outb[1];
  hbDNNTensor *pa = outa, *pb = outb;
  hbDNNTaskHandle_t task = NULL;
  hbDNNInferCtrlParam param;

  REQUIRE(hbDNNInitializeFromFiles(&pack, &file, 1) == 0);
  REQUIRE(hbDNNGetModelNameList(&names, &count, pack) == 0);
  CHECK_EQ_INT(count, 3);
  REQUIRE(hbDNNGetModelHandle(&a, pack, "tiny_cnn") == 0);
  REQUIRE(hbDNNGetModelHandle(&b, pack, "tiny_cnn_b") == 0);
  memset(ina, 0, sizeof(ina));
  memset(outa, 0, sizeof(outa));
  memset(inb, 0, sizeof(inb));
  memset(outb, 0, sizeof(outb));
  prepare(a, ina, 1, outa, 1);
  prepare(b, inb, 1, outb, 1);
  fill_input(&ina[0], "tiny_cnn_input.bin");
  fill_input(&inb[0], "tiny_cnn_b_input.bin");

  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  param.more = 1;
  REQUIRE(hbDNNInfer(&task, &pa, ina, a, &param) == 0);
  REQUIRE(task != NULL);
  /* An open chain cannot be waited for. */
  CHECK_EQ_INT(hbDNNWaitTaskDone(task, 10), HB_DNN_API_USE_ERROR);
  param.more = 0;
  REQUIRE(hbDNNInfer(&task, &pb, inb, b, &param) == 0);
  CHECK_EQ_INT(hbDNNSetTaskDoneCb(task, on_done, &one), 0);
  CHECK_EQ_INT(hbDNNWaitTaskDone(task, 0), 0);
  /* Appending to a closed task is an API misuse. */
  CHECK_EQ_INT(hbDNNInfer(&task, &pb, inb, b, &param), HB_DNN_API_USE_ERROR);
  /* The pack has live tasks until they are released. */
  CHECK_EQ_INT(hbDNNRelease(pack), HB_DNN_MODEL_IS_RUNNING);
  CHECK_EQ_INT(hbDNNReleaseTask(task), 0);
  compare_output(&outa[0], "tiny_cnn_expected.bin");
  compare_output(&outb[0], "tiny_cnn_b_expected.bin");
  CHECK_EQ_INT(g_cb_calls, 1);
  CHECK_EQ_INT(g_cb_status, 0);
  release_tensors(ina, 1);
  release_tensors(outa, 1);
  release_tensors(inb, 1);
  release_tensors(outb, 1);
  CHECK_EQ_INT(hbDNNRelease(pack), 0);
}

/* NV12 input: one buffer with tight rows, and NV12_SEPARATE planes with a row
 * stride padded to 48 bytes, give the same probabilities. */
static void test_nv12(void) {
  hbPackedDNNHandle_t pack = NULL;
  const char *file = path_of("nv12_classifier.bin");
  hbDNNHandle_t h = NULL;
  hbDNNTensor in[1], out[1], in2[1], out2[1];
  int H, W, y, x, i, classes;
  const int stride = 48;
  uint8_t *img, *yp, *uvp;
  float sum = 0.0f;
  int32_t source = -1;

  REQUIRE(hbDNNInitializeFromFiles(&pack, &file, 1) == 0);
  REQUIRE(hbDNNGetModelHandle(&h, pack, "nv12_classifier") == 0);
  memset(in, 0, sizeof(in));
  memset(out, 0, sizeof(out));
  prepare(h, in, 1, out, 1);
  CHECK_EQ_INT(in[0].properties.tensorType, HB_DNN_IMG_TYPE_NV12);
  CHECK_EQ_INT(hbDNNGetInputSource(&source, h, 0), 0);
  CHECK_EQ_INT(source, HB_DNN_INPUT_FROM_PYRAMID);
  H = in[0].properties.validShape.dimensionSize[2];
  W = in[0].properties.validShape.dimensionSize[3];
  CHECK_EQ_INT(in[0].properties.alignedByteSize, H * W * 3 / 2);
  CHECK_EQ_INT(in[0].properties.stride[0], 0);
  img = (uint8_t *)in[0].sysMem[0].virAddr;
  for (y = 0; y < H; ++y)
    for (x = 0; x < W; ++x) img[y * W + x] = (uint8_t)((x * 7 + y * 3) & 255);
  for (y = 0; y < H / 2; ++y)
    for (x = 0; x < W; ++x) img[H * W + y * W + x] = (uint8_t)(100 + ((x * 5 + y) % 56));
  CHECK_EQ_INT(run_sync(h, in, out), 0);
  classes = out[0].properties.validShape.dimensionSize[1];
  for (i = 0; i < classes; ++i) sum += ((float *)out[0].sysMem[0].virAddr)[i];
  CHECK(fabsf(sum - 1.0f) < 1e-4f);

  memset(in2, 0, sizeof(in2));
  memset(out2, 0, sizeof(out2));
  prepare(h, in2, 0, out2, 1);
  in2[0].properties = in[0].properties;
  in2[0].properties.tensorType = HB_DNN_IMG_TYPE_NV12_SEPARATE;
  in2[0].properties.alignedShape.dimensionSize[3] = stride;
  REQUIRE(hbSysAllocCachedMem(&in2[0].sysMem[0], (uint32_t)(stride * H)) == 0);
  REQUIRE(hbSysAllocCachedMem(&in2[0].sysMem[1], (uint32_t)(stride * H / 2)) == 0);
  yp = (uint8_t *)in2[0].sysMem[0].virAddr;
  uvp = (uint8_t *)in2[0].sysMem[1].virAddr;
  for (y = 0; y < H; ++y) memcpy(yp + y * stride, img + y * W, (size_t)W);
  for (y = 0; y < H / 2; ++y) memcpy(uvp + y * stride, img + H * W + y * W, (size_t)W);
  CHECK_EQ_INT(run_sync(h, in2, out2), 0);
  CHECK(memcmp(out[0].sysMem[0].virAddr, out2[0].sysMem[0].virAddr, (size_t)classes * 4) == 0);

  /* A buffer too small for the declared stride is rejected. */
  in2[0].properties.alignedShape.dimensionSize[3] = 64;
  CHECK_EQ_INT(run_sync(h, in2, out2), HB_DNN_INVALID_ARGUMENT);
  /* Odd-looking but consistent: row stride smaller than the width. */
  in2[0].properties.alignedShape.dimensionSize[3] = W - 2;
  CHECK_EQ_INT(run_sync(h, in2, out2), HB_DNN_INVALID_ARGUMENT);

  CHECK_EQ_INT(hbSysFreeMem(&in2[0].sysMem[1]), 0);
  release_tensors(in2, 1);
  release_tensors(out2, 1);
  release_tensors(in, 1);
  release_tensors(out, 1);
  CHECK_EQ_INT(hbDNNRelease(pack), 0);
}

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  snprintf(g_dir, sizeof(g_dir), "%s", argv[1]);
  test_tiny();
  test_from_ddr();
  test_packed_chain();
  test_nv12();
  if (g_failures == 0) printf("api_e2e: all checks passed\n");
  return g_failures == 0 ? 0 : 1;
}
