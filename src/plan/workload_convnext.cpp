// Forward workload of ConvNeXt (Liu et al. 2022, "A ConvNet for the 2020s"), as HuggingFace's
// ConvNextForImageClassification runs it: 4x4 stride-4 stem, stages of blocks (7x7 depthwise
// conv, LayerNorm, pointwise 4x MLP with GELU, layer scale, residual) with 2x2 stride-2
// downsampling between stages, global average pool, LayerNorm, classifier.
#include <algorithm>

#include "catalog/param_count.h"
#include "plan/workload.h"

namespace gpudays {
namespace {

constexpr double kFp32 = 4.0;

Block convnext_stage(
    double b, double side, double c, int64_t depth, double elt, const Implementation& impl) {
  const double positions = b * side * side;
  const double act = positions * c;
  Block block;
  block.name = "block";
  block.count = depth;
  block.input_bytes = act * elt;
  block.param_tensors = 9;
  std::vector<Op>& ops = block.ops;
  // One pass over input and output; the device model charges a GPU's kernels their passes
  // (DeviceModelConstants::depthwise_passes).
  Op dw = make_memory("depthwise_conv7x7", 2 * act, elt, act * elt);
  dw.cls = OpClass::kDepthwiseConv;
  dw.depthwise_2d = true;
  dw.model_flops = 2.0 * 49.0 * act;
  dw.exec_flops = dw.model_flops;
  ops.push_back(dw);
  // timm's channels-last blocks under autocast keep the residual stream in fp32.
  const bool timm = impl.channels_last && impl.fp32_residual_stream && elt < kFp32;
  if (timm) {
    // The depthwise convolution's input cast down from the fp32 stream (its gradient cast up).
    ops.push_back(
        with_backward(make_memory("cast_in", act, kFp32 + elt, 0.0), act * (elt + kFp32), 1));
  }
  // The convolution's bias: cuDNN convolves, then add_ (at::_convolution), in place.
  ops.push_back(with_backward(make_memory("conv_bias", 2 * act, elt, 0.0), 0.0, 0.0));
  // Into channels-last for the norm and the MLP: a copy of the channels-first tensor, and back;
  // each copy's backward copies the gradient. Channels-last memory needs neither.
  if (!impl.channels_last)
    ops.push_back(with_backward(make_memory("permute_in", 2 * act, elt, 0.0), 2 * act * elt, 1));
  if (timm) {
    // Autocast's fp32 LayerNorm of the half-precision convolution output, then fc1's cast down.
    ops.push_back(with_backward(make_memory("layer_norm", act, 2 * elt + 2 * kFp32, act * elt),
                                act * (3 * elt + 3 * kFp32),
                                3));
  } else {
    ops.push_back(make_memory("layer_norm", 2 * act, elt, act * elt));
  }
  Op pw1 = make_matmul("pointwise_in", positions, 4 * c, c, elt);
  pw1.saved_bytes = act * elt;
  ops.push_back(pw1);
  ops.push_back(
      with_backward(make_memory("gelu", 2 * 4 * act, elt, 4 * act * elt), 3 * 4 * act * elt, 1));
  Op pw2 = make_matmul("pointwise_out", positions, c, 4 * c, elt);
  pw2.saved_bytes = 4 * act * elt;
  ops.push_back(pw2);
  if (impl.linear_bias_add) {
    // Linear over 4-D input before PyTorch 2.1: matmul, then the bias add_ (fc1's and fc2's).
    ops.push_back(with_backward(make_memory("linear_bias_adds", 2 * 5 * act, elt, 0.0), 0.0, 0.0));
  }
  // The biases' gradients (the convolution's, fc1's, fc2's): reductions of their outputs'.
  ops.push_back(with_backward(make_memory("bias_gradients", 0.0, elt, 0.0, 0.0), 6 * act * elt, 3));
  if (timm) {
    // x.mul(gamma) with gamma in fp32 writes fp32; backward, the input's gradient (grad x
    // gamma, cast down) and gamma's (grad x x, summed over the positions).
    ops.push_back(with_backward(make_memory("layer_scale", act, elt + kFp32, act * elt),
                                act * (2 * kFp32 + (kFp32 + elt) + (2 * kFp32 + elt) + kFp32),
                                4));
    // fp32 + fp32 into fp32; backward, the two gradients gathered in fp32.
    ops.push_back(with_backward(make_memory("residual", act, 3 * kFp32, 0.0), act * 3 * kFp32, 1));
  } else {
    ops.push_back(make_memory("layer_scale", 2 * act, elt, act * elt));
    if (!impl.channels_last)
      ops.push_back(with_backward(make_memory("permute_out", 2 * act, elt, 0.0), 2 * act * elt, 1));
    ops.push_back(with_backward(make_memory("residual", 3 * act, elt, 0.0), 3 * act * elt, 1));
  }
  return block;
}

}  // namespace

Workload build_convnext_workload(const ModelSpec& model, const WorkloadOptions& options) {
  const auto& a = model.arch;
  const double b = static_cast<double>(options.micro_batch_size);
  const double elt = options.activation_bytes;
  Workload w;
  w.samples = options.micro_batch_size;
  w.tokens_per_sample = 1;
  double side = static_cast<double>(a.image_size) / 4.0;
  const double c0 = static_cast<double>(a.hidden_sizes.front());
  Op stem = make_matmul("stem_conv4x4", b * side * side, c0, a.num_channels * 16.0, elt);
  stem.saved_bytes = b * a.image_size * a.image_size * a.num_channels * elt;
  w.stem_ops.push_back(stem);
  w.stem_ops.push_back(
      make_memory("stem_ln", 2 * b * side * side * c0, elt, b * side * side * c0 * elt));
  int64_t param_tensors = 4;
  for (size_t s = 0; s < a.depths.size(); ++s) {
    const double c = static_cast<double>(a.hidden_sizes[s]);
    if (s > 0) {
      const double c_in = static_cast<double>(a.hidden_sizes[s - 1]);
      const double in_act = b * side * side * c_in;
      side /= 2.0;
      // Downsampling is not a repeated block: never checkpointed (as the model's block runner),
      // so its ops sit with the stem's.
      w.stem_ops.push_back(make_memory("downsample_ln", 2 * in_act, elt, in_act * elt));
      Op conv = make_matmul("downsample_conv2x2", b * side * side, c, 4 * c_in, elt);
      conv.saved_bytes = in_act * elt;
      w.stem_ops.push_back(conv);
      param_tensors += 4;
    }
    Block stage = convnext_stage(b, side, c, a.depths[s], elt, options.implementation);
    stage.params = static_cast<int64_t>(8 * c * c + 58 * c);
    param_tensors += stage.count * stage.param_tensors;
    w.blocks.push_back(stage);
  }
  const double c_last = static_cast<double>(a.hidden_sizes.back());
  const double last_act = b * side * side * c_last;
  w.head_ops.push_back(
      make_memory("avg_pool_ln", last_act + 4 * b * c_last, elt, b * c_last * elt));
  Op classifier = make_matmul("classifier", b, a.num_labels, c_last, elt);
  classifier.saved_bytes = b * c_last * elt;
  w.head_ops.push_back(classifier);
  w.head_ops.push_back(make_cross_entropy(b, a.num_labels, elt));
  w.param_tensors = param_tensors + 4;
  return w;
}

}  // namespace gpudays
