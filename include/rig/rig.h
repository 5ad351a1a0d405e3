/* rig.h: the C ABI of librig_c.so. Plain C99, also valid C++.
 *
 * Every function is listed, with the same types, in rig.sigs beside this
 * header (a ctest checks that the two and the library's exported symbols
 * agree); python/rig binds the library from rig.sigs.
 *
 * Conventions:
 *  - Handles are opaque. rig_device_open creates a device, rig_model_load*
 *    loads a model on it; free each with rig_device_close / rig_model_free,
 *    in any order (a model keeps its device alive). Loading another model on
 *    the same device retires the earlier model handle: calls on it fail with
 *    RIG_ERROR_INVALID_ARGUMENT until it is freed.
 *  - Functions that can fail return an int32_t status: RIG_OK (0) or one of
 *    the RIG_ERROR_* codes below. On failure rig_last_error() describes it.
 *    Out-parameters are written only on success.
 *  - Buffers are (pointer, length) pairs owned by the caller. A buffer whose
 *    length is not the tensor's exact byte size is refused with
 *    RIG_ERROR_INVALID_ARGUMENT, and the error names both sizes.
 *  - Thread safety: calls on one device (and its models) are serialised by
 *    a lock in the device handle; rig_model_wait holds it while it waits.
 *    Different devices are independent. rig_last_error is per thread.
 *  - No C++ exception leaves a function: each is caught and becomes a
 *    status (RIG_ERROR_OUT_OF_MEMORY, RIG_ERROR_INTERNAL).
 */
#ifndef RIG_RIG_H
#define RIG_RIG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define RIG_API __attribute__((visibility("default")))
#else
#define RIG_API
#endif

/* The ABI this header describes; rig_abi_version() returns the library's. */
#define RIG_ABI_VERSION 1

/* Status codes. */
#define RIG_OK 0
#define RIG_ERROR_INTERNAL 1         /* a bug in rig, or an unexpected exception */
#define RIG_ERROR_INVALID_ARGUMENT 2 /* a null or malformed argument, a wrong-size buffer */
#define RIG_ERROR_NOT_FOUND 3        /* a file, model or handle that does not exist */
#define RIG_ERROR_UNSUPPORTED 4      /* valid, but the device or model cannot do it */
#define RIG_ERROR_IO 5               /* filesystem or socket failure */
#define RIG_ERROR_PROTOCOL 6         /* malformed bytes from a remote device */
#define RIG_ERROR_LIMIT_EXCEEDED 7   /* a configured limit would be exceeded */
#define RIG_ERROR_QUEUE_FULL 8       /* submit beyond the device's queue depth */
#define RIG_ERROR_TIMEOUT 9          /* waited longer than allowed */
#define RIG_ERROR_DISCONNECTED 10    /* a remote device went away */
#define RIG_ERROR_DEVICE 11          /* the device itself failed */
#define RIG_ERROR_PERMISSION 12      /* access refused */
#define RIG_ERROR_OUT_OF_MEMORY 13   /* an allocation failed */

/* Tensor kinds for rig_model_count / rig_model_tensor. */
#define RIG_INPUT 0
#define RIG_OUTPUT 1

typedef struct rig_device rig_device;
typedef struct rig_model rig_model;

/* The library's ABI version (RIG_ABI_VERSION of the header it was built with). */
RIG_API int32_t rig_abi_version(void);

/* The last error on this thread, "" when none. Valid until the next call on
 * this thread. Never NULL. */
RIG_API const char* rig_last_error(void);

/* Opens a device from a spec: "cpu", "cpu:threads=2", "sim:compute=2ms,...",
 * "tcp://HOST:PORT", "unix:/path". */
RIG_API int32_t rig_device_open(const char* spec, rig_device** device);
/* Releases the caller's reference; NULL is ignored. */
RIG_API void rig_device_close(rig_device* device);

/* Loads a model from a file (or "server:NAME" on a remote device). */
RIG_API int32_t rig_model_load(rig_device* device, const char* path, rig_model** model);
/* Loads a model from bytes (copied); `name` names it (NULL: "model"). */
RIG_API int32_t rig_model_load_bytes(rig_device* device, const void* bytes, size_t size,
                                     const char* name, rig_model** model);
/* NULL is ignored. */
RIG_API void rig_model_free(rig_model* model);

/* The number of inputs (kind RIG_INPUT) or outputs (RIG_OUTPUT). */
RIG_API int32_t rig_model_count(const rig_model* model, int32_t kind, size_t* count);
/* One tensor's facts. Each out-pointer may be NULL. `name` and `dtype`
 * ("float32", "uint8", "float16", "int64", "bool", ... as NumPy spells them)
 * and `shape` (`rank` dimensions) stay valid until rig_model_free. */
RIG_API int32_t rig_model_tensor(const rig_model* model, int32_t kind, size_t index,
                                 const char** name, const char** dtype, size_t* rank,
                                 const int64_t** shape, size_t* bytes);

/* One inference, synchronously: `inputs[i]` holds `input_sizes[i]` bytes for
 * input i, `outputs[i]` receives output i. The bytes are copied through
 * buffers the model binds once, so the device keeps no caller pointer after
 * the call; rig_model_bind is the zero-copy path. */
RIG_API int32_t rig_model_run(rig_model* model, const void** inputs, const size_t* input_sizes,
                              size_t input_count, void** outputs, const size_t* output_sizes,
                              size_t output_count);

/* Pipelined use: register buffers once (rig_model_bind), then submit
 * inferences on bindings (up to the device's queue depth in flight, one per
 * binding) and wait for completions in any order. The buffers must stay
 * valid until the model is freed or retired. */
RIG_API int32_t rig_model_bind(rig_model* model, const void** inputs, const size_t* input_sizes,
                               size_t input_count, void** outputs, const size_t* output_sizes,
                               size_t output_count, uint32_t* binding);
RIG_API int32_t rig_model_submit(rig_model* model, uint32_t binding, uint64_t tag);
/* Waits for the next completion, up to `timeout_ns` nanoseconds on the
 * device's clock (< 0: no limit), and returns its submit tag. A failed
 * inference returns its status (and its tag in `tag`). */
RIG_API int32_t rig_model_wait(rig_model* model, int64_t timeout_ns, uint64_t* tag);

/* A whole benchmark, as `rig bench --json` runs it: `settings_json` is a JSON
 * object whose keys are those of a result's settings.effective
 * (docs/results-schema.md: "model", "device", "duration_s", "repeats", ...);
 * absent keys keep rig bench's defaults, unknown keys are refused. The
 * result document (the schema of rig bench --json) is returned in
 * *result_json, to be freed with rig_string_free. */
RIG_API int32_t rig_bench(const char* settings_json, char** result_json);
/* Frees a string this library returned; NULL is ignored. */
RIG_API void rig_string_free(char* text);

#ifdef __cplusplus
}
#endif

#endif /* RIG_RIG_H */
