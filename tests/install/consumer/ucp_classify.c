/* SPDX-License-Identifier: Apache-2.0
 * ucp_classify <model.hbm> <out_dir> <input>...: an application of the UCP
 * generation, written against the specification's headers
 * (hobot/dnn/hb_dnn.h, hobot/hb_ucp.h) only, in the common subset of C99
 * and C++: tests/install/ucp_c99.py builds it unchanged as both
 * (-std=c99 / -std=c++17, -pedantic -Werror). Runs each input file through
 * the first model of the file with hbDNNInferV2 + hbUCPSubmitTask and
 * writes the valid values of every output as float32 to
 * <out_dir>/<k>_<output>.f32 (k: the input file's position; integer
 * outputs dequantized by their SCALE, per axis). The model takes either one
 * float32 featuremap (the input file: its values, dense) or NV12 as the two
 * inputs Y (1,H,W,1) and UV (1,H/2,W/2,2) (the input file: H*W Y bytes then
 * H/2 rows of W interleaved UV bytes). Dynamic (-1) strides are filled as
 * the specification's samples do (rows 32-byte aligned); tensors are read
 * and written through their strides. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hobot/dnn/hb_dnn.h"
#include "hobot/dnn/hb_dnn_status.h"
#include "hobot/hb_ucp.h"
#include "hobot/hb_ucp_status.h"
#include "hobot/hb_ucp_sys.h"
#include "ucp_check.h"

#define ALIGN_32(v) (((v) + 31) & ~(int64_t)31)

static int element_size(int32_t type) {
  switch (type) {
    case HB_DNN_TENSOR_TYPE_S8:
    case HB_DNN_TENSOR_TYPE_U8: return 1;
    case HB_DNN_TENSOR_TYPE_S16:
    case HB_DNN_TENSOR_TYPE_U16: return 2;
    case HB_DNN_TENSOR_TYPE_F32:
    case HB_DNN_TENSOR_TYPE_S32:
    case HB_DNN_TENSOR_TYPE_U32: return 4;
    default: return 0;
  }
}

static double load_value(const uint8_t *p, int32_t type) {
  int8_t s8;
  int16_t s16;
  uint16_t u16;
  int32_t s32;
  uint32_t u32;
  float f;
  switch (type) {
    case HB_DNN_TENSOR_TYPE_S8: memcpy(&s8, p, 1); return s8;
    case HB_DNN_TENSOR_TYPE_U8: return *p;
    case HB_DNN_TENSOR_TYPE_S16: memcpy(&s16, p, 2); return s16;
    case HB_DNN_TENSOR_TYPE_U16: memcpy(&u16, p, 2); return u16;
    case HB_DNN_TENSOR_TYPE_S32: memcpy(&s32, p, 4); return s32;
    case HB_DNN_TENSOR_TYPE_U32: memcpy(&u32, p, 4); return u32;
    default: memcpy(&f, p, 4); return f;
  }
}

static long element_count(const hbDNNTensorShape *s) {
  long n = 1;
  int i;
  for (i = 0; i < s->numDimensions; ++i) n *= s->dimensionSize[i];
  return n;
}

/* Byte offset of the element with row-major position `flat` of the valid
 * shape, through the strides; *index receives its indices. */
static int64_t offset_of(const hbDNNTensorProperties *p, long flat, int32_t *index) {
  int64_t off = 0;
  int i;
  for (i = p->validShape.numDimensions - 1; i >= 0; --i) {
    index[i] = (int32_t)(flat % p->validShape.dimensionSize[i]);
    flat /= p->validShape.dimensionSize[i];
    off += (int64_t)index[i] * p->stride[i];
  }
  return off;
}

/* Fills dynamic (-1) strides innermost first, each the next one's extent
 * rounded up to 32 bytes (HBUCP_API.md 3.5), and a dynamic alignedByteSize. */
static void fill_strides(hbDNNTensorProperties *p) {
  int64_t next = element_size(p->tensorType);
  int i;
  for (i = p->validShape.numDimensions - 1; i >= 0; --i) {
    if (p->stride[i] < 0) p->stride[i] = i == p->validShape.numDimensions - 1 ? next : ALIGN_32(next);
    next = p->stride[i] * p->validShape.dimensionSize[i];
  }
  if (p->alignedByteSize < 0) p->alignedByteSize = next;
}

/* Whether the inputs are the Y and UV planes of one NV12 image. */
static int is_nv12(const hbDNNTensor *in, int32_t count) {
  return count == 2 && in[0].properties.tensorType == HB_DNN_TENSOR_TYPE_U8 &&
         in[1].properties.tensorType == HB_DNN_TENSOR_TYPE_U8 && in[0].properties.validShape.numDimensions == 4 &&
         in[0].properties.validShape.dimensionSize[3] == 1 && in[1].properties.validShape.dimensionSize[3] == 2;
}

static long read_file(const char *path, void *buf, long bytes) {
  FILE *f = fopen(path, "rb");
  long got = 0;
  if (f != NULL) {
    got = (long)fread(buf, 1, (size_t)bytes, f);
    fclose(f);
  }
  if (got != bytes) fprintf(stderr, "%s: %ld bytes read, the input takes %ld\n", path, got, bytes);
  return got == bytes;
}

/* An NV12 file into the Y and UV planes (row by row, by their strides). */
static int read_nv12(const char *path, hbDNNTensor *in) {
  const long h = in[0].properties.validShape.dimensionSize[1], w = in[0].properties.validShape.dimensionSize[2];
  uint8_t *v = (uint8_t *)malloc((size_t)(h * w * 3 / 2));
  long r;
  if (v == NULL || !read_file(path, v, h * w * 3 / 2)) {
    free(v);
    return 1;
  }
  for (r = 0; r < h; ++r) memcpy((uint8_t *)in[0].sysMem.virAddr + r * in[0].properties.stride[1], v + r * w, (size_t)w);
  for (r = 0; r < h / 2; ++r)
    memcpy((uint8_t *)in[1].sysMem.virAddr + r * in[1].properties.stride[1], v + (h + r) * w, (size_t)w);
  free(v);
  return 0;
}

static int read_input(const char *path, hbDNNTensor *t) {
  const long n = element_count(&t->properties.validShape);
  float *v = (float *)malloc((size_t)n * sizeof(float));
  int32_t index[HB_DNN_TENSOR_MAX_DIMENSIONS];
  long i;
  if (v == NULL || !read_file(path, v, n * (long)sizeof(float))) {
    free(v);
    return 1;
  }
  for (i = 0; i < n; ++i)
    memcpy((uint8_t *)t->sysMem.virAddr + offset_of(&t->properties, i, index), &v[i], sizeof(float));
  free(v);
  return 0;
}

static int write_output(const char *path, const hbDNNTensor *t) {
  const hbDNNTensorProperties *p = &t->properties;
  const long n = element_count(&p->validShape);
  const int per_axis = p->quantiType == SCALE && p->scale.scaleLen > 1 && p->quantizeAxis >= 0;
  int32_t index[HB_DNN_TENSOR_MAX_DIMENSIONS];
  FILE *f = fopen(path, "wb");
  long i;
  if (f == NULL) {
    fprintf(stderr, "cannot write %s\n", path);
    return 1;
  }
  for (i = 0; i < n; ++i) {
    const uint8_t *e = (const uint8_t *)t->sysMem.virAddr + offset_of(p, i, index);
    double v = load_value(e, p->tensorType);
    float out;
    if (p->quantiType == SCALE) {
      const int c = per_axis ? index[p->quantizeAxis] : 0;
      const double zp = p->scale.zeroPointLen > 0 ? p->scale.zeroPointData[per_axis ? c : 0] : 0.0;
      v = (v - zp) * p->scale.scaleData[c];
    }
    out = (float)v;
    fwrite(&out, sizeof(out), 1, f);
  }
  return fclose(f) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  hbDNNPackedHandle_t pack = NULL;
  hbDNNHandle_t h = NULL;
  const char **names = NULL;
  const char *name = NULL;
  int32_t count = 0, inputs = 0, outputs = 0, k;
  hbDNNTensor in[2], out[8];
  int a, nv12;
  if (argc < 4) {
    fprintf(stderr, "usage: %s model.hbm out_dir input...\n", argv[0]);
    return 2;
  }
  CHECK(hbDNNInitializeFromFiles(&pack, (const char **)&argv[1], 1));
  CHECK(hbDNNGetModelNameList(&names, &count, pack));
  CHECK(hbDNNGetModelHandle(&h, pack, names[0]));
  CHECK(hbDNNGetInputCount(&inputs, h));
  CHECK(hbDNNGetOutputCount(&outputs, h));
  memset(in, 0, sizeof(in));
  for (k = 0; k < inputs && k < 2; ++k) CHECK(hbDNNGetInputTensorProperties(&in[k].properties, h, k));
  nv12 = is_nv12(in, inputs);
  if ((!nv12 && (inputs != 1 || in[0].properties.tensorType != HB_DNN_TENSOR_TYPE_F32)) || outputs > 8) {
    fprintf(stderr, "%s: neither one float32 input nor NV12 (Y, UV), or more than 8 outputs\n", names[0]);
    return 3;
  }
  for (k = 0; k < inputs; ++k) {
    fill_strides(&in[k].properties);
    CHECK(hbUCPMallocCached(&in[k].sysMem, (uint64_t)in[k].properties.alignedByteSize, 0));
  }
  memset(out, 0, sizeof(out));
  for (k = 0; k < outputs; ++k) {
    CHECK(hbDNNGetOutputTensorProperties(&out[k].properties, h, k));
    if (element_size(out[k].properties.tensorType) == 0) {
      fprintf(stderr, "output %d: data type %d not handled\n", (int)k, (int)out[k].properties.tensorType);
      return 3;
    }
    CHECK(hbUCPMallocCached(&out[k].sysMem, (uint64_t)out[k].properties.alignedByteSize, 0));
  }
  for (a = 3; a < argc; ++a) {
    hbUCPTaskHandle_t task = NULL;
    hbUCPSchedParam sched;
    if ((nv12 ? read_nv12(argv[a], in) : read_input(argv[a], &in[0])) != 0) return 4;
    for (k = 0; k < inputs; ++k) CHECK(hbUCPMemFlush(&in[k].sysMem, HB_SYS_MEM_CACHE_CLEAN));
    CHECK(hbDNNInferV2(&task, out, in, h));
    HB_UCP_INITIALIZE_SCHED_PARAM(&sched);
    CHECK(hbUCPSubmitTask(task, &sched));
    CHECK(hbUCPWaitTaskDone(task, 0));
    CHECK(hbUCPReleaseTask(task));
    for (k = 0; k < outputs; ++k) {
      char path[4096];
      CHECK(hbUCPMemFlush(&out[k].sysMem, HB_SYS_MEM_CACHE_INVALIDATE));
      CHECK(hbDNNGetOutputName(&name, h, k));
      snprintf(path, sizeof(path), "%s/%d_%s.f32", argv[2], a - 3, name);
      if (write_output(path, &out[k]) != 0) return 5;
    }
  }
  printf("ucp_classify: %s (%s input), %d input file(s) on %s (%s)\n", names[0], nv12 ? "NV12" : "featuremap",
         argc - 3, hbUCPGetSocName(), hbDNNGetVersion());
  for (k = 0; k < inputs; ++k) CHECK(hbUCPFree(&in[k].sysMem));
  for (k = 0; k < outputs; ++k) CHECK(hbUCPFree(&out[k].sysMem));
  CHECK(hbDNNRelease(pack));
  return 0;
}
