// Taking LLVM vectors apart and putting them back together by lane ranges (for splitting a
// wide vector over narrower library calls, or computing some lanes one at a time).
#pragma once
#include <vector>

#include <llvm/IR/IRBuilder.h>

namespace weft::codegen::detail {

// Lanes [at, at + n) of v, as a vector of n lanes.
inline llvm::Value* extract_lanes(llvm::IRBuilder<>& b, llvm::Value* v, int at, int n) {
    std::vector<int> mask;
    for (int i = 0; i < n; ++i) mask.push_back(at + i);
    return b.CreateShuffleVector(v, mask);
}

// n lanes starting at lane `at` of a result; n == 1 means `value` is a scalar.
struct VectorPiece {
    int at;
    int n;
    llvm::Value* value;
};

// The vector of type `type` whose lanes come from `pieces` (which cover every lane once).
inline llvm::Value* assemble_lanes(llvm::IRBuilder<>& b, llvm::Type* type, const std::vector<VectorPiece>& pieces) {
    int lanes = int(llvm::cast<llvm::FixedVectorType>(type)->getNumElements());
    if (pieces.size() == 1 && pieces[0].n == lanes) return pieces[0].value;
    llvm::Value* result = llvm::PoisonValue::get(type);
    for (const auto& p : pieces) {
        if (p.n == 1) {
            result = b.CreateInsertElement(result, p.value, uint64_t(p.at));
            continue;
        }
        std::vector<int> widen, blend;
        for (int i = 0; i < lanes; ++i) widen.push_back(i < p.n ? i : -1);
        for (int i = 0; i < lanes; ++i) blend.push_back(i >= p.at && i < p.at + p.n ? lanes + i - p.at : i);
        llvm::Value* wide = b.CreateShuffleVector(p.value, widen);
        result = b.CreateShuffleVector(result, wide, blend);
    }
    return result;
}

}  // namespace weft::codegen::detail
