// Buffers on a Device: copies between host and CUDA devices against the host data they
// started from (random data, several element types and shapes), device-to-device copies,
// freeing, streams. The host-only parts (copy_from between host buffers, the refusal to
// touch device memory from the host) run everywhere; the rest needs a GPU.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_runtime/ptx_kernels.hpp"

using namespace weft;

namespace {

template <class T>
bool same_contents(const Buffer<T>& a, const Buffer<T>& b) {
    if (a.shape() != b.shape()) return false;
    Buffer<T> ca = a.copy(), cb = b.copy();  // compact host copies
    return std::memcmp(ca.data(), cb.data(), static_cast<size_t>(ca.size_bytes())) == 0;
}

// A strided host view of `storage` (its rows are `pitch` apart, pitch > cols).
template <class T>
Buffer<T> strided_view(std::vector<T>& storage, int64_t rows, int64_t cols, int64_t pitch) {
    storage.assign(static_cast<size_t>(rows * pitch), T(0));
    return Buffer<T>(storage.data(), {rows, cols}, {pitch, 1});
}

}  // namespace

TEST_CASE("copy_from between host buffers copies through strides") {
    auto src = Buffer<float>::random({5, 7}, -1.f, 1.f, 11);
    std::vector<float> storage;
    Buffer<float> view = strided_view(storage, 5, 7, 9);
    view.copy_from(src);  // compact -> strided
    for (int64_t i = 0; i < 5; ++i)
        for (int64_t j = 0; j < 7; ++j) CHECK(view(i, j) == src(i, j));
    Buffer<float> back({5, 7});
    back.copy_from(view);  // strided -> compact
    CHECK(same_contents(back, src));
    // copy_to(cpu) is a compact owning copy.
    Buffer<float> again = view.copy_to(Device::cpu());
    CHECK(again.is_compact());
    CHECK(again.data() != view.data());
    CHECK(same_contents(again, src));
}

TEST_CASE("the host cannot touch the elements of a device buffer") {
    // No memory behind it: only the checks run, none touches the address.
    auto d = test::fake_device_buffer<float>({3, 4});
    CHECK(d.device() == Device::cuda(0));
    CHECK_THROWS_WITH_AS(d(1, 2), doctest::Contains("copy it to the host with copy_to(Device::cpu())"), Error);
    CHECK_THROWS_WITH_AS(d.begin(), doctest::Contains("begin()/end() on a buffer of shape {3, 4} on cuda(0)"), Error);
    CHECK_THROWS_WITH_AS(d.fill(1.f), doctest::Contains("fill() on a buffer of shape {3, 4} on cuda(0)"), Error);
}

TEST_CASE("device buffer round trip host to device to host") {
    if (!test::have_cuda_device()) return;
    for (std::vector<int64_t> shape : {std::vector<int64_t>{1}, {1000}, {3, 5, 7}, {257, 129}}) {
        auto f = Buffer<float>::random(shape, -10.f, 10.f, 1);
        Buffer<float> fd = f.copy_to(Device::cuda(0));
        CHECK(fd.device() == Device::cuda(0));
        CHECK(fd.shape() == f.shape());
        CHECK(fd.owns_memory());
        CHECK(same_contents(fd.copy_to(Device::cpu()), f));

        auto i = Buffer<int64_t>::random(shape, -1000000, 1000000, 2);
        CHECK(same_contents(i.copy_to(Device::cuda(0)).copy_to(Device::cpu()), i));
        auto u = Buffer<uint8_t>::random(shape, 0, 255, 3);  // odd byte counts
        CHECK(same_contents(u.copy_to(Device::cuda(0)).copy_to(Device::cpu()), u));
    }
    // A fresh device buffer is zero-filled, like a host one.
    Buffer<double> z({33}, Device::cuda(0));
    for (double v : z.copy_to(Device::cpu())) CHECK(v == 0.0);
    // Strided host buffers on either side.
    auto src = Buffer<float>::random({6, 10}, -1.f, 1.f, 4);
    std::vector<float> s1, s2;
    Buffer<float> in_view = strided_view(s1, 6, 10, 13);
    in_view.copy_from(src);
    Buffer<float> dev({6, 10}, Device::cuda(0));
    dev.copy_from(in_view);  // strided host -> device
    Buffer<float> out_view = strided_view(s2, 6, 10, 11);
    out_view.copy_from(dev);  // device -> strided host
    for (int64_t r = 0; r < 6; ++r)
        for (int64_t c = 0; c < 10; ++c) CHECK(out_view(r, c) == src(r, c));
}

TEST_CASE("device to device copy") {
    if (!test::have_cuda_device()) return;
    auto host = Buffer<float>::random({64, 33}, -1.f, 1.f, 5);
    Buffer<float> a = host.copy_to(Device::cuda(0));
    Buffer<float> b = a.copy_to(Device::cuda(0));  // device -> device, new memory
    CHECK(b.data() != a.data());
    Buffer<float> c({64, 33}, Device::cuda(0));
    c.copy_from(b);
    Buffer<float> d = c.copy();  // copy() keeps the device
    CHECK(d.device() == Device::cuda(0));
    CHECK(same_contents(d.copy_to(Device::cpu()), host));
    // Overwriting the source afterwards leaves the copy alone.
    a.copy_from(Buffer<float>::random({64, 33}, -1.f, 1.f, 6));
    CHECK(same_contents(b.copy_to(Device::cpu()), host));
    if (cuda::device_count() > 1) {
        Buffer<float> e = a.copy_to(Device::cuda(1));
        CHECK(e.device() == Device::cuda(1));
        CHECK(same_contents(e.copy_to(Device::cpu()), a.copy_to(Device::cpu())));
    }
}

TEST_CASE("device memory is freed when the last copy of a buffer goes") {
    if (!test::have_cuda_device()) return;
    constexpr int64_t kBytes = int64_t(512) << 20;
    Buffer<float> warm({16}, Device::cuda(0));  // the context exists before the first reading
    const int64_t free_before = cuda::memory_info().free_bytes;
    {
        Buffer<float> big({kBytes / 4}, Device::cuda(0));
        CHECK(cuda::memory_info().free_bytes <= free_before - kBytes);
        BufferRef shared = big;  // a copy shares the memory
        Buffer<float> second(shared);
        CHECK(second.data() == big.data());
        CHECK(cuda::memory_info().free_bytes > free_before - 2 * kBytes);
    }
    // Gone with the last copy (other processes may use the device too: allow some slack).
    CHECK(cuda::memory_info().free_bytes >= free_before - (int64_t(64) << 20));
}

TEST_CASE("streams: created streams run kernels and synchronize and events time them") {
    if (!test::have_cuda_device()) return;
    Kernel axpy = test::make_axpy();
    const int64_t n = 3000;
    auto x = Buffer<float>::random({n}, -1.f, 1.f, 7), y = Buffer<float>::random({n}, -1.f, 1.f, 8);
    Buffer<float> xd = x.copy_to(Device::cuda(0)), yd = y.copy_to(Device::cuda(0));
    cuda::Stream s = cuda::Stream::create(Device::cuda(0));
    CHECK(!s.is_default());
    CHECK(s.handle() != nullptr);
    CHECK(cuda::current_stream().is_default());
    {
        cuda::StreamGuard on(s);
        CHECK(cuda::current_stream().handle() == s.handle());
        for (int k = 0; k < 3; ++k) axpy(xd, yd, 0.5f, n);
    }
    CHECK(cuda::current_stream().is_default());
    s.synchronize();
    Buffer<float> got = yd.copy_to(Device::cpu());
    for (int64_t i = 0; i < n; ++i) {
        float want = y(i);
        for (int k = 0; k < 3; ++k) want = std::fmaf(0.5f, x(i), want);  // what fma.rn.f32 computes
        CHECK(got(i) == want);
    }
    cuda::synchronize();
    cuda::Stream::default_stream().synchronize();
    // Events on the stream time the kernels on the GPU's clock.
    cuda::Event start = cuda::Event::create(), end = cuda::Event::create();
    start.record(s);
    {
        cuda::StreamGuard on(s);
        for (int k = 0; k < 10; ++k) axpy(xd, yd, 0.5f, n);
    }
    end.record(s);
    const double ms = cuda::Event::elapsed_ms(start, end);
    MESSAGE("10 launches of axpy over " << n << " elements: " << ms << " ms");
    CHECK(ms >= 0);
    CHECK(ms < 10000);
}
