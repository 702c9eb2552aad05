// The definition factories of every modelled operator, one line each; registry.cc lists them in order.
#pragma once

#include "ops/op_def.h"

namespace graphsub::ops {

// Convolution family: conv.cc, conv_transpose.cc, enlarge.cc, pooling.cc, batch_normalization.cc,
// constants.cc.
OpDef conv_op();
OpDef conv_transpose_op();
OpDef enlarge_op();
OpDef average_pool_op();
OpDef max_pool_op();
OpDef global_average_pool_op();
OpDef global_max_pool_op();
OpDef batch_normalization_op();
OpDef const_identity_conv_op();
OpDef const_identity_matrix_op();
OpDef const_ones_op();
OpDef const_pool_op();

// Arithmetic: mat_mul.cc, gemm.cc, einsum.cc, elementwise_binary.cc, s_mul.cc, variadic.cc, elementwise_unary.cc,
// softmax.cc.
OpDef mat_mul_op();
OpDef gemm_op();
OpDef einsum_op();
OpDef add_op();
OpDef sub_op();
OpDef mul_op();
OpDef div_op();
OpDef mod_op();
OpDef pow_op();
OpDef max_op();
OpDef min_op();
OpDef prelu_op();
OpDef s_mul_op();
OpDef sum_op();
OpDef mean_op();
OpDef relu_op();
OpDef sigmoid_op();
OpDef tanh_op();
OpDef exp_op();
OpDef log_op();
OpDef neg_op();
OpDef abs_op();
OpDef sqrt_op();
OpDef reciprocal_op();
OpDef erf_op();
OpDef floor_op();
OpDef ceil_op();
OpDef sin_op();
OpDef cos_op();
OpDef sign_op();
OpDef identity_op();
OpDef leaky_relu_op();
OpDef elu_op();
OpDef softplus_op();
OpDef hard_sigmoid_op();
OpDef hard_swish_op();
OpDef clip_op();
OpDef gelu_op();
OpDef softmax_op();

// Data movement: transpose.cc, concat.cc, split.cc, reshape.cc, flatten.cc, squeeze.cc, unsqueeze.cc,
// resize.cc.
OpDef transpose_op();
OpDef concat_op();
OpDef split_op();
OpDef reshape_op();
OpDef flatten_op();
OpDef squeeze_op();
OpDef unsqueeze_op();
OpDef resize_op();

// Shape computation and indexing: shape.cc, gather.cc, gather_elements.cc, cast.cc, slice.cc, pad.cc,
// expand.cc, constant_of_shape.cc, range.cc, where.cc, tile.cc, dropout.cc, gather_nd.cc,
// scatter_nd.cc.
OpDef shape_op();
OpDef gather_op();
OpDef gather_elements_op();
OpDef gather_nd_op();
OpDef scatter_nd_op();
OpDef cast_op();
OpDef slice_op();
OpDef pad_op();
OpDef expand_op();
OpDef constant_of_shape_op();
OpDef range_op();
OpDef where_op();
OpDef tile_op();
OpDef dropout_op();

// Reductions, comparisons, logic, normalization: reduce.cc, arg_reduce.cc, comparison.cc, logical.cc,
// layer_normalization.cc.
OpDef reduce_mean_op();
OpDef reduce_sum_op();
OpDef reduce_max_op();
OpDef reduce_min_op();
OpDef arg_max_op();
OpDef arg_min_op();
OpDef equal_op();
OpDef less_op();
OpDef greater_op();
OpDef greater_or_equal_op();
OpDef less_or_equal_op();
OpDef not_op();
OpDef is_nan_op();
OpDef is_inf_op();
OpDef and_op();
OpDef or_op();
OpDef layer_normalization_op();

// Recurrent networks: lstm.cc.
OpDef lstm_op();

}  // namespace graphsub::ops
