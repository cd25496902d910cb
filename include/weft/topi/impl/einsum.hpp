// Definitions of topi/einsum.hpp.
#pragma once
#include <algorithm>
#include <map>

#include "weft/topi/einsum.hpp"
#include "weft/topi/impl/transform.hpp"

namespace weft::topi {

namespace einsum_detail {

// Labels: a letter's code (its char), or 1000 + k for the k-th ellipsis dimension counted
// from the right (so the operands' ellipses align at their ends, as broadcasting does).
struct Plan {
    std::vector<std::vector<int>> operands;  // each operand's label per dimension
    std::vector<int> output, reduced;
    std::map<int, int64_t> extent;
};

inline Plan plan(const std::string& equation, const std::vector<std::vector<int64_t>>& shapes) {
    std::string eq;
    for (char ch : equation)
        if (ch != ' ') eq += ch;
    const std::string where = "einsum '" + equation + "': ";
    const size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow), rhs = arrow == std::string::npos ? "" : eq.substr(arrow + 2);
    std::vector<std::string> terms;
    for (size_t start = 0;;) {
        size_t comma = lhs.find(',', start);
        terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    WEFT_CHECK(terms.size() == shapes.size(), where, terms.size(), " operand terms for ", shapes.size(), " inputs");
    Plan p;
    int64_t ellipsis_rank = -1;
    // The labels of a term for a tensor of `rank` dimensions (rank -1: the output's).
    auto labels_of = [&](const std::string& term, int64_t rank) {
        const size_t dots = term.find("...");
        std::string letters = term;
        if (dots != std::string::npos) letters.erase(dots, 3);
        for (char ch : letters)
            WEFT_CHECK(std::isalpha(static_cast<unsigned char>(ch)), where, "'", ch, "' in '", term,
                       "' is not a letter (or an ellipsis)");
        int64_t n_ellipsis = 0;
        if (dots != std::string::npos) {
            n_ellipsis = rank >= 0 ? rank - int64_t(letters.size()) : std::max<int64_t>(ellipsis_rank, 0);
            WEFT_CHECK(n_ellipsis >= 0, where, "'", term, "' has more labels than its operand's ", rank, " dimensions");
        } else {
            WEFT_CHECK(rank < 0 || rank == int64_t(letters.size()), where, "'", term, "' labels ", letters.size(),
                       " dimensions of an operand of rank ", rank);
        }
        std::vector<int> out;
        for (size_t k = 0; k < term.size();) {
            if (dots != std::string::npos && k == dots) {
                for (int64_t e = n_ellipsis; e-- > 0;) out.push_back(1000 + int(e));
                k += 3;
            } else {
                out.push_back(int(term[k++]));
            }
        }
        if (dots != std::string::npos && rank >= 0) ellipsis_rank = std::max(ellipsis_rank, n_ellipsis);
        return out;
    };
    std::map<int, int> uses;
    for (size_t i = 0; i < terms.size(); ++i) {
        std::vector<int> ls = labels_of(terms[i], int64_t(shapes[i].size()));
        for (size_t d = 0; d < ls.size(); ++d) {
            const int64_t e = shapes[i][d];
            auto it = p.extent.find(ls[d]);
            if (it == p.extent.end() || it->second == 1) p.extent[ls[d]] = e;
            else
                WEFT_CHECK(e == it->second || (e == 1 && ls[d] >= 1000), where, "label ",
                           ls[d] >= 1000 ? std::string("of the ellipsis") : std::string(1, char(ls[d])), " has extent ",
                           it->second, " and ", e);
            ++uses[ls[d]];
        }
        p.operands.push_back(ls);
    }
    if (arrow != std::string::npos) {
        p.output = labels_of(rhs, -1);
        for (int l : p.output) {
            WEFT_CHECK(p.extent.count(l), where, "the output label '", char(l), "' is in no operand");
            WEFT_CHECK(std::count(p.output.begin(), p.output.end(), l) == 1, where, "the output repeats '", char(l), "'");
        }
    } else {
        for (int64_t e = std::max<int64_t>(ellipsis_rank, 0); e-- > 0;) p.output.push_back(1000 + int(e));
        for (auto [l, n] : uses)
            if (l < 1000 && n == 1) p.output.push_back(l);  // std::map: alphabetical (A-Z before a-z)
    }
    for (auto [l, e] : p.extent)
        if (std::find(p.output.begin(), p.output.end(), l) == p.output.end()) p.reduced.push_back(l);
    return p;
}

}  // namespace einsum_detail

std::vector<int64_t> einsum_shape(const std::string& equation, const std::vector<std::vector<int64_t>>& shapes) {
    einsum_detail::Plan p = einsum_detail::plan(equation, shapes);
    std::vector<int64_t> out;
    for (int l : p.output) out.push_back(p.extent.at(l));
    if (out.empty()) out.push_back(1);  // a full contraction: one element
    return out;
}

Tensor einsum(const std::string& equation, const std::vector<Tensor>& inputs) {
    WEFT_CHECK(!inputs.empty(), "einsum '", equation, "': no operands");
    std::vector<std::vector<int64_t>> shapes;
    for (const Tensor& t : inputs) {
        shapes.push_back(const_shape(t, "einsum"));
        WEFT_CHECK(t.dtype() == inputs[0].dtype(), "einsum '", equation, "': '", t.name(), "' has dtype ",
                   t.dtype().str(), " but '", inputs[0].name(), "' has ", inputs[0].dtype().str());
    }
    einsum_detail::Plan p = einsum_detail::plan(equation, shapes);
    std::map<int, IterVar> reduce;
    std::vector<IterVar> raxes;
    for (int l : p.reduced) {
        reduce[l] = te::reduce_axis(make_int(0), make_int(p.extent.at(l)), "k" + std::to_string(l));
        raxes.push_back(reduce[l]);
    }
    std::vector<Expr> shape;
    for (int64_t e : einsum_shape(equation, shapes)) shape.push_back(make_int(e));
    return nn_detail::compute_nd(
        shape,
        [&](const std::vector<Expr>& o) {
            std::map<int, Expr> at;
            for (size_t k = 0; k < p.output.size(); ++k) at[p.output[k]] = o[k];
            for (auto& [l, iv] : reduce) at[l] = iv;
            Expr product;
            for (size_t i = 0; i < inputs.size(); ++i) {
                std::vector<Expr> idx;
                for (size_t d = 0; d < p.operands[i].size(); ++d)  // a broadcast dimension of 1 reads 0
                    idx.push_back(shapes[i][d] == 1 ? make_int(0) : at.at(p.operands[i][d]));
                Expr v = inputs[i].at(idx);
                product = product.defined() ? product * v : v;
            }
            return raxes.empty() ? product : te::sum(product, raxes);
        },
        "einsum");
}

}  // namespace weft::topi
