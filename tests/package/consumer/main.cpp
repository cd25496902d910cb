// A user's program, built against weft by the package tests (find_package and
// add_subdirectory). It must compile without LLVM's headers and link weft's implementation.
//
// For now it uses only the IR layer. Once build() exists this becomes the
// examples/matmul.cpp program (placeholder/compute/create_schedule/build, then a call on
// Buffers and a check of one element); keep the "weft consumer: ok" line at the end.
#include <cstdio>
#include <iostream>
#include <string>

#include <weft/ir/op.hpp>
#include <weft/ir/printer.hpp>

int main() {
    using namespace weft;
    using namespace weft::ir;

    Var i("i"), j("j");
    Expr e = (i + j) * 2 - min(i, 4);
    std::string text = to_string(e);
    std::cout << "expression: " << text << "\n";
    if (text != "(i + j) * 2 - min(i, 4)") {
        std::fprintf(stderr, "weft consumer: unexpected expression text\n");
        return 1;
    }
    std::cout << "weft consumer: ok\n";
    return 0;
}
