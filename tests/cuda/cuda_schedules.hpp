// The example GPU schedules the CUDA tests build: a tiled matmul with shared tiles, a local
// accumulator and optional double buffering; a conv2d with shared input and filter tiles;
// a row sum and a softmax whose row reductions are split over the threads of a block.
// Each test file checks one side of them (the CUDA C's structure, the emulated results,
// the results on a GPU).
#pragma once
#include "weft/weft.hpp"

namespace weft_cuda_test {

using namespace weft;

struct TiledMatmul {
    Tensor A, B, C, AA, BB, CL;
    Schedule s;
};

// C[M, N] = A[M, K] * B[K, N] with 64x64 block tiles, 4x4 per thread, k steps of 16.
inline TiledMatmul tiled_matmul(int64_t M, int64_t N, int64_t K, bool double_buffer) {
    TiledMatmul m;
    m.A = placeholder({M, K}, f32, "A");
    m.B = placeholder({K, N}, f32, "B");
    IterVar k = reduce_axis(0, K, "k");
    m.C = compute({M, N}, [&](Expr i, Expr j) { return sum(m.A(i, k) * m.B(k, j), {k}); }, "C");
    Schedule& s = m.s;
    s = create_schedule(m.C);
    m.AA = s.cache_read(m.A, "shared", {m.C});
    m.BB = s.cache_read(m.B, "shared", {m.C});
    m.CL = s.cache_write(m.C, "local");
    // The output: blocks over 64x64 tiles, threads over 4x4 sub-tiles.
    auto [by, yi] = s[m.C].split(m.C.axis(0), 64);
    auto [bx, xi] = s[m.C].split(m.C.axis(1), 64);
    auto [ty, yii] = s[m.C].split(yi, 4);
    auto [tx, xii] = s[m.C].split(xi, 4);
    s[m.C].reorder({by, bx, ty, tx, yii, xii});
    s[m.C].bind(by, block_y());
    s[m.C].bind(bx, block_x());
    s[m.C].bind(ty, thread_y());
    s[m.C].bind(tx, thread_x());
    s[m.C].vectorize(xii);
    // The accumulator: per thread, over k in steps of 16.
    s[m.CL].compute_at(s[m.C], tx);
    IterVar kk = s[m.CL].op()->reduce_axis.at(0);
    auto [ko, ki] = s[m.CL].split(kk, 16);
    s[m.CL].reorder({ko, ki, s[m.CL].op()->axis[0], s[m.CL].op()->axis[1]});
    // The shared tiles, per step of k, fetched by all 256 threads, 4 floats each.
    for (Tensor t : {m.AA, m.BB}) {
        s[t].compute_at(s[m.CL], ko);
        IterVar fused = s[t].fuse(t.axis(0), t.axis(1));
        auto [rest, vec] = s[t].split(fused, 4);
        auto [rest2, fx] = s[t].split(rest, 16);
        auto [outer, fy] = s[t].split(rest2, 16);
        s[t].bind(fy, thread_y());
        s[t].bind(fx, thread_x());
        s[t].vectorize(vec);
        if (double_buffer) s[t].double_buffer();
    }
    return m;
}


struct Conv2d {
    Tensor X, Wt, Y;
    Schedule s;
};

// Y[N, K, H, W] = conv2d(X[N, C, H, W], W[K, C, 3, 3]), padding 1, stride 1.
inline Conv2d conv2d_schedule(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K) {
    const int64_t R = 3;
    Tensor X = placeholder({N, C, H, W}, f32, "X");
    Tensor Wt = placeholder({K, C, R, R}, f32, "W");
    Tensor P = compute({N, C, H + 2, W + 2}, [&](Expr n, Expr c, Expr y, Expr x) {
        return if_then_else(y >= 1 && y < H + 1 && x >= 1 && x < W + 1, X(n, c, y - 1, x - 1), Expr(0.0f));
    }, "P");
    IterVar rc = reduce_axis(0, C, "rc"), ry = reduce_axis(0, R, "ry"), rx = reduce_axis(0, R, "rx");
    Tensor Y = compute({N, K, H, W}, [&](Expr n, Expr f, Expr y, Expr x) {
        return sum(P(n, rc, y + ry, x + rx) * Wt(f, rc, ry, rx), {rc, ry, rx});
    }, "Y");
    Schedule s = create_schedule(Y);
    Tensor PS = s.cache_read(P, "shared", {Y});
    Tensor WS = s.cache_read(Wt, "shared", {Y});
    s[P].compute_inline();
    Tensor YL = s.cache_write(Y, "local");
    // Output: blockIdx.z over (n, f), blockIdx.y/x over 8x8 tiles, one thread per pixel.
    IterVar nf = s[Y].fuse(Y.axis(0), Y.axis(1));
    auto [yo, yi] = s[Y].split(Y.axis(2), 8);
    auto [xo, xi] = s[Y].split(Y.axis(3), 8);
    s[Y].reorder({nf, yo, xo, yi, xi});
    s[Y].bind(nf, block_z());
    s[Y].bind(yo, block_y());
    s[Y].bind(xo, block_x());
    s[Y].bind(yi, thread_y());
    s[Y].bind(xi, thread_x());
    // The accumulator: per thread, channels in steps of 4.
    s[YL].compute_at(s[Y], xi);
    auto& red = s[YL].op()->reduce_axis;
    auto [rco, rci] = s[YL].split(red.at(0), 4);
    s[YL].reorder({rco, rci, red.at(1), red.at(2)});
    // The tiles, fetched cooperatively by the 8x8 threads (the input tile's 400 elements in
    // 7 rounds, the last one guarded).
    for (Tensor t : {PS, WS}) {
        s[t].compute_at(s[YL], rco);
        auto& ax = t.op()->axis;
        IterVar f = s[t].fuse(s[t].fuse(s[t].fuse(ax[0], ax[1]), ax[2]), ax[3]);
        auto [rest, fx] = s[t].split(f, 8);
        auto [outer, fy] = s[t].split(rest, 8);
        s[t].bind(fy, thread_y());
        s[t].bind(fx, thread_x());
    }
    return {X, Wt, Y, s};
}


// R (a row reduction attached at `row` of `consumer`) split over `threads` threads of the
// block: R.rf[thread] holds a partial result in shared memory; R itself is shared too, so
// every thread of the block reads it after a barrier.
inline Tensor parallel_row_reduce(Schedule& s, const Tensor& R, const Stage& consumer, const IterVar& row, int64_t threads) {
    IterVar k = s[R].op()->reduce_axis.at(0);
    auto [ko, ki] = s[R].split(k, threads);
    Tensor RF = s.rfactor(R, ki);
    s[RF].set_scope("shared");
    s[R].set_scope("shared");
    s[RF].compute_at(consumer, row);
    s[R].compute_at(consumer, row);
    s[RF].bind(RF.op()->axis.back(), thread_x());
    return RF;
}

struct RowSum {
    Tensor A, B;
    Schedule s;
};

// B[i] = sum_k A[i, k], one block per row, the row split over `threads` threads.
inline RowSum row_sum_schedule(int64_t rows, int64_t cols, int64_t threads) {
    Tensor A = placeholder({rows, cols}, f32, "A");
    IterVar k = reduce_axis(0, cols, "k");
    Tensor B = compute({rows}, [&](Expr i) { return sum(A(i, k), {k}); }, "B");
    Schedule s = create_schedule(B);
    IterVar kk = s[B].op()->reduce_axis.at(0);
    auto [ko, ki] = s[B].split(kk, threads);
    Tensor BF = s.rfactor(B, ki);
    s[BF].set_scope("shared");
    s[BF].compute_at(s[B], B.axis(0));
    s[BF].bind(BF.op()->axis.back(), thread_x());
    s[B].bind(B.axis(0), block_x());
    return {A, B, s};
}

struct Softmax {
    Tensor X, Y;
    Schedule s;
};

// Y = softmax(X) over each row: one block per row, the max and the sum split over `threads`
// threads of the block, the output's columns over the same threads.
inline Softmax softmax_schedule(int64_t rows, int64_t cols, int64_t threads) {
    Tensor X = placeholder({rows, cols}, f32, "X");
    IterVar k1 = reduce_axis(0, cols, "k1"), k2 = reduce_axis(0, cols, "k2");
    Tensor M = compute({rows}, [&](Expr i) { return max(X(i, k1), {k1}); }, "M");
    Tensor E = compute({rows, cols}, [&](Expr i, Expr j) { return exp(X(i, j) - M(i)); }, "E");
    Tensor S = compute({rows}, [&](Expr i) { return sum(E(i, k2), {k2}); }, "S");
    Tensor Y = compute({rows, cols}, [&](Expr i, Expr j) { return E(i, j) / S(i); }, "Y");
    Schedule s = create_schedule(Y);
    s[E].compute_inline();
    IterVar row = Y.axis(0);
    auto [jo, ji] = s[Y].split(Y.axis(1), threads);
    s[Y].bind(row, block_x());
    s[Y].bind(ji, thread_x());
    parallel_row_reduce(s, M, s[Y], row, threads);
    parallel_row_reduce(s, S, s[Y], row, threads);
    return {X, Y, s};
}


}  // namespace weft_cuda_test
