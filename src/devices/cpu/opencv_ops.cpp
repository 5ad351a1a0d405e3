// The ONNX ops that OpenCV 4.6.0's importer has a parser for, written from
// the dispatch tables of modules/dnn/src/onnx/onnx_importer.cpp at tag 4.6.0
// (buildDispatchMap_ONNX_AI and buildDispatchMap_COM_MICROSOFT) and checked
// against the strings of Debian's libopencv_dnn.so.4.6.0. Ops added in later
// releases (Tile, Einsum, LayerNormalization, GreaterOrEqual, ScatterND, ...)
// are absent on purpose. A parser existing does not mean every form imports:
// the importer's own refusal is reported beside this list.
#include <set>
#include <string>

#include "devices/cpu/opencv_import.hpp"

namespace rig::cpu {

bool opencv_has_parser(const std::string& domain, const std::string& op) {
  static const std::set<std::string> ai_onnx = {
      // Pooling and reductions.
      "ArgMax", "ArgMin", "MaxUnpool", "MaxPool", "AveragePool", "GlobalAveragePool",
      "GlobalMaxPool", "ReduceMax", "ReduceMin", "ReduceMean", "ReduceSum", "ReduceSumSquare",
      "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
      // Tensor manipulation.
      "Slice", "Split", "Constant", "Transpose", "Squeeze", "Flatten", "Unsqueeze", "Expand",
      "Reshape", "Pad", "Shape", "Cast", "ConstantFill", "ConstantOfShape", "Gather", "Concat",
      "Resize", "Upsample", "SpaceToDepth", "DepthToSpace", "CumSum",
      // Arithmetic and comparison.
      "Add", "Sum", "Sub", "Mul", "Div", "Pow", "Min", "Max", "Neg", "Equal", "Greater", "Less",
      // Layers.
      "Conv", "ConvTranspose", "Gemm", "MatMul", "BatchNormalization", "InstanceNormalization",
      "LRN", "LSTM", "GRU", "ImageScaler", "DetectionOutput", "Softmax", "SoftMax", "LogSoftmax",
      // Activations.
      "Clip", "LeakyRelu", "Relu", "Elu", "Tanh", "Abs", "PRelu",
      // The importer's "simple layers" (one elementwise function each).
      "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Ceil", "Celu", "Cos", "Cosh", "Dropout",
      "Erf", "Exp", "Floor", "HardSigmoid", "HardSwish", "Identity", "Log", "Mish", "Round",
      "Reciprocal", "Selu", "Sign", "Sigmoid", "Sin", "Sinh", "Softplus", "Softsign", "Shrink",
      "Sqrt", "Tan", "ThresholdedRelu",
      // Quantized forms.
      "QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul"};
  static const std::set<std::string> com_microsoft = {
      "QLinearAdd",     "QLinearMul",         "QLinearConcat",           "QLinearLeakyRelu",
      "QLinearSigmoid", "QLinearAveragePool", "QLinearGlobalAveragePool"};
  if (domain.empty() || domain == "ai.onnx") return ai_onnx.count(op) > 0;
  if (domain == "com.microsoft") return com_microsoft.count(op) > 0;
  return false;
}

}  // namespace rig::cpu
