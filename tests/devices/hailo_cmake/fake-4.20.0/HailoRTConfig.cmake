# A stand-in HailoRT 4.20.0 package (the Hailo-8 runtime: no InferModel
# run_async_for_duration, a different API).
add_library(HailoRT::libhailort INTERFACE IMPORTED)
