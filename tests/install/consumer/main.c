/* SPDX-License-Identifier: Apache-2.0
 * consumer <model.bin> <input.bin> <expected.bin>: runs a model with a float
 * input through libdnn and compares the float output with the expected file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnn/hb_dnn.h"

static long load(const char *path, void *dst, long cap) {
  FILE *f = fopen(path, "rb");
  long n;
  if (f == NULL) return -1;
  n = (long)fread(dst, 1, (size_t)cap, f);
  fclose(f);
  return n;
}

int main(int argc, char **argv) {
  hbPackedDNNHandle_t pack = NULL;
  hbDNNHandle_t h = NULL;
  const char **names = NULL;
  int count = 0;
  hbDNNTensor in, out;
  hbDNNTensor *outp = &out;
  hbDNNTaskHandle_t task = NULL;
  hbDNNInferCtrlParam param;
  float *expected;
  long n;
  if (argc != 4) return 2;
  if (hbDNNInitializeFromFiles(&pack, (const char **)&argv[1], 1) != 0) return 3;
  hbDNNGetModelNameList(&names, &count, pack);
  hbDNNGetModelHandle(&h, pack, names[0]);
  memset(&in, 0, sizeof(in));
  memset(&out, 0, sizeof(out));
  hbDNNGetInputTensorProperties(&in.properties, h, 0);
  hbDNNGetOutputTensorProperties(&out.properties, h, 0);
  hbSysAllocCachedMem(&in.sysMem[0], (uint32_t)in.properties.alignedByteSize);
  hbSysAllocCachedMem(&out.sysMem[0], (uint32_t)out.properties.alignedByteSize);
  if (load(argv[2], in.sysMem[0].virAddr, in.properties.alignedByteSize) != in.properties.alignedByteSize) return 4;
  hbSysFlushMem(&in.sysMem[0], HB_SYS_MEM_CACHE_CLEAN);
  HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&param);
  if (hbDNNInfer(&task, &outp, &in, h, &param) != 0 || hbDNNWaitTaskDone(task, 0) != 0) return 5;
  hbDNNReleaseTask(task);
  hbSysFlushMem(&out.sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE);
  expected = (float *)malloc((size_t)out.properties.alignedByteSize);
  n = load(argv[3], expected, out.properties.alignedByteSize);
  if (n != out.properties.alignedByteSize || memcmp(expected, out.sysMem[0].virAddr, (size_t)n) != 0) return 6;
  free(expected);
  hbSysFreeMem(&in.sysMem[0]);
  hbSysFreeMem(&out.sysMem[0]);
  hbDNNRelease(pack);
  printf("consumer: output matches (%s)\n", hbDNNGetVersion());
  return 0;
}
