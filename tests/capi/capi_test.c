/* The C ABI from C99: every function of rig.h, on the cpu device with a
 * generated model (argv[1]) and a small benchmark on the sim device.
 * Exits non-zero at the first failed expectation, naming it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rig/rig.h"

static int failures = 0;

#define EXPECT(cond)                                                                      \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      fprintf(stderr, "%s:%d: expected %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
              rig_last_error());                                                          \
      ++failures;                                                                         \
    }                                                                                     \
  } while (0)

static void fill(unsigned char* p, size_t n, unsigned seed) {
  size_t i;
  for (i = 0; i < n; ++i) p[i] = (unsigned char)((i * 31u + seed * 17u) ^ (seed << 3));
}

int main(int argc, char** argv) {
  rig_device* device = NULL;
  rig_model* model = NULL;
  rig_model* newer = NULL;
  rig_model* failed = NULL;
  size_t inputs = 0, outputs = 0, in_bytes = 0, out_bytes = 0, rank = 0;
  const char* name = NULL;
  const char* dtype = NULL;
  const int64_t* shape = NULL;
  unsigned char *a, *b, *out1, *out2, *out3;
  const void* in_ptrs[1];
  void* out_ptrs[1];
  size_t in_sizes[1], out_sizes[1];
  uint32_t binding = 0;
  uint64_t tag = 0;
  char* result = NULL;
  char settings[1024];

  if (argc != 2) {
    fprintf(stderr, "usage: capi_test MODEL.onnx\n");
    return 2;
  }
  EXPECT(rig_abi_version() == RIG_ABI_VERSION);
  EXPECT(strcmp(rig_last_error(), "") == 0);

  EXPECT(rig_device_open("warp:9", &device) == RIG_ERROR_INVALID_ARGUMENT);
  EXPECT(strlen(rig_last_error()) > 0);
  EXPECT(rig_device_open(NULL, &device) == RIG_ERROR_INVALID_ARGUMENT);
  EXPECT(rig_device_open("cpu", &device) == RIG_OK);
  if (!device) return 1;
  EXPECT(rig_model_load(device, "/nonexistent/model.onnx", &model) != RIG_OK);
  EXPECT(rig_model_load(device, argv[1], &model) == RIG_OK);
  if (!model) return 1;

  EXPECT(rig_model_count(model, RIG_INPUT, &inputs) == RIG_OK && inputs == 1);
  EXPECT(rig_model_count(model, RIG_OUTPUT, &outputs) == RIG_OK && outputs == 1);
  EXPECT(rig_model_count(model, 7, &inputs) == RIG_ERROR_INVALID_ARGUMENT);
  EXPECT(rig_model_tensor(model, RIG_INPUT, 0, &name, &dtype, &rank, &shape, &in_bytes) == RIG_OK);
  EXPECT(name && strcmp(name, "input") == 0);
  EXPECT(dtype && strcmp(dtype, "uint8") == 0);
  EXPECT(rank == 4 && shape && shape[0] == 1 && shape[1] == 4 && shape[2] == 16 && shape[3] == 16);
  EXPECT(in_bytes == 4 * 16 * 16);
  EXPECT(rig_model_tensor(model, RIG_OUTPUT, 0, NULL, &dtype, NULL, NULL, &out_bytes) == RIG_OK);
  EXPECT(dtype && strcmp(dtype, "float32") == 0);
  EXPECT(rig_model_tensor(model, RIG_OUTPUT, 1, NULL, NULL, NULL, NULL, NULL) ==
         RIG_ERROR_INVALID_ARGUMENT);
  EXPECT(strstr(rig_last_error(), "out of range") != NULL);

  a = malloc(in_bytes);
  b = malloc(in_bytes);
  out1 = malloc(out_bytes);
  out2 = malloc(out_bytes);
  out3 = malloc(out_bytes);
  fill(a, in_bytes, 1);
  fill(b, in_bytes, 2);
  in_sizes[0] = in_bytes;
  out_sizes[0] = out_bytes;

  in_ptrs[0] = a;
  out_ptrs[0] = out1;
  EXPECT(rig_model_run(model, in_ptrs, in_sizes, 1, out_ptrs, out_sizes, 1) == RIG_OK);
  in_ptrs[0] = b;
  out_ptrs[0] = out2;
  EXPECT(rig_model_run(model, in_ptrs, in_sizes, 1, out_ptrs, out_sizes, 1) == RIG_OK);
  EXPECT(memcmp(out1, out2, out_bytes) != 0); /* different inputs, different outputs */
  in_ptrs[0] = a;
  out_ptrs[0] = out3;
  EXPECT(rig_model_run(model, in_ptrs, in_sizes, 1, out_ptrs, out_sizes, 1) == RIG_OK);
  EXPECT(memcmp(out1, out3, out_bytes) == 0); /* the same input, bit-identical */

  /* An undersized buffer: status 2, and the error names both sizes. */
  in_sizes[0] = in_bytes - 1;
  EXPECT(rig_model_run(model, in_ptrs, in_sizes, 1, out_ptrs, out_sizes, 1) ==
         RIG_ERROR_INVALID_ARGUMENT);
  EXPECT(strstr(rig_last_error(), "1024") != NULL && strstr(rig_last_error(), "1023") != NULL);
  in_sizes[0] = in_bytes;
  EXPECT(rig_model_run(model, in_ptrs, in_sizes, 0, out_ptrs, out_sizes, 1) ==
         RIG_ERROR_INVALID_ARGUMENT);
  EXPECT(rig_model_run(model, NULL, in_sizes, 1, out_ptrs, out_sizes, 1) ==
         RIG_ERROR_INVALID_ARGUMENT);

  /* Pipelined: bind once, submit, wait. */
  memset(out3, 0, out_bytes);
  EXPECT(rig_model_bind(model, in_ptrs, in_sizes, 1, out_ptrs, out_sizes, 1, &binding) == RIG_OK);
  EXPECT(rig_model_submit(model, binding, 42) == RIG_OK);
  EXPECT(rig_model_wait(model, -1, &tag) == RIG_OK && tag == 42);
  EXPECT(memcmp(out1, out3, out_bytes) == 0);
  EXPECT(rig_model_wait(model, 1000000, &tag) == RIG_ERROR_INVALID_ARGUMENT); /* none in flight */
  EXPECT(rig_model_submit(model, 999, 1) != RIG_OK);

  /* A later load retires the earlier handle. */
  EXPECT(rig_model_load(device, argv[1], &newer) == RIG_OK);
  EXPECT(rig_model_run(model, in_ptrs, in_sizes, 1, out_ptrs, out_sizes, 1) ==
         RIG_ERROR_INVALID_ARGUMENT);
  EXPECT(strstr(rig_last_error(), "retired") != NULL);
  EXPECT(rig_model_run(newer, in_ptrs, in_sizes, 1, out_ptrs, out_sizes, 1) == RIG_OK);
  rig_model_free(model);
  /* A failed load retires the current handle too (the device dropped its
     model before loading), and the handle says why. */
  EXPECT(rig_model_load(device, "/nonexistent/model.onnx", &failed) != RIG_OK);
  EXPECT(rig_model_run(newer, in_ptrs, in_sizes, 1, out_ptrs, out_sizes, 1) ==
         RIG_ERROR_INVALID_ARGUMENT);
  EXPECT(strstr(rig_last_error(), "retired by a later load that failed") != NULL);
  EXPECT(strstr(rig_last_error(), "/nonexistent/model.onnx") != NULL);
  rig_model_free(newer);
  EXPECT(rig_model_load(device, argv[1], &newer) == RIG_OK);
  EXPECT(rig_model_run(newer, in_ptrs, in_sizes, 1, out_ptrs, out_sizes, 1) == RIG_OK);
  /* The device handle may go first: the model keeps the device alive. */
  rig_device_close(device);
  EXPECT(rig_model_run(newer, in_ptrs, in_sizes, 1, out_ptrs, out_sizes, 1) == RIG_OK);
  rig_model_free(newer);
  rig_model_free(NULL);
  rig_device_close(NULL);

  /* A whole benchmark on the sim device from settings.effective keys. */
  snprintf(settings, sizeof settings,
           "{\"model\": \"%s\", \"device\": \"sim:compute=1ms,bw=10GB/s,depth=4\", "
           "\"duration_s\": 0.2, \"repeats\": 1, \"min_inferences\": 20, "
           "\"latency_samples\": 10}",
           argv[1]);
  EXPECT(rig_bench(settings, &result) == RIG_OK);
  EXPECT(result && strstr(result, "\"tool\": \"rig bench\"") != NULL);
  EXPECT(result && strstr(result, "\"duration_s\": 0.2") != NULL);
  rig_string_free(result);
  result = NULL;
  EXPECT(rig_bench("{\"depht\": 3}", &result) == RIG_ERROR_INVALID_ARGUMENT);
  EXPECT(strstr(rig_last_error(), "unknown setting 'depht'") != NULL);
  EXPECT(rig_bench("{\"repeats\": \"three\"}", &result) == RIG_ERROR_INVALID_ARGUMENT);
  EXPECT(rig_bench("[1, 2]", &result) == RIG_ERROR_INVALID_ARGUMENT);
  EXPECT(result == NULL);

  free(a);
  free(b);
  free(out1);
  free(out2);
  free(out3);
  if (failures)
    fprintf(stderr, "capi_test: %d expectations failed\n", failures);
  else
    printf("capi_test: ok\n");
  return failures ? 1 : 0;
}
