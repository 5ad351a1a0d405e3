# A stand-in HailoRT 5.0.0 package (too old for rig: no run_async_for_duration).
add_library(HailoRT::libhailort INTERFACE IMPORTED)
