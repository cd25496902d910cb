// Buffer<T> and BufferRef: ownership, wrapping, strides, alignment, indexing, errors.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "weft/runtime/buffer.hpp"

using namespace weft;

TEST_CASE("an owning buffer is compact row-major zero-filled and 64-byte aligned") {
    Buffer<float> b({3, 4, 5});
    CHECK(b.defined());
    CHECK(b.owns_memory());
    CHECK(b.ndim() == 3);
    CHECK(b.shape() == std::vector<int64_t>{3, 4, 5});
    CHECK(b.strides() == std::vector<int64_t>{20, 5, 1});
    CHECK(b.dim(1) == 4);
    CHECK(b.size() == 60);
    CHECK(b.size_bytes() == 240);
    CHECK(b.dtype() == f32);
    CHECK(b.is_compact());
    CHECK(reinterpret_cast<uintptr_t>(b.data()) % 64 == 0);
    for (float x : b) CHECK(x == 0.0f);
    Buffer<int8_t> odd({3});  // 3 bytes still get an aligned block
    CHECK(reinterpret_cast<uintptr_t>(odd.data()) % 64 == 0);
}

TEST_CASE("a buffer of 2 MiB or more starts on a 2 MiB boundary and is zero-filled") {
    // Large storage is aligned for transparent huge pages (weft_runtime_alloc).
    for (int64_t n : {int64_t(512 * 1024), int64_t(4096 * 1024 + 3), int64_t(5000000)}) {
        Buffer<float> b({n});
        CHECK(reinterpret_cast<uintptr_t>(b.data()) % (uintptr_t(2) << 20) == 0);
        bool zero = true;
        for (int64_t i = 0; i < n; i += 4099) zero = zero && b.data()[i] == 0.f;
        CHECK(zero);
        b.data()[n - 1] = 1.f;  // the whole extent is usable (ASan checks the bounds)
    }
    Buffer<float> small({1000});
    CHECK(reinterpret_cast<uintptr_t>(small.data()) % 64 == 0);
}

TEST_CASE("element access follows the strides and is bounds-checked") {
    Buffer<int32_t> b({2, 3});
    b(1, 2) = 7;
    CHECK(b.data()[1 * 3 + 2] == 7);
    CHECK_THROWS_AS(b(2, 0), Error);
    CHECK_THROWS_AS(b(0, -1), Error);
    CHECK_THROWS_WITH_AS(b(0), doctest::Contains("takes 2 indices but 1 were given"), Error);
    CHECK_THROWS_AS(b.dim(2), Error);
}

TEST_CASE("copies share storage and copy() makes a deep compact copy") {
    Buffer<double> a({4});
    Buffer<double> shared = a;
    shared(2) = 1.5;
    CHECK(a(2) == 1.5);
    Buffer<double> deep = a.copy();
    deep(2) = 9;
    CHECK(a(2) == 1.5);
    CHECK(deep.data() != a.data());
    // The storage outlives the original handle.
    double* p = a.data();
    a = Buffer<double>();
    CHECK(shared.data() == p);
    CHECK(shared(2) == 1.5);
}

TEST_CASE("wrapping user memory with default and explicit strides") {
    std::vector<float> mem(12);
    for (size_t i = 0; i < mem.size(); ++i) mem[i] = float(i);
    Buffer<float> rowmajor(mem.data(), {3, 4});
    CHECK(!rowmajor.owns_memory());
    CHECK(rowmajor.strides() == std::vector<int64_t>{4, 1});
    CHECK(rowmajor(2, 1) == 9.0f);

    // A transposed view: shape {4, 3}, strides {1, 4}.
    Buffer<float> transposed(mem.data(), {4, 3}, {1, 4});
    CHECK(!transposed.is_compact());
    CHECK(transposed(1, 2) == mem[2 * 4 + 1]);
    CHECK_THROWS_AS(transposed.begin(), Error);
    Buffer<float> gathered = transposed.copy();
    CHECK(gathered.is_compact());
    CHECK(gathered(1, 2) == transposed(1, 2));
    CHECK(gathered(3, 0) == transposed(3, 0));

    transposed.fill(-1.0f);  // fill works on strided buffers too
    for (float x : mem) CHECK(x == -1.0f);

    WeftTensorArg arg = transposed.tensor_arg();
    CHECK(arg.data == mem.data());
    CHECK(arg.ndim == 2);
    CHECK(arg.shape[0] == 4);
    CHECK(arg.strides[0] == 1);
    CHECK(arg.dtype_code == uint8_t(DataType::Code::Float));
    CHECK(arg.dtype_bits == 32);
    CHECK(arg.dtype_lanes == 1);
}

TEST_CASE("a dimension of extent 1 may carry any stride and stay compact") {
    std::vector<float> mem(4);
    Buffer<float> b(mem.data(), {1, 4}, {100, 1});
    CHECK(b.is_compact());
}

TEST_CASE("bad shapes and strides are user errors") {
    CHECK_THROWS_WITH_AS(Buffer<float>({4, 0}), doctest::Contains("dimension 1 has extent 0"), Error);
    CHECK_THROWS_AS(Buffer<float>({-3}), Error);
    CHECK_THROWS_WITH_AS(Buffer<float>({int64_t(1) << 40, int64_t(1) << 40}), doctest::Contains("int64"), Error);
    float x[4];
    CHECK_THROWS_WITH_AS(Buffer<float>(x, {2, 2}, {1}), doctest::Contains("one stride"), Error);
    CHECK_THROWS_WITH_AS(Buffer<float>(nullptr, {2, 2}), doctest::Contains("null pointer"), Error);
}

TEST_CASE("an undefined buffer") {
    Buffer<float> b;
    CHECK(!b.defined());
    CHECK(b.size() == 0);
    CHECK_THROWS_AS(b(), Error);
    b.fill(1.0f);  // nothing to fill, no crash
}

TEST_CASE("BufferRef erases the element type and Buffer<T> views it back with a dtype check") {
    BufferRef r = BufferRef::allocate(i16, {2, 5});
    CHECK(r.dtype() == i16);
    CHECK(r.size_bytes() == 20);
    Buffer<int16_t> typed(r);
    typed(1, 4) = 3;
    CHECK(static_cast<int16_t*>(r.data())[9] == 3);
    CHECK_THROWS_WITH_AS(Buffer<float>{r}, doctest::Contains("Buffer<float>"), Error);
    const BufferRef& as_ref = typed;  // every Buffer<T> is a BufferRef
    CHECK(as_ref.dtype() == i16);
}

TEST_CASE("random() is reproducible and within range") {
    auto a = Buffer<float>::random({100}, -2.0f, 3.0f, 42);
    auto b = Buffer<float>::random({100}, -2.0f, 3.0f, 42);
    auto c = Buffer<float>::random({100}, -2.0f, 3.0f, 43);
    bool differs = false;
    for (int64_t i = 0; i < 100; ++i) {
        CHECK(a(i) == b(i));
        CHECK(a(i) >= -2.0f);
        CHECK(a(i) < 3.0f);
        differs |= a(i) != c(i);
    }
    CHECK(differs);
    auto ints = Buffer<int8_t>::random({1000}, -3, 3, 1);
    bool saw_lo = false, saw_hi = false;
    for (int8_t v : ints) {
        CHECK(v >= -3);
        CHECK(v <= 3);
        saw_lo |= v == -3;
        saw_hi |= v == 3;
    }
    CHECK(saw_lo);
    CHECK(saw_hi);
    auto bits = Buffer<bool>::random({64}, false, true, 5);
    CHECK(bits.size() == 64);
}
