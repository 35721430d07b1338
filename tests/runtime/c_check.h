/* SPDX-License-Identifier: Apache-2.0
 * Minimal assertion helpers for the C API tests (plain C99). */
#ifndef OPENBPU_TESTS_RUNTIME_C_CHECK_H_
#define OPENBPU_TESTS_RUNTIME_C_CHECK_H_

#include <stdio.h>
#include <stdlib.h>

static int g_failures = 0;

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                          \
    }                                                                        \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                           \
  do {                                                                               \
    long long _a = (long long)(a), _b = (long long)(b);                              \
    if (_a != _b) {                                                                  \
      fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, \
              #a, _a, #b, _b);                                                       \
      ++g_failures;                                                                  \
    }                                                                                \
  } while (0)

#define REQUIRE(cond)                                                          \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static void *read_all(const char *path, long *size) {
  FILE *f = fopen(path, "rb");
  void *buf;
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  *size = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc((size_t)(*size > 0 ? *size : 1));
  if (buf != NULL && fread(buf, 1, (size_t)*size, f) != (size_t)*size) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  return buf;
}

#endif /* OPENBPU_TESTS_RUNTIME_C_CHECK_H_ */
