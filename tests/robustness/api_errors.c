/* SPDX-License-Identifier: Apache-2.0
 * Argument checks of every public C function (dnn/hb_dnn.h, hb_sys.h,
 * hb_dnn_ext.h, hb_dnn_status.h, openbpu/openbpu.h), written in C99 the way
 * applications call them: NULL handles and out-pointers, stale handles
 * (released packs and tasks), foreign pointers (the address of a local
 * variable passed as a handle), out-of-range indices, tensors that do not
 * match the model, limits (32 live tasks, 255 chained runs) and timeouts.
 * Every call must return the documented code (HBDNN_API.md sections 2.6, 4,
 * 5, 7 and 9; where those say [infer], the choice made in runtime/c_api) and
 * nothing may crash or leak (run under ASan: docs/robustness.md).
 * Usage: api_errors <dir with the files written by openbpu_testgen> */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_ext.h"
#include "dnn/hb_dnn_status.h"
#include "dnn/hb_sys.h"
#include "openbpu/openbpu.h"

/* ---- checks ------------------------------------------------------------- */

static int g_failures = 0;
static int g_checks = 0;

static void expect_rc(int32_t got, int32_t want, const char *expr, int line) {
  ++g_checks;
  if (got != want) {
    fprintf(stderr, "api_errors.c:%d: %s\n  returned %d (%s), expected %d (%s)\n", line, expr, (int)got,
            hbDNNGetErrorDesc(got), (int)want, hbDNNGetErrorDesc(want));
    ++g_failures;
  }
}

#define EXPECT_RC(call, want) expect_rc((call), (want), #call, __LINE__)
#define CHECK(cond)                                                        \
  do {                                                                     \
    ++g_checks;                                                            \
    if (!(cond)) {                                                         \
      fprintf(stderr, "api_errors.c:%d: CHECK failed: %s\n", __LINE__, #cond); \
      ++g_failures;                                                        \
    }                                                                      \
  } while (0)
#define REQUIRE(cond)                                                        \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "api_errors.c:%d: REQUIRE failed: %s\n", __LINE__, #cond); \
      exit(1);                                                               \
    }                                                                        \
  } while (0)

/* ---- fixtures ----------------------------------------------------------- */

static char g_dir[1024];

static const char *path_of(const char *name) {
  static char buf[2][2048];
  static int which = 0;
  which ^= 1;
  snprintf(buf[which], sizeof(buf[which]), "%s/%s", g_dir, name);
  return buf[which];
}

static void sleep_ms(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  nanosleep(&ts, NULL);
}

typedef struct {
  hbPackedDNNHandle_t pack;
  hbDNNHandle_t model;
  int nin, nout;
  hbDNNTensor in[2], out[2];
} Loaded;

static void load_model(Loaded *l, const char *file, const char *name) {
  const char *path = path_of(file);
  int i;
  memset(l, 0, sizeof(*l));
  REQUIRE(hbDNNInitializeFromFiles(&l->pack, &path, 1) == 0);
  REQUIRE(hbDNNGetModelHandle(&l->model, l->pack, name) == 0);
  REQUIRE(hbDNNGetInputCount(&l->nin, l->model) == 0 && l->nin >= 1 && l->nin <= 2);
  REQUIRE(hbDNNGetOutputCount(&l->nout, l->model) == 0 && l->nout >= 1 && l->nout <= 2);
  for (i = 0; i < l->nin; ++i) {
    REQUIRE(hbDNNGetInputTensorProperties(&l->in[i].properties, l->model, i) == 0);
    REQUIRE(hbSysAllocCachedMem(&l->in[i].sysMem[0], (uint32_t)l->in[i].properties.alignedByteSize) == 0);
  }
  for (i = 0; i < l->nout; ++i) {
    REQUIRE(hbDNNGetOutputTensorProperties(&l->out[i].properties, l->model, i) == 0);
    REQUIRE(hbSysAllocCachedMem(&l->out[i].sysMem[0], (uint32_t)l->out[i].properties.alignedByteSize) == 0);
  }
}

static void unload_model(Loaded *l) {
  int i;
  for (i = 0; i < l->nin; ++i) EXPECT_RC(hbSysFreeMem(&l->in[i].sysMem[0]), 0);
  for (i = 0; i < l->nout; ++i) EXPECT_RC(hbSysFreeMem(&l->out[i].sysMem[0]), 0);
  EXPECT_RC(hbDNNRelease(l->pack), 0);
}

static hbDNNInferCtrlParam default_param(void) {
  hbDNNInferCtrlParam p;
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&p);
  return p;
}

/* hbDNNInfer with the given tensors; on success waits for and releases the
 * task. A failed call must leave the task handle NULL. */
static int32_t infer_with(hbDNNHandle_t h, const hbDNNTensor *in, hbDNNTensor *out, hbDNNInferCtrlParam *p) {
  hbDNNTaskHandle_t task = NULL;
  hbDNNTensor *outp = out;
  int32_t rc = hbDNNInfer(&task, &outp, in, h, p);
  if (rc != 0) {
    CHECK(task == NULL);
    return rc;
  }
  CHECK(task != NULL);
  CHECK(outp == out);
  rc = hbDNNWaitTaskDone(task, 0);
  EXPECT_RC(hbDNNReleaseTask(task), 0);
  return rc;
}

static int32_t infer_default(const Loaded *l, const hbDNNTensor *in, hbDNNTensor *out) {
  hbDNNInferCtrlParam p = default_param();
  return infer_with(l->model, in, out, &p);
}

/* ---- hbDNNGetVersion, hbDNNGetErrorDesc --------------------------------- */

static void test_version_and_error_desc(void) {
  static const int32_t documented[] = {
      HB_DNN_SUCCESS, HB_DNN_INVALID_ARGUMENT, HB_DNN_INVALID_MODEL, HB_DNN_MODEL_NUMBER_EXCEED_LIMIT,
      HB_DNN_INVALID_PACKED_DNN_HANDLE, HB_DNN_INVALID_DNN_HANDLE, HB_DNN_CAN_NOT_OPEN_FILE,
      HB_DNN_OUT_OF_MEMORY, HB_DNN_TIMEOUT, HB_DNN_TASK_NUM_EXCEED_LIMIT,
      HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT, HB_DNN_INVALID_TASK_HANDLE, HB_DNN_RUN_TASK_FAILED,
      HB_DNN_MODEL_IS_RUNNING, HB_DNN_INCOMPATIBLE_MODEL, HB_DNN_API_USE_ERROR,
      HB_DNN_MULTI_PROGRESS_USE_ERROR, HB_SYS_INVALID_ARGUMENT, HB_SYS_OUT_OF_MEMORY,
      HB_SYS_REGISTER_MEM_FAILED};
  const char *unknown = hbDNNGetErrorDesc(12345);
  const char *v = hbDNNGetVersion();
  size_t i;
  int64_t code;
  CHECK(v != NULL && strncmp(v, "1.", 2) == 0);
  CHECK(unknown != NULL && unknown[0] != '\0');
  /* Never NULL, for any int: a sweep around the code ranges and extremes. */
  for (code = -6000300; code <= -5999700; ++code) {
    const char *d = hbDNNGetErrorDesc((int32_t)code);
    if (d == NULL || d[0] == '\0') {
      fprintf(stderr, "hbDNNGetErrorDesc(%lld) is NULL or empty\n", (long long)code);
      ++g_failures;
    }
  }
  {
    const int32_t extremes[] = {INT32_MIN, INT32_MIN + 1, -1, 1, 2, 255, INT32_MAX, -6000000, -6000017,
                                -6000128, -6000132};
    for (i = 0; i < sizeof(extremes) / sizeof(extremes[0]); ++i) {
      const char *d = hbDNNGetErrorDesc(extremes[i]);
      CHECK(d != NULL && d[0] != '\0');
    }
  }
  /* Each documented code has its own description. */
  for (i = 0; i < sizeof(documented) / sizeof(documented[0]); ++i) {
    const char *d = hbDNNGetErrorDesc(documented[i]);
    CHECK(d != NULL && strcmp(d, unknown) != 0);
  }
}

/* ---- loading ------------------------------------------------------------ */

static void test_initialize_arguments(void) {
  hbPackedDNNHandle_t pack = (hbPackedDNNHandle_t)&pack;
  const char *good = path_of("tiny_cnn.bin");
  const char *names_with_null[2];
  const void *data[2];
  int32_t lens[2];
  long size = 0;
  FILE *f = fopen(good, "rb");
  void *bytes;
  REQUIRE(f != NULL);
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, 0, SEEK_SET);
  bytes = malloc((size_t)size);
  REQUIRE(bytes != NULL && fread(bytes, 1, (size_t)size, f) == (size_t)size);
  fclose(f);

  EXPECT_RC(hbDNNInitializeFromFiles(NULL, &good, 1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNInitializeFromFiles(&pack, NULL, 1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNInitializeFromFiles(&pack, &good, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNInitializeFromFiles(&pack, &good, -1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNInitializeFromFiles(&pack, &good, INT32_MIN), HB_DNN_INVALID_ARGUMENT);
  names_with_null[0] = good;
  names_with_null[1] = NULL;
  pack = (hbPackedDNNHandle_t)&pack;
  EXPECT_RC(hbDNNInitializeFromFiles(&pack, names_with_null, 2), HB_DNN_INVALID_ARGUMENT);
  CHECK(pack == NULL); /* a failed load leaves the handle NULL */
  {
    const char *missing = path_of("no_such_model.bin");
    const char *dir = g_dir;
    EXPECT_RC(hbDNNInitializeFromFiles(&pack, &missing, 1), HB_DNN_CAN_NOT_OPEN_FILE);
    EXPECT_RC(hbDNNInitializeFromFiles(&pack, &dir, 1), HB_DNN_CAN_NOT_OPEN_FILE);
  }

  data[0] = bytes;
  lens[0] = (int32_t)size;
  data[1] = NULL;
  lens[1] = (int32_t)size;
  EXPECT_RC(hbDNNInitializeFromDDR(NULL, data, lens, 1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNInitializeFromDDR(&pack, NULL, lens, 1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNInitializeFromDDR(&pack, data, NULL, 1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNInitializeFromDDR(&pack, data, lens, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNInitializeFromDDR(&pack, data, lens, -3), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNInitializeFromDDR(&pack, data, lens, 2), HB_DNN_INVALID_ARGUMENT); /* data[1] NULL */
  lens[0] = 0;
  EXPECT_RC(hbDNNInitializeFromDDR(&pack, data, lens, 1), HB_DNN_INVALID_ARGUMENT);
  lens[0] = -1;
  EXPECT_RC(hbDNNInitializeFromDDR(&pack, data, lens, 1), HB_DNN_INVALID_ARGUMENT);
  lens[0] = INT32_MIN;
  EXPECT_RC(hbDNNInitializeFromDDR(&pack, data, lens, 1), HB_DNN_INVALID_ARGUMENT);
  lens[0] = (int32_t)size - 1;
  EXPECT_RC(hbDNNInitializeFromDDR(&pack, data, lens, 1), HB_DNN_INVALID_MODEL);
  CHECK(pack == NULL);
  /* The image is copied: the caller's buffer may change after the call. */
  lens[0] = (int32_t)size;
  EXPECT_RC(hbDNNInitializeFromDDR(&pack, data, lens, 1), 0);
  memset(bytes, 0xA5, (size_t)size);
  free(bytes);
  {
    hbDNNHandle_t h = NULL;
    EXPECT_RC(hbDNNGetModelHandle(&h, pack, "tiny_cnn"), 0);
    if (h != NULL) {
      hbDNNTensor in, out;
      memset(&in, 0, sizeof(in));
      memset(&out, 0, sizeof(out));
      EXPECT_RC(hbDNNGetInputTensorProperties(&in.properties, h, 0), 0);
      EXPECT_RC(hbDNNGetOutputTensorProperties(&out.properties, h, 0), 0);
      REQUIRE(hbSysAllocCachedMem(&in.sysMem[0], (uint32_t)in.properties.alignedByteSize) == 0);
      REQUIRE(hbSysAllocCachedMem(&out.sysMem[0], (uint32_t)out.properties.alignedByteSize) == 0);
      {
        hbDNNInferCtrlParam p = default_param();
        EXPECT_RC(infer_with(h, &in, &out, &p), 0);
      }
      EXPECT_RC(hbSysFreeMem(&in.sysMem[0]), 0);
      EXPECT_RC(hbSysFreeMem(&out.sysMem[0]), 0);
    }
  }
  EXPECT_RC(hbDNNRelease(pack), 0);
}

/* ---- packs and model handles: NULL, foreign, stale ---------------------- */

/* Every model query on handle h returns `want` (with valid out-pointers). */
static void model_queries_return(hbDNNHandle_t h, int32_t want) {
  int32_t n = 0, src = 0, op = 0, lat = 0;
  const char *s = NULL, *march = NULL, *value = NULL;
  uint32_t size = 0;
  int32_t type = 0;
  hbDNNTensorProperties props;
  EXPECT_RC(hbDNNGetInputCount(&n, h), want);
  EXPECT_RC(hbDNNGetOutputCount(&n, h), want);
  EXPECT_RC(hbDNNGetInputName(&s, h, 0), want);
  EXPECT_RC(hbDNNGetOutputName(&s, h, 0), want);
  EXPECT_RC(hbDNNGetInputTensorProperties(&props, h, 0), want);
  EXPECT_RC(hbDNNGetOutputTensorProperties(&props, h, 0), want);
  EXPECT_RC(hbDNNGetInputSource(&src, h, 0), want);
  EXPECT_RC(hbDNNGetInputDesc(&s, &size, &type, h, 0), want);
  EXPECT_RC(hbDNNGetOutputDesc(&s, &size, &type, h, 0), want);
  EXPECT_RC(hbDNNGetModelDesc(&s, &size, &type, h), want);
  EXPECT_RC(hbDNNGetOutputOperatorType(&op, h, 0), want);
  EXPECT_RC(hbDNNGetEstimateLatency(&lat, h), want);
  EXPECT_RC(hbDNNGetModelTag(&s, h), want);
  EXPECT_RC(obpuGetModelMarch(&march, h), want);
  EXPECT_RC(obpuGetModelMetadata(&value, h, "MARCH"), want);
}

/* Every pack query on handle p returns `want`. */
static void pack_queries_return(hbPackedDNNHandle_t p, int32_t want) {
  const char **names = NULL;
  int32_t count = 0;
  hbDNNHandle_t h = NULL;
  EXPECT_RC(hbDNNGetModelNameList(&names, &count, p), want);
  EXPECT_RC(hbDNNGetModelHandle(&h, p, "tiny_cnn"), want);
}

static void test_handles(void) {
  Loaded l;
  int local = 0;
  void *foreign = &local;
  hbDNNTaskHandle_t task = NULL;
  hbDNNHandle_t stale_model;
  hbPackedDNNHandle_t stale_pack;
  const char **names = NULL;
  const char *s = NULL;
  int32_t count = 0, n = 0, src = 0, op = 0, lat = 0, type = 0;
  uint32_t size = 0;
  hbDNNTensorProperties props;
  hbDNNHandle_t h = NULL;
  load_model(&l, "tiny_cnn.bin", "tiny_cnn");

  /* NULL and foreign handles. */
  pack_queries_return(NULL, HB_DNN_INVALID_PACKED_DNN_HANDLE);
  pack_queries_return(foreign, HB_DNN_INVALID_PACKED_DNN_HANDLE);
  pack_queries_return(l.model, HB_DNN_INVALID_PACKED_DNN_HANDLE); /* a model is not a pack */
  EXPECT_RC(hbDNNRelease(NULL), HB_DNN_INVALID_PACKED_DNN_HANDLE);
  EXPECT_RC(hbDNNRelease(foreign), HB_DNN_INVALID_PACKED_DNN_HANDLE);
  EXPECT_RC(hbDNNRelease(l.model), HB_DNN_INVALID_PACKED_DNN_HANDLE);
  model_queries_return(NULL, HB_DNN_INVALID_DNN_HANDLE);
  model_queries_return(foreign, HB_DNN_INVALID_DNN_HANDLE);
  model_queries_return(l.pack, HB_DNN_INVALID_DNN_HANDLE); /* a pack is not a model */
  model_queries_return(l.model, HB_DNN_SUCCESS);

  /* NULL out-pointers. */
  EXPECT_RC(hbDNNGetModelNameList(NULL, &count, l.pack), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetModelNameList(&names, NULL, l.pack), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetModelHandle(NULL, l.pack, "tiny_cnn"), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetModelHandle(&h, l.pack, NULL), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetModelHandle(&h, l.pack, "no_such_model"), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetModelHandle(&h, l.pack, ""), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetModelHandle(&h, l.pack, "tiny_cnn "), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetInputCount(NULL, l.model), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetOutputCount(NULL, l.model), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetInputName(NULL, l.model, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetOutputName(NULL, l.model, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetInputTensorProperties(NULL, l.model, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetOutputTensorProperties(NULL, l.model, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetInputSource(NULL, l.model, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetInputDesc(NULL, &size, &type, l.model, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetInputDesc(&s, NULL, &type, l.model, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetInputDesc(&s, &size, NULL, l.model, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetOutputDesc(NULL, &size, &type, l.model, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetOutputDesc(&s, NULL, &type, l.model, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetOutputDesc(&s, &size, NULL, l.model, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetModelDesc(NULL, &size, &type, l.model), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetModelDesc(&s, NULL, &type, l.model), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetModelDesc(&s, &size, NULL, l.model), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetOutputOperatorType(NULL, l.model, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetEstimateLatency(NULL, l.model), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetModelTag(NULL, l.model), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(obpuGetModelMarch(NULL, l.model), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(obpuGetModelMetadata(NULL, l.model, "MARCH"), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(obpuGetModelMetadata(&s, l.model, NULL), HB_DNN_INVALID_ARGUMENT);
  s = "x";
  EXPECT_RC(obpuGetModelMetadata(&s, l.model, "NO_SUCH_KEY"), 0);
  CHECK(s == NULL);

  /* Out-of-range indices. */
  {
    const int32_t bad[] = {-1, 1, 2, INT32_MAX, INT32_MIN};
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
      const int32_t k = bad[i];
      EXPECT_RC(hbDNNGetInputName(&s, l.model, k), HB_DNN_INVALID_ARGUMENT);
      EXPECT_RC(hbDNNGetOutputName(&s, l.model, k), HB_DNN_INVALID_ARGUMENT);
      EXPECT_RC(hbDNNGetInputTensorProperties(&props, l.model, k), HB_DNN_INVALID_ARGUMENT);
      EXPECT_RC(hbDNNGetOutputTensorProperties(&props, l.model, k), HB_DNN_INVALID_ARGUMENT);
      EXPECT_RC(hbDNNGetInputSource(&src, l.model, k), HB_DNN_INVALID_ARGUMENT);
      EXPECT_RC(hbDNNGetInputDesc(&s, &size, &type, l.model, k), HB_DNN_INVALID_ARGUMENT);
      EXPECT_RC(hbDNNGetOutputDesc(&s, &size, &type, l.model, k), HB_DNN_INVALID_ARGUMENT);
      EXPECT_RC(hbDNNGetOutputOperatorType(&op, l.model, k), HB_DNN_INVALID_ARGUMENT);
    }
  }
  (void)n;
  (void)lat;

  /* A pack with a live task cannot be released (MODEL_IS_RUNNING), and its
   * handles stay valid. */
  {
    hbDNNTensor *outp = l.out;
    hbDNNInferCtrlParam p = default_param();
    REQUIRE(hbDNNInfer(&task, &outp, l.in, l.model, &p) == 0);
    EXPECT_RC(hbDNNRelease(l.pack), HB_DNN_MODEL_IS_RUNNING);
    EXPECT_RC(hbDNNWaitTaskDone(task, 0), 0);
    EXPECT_RC(hbDNNRelease(l.pack), HB_DNN_MODEL_IS_RUNNING); /* done but not released */
    model_queries_return(l.model, HB_DNN_SUCCESS);
    EXPECT_RC(hbDNNReleaseTask(task), 0);
  }

  /* Stale handles: after hbDNNRelease every handle of the pack is invalid. */
  stale_model = l.model;
  stale_pack = l.pack;
  unload_model(&l);
  pack_queries_return(stale_pack, HB_DNN_INVALID_PACKED_DNN_HANDLE);
  model_queries_return(stale_model, HB_DNN_INVALID_DNN_HANDLE);
  EXPECT_RC(hbDNNRelease(stale_pack), HB_DNN_INVALID_PACKED_DNN_HANDLE); /* double release */
  {
    hbDNNTaskHandle_t t = NULL;
    hbDNNTensor in[1], out[1];
    hbDNNTensor *outp = out;
    hbDNNInferCtrlParam p = default_param();
    memset(in, 0, sizeof(in));
    memset(out, 0, sizeof(out));
    EXPECT_RC(hbDNNInfer(&t, &outp, in, stale_model, &p), HB_DNN_INVALID_DNN_HANDLE);
    CHECK(t == NULL);
  }
}

/* ---- hbDNNInfer: arguments and tensors ---------------------------------- */

static void test_infer_arguments(void) {
  Loaded l;
  hbDNNTensor in[1], out[1];
  hbDNNTensor *outp;
  hbDNNTaskHandle_t task = NULL;
  hbDNNInferCtrlParam p;
  int local = 0;
  void *foreign = &local;
  load_model(&l, "tiny_cnn.bin", "tiny_cnn");
  /* tiny_cnn: input F32 NCHW (1,3,8,8) 768 bytes; output F32 NCHW (1,4,4,4) 256 bytes. */
  REQUIRE(l.in[0].properties.alignedByteSize == 768 && l.out[0].properties.alignedByteSize == 256);
  EXPECT_RC(infer_default(&l, l.in, l.out), 0);

  /* NULL arguments. */
  p = default_param();
  outp = l.out;
  EXPECT_RC(hbDNNInfer(NULL, &outp, l.in, l.model, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNInfer(&task, NULL, l.in, l.model, &p), HB_DNN_INVALID_ARGUMENT);
  outp = NULL;
  EXPECT_RC(hbDNNInfer(&task, &outp, l.in, l.model, &p), HB_DNN_INVALID_ARGUMENT);
  outp = l.out;
  EXPECT_RC(hbDNNInfer(&task, &outp, NULL, l.model, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNInfer(&task, &outp, l.in, l.model, NULL), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNInfer(&task, &outp, l.in, NULL, &p), HB_DNN_INVALID_DNN_HANDLE);
  EXPECT_RC(hbDNNInfer(&task, &outp, l.in, foreign, &p), HB_DNN_INVALID_DNN_HANDLE);
  EXPECT_RC(hbDNNInfer(&task, &outp, l.in, l.pack, &p), HB_DNN_INVALID_DNN_HANDLE);
  CHECK(task == NULL);
  /* A non-NULL *taskHandle appends: it must be a task. */
  task = foreign;
  EXPECT_RC(hbDNNInfer(&task, &outp, l.in, l.model, &p), HB_DNN_INVALID_TASK_HANDLE);
  task = l.model;
  EXPECT_RC(hbDNNInfer(&task, &outp, l.in, l.model, &p), HB_DNN_INVALID_TASK_HANDLE);
  task = NULL;

  /* Control parameters: priority 0..255, bpuCoreId a mask of existing cores
   * (bernoulli2 has 2: masks 0..3). */
  p = default_param();
  p.priority = -1;
  EXPECT_RC(infer_with(l.model, l.in, l.out, &p), HB_DNN_INVALID_ARGUMENT);
  p.priority = 256;
  EXPECT_RC(infer_with(l.model, l.in, l.out, &p), HB_DNN_INVALID_ARGUMENT);
  p.priority = INT32_MIN;
  EXPECT_RC(infer_with(l.model, l.in, l.out, &p), HB_DNN_INVALID_ARGUMENT);
  p.priority = HB_DNN_PRIORITY_PREEMP;
  EXPECT_RC(infer_with(l.model, l.in, l.out, &p), 0);
  p = default_param();
  p.bpuCoreId = -1;
  EXPECT_RC(infer_with(l.model, l.in, l.out, &p), HB_DNN_INVALID_ARGUMENT);
  p.bpuCoreId = 4;
  EXPECT_RC(infer_with(l.model, l.in, l.out, &p), HB_DNN_INVALID_ARGUMENT);
  p.bpuCoreId = 4 | HB_BPU_CORE_0;
  EXPECT_RC(infer_with(l.model, l.in, l.out, &p), HB_DNN_INVALID_ARGUMENT);
  p.bpuCoreId = INT32_MAX;
  EXPECT_RC(infer_with(l.model, l.in, l.out, &p), HB_DNN_INVALID_ARGUMENT);
  p.bpuCoreId = HB_BPU_CORE_1;
  EXPECT_RC(infer_with(l.model, l.in, l.out, &p), 0);
  p.bpuCoreId = HB_BPU_CORE_0 | HB_BPU_CORE_1;
  EXPECT_RC(infer_with(l.model, l.in, l.out, &p), 0);

#define WITH_INPUT(stmt, want)      \
  do {                              \
    in[0] = l.in[0];                \
    out[0] = l.out[0];              \
    stmt;                           \
    EXPECT_RC(infer_default(&l, in, out), want); \
  } while (0)
  /* Input tensors that do not match the model. */
  WITH_INPUT(in[0].sysMem[0].memSize = 767, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].sysMem[0].memSize = 0, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].sysMem[0].virAddr = NULL, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.tensorType = HB_DNN_TENSOR_TYPE_S8, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.tensorType = HB_DNN_TENSOR_TYPE_F64, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.tensorType = -1, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.tensorType = 1000, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.tensorLayout = HB_DNN_LAYOUT_NHWC, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.tensorLayout = 7, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.validShape.dimensionSize[3] = 9, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.validShape.dimensionSize[0] = 2, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.validShape.dimensionSize[1] = -3, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.validShape.numDimensions = 0, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.validShape.numDimensions = 9, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.validShape.numDimensions = -1, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.validShape.numDimensions = 3, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.alignedShape.numDimensions = 0, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.alignedShape.numDimensions = 9, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.alignedShape.numDimensions = INT32_MAX, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.alignedShape.numDimensions = 5, HB_DNN_INVALID_ARGUMENT);
  /* alignedShape neither the model's nor the valid shape. */
  WITH_INPUT(in[0].properties.alignedShape.dimensionSize[3] = 16, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.alignedShape.dimensionSize[3] = 7, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(in[0].properties.alignedShape.dimensionSize[2] = 0, HB_DNN_INVALID_ARGUMENT);
  /* Fields apps may leave as they are: quantization, stride, alignedByteSize. */
  WITH_INPUT(in[0].properties.alignedByteSize = 1, 0);
  WITH_INPUT(in[0].properties.stride[0] = -5, 0);

  /* Output tensors. */
  WITH_INPUT(out[0].sysMem[0].memSize = 255, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(out[0].sysMem[0].virAddr = NULL, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(out[0].properties.tensorType = HB_DNN_TENSOR_TYPE_S32, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(out[0].properties.tensorLayout = HB_DNN_LAYOUT_NHWC, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(out[0].properties.validShape.dimensionSize[1] = 5, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(out[0].properties.validShape.numDimensions = 9, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(out[0].properties.alignedShape.numDimensions = 0, HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT(out[0].properties.alignedShape.dimensionSize[3] = 8, HB_DNN_INVALID_ARGUMENT);
  /* Output buffer overlapping the input (whole, or partly). */
  WITH_INPUT(out[0].sysMem[0] = in[0].sysMem[0], HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT((out[0].sysMem[0].virAddr = (char *)in[0].sysMem[0].virAddr + 512,
              out[0].sysMem[0].memSize = 256),
             HB_DNN_INVALID_ARGUMENT);
  WITH_INPUT((out[0].sysMem[0].virAddr = (char *)in[0].sysMem[0].virAddr + 767,
              out[0].sysMem[0].memSize = 256),
             HB_DNN_INVALID_ARGUMENT);
  /* Output right after the input: no overlap. */
  {
    hbSysMem big;
    REQUIRE(hbSysAllocCachedMem(&big, 768 + 256) == 0);
    WITH_INPUT((in[0].sysMem[0] = big, in[0].sysMem[0].memSize = 768, out[0].sysMem[0] = big,
                out[0].sysMem[0].virAddr = (char *)big.virAddr + 768, out[0].sysMem[0].phyAddr += 768,
                out[0].sysMem[0].memSize = 256),
               0);
    EXPECT_RC(hbSysFreeMem(&big), 0);
  }
  /* Plain heap memory (not from hbSysAlloc*) is accepted for tensors. */
  {
    void *a = calloc(768, 1), *b = calloc(256, 1);
    WITH_INPUT((in[0].sysMem[0].virAddr = a, out[0].sysMem[0].virAddr = b), 0);
    free(a);
    free(b);
  }
#undef WITH_INPUT
  unload_model(&l);
}

/* ---- image inputs (NV12) ------------------------------------------------ */

static void test_image_inputs(void) {
  Loaded l;
  hbDNNTensor in[1], out[1];
  hbSysMem uv;
  load_model(&l, "nv12_classifier.bin", "nv12_classifier");
  /* nv12_classifier: NV12 NCHW (1,3,32,32), 1536 bytes. */
  REQUIRE(l.in[0].properties.tensorType == HB_DNN_IMG_TYPE_NV12);
  REQUIRE(l.in[0].properties.alignedByteSize == 1536);
  REQUIRE(hbSysAllocCachedMem(&uv, 48 * 16) == 0);
#define WITH_IMAGE(stmt, want)      \
  do {                              \
    in[0] = l.in[0];                \
    out[0] = l.out[0];              \
    stmt;                           \
    EXPECT_RC(infer_default(&l, in, out), want); \
  } while (0)
  WITH_IMAGE((void)0, 0);
  WITH_IMAGE(in[0].properties.alignedShape = in[0].properties.validShape, 0);
  WITH_IMAGE(in[0].sysMem[0].memSize = 1535, HB_DNN_INVALID_ARGUMENT);
  WITH_IMAGE(in[0].sysMem[0].memSize = 1024, HB_DNN_INVALID_ARGUMENT); /* the Y plane only */
  WITH_IMAGE(in[0].properties.tensorType = HB_DNN_IMG_TYPE_Y, HB_DNN_INVALID_ARGUMENT);
  WITH_IMAGE(in[0].properties.tensorType = HB_DNN_IMG_TYPE_RGB, HB_DNN_INVALID_ARGUMENT);
  WITH_IMAGE(in[0].properties.tensorType = HB_DNN_TENSOR_TYPE_U8, HB_DNN_INVALID_ARGUMENT);
  WITH_IMAGE(in[0].properties.tensorLayout = HB_DNN_LAYOUT_NHWC, HB_DNN_INVALID_ARGUMENT);
  WITH_IMAGE(in[0].properties.validShape.dimensionSize[2] = 30, HB_DNN_INVALID_ARGUMENT);
  /* Row stride (alignedShape W) below the width, or absurd. */
  WITH_IMAGE(in[0].properties.alignedShape.dimensionSize[3] = 30, HB_DNN_INVALID_ARGUMENT);
  WITH_IMAGE(in[0].properties.alignedShape.dimensionSize[3] = 0, HB_DNN_INVALID_ARGUMENT);
  WITH_IMAGE(in[0].properties.alignedShape.dimensionSize[3] = -32, HB_DNN_INVALID_ARGUMENT);
  WITH_IMAGE(in[0].properties.alignedShape.dimensionSize[3] = INT32_MAX, HB_DNN_INVALID_ARGUMENT);
  WITH_IMAGE(in[0].properties.alignedShape.numDimensions = 3, HB_DNN_INVALID_ARGUMENT);
  /* Padded rows: the buffer must hold stride * H * 3/2. */
  WITH_IMAGE(in[0].properties.alignedShape.dimensionSize[3] = 48, HB_DNN_INVALID_ARGUMENT);
  {
    hbSysMem big;
    REQUIRE(hbSysAllocCachedMem(&big, 48 * 48) == 0);
    WITH_IMAGE((in[0].properties.alignedShape.dimensionSize[3] = 48, in[0].sysMem[0] = big), 0);
    EXPECT_RC(hbSysFreeMem(&big), 0);
  }
  /* NV12_SEPARATE: the UV plane in sysMem[1]. */
  WITH_IMAGE((in[0].properties.tensorType = HB_DNN_IMG_TYPE_NV12_SEPARATE, in[0].sysMem[1] = uv,
              in[0].sysMem[1].memSize = 512),
             0);
  WITH_IMAGE(in[0].properties.tensorType = HB_DNN_IMG_TYPE_NV12_SEPARATE, HB_DNN_INVALID_ARGUMENT);
  WITH_IMAGE((in[0].properties.tensorType = HB_DNN_IMG_TYPE_NV12_SEPARATE, in[0].sysMem[1] = uv,
              in[0].sysMem[1].memSize = 511),
             HB_DNN_INVALID_ARGUMENT);
  WITH_IMAGE((in[0].properties.tensorType = HB_DNN_IMG_TYPE_NV12_SEPARATE, in[0].sysMem[1] = uv,
              in[0].sysMem[1].virAddr = NULL),
             HB_DNN_INVALID_ARGUMENT);
  WITH_IMAGE((in[0].properties.tensorType = HB_DNN_IMG_TYPE_NV12_SEPARATE, in[0].sysMem[1] = uv,
              in[0].properties.alignedShape.dimensionSize[3] = 48, in[0].sysMem[0].memSize = 48 * 32 - 1),
             HB_DNN_INVALID_ARGUMENT); /* the Y plane of 48-byte rows needs 1536 bytes */
#undef WITH_IMAGE
  EXPECT_RC(hbSysFreeMem(&uv), 0);
  unload_model(&l);
}

/* ---- task handles --------------------------------------------------------- */

static pthread_mutex_t g_cb_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_cb_calls = 0;
static int32_t g_cb_status = 1;
static int32_t g_cb_release_rc = 1;

static void count_cb(hbDNNTaskHandle_t task, int32_t status, void *userdata) {
  (void)task;
  pthread_mutex_lock(&g_cb_mu);
  ++g_cb_calls;
  g_cb_status = status;
  if (userdata != NULL) *(int *)userdata += 1;
  pthread_mutex_unlock(&g_cb_mu);
}

static void releasing_cb(hbDNNTaskHandle_t task, int32_t status, void *userdata) {
  /* hb_dnn.h: "The callback may release the task." */
  int32_t rc = hbDNNReleaseTask(task);
  (void)userdata;
  pthread_mutex_lock(&g_cb_mu);
  ++g_cb_calls;
  g_cb_status = status;
  g_cb_release_rc = rc;
  pthread_mutex_unlock(&g_cb_mu);
}

static int cb_calls(void) {
  int n;
  pthread_mutex_lock(&g_cb_mu);
  n = g_cb_calls;
  pthread_mutex_unlock(&g_cb_mu);
  return n;
}

static void test_task_handles(void) {
  Loaded l;
  hbDNNTaskHandle_t task = NULL, stale;
  hbDNNTensor *outp;
  hbDNNInferCtrlParam p = default_param();
  int local = 0, i;
  void *foreign = &local;
  int32_t est = -1;
  load_model(&l, "tiny_cnn.bin", "tiny_cnn");

  EXPECT_RC(hbDNNWaitTaskDone(NULL, 0), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_RC(hbDNNWaitTaskDone(foreign, 0), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_RC(hbDNNWaitTaskDone(l.model, 1000), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_RC(hbDNNReleaseTask(NULL), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_RC(hbDNNReleaseTask(foreign), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_RC(hbDNNReleaseTask(l.pack), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_RC(hbDNNSetTaskDoneCb(NULL, count_cb, NULL), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_RC(hbDNNSetTaskDoneCb(foreign, count_cb, NULL), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_RC(hbDNNGetTaskEstimateTime(&est, NULL), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_RC(hbDNNGetTaskEstimateTime(&est, foreign), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_RC(hbDNNGetTaskEstimateStartTime(NULL, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetTaskEstimateStartTime(&est, NULL), HB_DNN_INVALID_ARGUMENT);
  p.bpuCoreId = -1;
  EXPECT_RC(hbDNNGetTaskEstimateStartTime(&est, &p), HB_DNN_INVALID_ARGUMENT);
  /* The core mask rule of hbDNNInfer: bernoulli2 has cores 0 and 1. */
  p.bpuCoreId = 4;
  EXPECT_RC(hbDNNGetTaskEstimateStartTime(&est, &p), HB_DNN_INVALID_ARGUMENT);
  p.bpuCoreId = INT32_MAX;
  EXPECT_RC(hbDNNGetTaskEstimateStartTime(&est, &p), HB_DNN_INVALID_ARGUMENT);
  p.bpuCoreId = HB_BPU_CORE_0 | HB_BPU_CORE_1;
  EXPECT_RC(hbDNNGetTaskEstimateStartTime(&est, &p), 0);
  p = default_param();
  EXPECT_RC(hbDNNGetTaskEstimateStartTime(&est, &p), 0);
  CHECK(est >= 0);

  /* A finished task: positive timeouts return 0 at once; callbacks
   * registered afterwards run at once, exactly once. */
  outp = l.out;
  REQUIRE(hbDNNInfer(&task, &outp, l.in, l.model, &p) == 0);
  EXPECT_RC(hbDNNGetTaskEstimateTime(NULL, task), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetTaskEstimateTime(&est, task), 0);
  CHECK(est >= 0);
  EXPECT_RC(hbDNNSetTaskDoneCb(task, NULL, NULL), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNWaitTaskDone(task, 0), 0);
  EXPECT_RC(hbDNNWaitTaskDone(task, 1), 0);
  EXPECT_RC(hbDNNWaitTaskDone(task, 1000), 0);
  EXPECT_RC(hbDNNWaitTaskDone(task, -1), 0);
  EXPECT_RC(hbDNNWaitTaskDone(task, INT32_MAX), 0);
  EXPECT_RC(hbDNNWaitTaskDone(task, INT32_MIN), 0);
  {
    int mine = 0;
    const int before = cb_calls();
    EXPECT_RC(hbDNNSetTaskDoneCb(task, count_cb, &mine), 0);
    CHECK(cb_calls() == before + 1 && mine == 1 && g_cb_status == 0);
    EXPECT_RC(hbDNNSetTaskDoneCb(task, count_cb, &mine), 0); /* already reported */
    CHECK(mine == 1);
  }
  EXPECT_RC(hbDNNReleaseTask(task), 0);
  /* Stale: the released handle is invalid everywhere. */
  stale = task;
  EXPECT_RC(hbDNNReleaseTask(stale), HB_DNN_INVALID_TASK_HANDLE); /* double release */
  EXPECT_RC(hbDNNWaitTaskDone(stale, 0), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_RC(hbDNNWaitTaskDone(stale, 10), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_RC(hbDNNSetTaskDoneCb(stale, count_cb, NULL), HB_DNN_INVALID_TASK_HANDLE);
  EXPECT_RC(hbDNNGetTaskEstimateTime(&est, stale), HB_DNN_INVALID_TASK_HANDLE);
  task = stale;
  outp = l.out;
  EXPECT_RC(hbDNNInfer(&task, &outp, l.in, l.model, &p), HB_DNN_INVALID_TASK_HANDLE);
  task = NULL;

  /* A callback that releases its own task. */
  for (i = 0; i < 20; ++i) {
    const int before = cb_calls();
    int spins = 0;
    task = NULL;
    outp = l.out;
    p.more = 1; /* keep it open until the callback is set */
    REQUIRE(hbDNNInfer(&task, &outp, l.in, l.model, &p) == 0);
    EXPECT_RC(hbDNNSetTaskDoneCb(task, releasing_cb, NULL), 0);
    p.more = 0;
    EXPECT_RC(hbDNNInfer(&task, &outp, l.in, l.model, &p), 0);
    while (cb_calls() == before && spins++ < 10000) sleep_ms(1);
    CHECK(cb_calls() == before + 1);
    CHECK(g_cb_release_rc == 0 && g_cb_status == 0);
    EXPECT_RC(hbDNNReleaseTask(task), HB_DNN_INVALID_TASK_HANDLE);
  }

  /* An open chain (more = 1) cannot be waited on; releasing it is fine. */
  task = NULL;
  outp = l.out;
  p.more = 1;
  REQUIRE(hbDNNInfer(&task, &outp, l.in, l.model, &p) == 0);
  EXPECT_RC(hbDNNWaitTaskDone(task, 0), HB_DNN_API_USE_ERROR);
  EXPECT_RC(hbDNNWaitTaskDone(task, 10), HB_DNN_API_USE_ERROR);
  EXPECT_RC(hbDNNReleaseTask(task), 0);
  /* Appending to a closed task. */
  task = NULL;
  p.more = 0;
  REQUIRE(hbDNNInfer(&task, &outp, l.in, l.model, &p) == 0);
  EXPECT_RC(hbDNNInfer(&task, &outp, l.in, l.model, &p), HB_DNN_API_USE_ERROR);
  EXPECT_RC(hbDNNWaitTaskDone(task, 0), 0);
  EXPECT_RC(hbDNNInfer(&task, &outp, l.in, l.model, &p), HB_DNN_API_USE_ERROR);
  EXPECT_RC(hbDNNReleaseTask(task), 0);
  /* Appending a run with bad tensors leaves the chain open and usable. */
  task = NULL;
  p.more = 1;
  REQUIRE(hbDNNInfer(&task, &outp, l.in, l.model, &p) == 0);
  {
    hbDNNTensor bad = l.in[0];
    bad.sysMem[0].memSize = 1;
    p.more = 0;
    EXPECT_RC(hbDNNInfer(&task, &outp, &bad, l.model, &p), HB_DNN_INVALID_ARGUMENT);
    EXPECT_RC(hbDNNInfer(&task, &outp, l.in, l.model, &p), 0);
    EXPECT_RC(hbDNNWaitTaskDone(task, 0), 0);
    EXPECT_RC(hbDNNReleaseTask(task), 0);
  }
  unload_model(&l);
}

/* ---- limits: 32 live tasks, 255 chained runs ---------------------------- */

static void test_limits(void) {
  Loaded l;
  hbDNNTaskHandle_t tasks[33];
  hbDNNTensor outs[33];
  hbDNNTensor *outp;
  hbDNNInferCtrlParam p = default_param();
  int i;
  load_model(&l, "tiny_cnn.bin", "tiny_cnn");
  for (i = 0; i < 33; ++i) {
    outs[i] = l.out[0];
    REQUIRE(hbSysAllocCachedMem(&outs[i].sysMem[0], 256) == 0);
    tasks[i] = NULL;
  }
  /* 32 live (finished but not released) tasks; the 33rd is refused. */
  for (i = 0; i < 32; ++i) {
    outp = &outs[i];
    EXPECT_RC(hbDNNInfer(&tasks[i], &outp, l.in, l.model, &p), 0);
  }
  for (i = 0; i < 32; ++i) EXPECT_RC(hbDNNWaitTaskDone(tasks[i], 0), 0);
  outp = &outs[32];
  EXPECT_RC(hbDNNInfer(&tasks[32], &outp, l.in, l.model, &p), HB_DNN_TASK_NUM_EXCEED_LIMIT);
  CHECK(tasks[32] == NULL);
  EXPECT_RC(hbDNNRelease(l.pack), HB_DNN_MODEL_IS_RUNNING);
  /* Releasing one admits one. */
  EXPECT_RC(hbDNNReleaseTask(tasks[0]), 0);
  EXPECT_RC(hbDNNInfer(&tasks[32], &outp, l.in, l.model, &p), 0);
  EXPECT_RC(hbDNNWaitTaskDone(tasks[32], 0), 0);
  for (i = 1; i < 33; ++i) EXPECT_RC(hbDNNReleaseTask(tasks[i]), 0);

  /* 255 chained runs are one task; the 256th is refused. */
  tasks[0] = NULL;
  outp = &outs[0];
  p.more = 1;
  for (i = 0; i < 255; ++i) EXPECT_RC(hbDNNInfer(&tasks[0], &outp, l.in, l.model, &p), 0);
  EXPECT_RC(hbDNNInfer(&tasks[0], &outp, l.in, l.model, &p), HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT);
  p.more = 0;
  EXPECT_RC(hbDNNInfer(&tasks[0], &outp, l.in, l.model, &p), HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT);
  EXPECT_RC(hbDNNReleaseTask(tasks[0]), 0);
  /* A full chain of 255 runs completes. */
  tasks[0] = NULL;
  for (i = 0; i < 255; ++i) {
    p.more = i < 254;
    EXPECT_RC(hbDNNInfer(&tasks[0], &outp, l.in, l.model, &p), 0);
  }
  EXPECT_RC(hbDNNWaitTaskDone(tasks[0], 0), 0);
  EXPECT_RC(hbDNNReleaseTask(tasks[0]), 0);
  for (i = 0; i < 33; ++i) EXPECT_RC(hbSysFreeMem(&outs[i].sysMem[0]), 0);
  unload_model(&l);
}

/* ---- timeouts and releasing running tasks ------------------------------- */

static void test_timeout_and_release_running(void) {
  Loaded l, t;
  hbDNNTaskHandle_t task = NULL;
  hbDNNTensor *outp;
  hbDNNInferCtrlParam p = default_param();
  int i;
  /* A chain of 16 runs of MobileNetV1 224x224 takes far longer than 1 ms on
   * the simulator (one run about 1-2 ms now that loading packs the weights). */
  load_model(&l, "mobilenetv1_224x224_nv12.bin", "mobilenetv1_224x224_nv12");
  outp = l.out;
  for (i = 0; i < 16; ++i) {
    p.more = i < 15;
    REQUIRE(hbDNNInfer(&task, &outp, l.in, l.model, &p) == 0);
  }
  p.more = 0;
  EXPECT_RC(hbDNNWaitTaskDone(task, 1), HB_DNN_TIMEOUT);
  EXPECT_RC(hbDNNWaitTaskDone(task, 0), 0); /* the task kept running */
  EXPECT_RC(hbDNNWaitTaskDone(task, 1), 0);
  EXPECT_RC(hbDNNReleaseTask(task), 0);

  /* Released while running, then the pack released at once: the task stops
   * and nothing touches the freed model (ASan). */
  for (i = 0; i < 3; ++i) {
    task = NULL;
    REQUIRE(hbDNNInfer(&task, &outp, l.in, l.model, &p) == 0);
    sleep_ms(i * 5);
    EXPECT_RC(hbDNNReleaseTask(task), 0);
  }
  unload_model(&l);

  /* The same with a small model, many times, with buffers freed right away. */
  for (i = 0; i < 50; ++i) {
    load_model(&t, "tiny_cnn.bin", "tiny_cnn");
    task = NULL;
    outp = t.out;
    p.priority = i % 256;
    REQUIRE(hbDNNInfer(&task, &outp, t.in, t.model, &p) == 0);
    if (i % 2) hbDNNSetTaskDoneCb(task, count_cb, NULL);
    EXPECT_RC(hbDNNReleaseTask(task), 0);
    unload_model(&t);
  }
}

/* ---- hb_sys.h ----------------------------------------------------------- */

static void test_sys_memory(void) {
  hbSysMem m, copy, slice, foreign_mem;
  char local[64];
  char buf[128];
  memset(&m, 0, sizeof(m));
  memset(buf, 1, sizeof(buf));

  EXPECT_RC(hbSysAllocMem(NULL, 16), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysAllocCachedMem(NULL, 16), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysAllocMem(&m, 0), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysAllocCachedMem(&m, 0), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysAllocMem(&m, 100), 0);
  CHECK(m.virAddr != NULL && m.phyAddr != 0 && m.memSize == 100);
  CHECK(((uintptr_t)m.virAddr % 64) == 0);

  /* hbSysFlushMem */
  EXPECT_RC(hbSysFlushMem(NULL, HB_SYS_MEM_CACHE_CLEAN), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysFlushMem(&m, 0), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysFlushMem(&m, 3), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysFlushMem(&m, -1), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysFlushMem(&m, HB_SYS_MEM_CACHE_CLEAN | HB_SYS_MEM_CACHE_INVALIDATE), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysFlushMem(&m, HB_SYS_MEM_CACHE_CLEAN), 0);
  EXPECT_RC(hbSysFlushMem(&m, HB_SYS_MEM_CACHE_INVALIDATE), 0);
  foreign_mem.virAddr = local;
  foreign_mem.phyAddr = (uint64_t)(uintptr_t)local;
  foreign_mem.memSize = sizeof(local);
  EXPECT_RC(hbSysFlushMem(&foreign_mem, HB_SYS_MEM_CACHE_CLEAN), HB_SYS_INVALID_ARGUMENT);
  copy = m;
  copy.virAddr = NULL;
  EXPECT_RC(hbSysFlushMem(&copy, HB_SYS_MEM_CACHE_CLEAN), HB_SYS_INVALID_ARGUMENT);
  /* A slice of an allocation (apps offset virAddr/phyAddr) is accepted ... */
  slice = m;
  slice.virAddr = (char *)m.virAddr + 16;
  slice.phyAddr += 16;
  slice.memSize = 84;
  EXPECT_RC(hbSysFlushMem(&slice, HB_SYS_MEM_CACHE_CLEAN), 0);
  /* ... one reaching past it is not. */
  slice.memSize = 85;
  EXPECT_RC(hbSysFlushMem(&slice, HB_SYS_MEM_CACHE_CLEAN), HB_SYS_INVALID_ARGUMENT);
  copy = m;
  copy.memSize = 101;
  EXPECT_RC(hbSysFlushMem(&copy, HB_SYS_MEM_CACHE_CLEAN), HB_SYS_INVALID_ARGUMENT);
  copy.memSize = UINT32_MAX;
  EXPECT_RC(hbSysFlushMem(&copy, HB_SYS_MEM_CACHE_INVALIDATE), HB_SYS_INVALID_ARGUMENT);

  /* hbSysWriteMem / hbSysReadMem */
  EXPECT_RC(hbSysWriteMem(NULL, buf, 10), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysWriteMem(&m, NULL, 10), HB_SYS_INVALID_ARGUMENT);
  copy = m;
  copy.virAddr = NULL;
  EXPECT_RC(hbSysWriteMem(&copy, buf, 10), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysWriteMem(&m, buf, 101), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysWriteMem(&m, buf, UINT32_MAX), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysWriteMem(&m, buf, 100), 0);
  EXPECT_RC(hbSysWriteMem(&m, buf, 0), 0);
  EXPECT_RC(hbSysReadMem(NULL, &m, 10), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysReadMem(buf, NULL, 10), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysReadMem(buf, &copy, 10), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysReadMem(buf, &m, 101), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysReadMem(buf, &m, UINT32_MAX), HB_SYS_INVALID_ARGUMENT);
  memset(buf, 0, sizeof(buf));
  EXPECT_RC(hbSysReadMem(buf, &m, 100), 0);
  CHECK(buf[0] == 1 && buf[99] == 1);
  EXPECT_RC(hbSysReadMem(buf, &m, 0), 0);

  /* hbSysFreeMem */
  EXPECT_RC(hbSysFreeMem(NULL), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysFreeMem(&copy), HB_SYS_INVALID_ARGUMENT); /* virAddr NULL */
  EXPECT_RC(hbSysFreeMem(&foreign_mem), HB_SYS_INVALID_ARGUMENT);
  slice = m;
  slice.virAddr = (char *)m.virAddr + 1;
  EXPECT_RC(hbSysFreeMem(&slice), HB_SYS_INVALID_ARGUMENT); /* not the start of an allocation */
  copy = m;
  EXPECT_RC(hbSysFreeMem(&m), 0);
  CHECK(m.virAddr == NULL && m.memSize == 0);
  EXPECT_RC(hbSysFreeMem(&copy), HB_SYS_INVALID_ARGUMENT); /* double free */
  EXPECT_RC(hbSysFreeMem(&m), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysFlushMem(&copy, HB_SYS_MEM_CACHE_CLEAN), HB_SYS_INVALID_ARGUMENT); /* freed */

  /* Cached memory behaves the same. */
  EXPECT_RC(hbSysAllocCachedMem(&m, 4096 * 3 + 1), 0);
  CHECK(m.memSize == 4096 * 3 + 1);
  EXPECT_RC(hbSysFlushMem(&m, HB_SYS_MEM_CACHE_CLEAN), 0);
  EXPECT_RC(hbSysFreeMem(&m), 0);

  /* Registering external memory is not supported by the simulator. */
  EXPECT_RC(hbSysRegisterMem(NULL), HB_SYS_INVALID_ARGUMENT);
  copy = foreign_mem;
  copy.memSize = 0;
  EXPECT_RC(hbSysRegisterMem(&copy), HB_SYS_INVALID_ARGUMENT);
  copy = foreign_mem;
  copy.virAddr = NULL;
  EXPECT_RC(hbSysRegisterMem(&copy), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysRegisterMem(&foreign_mem), HB_SYS_REGISTER_MEM_FAILED);
  EXPECT_RC(hbSysUnregisterMem(NULL), HB_SYS_INVALID_ARGUMENT);
  EXPECT_RC(hbSysUnregisterMem(&foreign_mem), HB_SYS_INVALID_ARGUMENT);
}

/* ---- hb_dnn_ext.h helpers ----------------------------------------------- */

static hbDNNTensorShape shape4(int32_t a, int32_t b, int32_t c, int32_t d) {
  hbDNNTensorShape s;
  memset(&s, 0, sizeof(s));
  s.numDimensions = 4;
  s.dimensionSize[0] = a;
  s.dimensionSize[1] = b;
  s.dimensionSize[2] = c;
  s.dimensionSize[3] = d;
  return s;
}

static void test_ext_helpers(void) {
  float fout[64];
  float scales[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  int8_t q[64];
  uint8_t a[256], b[256];
  const char *name = NULL;
  hbDNNTensorShape s = shape4(1, 2, 2, 4), bad;
  uint32_t dims[4] = {1, 2, 2, 4};
  int32_t strides[4] = {64, 32, 16, 1};
  hbDNNDimension coord, size;
  size_t i;
  memset(q, 1, sizeof(q));
  memset(a, 2, sizeof(a));

  /* hbDNNUnquantizeByScale */
  EXPECT_RC(hbDNNUnquantizeByScale(NULL, HB_DNN_TENSOR_TYPE_S8, s, scales, q), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNUnquantizeByScale(fout, HB_DNN_TENSOR_TYPE_S8, s, NULL, q), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNUnquantizeByScale(fout, HB_DNN_TENSOR_TYPE_S8, s, scales, NULL), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNUnquantizeByScale(fout, HB_DNN_TENSOR_TYPE_F32, s, scales, q), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNUnquantizeByScale(fout, HB_DNN_TENSOR_TYPE_U8, s, scales, q), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNUnquantizeByScale(fout, -1, s, scales, q), HB_DNN_INVALID_ARGUMENT);
  bad = s;
  bad.numDimensions = 0;
  EXPECT_RC(hbDNNUnquantizeByScale(fout, HB_DNN_TENSOR_TYPE_S8, bad, scales, q), HB_DNN_INVALID_ARGUMENT);
  bad.numDimensions = 9;
  EXPECT_RC(hbDNNUnquantizeByScale(fout, HB_DNN_TENSOR_TYPE_S8, bad, scales, q), HB_DNN_INVALID_ARGUMENT);
  bad = s;
  bad.dimensionSize[2] = 0;
  EXPECT_RC(hbDNNUnquantizeByScale(fout, HB_DNN_TENSOR_TYPE_S8, bad, scales, q), HB_DNN_INVALID_ARGUMENT);
  bad.dimensionSize[2] = -2;
  EXPECT_RC(hbDNNUnquantizeByScale(fout, HB_DNN_TENSOR_TYPE_S8, bad, scales, q), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNUnquantizeByScale(fout, HB_DNN_TENSOR_TYPE_S8, s, scales, q), 0);
  CHECK(fout[0] == 1.0f && fout[3] == 4.0f && fout[15] == 4.0f);

  /* hbDNNGetLayoutName */
  EXPECT_RC(hbDNNGetLayoutName(NULL, HB_DNN_LAYOUT_NHWC), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetLayoutName(&name, 7), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetLayoutName(&name, -1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNGetLayoutName(&name, HB_DNN_LAYOUT_NCHW), 0);
  CHECK(name != NULL && strcmp(name, "NCHW") == 0);

  /* hbDNNConvertLayout / Roi */
  EXPECT_RC(hbDNNConvertLayout(NULL, HB_DNN_LAYOUT_NCHW, a, HB_DNN_LAYOUT_NHWC, HB_DNN_TENSOR_TYPE_S8, s, false),
            HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNConvertLayout(b, HB_DNN_LAYOUT_NCHW, NULL, HB_DNN_LAYOUT_NHWC, HB_DNN_TENSOR_TYPE_S8, s, false),
            HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNConvertLayout(b, HB_DNN_LAYOUT_NONE, a, HB_DNN_LAYOUT_NHWC, HB_DNN_TENSOR_TYPE_S8, s, false),
            HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNConvertLayout(b, HB_DNN_LAYOUT_NCHW, a, HB_DNN_LAYOUT_NHCW_NATIVE, HB_DNN_TENSOR_TYPE_S8, s,
                               false),
            HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNConvertLayout(b, HB_DNN_LAYOUT_NCHW, a, HB_DNN_LAYOUT_NHWC, -1, s, false),
            HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNConvertLayout(b, HB_DNN_LAYOUT_NCHW, a, HB_DNN_LAYOUT_NHWC, HB_DNN_TENSOR_TYPE_MAX, s, false),
            HB_DNN_INVALID_ARGUMENT);
  bad = s;
  bad.numDimensions = 3;
  EXPECT_RC(hbDNNConvertLayout(b, HB_DNN_LAYOUT_NCHW, a, HB_DNN_LAYOUT_NHWC, HB_DNN_TENSOR_TYPE_S8, bad, false),
            HB_DNN_INVALID_ARGUMENT);
  bad = s;
  bad.dimensionSize[1] = -1;
  EXPECT_RC(hbDNNConvertLayout(b, HB_DNN_LAYOUT_NCHW, a, HB_DNN_LAYOUT_NHWC, HB_DNN_TENSOR_TYPE_S8, bad, false),
            HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNConvertLayout(b, HB_DNN_LAYOUT_NCHW, a, HB_DNN_LAYOUT_NHWC, HB_DNN_TENSOR_TYPE_F32, s, true), 0);
  coord = shape4(0, 0, 0, 0);
  size = shape4(1, 1, 1, 4);
  EXPECT_RC(hbDNNConvertLayoutRoi(b, HB_DNN_LAYOUT_NCHW, a, HB_DNN_LAYOUT_NHWC, HB_DNN_TENSOR_TYPE_S8, s, false,
                                  coord, size),
            0);
  size.numDimensions = 3;
  EXPECT_RC(hbDNNConvertLayoutRoi(b, HB_DNN_LAYOUT_NCHW, a, HB_DNN_LAYOUT_NHWC, HB_DNN_TENSOR_TYPE_S8, s, false,
                                  coord, size),
            HB_DNN_INVALID_ARGUMENT);
  {
    /* Regions outside the tensor (NHWC order: n, h, w, c of (1,2,2,4)). */
    const int32_t cases[][8] = {
        {0, 0, 0, 0, 1, 1, 1, 5}, {0, 0, 0, 1, 1, 1, 1, 4}, {0, 2, 0, 0, 1, 1, 1, 1},
        {-1, 0, 0, 0, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 1, 1, 1}, {0, 0, 0, 0, 1, -1, 1, 1},
        {0, 0, 0, 0, 1, 1, INT32_MAX, 1}, {0, INT32_MAX, 0, 0, 1, 1, 1, 1}};
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
      coord = shape4(cases[i][0], cases[i][1], cases[i][2], cases[i][3]);
      size = shape4(cases[i][4], cases[i][5], cases[i][6], cases[i][7]);
      EXPECT_RC(hbDNNConvertLayoutRoi(b, HB_DNN_LAYOUT_NCHW, a, HB_DNN_LAYOUT_NHWC, HB_DNN_TENSOR_TYPE_S8, s,
                                      false, coord, size),
                HB_DNN_INVALID_ARGUMENT);
    }
  }
  EXPECT_RC(hbDNNConvertLayoutToNative1HW1(b, a, HB_DNN_LAYOUT_NHWC, HB_DNN_TENSOR_TYPE_S8, s, false, 0, 0),
            HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNConvertLayoutToNative111C(b, a, HB_DNN_LAYOUT_NHWC, HB_DNN_TENSOR_TYPE_S8, s, false, 0, 0, 0),
            HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNConvertLayoutToNative1111(b, a, HB_DNN_LAYOUT_NHWC, HB_DNN_TENSOR_TYPE_S8, s, false, coord),
            HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNConvertLayoutToNative1HW1(NULL, NULL, 0, 0, s, false, 0, 0), HB_DNN_INVALID_ARGUMENT);

  /* hbDNNAdd/RemovePaddingWithStride */
  EXPECT_RC(hbDNNAddPaddingWithStride(NULL, a, 4, dims, strides, 1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNAddPaddingWithStride(b, NULL, 4, dims, strides, 1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNAddPaddingWithStride(b, a, 4, NULL, strides, 1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNAddPaddingWithStride(b, a, 4, dims, NULL, 1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNAddPaddingWithStride(b, a, 0, dims, strides, 1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNAddPaddingWithStride(b, a, 9, dims, strides, 1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNAddPaddingWithStride(b, a, 4, dims, strides, 0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNAddPaddingWithStride(b, a, 4, dims, strides, 9), HB_DNN_INVALID_ARGUMENT);
  dims[2] = 0;
  EXPECT_RC(hbDNNAddPaddingWithStride(b, a, 4, dims, strides, 1), HB_DNN_INVALID_ARGUMENT);
  dims[2] = 2;
  strides[1] = -32;
  EXPECT_RC(hbDNNRemovePaddingWithStride(b, a, 4, dims, strides, 1), HB_DNN_INVALID_ARGUMENT);
  strides[1] = 32;
  EXPECT_RC(hbDNNAddPaddingWithStride(b, a, 4, dims, strides, 1), 0);
  EXPECT_RC(hbDNNRemovePaddingWithStride(b, a, 4, dims, strides, 1), 0);

  /* hbDNNAdd/RemovePadding */
  EXPECT_RC(hbDNNAddPadding(NULL, shape4(1, 2, 2, 8), a, s, HB_DNN_TENSOR_TYPE_S8), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNAddPadding(b, shape4(1, 2, 2, 8), NULL, s, HB_DNN_TENSOR_TYPE_S8), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNAddPadding(b, shape4(1, 2, 2, 8), a, s, -1), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNAddPadding(b, shape4(1, 2, 2, 2), a, s, HB_DNN_TENSOR_TYPE_S8), HB_DNN_INVALID_ARGUMENT);
  bad = s;
  bad.numDimensions = 2;
  EXPECT_RC(hbDNNAddPadding(b, shape4(1, 2, 2, 8), a, bad, HB_DNN_TENSOR_TYPE_S8), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNAddPadding(b, shape4(1, 2, 0, 8), a, s, HB_DNN_TENSOR_TYPE_S8), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNRemovePadding(b, shape4(1, 2, 2, 8), a, s, HB_DNN_TENSOR_TYPE_S8), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNAddPadding(b, shape4(1, 2, 2, 8), a, s, HB_DNN_TENSOR_TYPE_S8), 0);
  EXPECT_RC(hbDNNRemovePadding(a, s, b, shape4(1, 2, 2, 8), HB_DNN_TENSOR_TYPE_S8), 0);

  /* hbDNNConvertEndianness */
  EXPECT_RC(hbDNNConvertEndianness(NULL, a, 8), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNConvertEndianness(b, NULL, 8), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNConvertEndianness(b, a, 7), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNConvertEndianness(a + 4, a, 16), HB_DNN_INVALID_ARGUMENT); /* partial overlap */
  EXPECT_RC(hbDNNConvertEndianness(a, a + 4, 16), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNConvertEndianness(a, a, 16), 0); /* in place */
  EXPECT_RC(hbDNNConvertEndianness(b, a, 0), 0);
  EXPECT_RC(hbDNNConvertEndianness(b, a, 256), 0);
}

/* ---- ROI inference and the deprecated resize ---------------------------- */

static void test_roi_and_resize(void) {
  Loaded l;
  hbDNNTaskHandle_t task = NULL;
  hbDNNTensor *outp;
  hbDNNRoi roi = {0, 0, 15, 15};
  hbDNNInferCtrlParam p = default_param();
  hbDNNResizeCtrlParam rp;
  int local = 0;
  load_model(&l, "tiny_cnn.bin", "tiny_cnn");
  outp = l.out;
  EXPECT_RC(hbDNNRoiInfer(NULL, &outp, l.in, &roi, 1, l.model, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNRoiInfer(&task, NULL, l.in, &roi, 1, l.model, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNRoiInfer(&task, &outp, NULL, &roi, 1, l.model, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNRoiInfer(&task, &outp, l.in, NULL, 1, l.model, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNRoiInfer(&task, &outp, l.in, &roi, 1, l.model, NULL), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNRoiInfer(&task, &outp, l.in, &roi, 1, NULL, &p), HB_DNN_INVALID_DNN_HANDLE);
  EXPECT_RC(hbDNNRoiInfer(&task, &outp, l.in, &roi, 1, &local, &p), HB_DNN_INVALID_DNN_HANDLE);
  /* tiny_cnn has no resizer input. */
  EXPECT_RC(hbDNNRoiInfer(&task, &outp, l.in, &roi, 1, l.model, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNRoiInfer(&task, &outp, l.in, &roi, 0, l.model, &p), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNRoiInfer(&task, &outp, l.in, &roi, -1, l.model, &p), HB_DNN_INVALID_ARGUMENT);
  CHECK(task == NULL);
  HB_DNN_INITIALIZE_RESIZE_CTRL_PARAM(&rp);
  EXPECT_RC(hbDNNResize(NULL, l.out, l.in, NULL, &rp), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNResize(&task, NULL, l.in, NULL, &rp), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNResize(&task, l.out, NULL, NULL, &rp), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(hbDNNResize(&task, l.out, l.in, NULL, NULL), HB_DNN_INVALID_ARGUMENT);
  /* Deprecated and not provided: an API use error. */
  EXPECT_RC(hbDNNResize(&task, l.out, l.in, &roi, &rp), HB_DNN_API_USE_ERROR);
  CHECK(task == NULL);
  unload_model(&l);
}

/* ---- openbpu.h profiler ------------------------------------------------- */

static void test_profiler_arguments(void) {
  EXPECT_RC(obpuProfilerStart(NULL), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(obpuProfilerStart(""), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(obpuProfilerStop(), HB_DNN_API_USE_ERROR);
  EXPECT_RC(obpuProfilerSetRunningCondition(NULL, 0, 1, 1, 1.0, 1.0, 1.0), HB_DNN_INVALID_ARGUMENT);
  EXPECT_RC(obpuProfilerSetRunningCondition("tiny_cnn", 0, 1, 1, 1.0, 1.0, 1.0), HB_DNN_API_USE_ERROR);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: api_errors <testdata dir>\n");
    return 2;
  }
  snprintf(g_dir, sizeof(g_dir), "%s", argv[1]);
  /* Quiet: thousands of calls fail on purpose. The platform follows the
   * models (bernoulli2, two cores). */
  setenv("HB_DNN_LOG_LEVEL", "0", 1);
  unsetenv("HB_DNN_SIM_PLATFORM");
  unsetenv("HB_DNN_PROFILER_LOG_PATH");

  test_version_and_error_desc();
  test_profiler_arguments();
  test_sys_memory();
  test_ext_helpers();
  test_initialize_arguments();
  test_handles();
  test_infer_arguments();
  test_image_inputs();
  test_task_handles();
  test_limits();
  test_timeout_and_release_running();
  test_roi_and_resize();

  if (g_failures != 0) {
    fprintf(stderr, "api_errors: %d of %d checks failed\n", g_failures, g_checks);
    return 1;
  }
  printf("api_errors: all %d checks passed\n", g_checks);
  return 0;
}
