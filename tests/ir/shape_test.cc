// Unit tests of shapes, tensors and attributes.
#include <catch2/catch.hpp>

#include "ir/attributes.h"
#include "ir/shape.h"
#include "ir/tensor.h"

using namespace graphsub::ir;

TEST_CASE("shapes keep symbolic and unknown dims", "[ir]") {
  Shape shape{true, {Dim::named("N"), Dim::known(3), Dim{}}};
  CHECK(to_string(shape) == "[N,3,?]");
  CHECK_FALSE(shape.is_static());
  CHECK_FALSE(shape.num_elements());
  CHECK(to_string(Shape::unknown()) == "[*]");
  CHECK(Shape::of({2, 3}).num_elements() == 6);
  CHECK(Shape::of({}).num_elements() == 1);
  CHECK(to_string(TensorType{DataType::kInt64, Shape::of({4})}) == "int64[4]");
}

TEST_CASE("tensors own their bytes and hash by content", "[ir]") {
  Tensor a = Tensor::from_floats({2, 2}, {1, 2, 3, 4});
  Tensor b = Tensor::from_floats({2, 2}, {1, 2, 3, 4});
  Tensor c = Tensor::from_floats({4}, {1, 2, 3, 4});
  CHECK(a.byte_size() == 16);
  CHECK(a.content_hash() == b.content_hash());
  CHECK(a.content_hash() != c.content_hash());
  CHECK(a.element_as_double(3) == 4.0);
  CHECK(Tensor::from_int64s({3}, {5, -1, 7}).to_int64s() == std::vector<int64_t>{5, -1, 7});
  CHECK_THROWS_AS(Tensor::from_floats({3}, {1, 2}), std::invalid_argument);
}

TEST_CASE("attributes are sorted, typed and compared by value", "[ir]") {
  Attributes a;
  a.set("strides", std::vector<int64_t>{2, 2});
  a.set("group", int64_t{1});
  a.set("activation", std::string("relu"));
  CHECK(a.items().front().first == "activation");
  CHECK(a.get_int("group", 0) == 1);
  CHECK(a.get_int("missing", 7) == 7);
  CHECK_THROWS_AS(a.get_float("group", 0), std::invalid_argument);
  Attributes b;
  b.set("group", int64_t{1});
  b.set("activation", std::string("relu"));
  b.set("strides", std::vector<int64_t>{2, 2});
  CHECK(a == b);
  CHECK(a.hash() == b.hash());
  b.set("strides", std::vector<int64_t>{1, 1});
  CHECK(a != b);
  CHECK(a.hash() != b.hash());
  Attributes t1, t2;
  t1.set("value", share(Tensor::from_floats({1}, {1})));
  t2.set("value", share(Tensor::from_floats({1}, {1})));
  CHECK(t1 == t2);
  CHECK(to_string(AttrValue{std::vector<int64_t>{1, 2}}) == "[1,2]");
}
