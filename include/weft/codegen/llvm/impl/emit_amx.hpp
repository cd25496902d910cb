// Intel AMX tiles for tensor intrinsics (topi/x86.hpp's amx_bf16_tile, amx_u8s8_tile,
// conv2d_nchwc_bf16's and conv2d_nchwc_u8s8's AMX schedules):
//   weft.amx_tdpbf16ps / weft.amx_tdpbusd(c, ldc, c_next, a, lda, a_next, b, ldb, panel,
//                                          tile_rows, step_bytes, rows, cols, blocks, n0, s0, ...)
// accumulates `blocks` blocks side by side, each of rows x cols (1 or 2 each) tiles of C
// (float32 / int32) of tile_rows rows (1 to 16) x 16 columns, rows ldc elements apart, the
// next tile row c_next elements on and the next tile column 16 elements on; with the
// products of A's tiles (tile_rows rows lda elements apart, the next tile row a_next on) and
// B's (rows ldb elements apart, the next column `panel` elements on, the next block cols
// panels on), over the K steps of step_bytes (64 or 32) of A per row and step_bytes / 4 rows
// of B: a nest of loops (n_i iterations, outermost first) that moves A s_i elements per
// iteration of loop i and B a step's rows per step (a matmul: one loop of K/32 steps of 32
// elements; a convolution: input channel blocks, kernel rows and columns, and the steps
// within a block). ldtilecfg once, then per block the
// C tiles loaded into tmm0-3, per step the A tiles into tmm4-5 and the B tiles into tmm6-7
// and one tdp per C tile, the C tiles stored; tilerelease.
// c, a and b are loads of the operands' first elements: their addresses are taken, nothing
// is loaded from them here (as weft.prefetch). The target must have amx-tile and amx-bf16 /
// amx-int8 (else a weft::Error); the code first asks for the process's AMX state
// (weft_runtime_request_amx, ir/abi.hpp).
#pragma once
#include <functional>

#include <llvm/IR/IntrinsicsX86.h>

#include "weft/codegen/llvm/impl/codegen.hpp"

namespace weft::codegen::detail {

inline bool is_amx_tile_dot(const std::string& name) {
    return name == "weft.amx_tdpbf16ps" || name == "weft.amx_tdpbusd";
}

inline llvm::Value* CodeGenLLVM::emit_amx_tile_dot(const ir::Call* op) {
    WEFT_ICHECK(op->args.size() >= 16 && op->args.size() % 2 == 0, op->name,
                " takes (c, ldc, c_next, a, lda, a_next, b, ldb, panel, tile_rows, step_bytes, rows, cols, blocks, n0, "
                "s0, ...)");
    const bool bf16 = op->name == "weft.amx_tdpbf16ps";
    const char* unit = bf16 ? "amx-bf16" : "amx-int8";
    WEFT_CHECK(target_.has_feature("amx-tile") && target_.has_feature(unit), "the kernel uses AMX tiles (",
               op->name.substr(5), "), which target ", target_.str(), " lacks (amx-tile and ", unit,
               " in Target::features): schedule it for this CPU without them, or build for an AMX CPU");
    int64_t tile_rows = 0, step_bytes = 0, rows = 0, cols = 0;
    WEFT_ICHECK(ir::as_const_int(op->args[9], &tile_rows) && ir::as_const_int(op->args[10], &step_bytes) &&
                    ir::as_const_int(op->args[11], &rows) && ir::as_const_int(op->args[12], &cols) && tile_rows >= 1 &&
                    tile_rows <= 16 && (step_bytes == 32 || step_bytes == 64) && rows >= 1 && rows <= 2 && cols >= 1 &&
                    cols <= 2,
                op->name, ": a block of 1 or 2 x 1 or 2 tiles of 1 to 16 rows, steps of 32 or 64 bytes");
    auto* i64 = b_.getInt64Ty();
    auto* i8 = b_.getInt8Ty();
    auto address = [&](const ir::Expr& e) {
        const ir::Load* load = e.as<ir::Load>();
        WEFT_ICHECK(load && load->type.is_scalar(), op->name, ": its operands are scalar loads of their first elements");
        llvm::Type* elem = memory_type(ctx_, load->type);
        return b_.CreateGEP(elem, buffer(load->buffer), emit(load->index));
    };
    auto bytes = [&](const ir::Expr& elements, const ir::Expr& of) {
        return b_.CreateMul(int_cast(emit(elements), i64, true), b_.getInt64(of.type().bytes()));
    };
    llvm::Value* c = address(op->args[0]);
    llvm::Value* ldc = bytes(op->args[1], op->args[0]);
    llvm::Value* c_next = bytes(op->args[2], op->args[0]);
    llvm::Value* a = address(op->args[3]);
    llvm::Value* lda = bytes(op->args[4], op->args[3]);
    llvm::Value* a_next = bytes(op->args[5], op->args[3]);
    llvm::Value* b = address(op->args[6]);
    llvm::Value* ldb = bytes(op->args[7], op->args[6]);
    llvm::Value* panel = bytes(op->args[8], op->args[6]);
    llvm::Value* blocks = int_cast(emit(op->args[13]), i64, true);
    std::vector<std::pair<llvm::Value*, llvm::Value*>> nest;  // (iterations, A's bytes per iteration)
    for (size_t i = 14; i < op->args.size(); i += 2)
        nest.emplace_back(int_cast(emit(op->args[i]), i64, true), bytes(op->args[i + 1], op->args[3]));
    // The process's AMX state, asked for once (a refusal fails the kernel with its reason).
    llvm::Value* granted = b_.CreateCall(runtime_function("weft_runtime_request_amx"), {});
    fail_unless(b_.CreateICmpEQ(granted, b_.getInt32(0)), "");
    // The tile configuration: palette 1; C's tiles (0-3) of tile_rows rows of 64 bytes, A's
    // (4, 5) of tile_rows rows of step_bytes, B's (6, 7) of step_bytes / 4 rows of 64. Its 64
    // bytes live in the function's entry block (one slot however often this runs).
    llvm::BasicBlock& entry = fs_.fn->getEntryBlock();
    llvm::IRBuilder<> at_entry(&entry, entry.begin());
    llvm::AllocaInst* config = at_entry.CreateAlloca(llvm::ArrayType::get(i8, 64), nullptr, "amx.config");
    config->setAlignment(llvm::Align(64));
    b_.CreateMemSet(config, b_.getInt8(0), 64, llvm::MaybeAlign(64));
    auto store_at = [&](llvm::Value* v, int offset) {
        b_.CreateStore(v, b_.CreateConstInBoundsGEP1_64(i8, config, uint64_t(offset)));
    };
    store_at(b_.getInt8(1), 0);
    for (int t = 0; t < 8; ++t) {
        store_at(b_.getInt16(uint16_t(t == 4 || t == 5 ? step_bytes : 64)), 16 + 2 * t);  // bytes per row
        store_at(b_.getInt8(uint8_t(t < 6 ? tile_rows : step_bytes / 4)), 48 + t);          // rows
    }
    b_.CreateIntrinsic(llvm::Intrinsic::x86_ldtilecfg, {}, {config});
    auto tile = [&](int64_t t) { return b_.getInt8(uint8_t(t)); };
    // for (i = 0; i < count; ++i) body(i), in the blocks it makes.
    auto counted_loop = [&](const char* name, llvm::Value* count, const std::function<void(llvm::Value*)>& body) {
        llvm::BasicBlock* before = b_.GetInsertBlock();
        auto* loop = llvm::BasicBlock::Create(ctx_, name, fs_.fn);
        auto* done = llvm::BasicBlock::Create(ctx_, std::string(name) + ".done", fs_.fn);
        b_.CreateCondBr(b_.CreateICmpSGT(count, b_.getInt64(0)), loop, done);
        b_.SetInsertPoint(loop);
        llvm::PHINode* i = b_.CreatePHI(i64, 2, name);
        i->addIncoming(b_.getInt64(0), before);
        body(i);
        llvm::Value* next = b_.CreateAdd(i, b_.getInt64(1));
        i->addIncoming(next, b_.GetInsertBlock());
        b_.CreateCondBr(b_.CreateICmpSLT(next, count), loop, done);
        b_.SetInsertPoint(done);
    };
    const int64_t c_bytes = op->args[0].type().bytes();
    const auto dot = bf16 ? llvm::Intrinsic::x86_tdpbf16ps : llvm::Intrinsic::x86_tdpbusd;
    // Block by block: C 16 cols columns on, B cols panels on.
    counted_loop("amx.block", blocks, [&](llvm::Value* block) {
        llvm::Value* c_block = b_.CreateGEP(i8, c, b_.CreateMul(block, b_.getInt64(16 * cols * c_bytes)));
        llvm::Value* b_block = b_.CreateGEP(i8, b, b_.CreateMul(block, b_.CreateMul(panel, b_.getInt64(cols))));
        // C tile (r, s): tmm(r * cols + s), r tile rows and 16 s columns on.
        auto c_tiles = [&](llvm::Intrinsic::ID move) {
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t s = 0; s < cols; ++s) {
                    llvm::Value* at = b_.CreateAdd(b_.CreateMul(c_next, b_.getInt64(r)), b_.getInt64(16 * s * c_bytes));
                    b_.CreateIntrinsic(move, {}, {tile(r * cols + s), b_.CreateGEP(i8, c_block, at), ldc});
                }
        };
        c_tiles(llvm::Intrinsic::x86_tileloadd64);
        // The K steps: the nest's loops, A at the sum of their offsets, B a step's rows on per
        // step (the step's index in the flattened nest).
        std::function<void(size_t, llvm::Value*, llvm::Value*)> steps = [&](size_t level, llvm::Value* a_at,
                                                                          llvm::Value* flat) {
            if (level == nest.size()) {
                llvm::Value* b_step =
                    b_.CreateGEP(i8, b_block, b_.CreateMul(flat, b_.CreateMul(ldb, b_.getInt64(step_bytes / 4))));
                for (int64_t r = 0; r < rows; ++r)
                    b_.CreateIntrinsic(llvm::Intrinsic::x86_tileloadd64, {},
                                       {tile(4 + r), b_.CreateGEP(i8, a_at, b_.CreateMul(a_next, b_.getInt64(r))), lda});
                for (int64_t s = 0; s < cols; ++s)
                    b_.CreateIntrinsic(llvm::Intrinsic::x86_tileloadd64, {},
                                       {tile(6 + s), b_.CreateGEP(i8, b_step, b_.CreateMul(panel, b_.getInt64(s))), ldb});
                for (int64_t r = 0; r < rows; ++r)
                    for (int64_t s = 0; s < cols; ++s)
                        b_.CreateIntrinsic(dot, {}, {tile(r * cols + s), tile(4 + r), tile(6 + s)});
                return;
            }
            auto [count, stride] = nest[level];
            counted_loop("amx.k", count, [&](llvm::Value* i) {
                steps(level + 1, b_.CreateGEP(i8, a_at, b_.CreateMul(i, stride)), b_.CreateAdd(b_.CreateMul(flat, count), i));
            });
        };
        steps(0, a, b_.getInt64(0));
        c_tiles(llvm::Intrinsic::x86_tilestored64);
    });
    b_.CreateIntrinsic(llvm::Intrinsic::x86_tilerelease, {}, {});
    return llvm::Constant::getNullValue(type_of(op->type));
}

}  // namespace weft::codegen::detail
