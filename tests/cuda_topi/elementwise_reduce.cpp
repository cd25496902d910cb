// topi::cuda::schedule_injective and schedule_reduce: the CUDA C compiles (NVRTC, sm_90) and
// has the expected structure; with a GPU, the kernels match the CPU build.
#include "cuda_topi_util.hpp"

using namespace cuda_topi_test;

TEST_CASE("injective: a fused element-wise chain is one flat kernel with float4 accesses") {
    Tensor a = placeholder({1024, 36}, f32, "a"), b = placeholder({1024, 36}, f32, "b");
    Tensor c = topi::relu(topi::add(topi::mul(a, b), a));
    Schedule s = create_schedule(c);
    topi::cuda::schedule_injective(s, c);
    Compiled k = check_float_kernel(s, {a, b}, c);
    CHECK(count(k.source, "blockIdx.x") >= 1);
    CHECK(count(k.source, "threadIdx.x") >= 1);
    CHECK(count(k.source, "float4") >= 3);  // two loads and the store
    CHECK(count(k.source, "__launch_bounds__(256)") == 1);
}

TEST_CASE("injective: a broadcast with an odd size stays scalar and guards its tail") {
    Tensor a = placeholder({37, 53}, f32, "a"), b = placeholder({53}, f32, "b");
    Tensor c = topi::sigmoid(topi::sub(a, b));
    Schedule s = create_schedule(c);
    topi::cuda::schedule(s, c);
    Compiled k = check_float_kernel(s, {a, b}, c, 1e-5, 1e-6);
    CHECK(count(k.source, "float4") == 0);
    CHECK(count(k.source, "if (") >= 1);
}

TEST_CASE("reduce: a row sum is one block per row with the partial sums in shared memory") {
    Tensor a = placeholder({64, 1000}, f32, "a");
    Tensor c = topi::sum(a, {1});
    Schedule s = create_schedule(c);
    topi::cuda::schedule_reduce(s, c);
    Compiled k = check_float_kernel(s, {a}, c, 1e-4, 1e-4);
    CHECK(count(k.source, "__shared__") == 1);
    CHECK(count(k.source, "__syncthreads()") >= 1);
    CHECK(count(k.source, "threadIdx.x") >= 1);
}

TEST_CASE("reduce: mean over the last two axes and max over the first") {
    Tensor a = placeholder({6, 33, 47}, f32, "a");
    Tensor m = topi::mean(a, {1, 2});
    Schedule s = create_schedule(m);
    topi::cuda::schedule(s, m);
    Compiled k = check_float_kernel(s, {a}, m, 1e-4, 1e-5);
    CHECK(count(k.source, "__shared__") == 1);

    // max with a ReLU epilogue (a kernel named "max" would clash with CUDA's max()).
    Tensor mx = topi::max(a, {0});
    Tensor r = topi::relu(mx);
    Schedule s2 = create_schedule(r);
    topi::cuda::schedule_reduce(s2, mx, r);
    Compiled k2 = check_float_kernel(s2, {a}, r, 0, 0);
    CHECK(count(k2.source, "__shared__") == 0);  // one thread per output, reading down the columns
}

TEST_CASE("reduce: a sum of everything is one block") {
    Tensor a = placeholder({129, 7}, f32, "a");
    Tensor t = topi::sum(a, {});
    Schedule s = create_schedule(t);
    topi::cuda::schedule_reduce(s, t);
    Compiled k = check_float_kernel(s, {a}, t, 1e-4, 1e-4);
    CHECK(count(k.source, "__shared__") == 1);
}

TEST_CASE("pooling: max and average windows with padding, one thread per output") {
    Tensor x = placeholder({2, 5, 17, 19}, f32, "x");
    topi::Pool2dParams p;
    p.kernel = {3, 3};
    p.stride = {2, 2};
    p.padding = {1, 1, 1, 1};
    Tensor mp = topi::max_pool2d(x, p);
    Schedule s = create_schedule(mp);
    topi::cuda::schedule(s, mp);
    check_float_kernel(s, {x}, mp, 0, 0);
    Tensor ap = topi::avg_pool2d(x, p);
    Schedule s2 = create_schedule(ap);
    topi::cuda::schedule_pool2d(s2, ap);
    check_float_kernel(s2, {x}, ap, 1e-5, 1e-6);
    Tensor gp = topi::global_avg_pool2d(x);
    Schedule s3 = create_schedule(gp);
    topi::cuda::schedule(s3, gp);
    check_float_kernel(s3, {x}, gp, 1e-5, 1e-6);
}
