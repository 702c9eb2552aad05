// Rules that look right and are not: what both proof paths must never prove (issue 14's list).
#pragma once

namespace graphsub::testing {

/// Rules that look right and are not (issue 14's list), each with the mistake in its comment.
inline const char* const kWrongRules = R"RULES(
# relu(a + b) -> relu(a) + relu(b): relu is not additive.
rule relu-over-add
  source
    s = Add(a, b)
    z = Relu(s)
  target
    ra = Relu(a)
    rb = Relu(b)
    z2 = Add(ra, rb)
  map z -> z2
end

# (a b)^T -> a^T b^T: the factors must swap.
rule transpose-of-product-unswapped
  source
    p = MatMul(a, b)
    z = Transpose(p) [perm = [1, 0]]
  target
    ta = Transpose(a) [perm = [1, 0]]
    tb = Transpose(b) [perm = [1, 0]]
    z2 = MatMul(ta, tb)
  map z -> z2
end

# concat(a, b) -> concat(b, a): the order of a concatenation matters.
rule concat-swapped
  source
    z = Concat(a, b) [axis = ?ax]
  target
    z2 = Concat(b, a) [axis = ?ax]
  map z -> z2
end

# relu(conv(x, w1)) + relu(conv(x, w2)) -> relu(conv(x, w1 + w2)): only the linear parts add.
rule merge-relu-convs-by-sum
  source
    y1 = Conv(x, w1) [activation = "relu", kernel_shape = ?k, strides = ?s, pads = ?p, group = 1]
    y2 = Conv(x, w2) [activation = "relu", kernel_shape = ?k, strides = ?s, pads = ?p, group = 1]
    z = Add(y1, y2)
  where weight(w1)
  where weight(w2)
  target
    w = Add(w1, w2)
    z2 = Conv(x, w) [@y1]
  map z -> z2
end

# transpose(transpose(x, [1,2,0]), [1,2,0]) -> transpose(x, [1,2,0]): composes to [2,0,1].
rule compose-permutation-wrong
  source
    y = Transpose(x) [perm = [1, 2, 0]]
    z = Transpose(y) [perm = [1, 2, 0]]
  target
    z2 = Transpose(x) [perm = [1, 2, 0]]
  map z -> z2
end

# a - b -> b - a: subtraction does not commute.
rule sub-commuted
  source
    z = Sub(a, b)
  target
    z2 = Sub(b, a)
  map z -> z2
end

# conv[1x1, pads 0](x, w) -> conv[3x3, pads [0,0,2,2]](x, enlarge(w)): the right size, shifted.
rule enlarge-wrong-padding
  source
    y = Conv(x, w) [kernel_shape = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1], strides = [1, 1]]
  where weight(w)
  target
    w3 = Enlarge(w) [kernel_shape = [3, 3]]
    y2 = Conv(x, w3) [@y, kernel_shape = [3, 3], pads = [0, 0, 2, 2]]
  map y -> y2
end

# (a b) * w -> a (b * w) for a w of full shape: only a factor of one element moves into a
# product (an axiom stated for a scalar w must not be used at other ranks).
rule scale-of-product-by-tensor
  source
    p = MatMul(a, b) [activation = "none"]
    r = Mul(p, w)
  where rank(w) == 2
  target
    s = Mul(b, w)
    r2 = MatMul(a, s) [@p]
  map r -> r2
end
)RULES";

}  // namespace graphsub::testing
