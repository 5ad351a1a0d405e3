// rig.h compiles as C++ too: this translation unit includes it and takes the
// address of every function with its declared type.
#include "rig/rig.h"

namespace {
[[maybe_unused]] const void* const kFunctions[] = {
    reinterpret_cast<const void*>(&rig_abi_version),
    reinterpret_cast<const void*>(&rig_last_error),
    reinterpret_cast<const void*>(&rig_device_open),
    reinterpret_cast<const void*>(&rig_device_close),
    reinterpret_cast<const void*>(&rig_model_load),
    reinterpret_cast<const void*>(&rig_model_load_bytes),
    reinterpret_cast<const void*>(&rig_model_free),
    reinterpret_cast<const void*>(&rig_model_count),
    reinterpret_cast<const void*>(&rig_model_tensor),
    reinterpret_cast<const void*>(&rig_model_run),
    reinterpret_cast<const void*>(&rig_model_bind),
    reinterpret_cast<const void*>(&rig_model_submit),
    reinterpret_cast<const void*>(&rig_model_wait),
    reinterpret_cast<const void*>(&rig_bench),
    reinterpret_cast<const void*>(&rig_string_free),
};
}  // namespace
