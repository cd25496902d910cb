// Definition of ir/depth.hpp.
#pragma once
#include <unordered_map>
#include <vector>

#include "weft/ir/depth.hpp"

namespace weft::ir {

namespace depth_detail {

// The direct children of an expression node (statements never appear inside one).
inline void children(const ExprNode* n, std::vector<const ExprNode*>& out) {
    auto add = [&](const Expr& e) {
        if (e.defined()) out.push_back(static_cast<const ExprNode*>(e.get()));
    };
    switch (n->kind) {
#define WEFT_BINARY_CHILDREN(N)                        \
    case NodeKind::N:                                  \
        add(static_cast<const N*>(n)->a);   \
        add(static_cast<const N*>(n)->b);   \
        break;
        WEFT_BINARY_CHILDREN(Add) WEFT_BINARY_CHILDREN(Sub) WEFT_BINARY_CHILDREN(Mul) WEFT_BINARY_CHILDREN(Div)
        WEFT_BINARY_CHILDREN(Mod) WEFT_BINARY_CHILDREN(Min) WEFT_BINARY_CHILDREN(Max) WEFT_BINARY_CHILDREN(EQ)
        WEFT_BINARY_CHILDREN(NE) WEFT_BINARY_CHILDREN(LT) WEFT_BINARY_CHILDREN(LE) WEFT_BINARY_CHILDREN(GT)
        WEFT_BINARY_CHILDREN(GE) WEFT_BINARY_CHILDREN(And) WEFT_BINARY_CHILDREN(Or)
#undef WEFT_BINARY_CHILDREN
        case NodeKind::Not: add(static_cast<const Not*>(n)->a); break;
        case NodeKind::Select: {
            auto* s = static_cast<const Select*>(n);
            add(s->condition), add(s->true_value), add(s->false_value);
            break;
        }
        case NodeKind::Cast: add(static_cast<const Cast*>(n)->value); break;
        case NodeKind::Call:
            for (const Expr& a : static_cast<const Call*>(n)->args) add(a);
            break;
        case NodeKind::Load: add(static_cast<const Load*>(n)->index); break;
        case NodeKind::Ramp: add(static_cast<const Ramp*>(n)->base), add(static_cast<const Ramp*>(n)->stride); break;
        case NodeKind::Broadcast: add(static_cast<const Broadcast*>(n)->value); break;
        case NodeKind::Let: add(static_cast<const Let*>(n)->value), add(static_cast<const Let*>(n)->body); break;
        case NodeKind::Reduce: {
            auto* r = static_cast<const Reduce*>(n);
            for (const Expr& s : r->source) add(s);
            add(r->condition);
            break;
        }
        case NodeKind::ProducerLoad:
            for (const Expr& i : static_cast<const ProducerLoad*>(n)->indices) add(i);
            break;
        default: break;  // leaves: immediates and variables
    }
}

}  // namespace depth_detail

int64_t expr_depth(const Expr& e, int64_t cap) {
    if (!e.defined()) return 0;
    // Post-order with an explicit stack; depth[n] is known once its children are.
    std::unordered_map<const ExprNode*, int64_t> depth;
    struct Frame {
        const ExprNode* node;
        bool expanded;
    };
    std::vector<Frame> stack{{static_cast<const ExprNode*>(e.get()), false}};
    std::vector<const ExprNode*> kids;
    while (!stack.empty()) {
        Frame f = stack.back();
        if (depth.count(f.node)) {
            stack.pop_back();
            continue;
        }
        kids.clear();
        depth_detail::children(f.node, kids);
        if (!f.expanded) {
            stack.back().expanded = true;
            for (const ExprNode* k : kids)
                if (!depth.count(k)) stack.push_back({k, false});
            continue;
        }
        stack.pop_back();
        int64_t d = 1;
        for (const ExprNode* k : kids) d = std::max(d, depth[k] + 1);
        if (d >= cap) return cap;
        depth[f.node] = d;
    }
    return depth[static_cast<const ExprNode*>(e.get())];
}

}  // namespace weft::ir
