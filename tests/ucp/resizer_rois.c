/* SPDX-License-Identifier: Apache-2.0 */
/* A resizer model (hb_compile input_source resizer) through the public UCP
 * API, written as the OE roi_infer sample does: the whole NV12 frame in two
 * buffers (Y and UV, 32-byte aligned rows), one roi tensor per ROI, every ROI
 * a sub-task appended to one task, submitted once (tests/ucp/resizer_e2e.py).
 *
 *   resizer_rois run MODEL FRAME H W OUT_DIR l,t,r,b ...
 *       FRAME: H*W Y bytes then H/2 rows of W interleaved UV bytes. Writes
 *       OUT_DIR/<i>_<k>.f32: output k of ROI i as float32 (SCALE outputs
 *       dequantized), in the output's validShape order.
 *   resizer_rois bad MODEL FRAME H W l,t,r,b ...
 *       Every ROI alone must make hbDNNInferV2 return HB_UCP_INVALID_ARGUMENT
 *       (and leave no task); then a UV plane that is not half the frame and a
 *       roi buffer of 8 bytes must too. Prints one line per case.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hobot/dnn/hb_dnn.h"
#include "hobot/hb_ucp.h"
#include "hobot/hb_ucp_status.h"
#include "hobot/hb_ucp_sys.h"

#define ALIGN_32(v) (((v) + 31) & ~31)
#define MAX_OUT 8

static int check(int32_t rc, const char *what) {
  if (rc != 0) fprintf(stderr, "%s failed: %d (%s)\n", what, (int)rc, hbUCPGetErrorDesc(rc));
  return rc == 0;
}

typedef struct {
  hbDNNPackedHandle_t pack;
  hbDNNHandle_t dnn;
  int32_t nin, nout;
  hbUCPSysMem y, uv;
  int32_t h, w;
} Model;

/* The frame into two buffers with 32-byte aligned rows. */
static int load_frame(Model *m, const char *file) {
  int64_t ys = ALIGN_32(m->w), r;
  unsigned char *buf = (unsigned char *)malloc((size_t)m->h * m->w * 3 / 2);
  FILE *f = fopen(file, "rb");
  size_t n = f != NULL && buf != NULL ? fread(buf, 1, (size_t)m->h * m->w * 3 / 2, f) : 0;
  if (f != NULL) fclose(f);
  if (n != (size_t)m->h * m->w * 3 / 2) {
    fprintf(stderr, "cannot read %dx%d NV12 from %s\n", (int)m->w, (int)m->h, file);
    free(buf);
    return 0;
  }
  if (!check(hbUCPMallocCached(&m->y, (uint64_t)(ys * m->h), 0), "hbUCPMallocCached") ||
      !check(hbUCPMallocCached(&m->uv, (uint64_t)(ys * m->h / 2), 0), "hbUCPMallocCached")) {
    free(buf);
    return 0;
  }
  for (r = 0; r < m->h; ++r) memcpy((char *)m->y.virAddr + r * ys, buf + r * m->w, (size_t)m->w);
  for (r = 0; r < m->h / 2; ++r)
    memcpy((char *)m->uv.virAddr + r * ys, buf + (size_t)m->h * m->w + r * m->w, (size_t)m->w);
  free(buf);
  hbUCPMemFlush(&m->y, HB_SYS_MEM_CACHE_CLEAN);
  hbUCPMemFlush(&m->uv, HB_SYS_MEM_CACHE_CLEAN);
  return 1;
}

static int open_model(Model *m, const char *path) {
  const char **names = NULL;
  int32_t count = 0;
  return check(hbDNNInitializeFromFiles(&m->pack, &path, 1), "hbDNNInitializeFromFiles") &&
         check(hbDNNGetModelNameList(&names, &count, m->pack), "hbDNNGetModelNameList") &&
         check(hbDNNGetModelHandle(&m->dnn, m->pack, names[0]), "hbDNNGetModelHandle") &&
         check(hbDNNGetInputCount(&m->nin, m->dnn), "hbDNNGetInputCount") &&
         check(hbDNNGetOutputCount(&m->nout, m->dnn), "hbDNNGetOutputCount") && m->nout <= MAX_OUT;
}

/* Inputs of one ROI: Y and UV over the frame (sides and strides filled),
 * the roi tensor over `roi` (16 bytes, allocated here). */
static int prepare_inputs(Model *m, hbDNNTensor in[3], const int32_t roi[4], hbUCPSysMem *roi_mem) {
  int i;
  if (m->nin != 3) {
    fprintf(stderr, "model has %d inputs, a resizer model has 3 (Y, UV, roi)\n", (int)m->nin);
    return 0;
  }
  for (i = 0; i < 3; ++i)
    if (!check(hbDNNGetInputTensorProperties(&in[i].properties, m->dnn, i), "hbDNNGetInputTensorProperties"))
      return 0;
  for (i = 0; i < 2; ++i) {
    hbDNNTensorProperties *p = &in[i].properties;
    p->validShape.dimensionSize[1] = i == 0 ? m->h : m->h / 2;
    p->validShape.dimensionSize[2] = i == 0 ? m->w : m->w / 2;
    p->stride[1] = ALIGN_32(p->stride[2] * p->validShape.dimensionSize[2]);
    p->stride[0] = p->stride[1] * p->validShape.dimensionSize[1];
    in[i].sysMem = i == 0 ? m->y : m->uv;
  }
  if (!check(hbUCPMallocCached(roi_mem, 4 * sizeof(int32_t), 0), "hbUCPMallocCached")) return 0;
  memcpy(roi_mem->virAddr, roi, 4 * sizeof(int32_t));
  hbUCPMemFlush(roi_mem, HB_SYS_MEM_CACHE_CLEAN);
  in[2].sysMem = *roi_mem;
  return 1;
}

static int parse_roi(const char *s, int32_t roi[4]) {
  int v[4];
  if (sscanf(s, "%d,%d,%d,%d", &v[0], &v[1], &v[2], &v[3]) != 4) {
    fprintf(stderr, "bad roi '%s' (l,t,r,b)\n", s);
    return 0;
  }
  roi[0] = v[0], roi[1] = v[1], roi[2] = v[2], roi[3] = v[3];
  return 1;
}

static float element(const hbDNNTensor *t, int64_t off, int64_t c) {
  const char *p = (const char *)t->sysMem.virAddr + off;
  float v;
  switch (t->properties.tensorType) {
    case HB_DNN_TENSOR_TYPE_F32: memcpy(&v, p, 4); return v;
    case HB_DNN_TENSOR_TYPE_S8: v = (float)*(const int8_t *)p; break;
    case HB_DNN_TENSOR_TYPE_S16: { int16_t x; memcpy(&x, p, 2); v = (float)x; break; }
    default: { int32_t x; memcpy(&x, p, 4); v = (float)x; break; }
  }
  if (t->properties.quantiType == SCALE) {
    const hbDNNQuantiScale *q = &t->properties.scale;
    int64_t k = q->scaleLen > 1 ? c : 0;
    v = (v - (q->zeroPointLen > 0 ? (float)q->zeroPointData[k] : 0.0f)) * q->scaleData[k];
  }
  return v;
}

/* Output `t` as float32 in validShape order (strided walk). */
static int write_output(const hbDNNTensor *t, const char *path) {
  const hbDNNTensorProperties *p = &t->properties;
  int32_t n = p->validShape.numDimensions, d, idx[HB_DNN_TENSOR_MAX_DIMENSIONS] = {0};
  int64_t total = 1, e;
  FILE *f = fopen(path, "wb");
  if (f == NULL) return 0;
  for (d = 0; d < n; ++d) total *= p->validShape.dimensionSize[d];
  for (e = 0; e < total; ++e) {
    int64_t off = 0;
    float v;
    for (d = 0; d < n; ++d) off += idx[d] * p->stride[d];
    v = element(t, off, p->quantizeAxis >= 0 ? idx[p->quantizeAxis] : 0);
    fwrite(&v, 4, 1, f);
    for (d = n - 1; d >= 0 && ++idx[d] == p->validShape.dimensionSize[d]; --d) idx[d] = 0;
  }
  fclose(f);
  return 1;
}

static int run(Model *m, const char *out_dir, int nroi, char **rois) {
  hbDNNTensor(*in)[3] = calloc((size_t)nroi, sizeof(*in));
  hbDNNTensor(*out)[MAX_OUT] = calloc((size_t)nroi, sizeof(*out));
  hbUCPSysMem *roi_mem = calloc((size_t)nroi, sizeof(hbUCPSysMem));
  hbUCPTaskHandle_t task = NULL;
  hbUCPSchedParam sched;
  int ok = in != NULL && out != NULL && roi_mem != NULL, i, k;
  char path[4096];
  for (i = 0; ok && i < nroi; ++i) {
    int32_t roi[4];
    ok = parse_roi(rois[i], roi) && prepare_inputs(m, in[i], roi, &roi_mem[i]);
    for (k = 0; ok && k < m->nout; ++k) {
      ok = check(hbDNNGetOutputTensorProperties(&out[i][k].properties, m->dnn, k), "hbDNNGetOutputTensorProperties") &&
           check(hbUCPMallocCached(&out[i][k].sysMem, (uint64_t)out[i][k].properties.alignedByteSize, 0),
                 "hbUCPMallocCached");
    }
    /* One sub-task per ROI, appended to the same task. */
    ok = ok && check(hbDNNInferV2(&task, out[i], in[i], m->dnn), "hbDNNInferV2");
  }
  HB_UCP_INITIALIZE_SCHED_PARAM(&sched);
  ok = ok && check(hbUCPSubmitTask(task, &sched), "hbUCPSubmitTask") &&
       check(hbUCPWaitTaskDone(task, 0), "hbUCPWaitTaskDone");
  for (i = 0; ok && i < nroi; ++i)
    for (k = 0; ok && k < m->nout; ++k) {
      hbUCPMemFlush(&out[i][k].sysMem, HB_SYS_MEM_CACHE_INVALIDATE);
      snprintf(path, sizeof(path), "%s/%d_%d.f32", out_dir, i, k);
      ok = write_output(&out[i][k], path);
    }
  if (task != NULL) hbUCPReleaseTask(task);
  for (i = 0; i < nroi && in != NULL && out != NULL && roi_mem != NULL; ++i) {
    if (roi_mem[i].virAddr != NULL) hbUCPFree(&roi_mem[i]);
    for (k = 0; k < MAX_OUT; ++k)
      if (out[i][k].sysMem.virAddr != NULL) hbUCPFree(&out[i][k].sysMem);
  }
  free(in);
  free(out);
  free(roi_mem);
  if (ok) printf("%d ROI(s) in one task of %d sub-tasks\n", nroi, nroi);
  return ok;
}

/* One hbDNNInferV2 that must fail with HB_UCP_INVALID_ARGUMENT and leave no
 * task; `mutate` spoils the inputs (0: only the ROI is bad). */
static int expect_rejected(Model *m, const int32_t roi[4], int mutate, const char *what) {
  hbDNNTensor in[3], out[MAX_OUT];
  hbUCPSysMem roi_mem = {0, NULL, 0};
  hbUCPTaskHandle_t task = NULL;
  int32_t rc = -1;
  int k, ok;
  memset(in, 0, sizeof(in));
  memset(out, 0, sizeof(out));
  ok = prepare_inputs(m, in, roi, &roi_mem);
  for (k = 0; ok && k < m->nout; ++k)
    ok = check(hbDNNGetOutputTensorProperties(&out[k].properties, m->dnn, k), "hbDNNGetOutputTensorProperties") &&
         check(hbUCPMallocCached(&out[k].sysMem, (uint64_t)out[k].properties.alignedByteSize, 0), "hbUCPMallocCached");
  if (mutate == 1) in[1].properties.validShape.dimensionSize[1] += 1; /* UV not half the frame */
  if (mutate == 2) in[2].sysMem.memSize = 8;                           /* roi buffer too small */
  if (ok) rc = hbDNNInferV2(&task, out, in, m->dnn);
  printf("%s: %d\n", what, (int)rc);
  ok = ok && rc == HB_UCP_INVALID_ARGUMENT && task == NULL;
  if (task != NULL) hbUCPReleaseTask(task);
  if (roi_mem.virAddr != NULL) hbUCPFree(&roi_mem);
  for (k = 0; k < MAX_OUT; ++k)
    if (out[k].sysMem.virAddr != NULL) hbUCPFree(&out[k].sysMem);
  return ok;
}

static int bad(Model *m, int nroi, char **rois) {
  static const int32_t good[4] = {0, 0, 191, 47};
  int ok = 1, i;
  for (i = 0; i < nroi; ++i) {
    int32_t roi[4];
    ok = parse_roi(rois[i], roi) && expect_rejected(m, roi, 0, rois[i]) && ok;
  }
  ok = expect_rejected(m, good, 1, "uv-not-half") && ok;
  ok = expect_rejected(m, good, 2, "roi-8-bytes") && ok;
  return ok;
}

int main(int argc, char **argv) {
  Model m;
  int ok;
  memset(&m, 0, sizeof(m));
  if (argc < 6 || (strcmp(argv[1], "run") != 0 && strcmp(argv[1], "bad") != 0)) {
    fprintf(stderr, "usage: %s run MODEL FRAME H W OUT_DIR l,t,r,b ... | bad MODEL FRAME H W l,t,r,b ...\n", argv[0]);
    return 2;
  }
  m.h = atoi(argv[4]);
  m.w = atoi(argv[5]);
  ok = open_model(&m, argv[2]) && load_frame(&m, argv[3]);
  if (ok && strcmp(argv[1], "run") == 0) ok = argc > 7 && run(&m, argv[6], argc - 7, argv + 7);
  if (ok && strcmp(argv[1], "bad") == 0) ok = bad(&m, argc - 6, argv + 6);
  if (m.y.virAddr != NULL) hbUCPFree(&m.y);
  if (m.uv.virAddr != NULL) hbUCPFree(&m.uv);
  if (m.pack != NULL) hbDNNRelease(m.pack);
  return ok ? 0 : 1;
}
