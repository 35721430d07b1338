/* SPDX-License-Identifier: Apache-2.0
 * consumer_ucp <model.hbm> <input.bin> <expected.bin>: runs a model with a
 * float input through the UCP API (hbDNNInferV2 + hbUCPSubmitTask) and
 * compares the float output with the expected file. Includes the headers
 * both ways S100 applications do: "hobot/..." and bare names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hb_dnn_status.h"
#include "hb_ucp_status.h"
#include "hobot/dnn/hb_dnn.h"
#include "hobot/hb_ucp.h"
#include "hobot/hb_ucp_sys.h"
#include "ucp_check.h"

static long load(const char *path, void *dst, long cap) {
  FILE *f = fopen(path, "rb");
  long n;
  if (f == NULL) return -1;
  n = (long)fread(dst, 1, (size_t)cap, f);
  fclose(f);
  return n;
}

int main(int argc, char **argv) {
  hbDNNPackedHandle_t pack = NULL;
  hbDNNHandle_t h = NULL;
  const char **names = NULL;
  int32_t count = 0;
  hbDNNTensor in, out;
  hbUCPTaskHandle_t task = NULL;
  hbUCPSchedParam sched;
  float *expected;
  long n, i;
  if (argc != 4) return 2;
  CHECK(hbDNNInitializeFromFiles(&pack, (const char **)&argv[1], 1));
  CHECK(hbDNNGetModelNameList(&names, &count, pack));
  CHECK(hbDNNGetModelHandle(&h, pack, names[0]));
  memset(&in, 0, sizeof(in));
  memset(&out, 0, sizeof(out));
  CHECK(hbDNNGetInputTensorProperties(&in.properties, h, 0));
  CHECK(hbDNNGetOutputTensorProperties(&out.properties, h, 0));
  CHECK(hbUCPMallocCached(&in.sysMem, (uint64_t)in.properties.alignedByteSize, 0));
  CHECK(hbUCPMallocCached(&out.sysMem, (uint64_t)out.properties.alignedByteSize, 0));
  if (load(argv[2], in.sysMem.virAddr, (long)in.sysMem.memSize) != (long)in.sysMem.memSize) return 3;
  CHECK(hbUCPMemFlush(&in.sysMem, HB_SYS_MEM_CACHE_CLEAN));
  CHECK(hbDNNInferV2(&task, &out, &in, h));
  HB_UCP_INITIALIZE_SCHED_PARAM(&sched);
  sched.backend = HB_UCP_BPU_CORE_ANY;
  CHECK(hbUCPSubmitTask(task, &sched));
  CHECK(hbUCPWaitTaskDone(task, 0));
  CHECK(hbUCPMemFlush(&out.sysMem, HB_SYS_MEM_CACHE_INVALIDATE));
  CHECK(hbUCPReleaseTask(task));
  expected = (float *)malloc((size_t)out.sysMem.memSize);
  n = load(argv[3], expected, (long)out.sysMem.memSize);
  if (n <= 0) return 4;
  /* The test model's output is dense float: compare the valid bytes. */
  for (i = 0; i < n / 4; ++i)
    if (((float *)out.sysMem.virAddr)[i] != expected[i]) {
      fprintf(stderr, "output %ld: %g, expected %g\n", i, ((float *)out.sysMem.virAddr)[i], expected[i]);
      return 5;
    }
  free(expected);
  printf("consumer_ucp: %s on %s (%s): output matches\n", names[0], hbUCPGetSocName(), hbDNNGetVersion());
  CHECK(hbUCPFree(&in.sysMem));
  CHECK(hbUCPFree(&out.sysMem));
  CHECK(hbDNNRelease(pack));
  return 0;
}
