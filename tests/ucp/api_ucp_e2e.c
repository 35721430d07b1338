/* SPDX-License-Identifier: Apache-2.0
 * End-to-end through the UCP generation's C API, written in C99 the way S100
 * applications use it (hbDNNInferV2 + hbUCPSubmitTask/WaitTaskDone/
 * ReleaseTask, hbUCPMallocCached, strides, NV12 as Y + UV): load the .hbm
 * test models, run them and compare with the outputs computed independently
 * by the test generator (openbpu_testgen); every function's documented
 * error codes for bad arguments.
 * Usage: api_ucp_e2e <dir with the generated files> */
#include <math.h>
#include <string.h>

#include "hobot/dnn/hb_dnn.h"
#include "hobot/dnn/hb_dnn_status.h"
#include "hobot/hb_ucp.h"
#include "hobot/hb_ucp_status.h"
#include "hobot/hb_ucp_sys.h"
#include "tests/runtime/c_check.h"

static char g_dir[1024];

static const char *path_of(const char *name) {
  static char buf[2048];
  snprintf(buf, sizeof(buf), "%s/%s", g_dir, name);
  return buf;
}

static hbDNNPackedHandle_t load(const char *file, const char *model, hbDNNHandle_t *h) {
  hbDNNPackedHandle_t pack = NULL;
  const char *path = path_of(file);
  REQUIRE(hbDNNInitializeFromFiles(&pack, &path, 1) == 0);
  REQUIRE(hbDNNGetModelHandle(h, pack, model) == 0);
  return pack;
}

/* Tensors from the model's properties, buffers of alignedByteSize (the
 * sample-code idiom). */
static void prepare(hbDNNHandle_t h, hbDNNTensor *in, int nin, hbDNNTensor *out, int nout) {
  int i;
  memset(in, 0, sizeof(hbDNNTensor) * (size_t)nin);
  memset(out, 0, sizeof(hbDNNTensor) * (size_t)nout);
  for (i = 0; i < nin; ++i) {
    REQUIRE(hbDNNGetInputTensorProperties(&in[i].properties, h, i) == 0);
    REQUIRE(hbUCPMallocCached(&in[i].sysMem, (uint64_t)in[i].properties.alignedByteSize, 0) == 0);
  }
  for (i = 0; i < nout; ++i) {
    REQUIRE(hbDNNGetOutputTensorProperties(&out[i].properties, h, i) == 0);
    REQUIRE(hbUCPMallocCached(&out[i].sysMem, (uint64_t)out[i].properties.alignedByteSize, 0) == 0);
  }
}

static void release_tensors(hbDNNTensor *t, int n) {
  int i;
  for (i = 0; i < n; ++i) CHECK_EQ_INT(hbUCPFree(&t[i].sysMem), 0);
}

static void fill_input(hbDNNTensor *in, const char *file) {
  long size = 0;
  void *data = read_all(path_of(file), &size);
  REQUIRE(data != NULL && size == in->properties.alignedByteSize);
  memcpy(in->sysMem.virAddr, data, (size_t)size);
  CHECK_EQ_INT(hbUCPMemFlush(&in->sysMem, HB_SYS_MEM_CACHE_CLEAN), 0);
  free(data);
}

/* Submit with a scheduling parameter, wait, release. */
static int32_t run_task(hbDNNHandle_t h, hbDNNTensor *in, hbDNNTensor *out, const hbUCPSchedParam *sched) {
  hbUCPTaskHandle_t task = NULL;
  hbUCPSchedParam p = *sched;
  int32_t rc = hbDNNInferV2(&task, out, in, h);
  if (rc != 0) return rc;
  CHECK(task != NULL);
  rc = hbUCPSubmitTask(task, &p);
  if (rc == 0) rc = hbUCPWaitTaskDone(task, 0);
  CHECK_EQ_INT(hbUCPReleaseTask(task), 0);
  return rc;
}

static int32_t run_default(hbDNNHandle_t h, hbDNNTensor *in, hbDNNTensor *out) {
  hbUCPSchedParam p;
  HB_UCP_INITIALIZE_SCHED_PARAM(&p);
  return run_task(h, in, out, &p);
}

/* Compares the float output (valid elements by the output's strides) with an
 * expected file; exact equality (same integer arithmetic). */
static void compare_output(const hbDNNTensor *out, const char *expected_file) {
  long size = 0, i = 0, mismatches = 0;
  float *exp = (float *)read_all(path_of(expected_file), &size);
  const hbDNNTensorProperties *p = &out->properties;
  int idx[4] = {0, 0, 0, 0};
  REQUIRE(exp != NULL && p->validShape.numDimensions == 4);
  CHECK_EQ_INT(hbUCPMemFlush(&out->sysMem, HB_SYS_MEM_CACHE_INVALIDATE), 0);
  for (idx[0] = 0; idx[0] < p->validShape.dimensionSize[0]; ++idx[0])
    for (idx[1] = 0; idx[1] < p->validShape.dimensionSize[1]; ++idx[1])
      for (idx[2] = 0; idx[2] < p->validShape.dimensionSize[2]; ++idx[2])
        for (idx[3] = 0; idx[3] < p->validShape.dimensionSize[3]; ++idx[3], ++i) {
          const char *base = (const char *)out->sysMem.virAddr;
          float got;
          memcpy(&got, base + idx[0] * p->stride[0] + idx[1] * p->stride[1] + idx[2] * p->stride[2] +
                           idx[3] * p->stride[3],
                 sizeof(float));
          REQUIRE((i + 1) * 4 <= size);
          if (got != exp[i] && mismatches++ < 5) fprintf(stderr, "  [%ld] got %.9g expected %.9g\n", i, got, exp[i]);
        }
  CHECK_EQ_INT(i * 4, size);
  CHECK_EQ_INT(mismatches, 0);
  free(exp);
}

static void test_properties_and_run(void) {
  hbDNNHandle_t h = NULL;
  hbDNNPackedHandle_t pack = load("tiny_cnn.hbm", "tiny_cnn", &h);
  const char **names = NULL, *name = NULL, *desc = NULL;
  int32_t count = 0, nin = 0, nout = 0, type = -1, cores = 0;
  uint32_t size = 0;
  hbDNNTensor in[1], out[1];
  hbUCPSchedParam p;

  REQUIRE(hbDNNGetModelNameList(&names, &count, pack) == 0);
  CHECK_EQ_INT(count, 1);
  CHECK(strcmp(names[0], "tiny_cnn") == 0);
  CHECK_EQ_INT(hbDNNGetInputCount(&nin, h), 0);
  CHECK_EQ_INT(hbDNNGetOutputCount(&nout, h), 0);
  CHECK_EQ_INT(nin, 1);
  CHECK_EQ_INT(nout, 1);
  CHECK_EQ_INT(hbDNNGetInputName(&name, h, 0), 0);
  CHECK(strcmp(name, "data") == 0);
  CHECK_EQ_INT(hbDNNGetOutputName(&name, h, 0), 0);
  CHECK(strcmp(name, "output") == 0);
  CHECK_EQ_INT(hbDNNGetCompileBpuCoreNum(&cores, h), 0);
  CHECK_EQ_INT(cores, 1);
  CHECK_EQ_INT(hbDNNGetHBMDesc(&desc, &size, &type, pack, 0), 0);
  CHECK(desc != NULL && strcmp(desc, "{\"models\":{\"tiny_cnn\":{}}}") == 0);
  CHECK_EQ_INT(size, strlen("{\"models\":{\"tiny_cnn\":{}}}"));
  CHECK_EQ_INT(type, HB_DNN_DESC_TYPE_STRING);
  CHECK_EQ_INT(hbDNNGetHBMDesc(&desc, &size, &type, pack, 1), HB_DNN_INVALID_ARGUMENT);

  prepare(h, in, 1, out, 1);
  /* float NCHW (1,3,8,8) input: dense strides; the model dequantizes its
   * int32 output on the CPU: float (1,4,4,4). */
  CHECK_EQ_INT(in[0].properties.tensorType, HB_DNN_TENSOR_TYPE_F32);
  CHECK_EQ_INT(in[0].properties.validShape.numDimensions, 4);
  CHECK_EQ_INT(in[0].properties.validShape.dimensionSize[1], 3);
  CHECK_EQ_INT(in[0].properties.stride[0], 768);
  CHECK_EQ_INT(in[0].properties.stride[1], 256);
  CHECK_EQ_INT(in[0].properties.stride[2], 32);
  CHECK_EQ_INT(in[0].properties.stride[3], 4);
  CHECK_EQ_INT(in[0].properties.alignedByteSize, 768);
  CHECK_EQ_INT(in[0].properties.quantiType, NONE);
  CHECK_EQ_INT(out[0].properties.tensorType, HB_DNN_TENSOR_TYPE_F32);
  CHECK_EQ_INT(out[0].properties.validShape.dimensionSize[1], 4);
  CHECK_EQ_INT(out[0].properties.validShape.dimensionSize[2], 4);

  fill_input(&in[0], "tiny_cnn_input.bin");
  CHECK_EQ_INT(run_default(h, in, out), 0);
  compare_output(&out[0], "tiny_cnn_expected.bin");

  /* Every way applications pick the backend and priority. */
  {
    const uint64_t backends[] = {HB_UCP_BPU_CORE_ANY, HB_UCP_BPU_CORE_0, HB_UCP_ALL_BACKENDS,
                                 HB_UCP_BPU_CORE_ANY | HB_UCP_DSP_CORE_0};
    const int32_t priorities[] = {0, 100, 253, 254, 255};
    size_t i;
    for (i = 0; i < sizeof(backends) / sizeof(backends[0]); ++i) {
      HB_UCP_INITIALIZE_SCHED_PARAM(&p);
      p.backend = backends[i];
      p.priority = priorities[i % 5];
      p.customId = (int64_t)i;
      memset(out[0].sysMem.virAddr, 0, out[0].sysMem.memSize);
      CHECK_EQ_INT(run_task(h, in, out, &p), 0);
      compare_output(&out[0], "tiny_cnn_expected.bin");
    }
  }
  /* Synchronous form: no task handle. */
  memset(out[0].sysMem.virAddr, 0, out[0].sysMem.memSize);
  CHECK_EQ_INT(hbDNNInferV2(NULL, out, in, h), 0);
  compare_output(&out[0], "tiny_cnn_expected.bin");

  release_tensors(in, 1);
  release_tensors(out, 1);
  CHECK_EQ_INT(hbDNNRelease(pack), 0);
}

/* Caller strides: padded rows with junk in the padding on the input, a
 * padded output; both staged by the library. */
static void test_strides(void) {
  hbDNNHandle_t h = NULL;
  hbDNNPackedHandle_t pack = load("tiny_cnn.hbm", "tiny_cnn", &h);
  hbDNNTensor in[1], out[1], tin[1], tout[1];
  hbUCPTaskHandle_t task = NULL;
  int c, y;
  const int64_t row = 48; /* 8 floats = 32 bytes of data per row */

  prepare(h, tin, 1, tout, 1);
  fill_input(&tin[0], "tiny_cnn_input.bin");
  memset(in, 0, sizeof(in));
  memset(out, 0, sizeof(out));
  in[0].properties = tin[0].properties;
  in[0].properties.stride[2] = row;
  in[0].properties.stride[1] = row * 8;
  in[0].properties.stride[0] = row * 8 * 3;
  REQUIRE(hbUCPMallocCached(&in[0].sysMem, (uint64_t)(row * 8 * 3), 0) == 0);
  memset(in[0].sysMem.virAddr, 0x7f, (size_t)(row * 8 * 3)); /* NaN-like junk in the padding */
  for (c = 0; c < 3; ++c)
    for (y = 0; y < 8; ++y)
      memcpy((char *)in[0].sysMem.virAddr + c * row * 8 + y * row, (char *)tin[0].sysMem.virAddr + (c * 8 + y) * 32,
             32);
  out[0].properties = tout[0].properties;
  out[0].properties.stride[2] = 64;
  out[0].properties.stride[1] = 64 * 4;
  out[0].properties.stride[0] = 64 * 4 * 4;
  REQUIRE(hbUCPMallocCached(&out[0].sysMem, 64 * 16, 0) == 0);
  CHECK_EQ_INT(run_default(h, in, out), 0);
  compare_output(&out[0], "tiny_cnn_expected.bin");

  /* Strides that are not set, overlap, or exceed the buffer. */
  in[0].properties.stride[0] = -1;
  CHECK_EQ_INT(hbDNNInferV2(&task, out, in, h), HB_DNN_INVALID_ARGUMENT);
  in[0].properties.stride[0] = row * 8 * 3;
  in[0].properties.stride[2] = 16; /* rows would overlap */
  CHECK_EQ_INT(hbDNNInferV2(&task, out, in, h), HB_DNN_INVALID_ARGUMENT);
  in[0].properties.stride[2] = row;
  in[0].properties.stride[1] = row * 8 * 2; /* channels beyond the buffer */
  CHECK_EQ_INT(hbDNNInferV2(&task, out, in, h), HB_DNN_INVALID_ARGUMENT);
  in[0].properties.stride[1] = row * 8;
  in[0].properties.validShape.dimensionSize[2] = 4; /* not the model's */
  CHECK_EQ_INT(hbDNNInferV2(&task, out, in, h), HB_DNN_INVALID_ARGUMENT);
  in[0].properties.validShape.dimensionSize[2] = 8;
  in[0].properties.tensorType = HB_DNN_TENSOR_TYPE_S8;
  CHECK_EQ_INT(hbDNNInferV2(&task, out, in, h), HB_DNN_INVALID_ARGUMENT);
  CHECK(task == NULL);

  release_tensors(in, 1);
  release_tensors(out, 1);
  release_tensors(tin, 1);
  release_tensors(tout, 1);
  CHECK_EQ_INT(hbDNNRelease(pack), 0);
}

static int g_callbacks = 0;
static int32_t g_callback_status = -1;
static hbUCPTaskHandle_t g_callback_task = NULL;

static void on_done(hbUCPTaskHandle_t task, int32_t status, void *userdata) {
  g_callbacks += *(int *)userdata;
  g_callback_status = status;
  g_callback_task = task;
}

/* Two models as sub-tasks of one task, one submit; callbacks; the life-cycle
 * errors. */
static void test_subtasks(void) {
  const char *files[2];
  hbDNNPackedHandle_t pack = NULL;
  hbDNNHandle_t ha = NULL, hb = NULL;
  hbDNNTensor ina[1], outa[1], inb[1], outb[1];
  hbDNNTensorProperties props, model_props;
  hbUCPTaskHandle_t task = NULL;
  hbUCPSchedParam p;
  int one = 1;

  files[0] = "tiny_cnn.hbm";
  files[1] = "tiny_cnn_b.hbm";
  {
    char a[2048], b[2048];
    snprintf(a, sizeof(a), "%s/%s", g_dir, files[0]);
    snprintf(b, sizeof(b), "%s/%s", g_dir, files[1]);
    files[0] = a;
    files[1] = b;
    REQUIRE(hbDNNInitializeFromFiles(&pack, files, 2) == 0);
  }
  REQUIRE(hbDNNGetModelHandle(&ha, pack, "tiny_cnn") == 0);
  REQUIRE(hbDNNGetModelHandle(&hb, pack, "tiny_cnn_b") == 0);
  prepare(ha, ina, 1, outa, 1);
  prepare(hb, inb, 1, outb, 1);
  fill_input(&ina[0], "tiny_cnn_input.bin");
  fill_input(&inb[0], "tiny_cnn_b_input.bin");

  /* Waiting on or appending to tasks in the wrong state. */
  CHECK_EQ_INT(hbDNNInferV2(&task, outa, ina, ha), 0);
  CHECK_EQ_INT(hbUCPWaitTaskDone(task, 0), HB_UCP_API_USE_ERROR);
  CHECK_EQ_INT(hbDNNInferV2(&task, outb, inb, hb), 0);
  CHECK_EQ_INT(hbUCPSetTaskDoneCb(task, on_done, &one), 0);
  CHECK_EQ_INT(hbUCPSubmitTask(task, NULL), HB_UCP_INVALID_ARGUMENT);
  HB_UCP_INITIALIZE_SCHED_PARAM(&p);
  CHECK_EQ_INT(hbUCPSubmitTask(task, &p), 0);
  CHECK_EQ_INT(hbUCPSubmitTask(task, &p), HB_UCP_API_USE_ERROR);
  CHECK_EQ_INT(hbDNNInferV2(&task, outa, ina, ha), HB_UCP_API_USE_ERROR);
  CHECK_EQ_INT(hbUCPWaitTaskDone(task, 10000), 0);
  compare_output(&outa[0], "tiny_cnn_expected.bin");
  compare_output(&outb[0], "tiny_cnn_b_expected.bin");
  CHECK_EQ_INT(hbDNNGetTaskOutputTensorProperties(&props, task, 1, 0), 0);
  CHECK_EQ_INT(hbDNNGetOutputTensorProperties(&model_props, hb, 0), 0);
  CHECK(memcmp(&props, &model_props, sizeof(props)) == 0);
  CHECK_EQ_INT(hbDNNGetTaskOutputTensorProperties(&props, task, 2, 0), HB_DNN_INVALID_ARGUMENT);
  CHECK_EQ_INT(hbDNNGetTaskOutputTensorProperties(&props, task, 0, 1), HB_DNN_INVALID_ARGUMENT);
  CHECK_EQ_INT(hbDNNRelease(pack), HB_DNN_MODEL_IS_RUNNING);
  CHECK_EQ_INT(hbUCPReleaseTask(task), 0);
  /* Release waits for a running callback: it has run once, with success. */
  CHECK_EQ_INT(g_callbacks, 1);
  CHECK_EQ_INT(g_callback_status, 0);
  CHECK(g_callback_task == task);
  CHECK_EQ_INT(hbUCPReleaseTask(task), HB_UCP_TASK_HANDLE_INVALID);
  CHECK_EQ_INT(hbUCPWaitTaskDone(task, 0), HB_UCP_TASK_HANDLE_INVALID);
  CHECK_EQ_INT(hbDNNGetTaskOutputTensorProperties(&props, task, 0, 0), HB_UCP_TASK_HANDLE_INVALID);

  /* Scheduling parameters the device cannot honour. */
  {
    const uint64_t bad_backends[] = {HB_UCP_BPU_CORE_1, HB_UCP_DSP_CORE_0, HB_UCP_GDC_CORE_ANY};
    const int32_t bad_priorities[] = {-1, 256};
    size_t i;
    task = NULL;
    CHECK_EQ_INT(hbDNNInferV2(&task, outa, ina, ha), 0);
    for (i = 0; i < 3; ++i) {
      HB_UCP_INITIALIZE_SCHED_PARAM(&p);
      p.backend = bad_backends[i];
      CHECK_EQ_INT(hbUCPSubmitTask(task, &p), HB_UCP_INVALID_ARGUMENT);
    }
    for (i = 0; i < 2; ++i) {
      HB_UCP_INITIALIZE_SCHED_PARAM(&p);
      p.priority = bad_priorities[i];
      CHECK_EQ_INT(hbUCPSubmitTask(task, &p), HB_UCP_INVALID_ARGUMENT);
    }
    HB_UCP_INITIALIZE_SCHED_PARAM(&p);
    p.deviceId = 1;
    CHECK_EQ_INT(hbUCPSubmitTask(task, &p), HB_UCP_INVALID_ARGUMENT);
    /* A task never submitted is released (its callback reports failure). */
    CHECK_EQ_INT(hbUCPReleaseTask(task), 0);
  }

  /* At most 32 tasks exist at a time. */
  {
    hbUCPTaskHandle_t tasks[33];
    int i;
    for (i = 0; i < 32; ++i) {
      tasks[i] = NULL;
      CHECK_EQ_INT(hbDNNInferV2(&tasks[i], outa, ina, ha), 0);
    }
    tasks[32] = NULL;
    CHECK_EQ_INT(hbDNNInferV2(&tasks[32], outa, ina, ha), HB_UCP_TASK_NUMBER_EXCEED_LIMIT);
    CHECK(tasks[32] == NULL);
    for (i = 0; i < 32; ++i) CHECK_EQ_INT(hbUCPReleaseTask(tasks[i]), 0);
  }

  release_tensors(ina, 1);
  release_tensors(outa, 1);
  release_tensors(inb, 1);
  release_tensors(outb, 1);
  CHECK_EQ_INT(hbDNNRelease(pack), 0);
}

/* NV12 as two inputs, Y and UV, with caller-chosen row strides. */
static void test_nv12(void) {
  hbDNNHandle_t h = NULL;
  hbDNNPackedHandle_t pack = load("nv12_classifier.hbm", "nv12_classifier", &h);
  hbDNNTensor in[2], out[1], out2[1];
  const char *name = NULL;
  int32_t nin = 0, H, W, y, x, i, classes;
  float sum = 0.0f;
  int64_t pitch;

  CHECK_EQ_INT(hbDNNGetInputCount(&nin, h), 0);
  REQUIRE(nin == 2);
  memset(in, 0, sizeof(in));
  memset(out, 0, sizeof(out));
  memset(out2, 0, sizeof(out2));
  for (i = 0; i < 2; ++i) REQUIRE(hbDNNGetInputTensorProperties(&in[i].properties, h, i) == 0);
  REQUIRE(hbDNNGetOutputTensorProperties(&out[0].properties, h, 0) == 0);
  out2[0].properties = out[0].properties;
  REQUIRE(hbUCPMallocCached(&out[0].sysMem, (uint64_t)out[0].properties.alignedByteSize, 0) == 0);
  REQUIRE(hbUCPMallocCached(&out2[0].sysMem, (uint64_t)out[0].properties.alignedByteSize, 0) == 0);
  CHECK_EQ_INT(hbDNNGetInputName(&name, h, 0), 0);
  CHECK(strlen(name) > 2 && strcmp(name + strlen(name) - 2, "_y") == 0);
  CHECK_EQ_INT(hbDNNGetInputName(&name, h, 1), 0);
  CHECK(strlen(name) > 3 && strcmp(name + strlen(name) - 3, "_uv") == 0);
  H = in[0].properties.validShape.dimensionSize[1];
  W = in[0].properties.validShape.dimensionSize[2];
  CHECK_EQ_INT(in[0].properties.validShape.dimensionSize[3], 1);
  CHECK_EQ_INT(in[0].properties.tensorType, HB_DNN_TENSOR_TYPE_U8);
  CHECK_EQ_INT(in[0].properties.alignedByteSize, -1);
  CHECK_EQ_INT(in[0].properties.stride[0], -1);
  CHECK_EQ_INT(in[0].properties.stride[1], -1);
  CHECK_EQ_INT(in[0].properties.stride[2], 1);
  CHECK_EQ_INT(in[0].properties.stride[3], 1);
  CHECK_EQ_INT(in[1].properties.validShape.dimensionSize[1], H / 2);
  CHECK_EQ_INT(in[1].properties.validShape.dimensionSize[2], W / 2);
  CHECK_EQ_INT(in[1].properties.validShape.dimensionSize[3], 2);
  CHECK_EQ_INT(in[1].properties.stride[2], 2);

  /* Dynamic strides not filled in. */
  CHECK_EQ_INT(hbDNNInferV2(NULL, out, in, h), HB_DNN_INVALID_ARGUMENT);

  /* Two pitches: the tight 32-aligned one and a padded one with junk. */
  for (pitch = ((W + 31) / 32) * 32; pitch <= 128; pitch += 96) {
    hbDNNTensor *o = pitch == ((W + 31) / 32) * 32 ? out : out2;
    in[0].properties.stride[1] = pitch;
    in[0].properties.stride[0] = pitch * H;
    in[1].properties.stride[1] = pitch;
    in[1].properties.stride[0] = pitch * H / 2;
    REQUIRE(hbUCPMallocCached(&in[0].sysMem, (uint64_t)(pitch * H), 0) == 0);
    REQUIRE(hbUCPMallocCached(&in[1].sysMem, (uint64_t)(pitch * H / 2), 0) == 0);
    memset(in[0].sysMem.virAddr, 0xab, (size_t)(pitch * H));
    memset(in[1].sysMem.virAddr, 0xcd, (size_t)(pitch * H / 2));
    for (y = 0; y < H; ++y)
      for (x = 0; x < W; ++x) ((uint8_t *)in[0].sysMem.virAddr)[y * pitch + x] = (uint8_t)((x * 7 + y * 3) & 255);
    for (y = 0; y < H / 2; ++y)
      for (x = 0; x < W; ++x)
        ((uint8_t *)in[1].sysMem.virAddr)[y * pitch + x] = (uint8_t)(100 + ((x * 5 + y) % 56));
    CHECK_EQ_INT(hbUCPMemFlush(&in[0].sysMem, HB_SYS_MEM_CACHE_CLEAN), 0);
    CHECK_EQ_INT(hbUCPMemFlush(&in[1].sysMem, HB_SYS_MEM_CACHE_CLEAN), 0);
    CHECK_EQ_INT(run_default(h, in, o), 0);
    if (pitch > W) {
      /* A row pitch that is not a multiple of 32, or too small. */
      in[0].properties.stride[1] = pitch - 8;
      CHECK_EQ_INT(hbDNNInferV2(NULL, out2, in, h), HB_DNN_INVALID_ARGUMENT);
      in[0].properties.stride[1] = W - 2;
      CHECK_EQ_INT(hbDNNInferV2(NULL, out2, in, h), HB_DNN_INVALID_ARGUMENT);
    }
    release_tensors(in, 2);
  }
  classes = out[0].properties.validShape.dimensionSize[1];
  CHECK_EQ_INT(hbUCPMemFlush(&out[0].sysMem, HB_SYS_MEM_CACHE_INVALIDATE), 0);
  for (i = 0; i < classes; ++i) sum += ((float *)out[0].sysMem.virAddr)[i];
  CHECK(fabsf(sum - 1.0f) < 1e-4f);
  CHECK(memcmp(out[0].sysMem.virAddr, out2[0].sysMem.virAddr, (size_t)classes * 4) == 0);
  release_tensors(out, 1);
  release_tensors(out2, 1);
  CHECK_EQ_INT(hbDNNRelease(pack), 0);
}

/* Memory, versions, status texts, loading errors. */
static void test_misc(void) {
  hbUCPSysMem mem, part;
  hbDNNPackedHandle_t pack = NULL;
  const char *gen_a = path_of("tiny_cnn_nash.bin");
  const char *missing = "/nonexistent/model.hbm";
  static const int32_t codes[] = {HB_UCP_SUCCESS, HB_UCP_INVALID_ARGUMENT, HB_UCP_TASK_TIMEOUT,
                                  HB_UCP_MEM_ALLOC_FAIL, HB_UCP_MODEL_INCOMPATIBLE, HB_UCP_DSP_OFFLINE, 12345};
  size_t i;

  CHECK_EQ_INT(hbUCPMalloc(&mem, 0, 0), HB_UCP_INVALID_ARGUMENT);
  CHECK(mem.virAddr == NULL);
  CHECK_EQ_INT(hbUCPMalloc(&mem, 64, 1), HB_UCP_INVALID_ARGUMENT);
  CHECK_EQ_INT(hbUCPMalloc(NULL, 64, 0), HB_UCP_INVALID_ARGUMENT);
  REQUIRE(hbUCPMalloc(&mem, 4096, 0) == 0);
  CHECK(mem.virAddr != NULL && mem.memSize == 4096 && ((uintptr_t)mem.virAddr % 64) == 0);
  part.phyAddr = mem.phyAddr + 1024;
  part.virAddr = (char *)mem.virAddr + 1024;
  part.memSize = 512;
  CHECK_EQ_INT(hbUCPMemFlush(&part, HB_SYS_MEM_CACHE_CLEAN), 0);
  part.memSize = 8192;
  CHECK_EQ_INT(hbUCPMemFlush(&part, HB_SYS_MEM_CACHE_CLEAN), HB_UCP_MEM_IS_INVALID);
  CHECK_EQ_INT(hbUCPMemFlush(&mem, 3), HB_UCP_INVALID_ARGUMENT);
  CHECK_EQ_INT(hbUCPMemFlush(NULL, HB_SYS_MEM_CACHE_CLEAN), HB_UCP_INVALID_ARGUMENT);
  part = mem;
  CHECK_EQ_INT(hbUCPFree(&mem), 0);
  CHECK(mem.virAddr == NULL);
  CHECK_EQ_INT(hbUCPFree(&part), HB_UCP_MEM_FREE_FAIL);
  CHECK_EQ_INT(hbUCPFree(&mem), HB_UCP_INVALID_ARGUMENT);

  CHECK(strcmp(hbUCPGetVersion(), "3.13.6") == 0);
  CHECK(strncmp(hbDNNGetVersion(), "3.13.6_(", 8) == 0);
  CHECK(strstr(hbUCPGetSocName(), "S100") != NULL);
  for (i = 0; i < sizeof(codes) / sizeof(codes[0]); ++i) {
    CHECK(hbUCPGetErrorDesc(codes[i]) != NULL && hbUCPGetErrorDesc(codes[i])[0] != '\0');
    CHECK(strcmp(hbUCPGetErrorDesc(codes[i]), hbDNNGetErrorDesc(codes[i])) == 0);
  }

  /* A 1.x .bin through this API; a file that does not exist. */
  CHECK_EQ_INT(hbDNNInitializeFromFiles(&pack, &gen_a, 1), HB_DNN_INCOMPATIBLE_MODEL);
  CHECK(pack == NULL);
  CHECK_EQ_INT(hbDNNInitializeFromFiles(&pack, &missing, 1), HB_DNN_CAN_NOT_OPEN_FILE);
  CHECK_EQ_INT(hbDNNInitializeFromFiles(NULL, &missing, 1), HB_DNN_INVALID_ARGUMENT);
  CHECK_EQ_INT(hbDNNRelease(NULL), HB_DNN_INVALID_ARGUMENT);
  CHECK_EQ_INT(hbUCPSubmitTask(NULL, NULL), HB_UCP_TASK_HANDLE_INVALID);
  CHECK_EQ_INT(hbUCPReleaseTask(&pack), HB_UCP_TASK_HANDLE_INVALID);
}

int main(int argc, char **argv) {
  REQUIRE(argc == 2);
  snprintf(g_dir, sizeof(g_dir), "%s", argv[1]);
  test_properties_and_run();
  test_strides();
  test_subtasks();
  test_nv12();
  test_misc();
  if (g_failures == 0) printf("api_ucp_e2e: all checks passed\n");
  return g_failures == 0 ? 0 : 1;
}
