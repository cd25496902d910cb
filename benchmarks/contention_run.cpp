// weft_contention_run: the weft side of benchmarks/contention.py. Loads an ONNX model with
// weft::onnx::load, builds it once, then answers requests on stdin, one per line:
//
//   <threads> <runs>     ->  {"threads": T, "median_ms": M, "min_ms": B, "runs": R}
//
// Each request sets the pool's thread count, runs the model twice to warm up (the pool's
// workers start lazily on a resize), then times `runs` runs of Module::run(). Keeping one
// process for the whole benchmark lets the script alternate weft and ONNX Runtime
// measurement by measurement without compiling the model again each time.
#include <weft/frontend/onnx/onnx.hpp>
#include <weft/weft.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: weft_contention_run model.onnx   (then '<threads> <runs>' lines on stdin)\n";
        return 2;
    }
    try {
        weft::graph::Module m = weft::graph::build(weft::onnx::load(argv[1]));
        for (int i = 0; i < m.num_inputs(); ++i)
            m.set_input(i, weft::Buffer<float>::random(m.input(i).shape(), -1.f, 1.f, 1234 + uint64_t(i)));
        std::cout << "{\"ready\": true, \"kernels\": " << m.kernels().size() << "}" << std::endl;
        int threads = 0, runs = 0;
        while (std::cin >> threads >> runs) {
            weft::set_num_threads(threads);
            m.run();
            m.run();
            std::vector<double> ms;
            for (int r = 0; r < runs; ++r) {
                auto t0 = std::chrono::steady_clock::now();
                m.run();
                ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
            }
            std::sort(ms.begin(), ms.end());
            std::cout << "{\"threads\": " << threads << ", \"median_ms\": " << ms[ms.size() / 2]
                      << ", \"min_ms\": " << ms.front() << ", \"runs\": " << runs << "}" << std::endl;
        }
    } catch (const std::exception& e) {
        std::string message = e.what();
        std::replace(message.begin(), message.end(), '"', '\'');
        std::cout << "{\"error\": \"" << message << "\"}" << std::endl;
        return 1;
    }
    return 0;
}
