// Tuning records: what a tuner measured, one JSON object per line, appended as results come
// (a run stopped half-way keeps what it measured). Each record names the target it was
// measured on (target_key), the task's workload (its operator, shapes, types and
// attributes), the Config tried, its costs or its error, when, and the weft version.
//
//   {"target": "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver4 ... -threads=2",
//    "workload": "dense(float32[64, 512], float32[1000, 512]){}",
//    "config": {"gemm.mr": 4, "gemm.nr": 64}, "costs_ms": [0.081, 0.080, 0.082],
//    "error": "", "timestamp": 1795000000, "version": "0.1.0"}
//
// Records::best gives the fastest error-free config of a (target, workload); graph::build
// applies it to each fused group (BuildOptions::records, or the file WEFT_TUNING_RECORDS
// names). docs/tuning.md.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "weft/ir/target.hpp"
#include "weft/schedule/config.hpp"

namespace weft::autotune {

// The weft version records are stamped with (the project's VERSION in CMakeLists.txt).
inline constexpr char kWeftVersion[] = "0.1.0";

// A target as records name it: its code generation (Target::str()) and its thread count,
// which changes the best schedule too.
std::string target_key(const Target& target);

struct Record {
    std::string target;             // target_key of the machine measured on
    std::string workload;           // the task's workload key
    Config config;                  // the point measured
    std::vector<double> costs_ms;   // its run times (repeats); empty when it failed
    std::string error;              // why it failed ("" when it did not)
    int64_t timestamp = 0;          // seconds since 1970
    std::string version = kWeftVersion;

    bool ok() const { return error.empty() && !costs_ms.empty(); }
    // The median cost (infinity for a failed record).
    double cost_ms() const;
    // One line of JSON (no newline).
    std::string to_json() const;
    // Parses one line; weft::Error naming what is missing or malformed.
    static Record from_json(const std::string& line);
};

class Records {
public:
    Records() = default;
    // Every record of a JSON-lines file (blank lines skipped); weft::Error naming the file and
    // the line of the first malformed record. A file that does not exist is an error too.
    static Records load(const std::string& path);
    // The records of JSON-lines text; errors name `source` and the line.
    static Records parse(const std::string& text, const std::string& source);
    // Appends one line to `path` (created when missing).
    static void append_to_file(const std::string& path, const Record& record);

    void add(Record record);
    const std::vector<Record>& all() const { return records_; }
    size_t size() const { return records_.size(); }

    // The fastest error-free record of (target, workload), if any.
    const Record* best(const std::string& target, const std::string& workload) const;
    std::optional<Config> best_config(const Target& target, const std::string& workload) const;
    // One record per (target, workload): the best of each (TVM's pick_best).
    Records pick_best() const;
    // Writes every record, one per line.
    void save(const std::string& path) const;

private:
    std::vector<Record> records_;
    // (target, workload) -> index of its best record so far
    std::map<std::pair<std::string, std::string>, size_t> best_;
};

// Records committed with weft (include/weft/autotune/pretuned/records.inc, which
// benchmarks/pretune.py merges tuning runs into): the best config of each task of the models under
// models/ and the benchmarks' shapes, measured on the machines weft is developed on.
// graph::build applies them where the target's key (CPU, features and thread count) is
// theirs and no records of the user's have the workload (BuildOptions::pretuned_records).
const Records& pretuned_records();

}  // namespace weft::autotune
