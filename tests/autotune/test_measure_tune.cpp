// Measuring candidates so that none can stop the tuner (a crash, a hang, a throw or a wrong
// output is that candidate's error), and graph::tune: its tasks, its seeded candidates, its
// records, and graph::build applying them.
#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <random>
#include <set>

#include <unistd.h>

#include "weft/weft.hpp"

using namespace weft;
namespace fs = std::filesystem;

TEST_CASE("run_isolated reports a child's message, crash, hang and throw") {
    CHECK(autotune::run_isolated([] { return std::string(); }, 5) == "");
    CHECK(autotune::run_isolated([] { return std::string("wrong result: element 3"); }, 5) == "wrong result: element 3");
    const std::string crash = autotune::run_isolated(
        []() -> std::string {
            std::raise(SIGSEGV);
            return "";
        },
        5);
    CHECK(crash.rfind("crashed: signal 11", 0) == 0);
    const std::string hang = autotune::run_isolated(
        []() -> std::string {
            for (volatile int i = 0;; i = i + 1) {
            }
        },
        0.3);
    CHECK(hang.rfind("timed out after", 0) == 0);
    const std::string thrown =
        autotune::run_isolated([]() -> std::string { throw Error("weft: a bad candidate"); }, 5);
    CHECK(thrown == "threw: weft: a bad candidate");
    // The parent goes on as before.
    CHECK(autotune::run_isolated([] { return std::string(); }, 5) == "");
}

// The batches a GPU tuner measures in one child process (measure_on_device): a child goes
// from item to item, stops after one that fails, and a crash or a hang costs that item alone;
// a payload larger than a pipe holds comes back whole.
TEST_CASE("run_in_children: one child for many items, a failure, crash or hang costs only its item") {
    const std::string big(1 << 20, 'x');
    std::vector<autotune::ChildResult> r = autotune::run_in_children(
        8,
        [&](size_t i, std::string& text) -> bool {
            if (i == 1) std::raise(SIGSEGV);
            if (i == 3) {
                text = "wrong result";
                return false;
            }
            if (i == 4)
                for (volatile unsigned k = 0;; k = k + 1) {  // (unsigned: no overflow under UBSan)
                }
            if (i == 5) throw Error("weft: a bad candidate");
            // The process id: items of one child share it.
            text = (i == 7 ? big : std::to_string(i)) + "@" + std::to_string(::getpid());
            return true;
        },
        1.0);
    REQUIRE(r.size() == 8);
    auto payload = [&](size_t i) { return r[i].text.substr(0, r[i].text.find('@')); };
    auto pid = [&](size_t i) { return r[i].text.substr(r[i].text.find('@') + 1); };
    CHECK(r[0].ok);
    CHECK(payload(0) == "0");
    CHECK(!r[1].ok);
    CHECK(r[1].text.rfind("crashed: signal 11", 0) == 0);
    CHECK(r[2].ok);
    CHECK(payload(2) == "2");
    CHECK(!r[3].ok);
    CHECK(r[3].text == "wrong result");
    CHECK(!r[4].ok);
    CHECK(r[4].text.rfind("timed out after", 0) == 0);
    CHECK(!r[5].ok);
    CHECK(r[5].text == "threw: weft: a bad candidate");
    CHECK(r[6].ok);
    CHECK(r[7].ok);
    CHECK(payload(7) == big);
    CHECK(pid(6) == pid(7));  // measured by one child
    CHECK(pid(0) != pid(2));  // a new child after the crash
    CHECK(pid(0) != std::to_string(::getpid()));
}

TEST_CASE("measure times a correct kernel and refuses a wrong output") {
    Tensor X = placeholder({1000}, f32, "x");
    Tensor Y = compute({1000}, [&](Expr i) { return X(i) * 2.f; }, "y");
    Schedule s = create_schedule(Y);
    Kernel k = build(s, {X, Y});
    BufferRef x = Buffer<float>::random({1000}, -1, 1, 1), y = BufferRef::allocate(f32, {1000});
    Buffer<float> want({1000});
    for (int64_t i = 0; i < 1000; ++i) want(i) = static_cast<const float*>(x.data())[i] * 2.f;
    autotune::MeasureResult ok = autotune::measure(k, {x, y}, 1, &want, {.repeats = 3});
    CHECK(ok.ok());
    CHECK(ok.costs_ms.size() == 3);
    want(7) += 1.f;
    autotune::MeasureResult bad = autotune::measure(k, {x, y}, 1, &want, {});
    CHECK(!bad.ok());
    CHECK(bad.error.rfind("wrong result: element 7", 0) == 0);
    CHECK(bad.costs_ms.empty());
}

namespace {

// Two dense layers of the same shape (one task, two groups) and a different third one.
graph::Graph mlp() {
    graph::Graph g;
    graph::Value x = g.input("x", {32, 64});
    auto w1 = g.constant("w1", Buffer<float>::random({64, 64}, -0.2f, 0.2f, 1));
    auto w2 = g.constant("w2", Buffer<float>::random({64, 64}, -0.2f, 0.2f, 2));
    auto w3 = g.constant("w3", Buffer<float>::random({48, 64}, -0.2f, 0.2f, 3));
    graph::Value h = g.relu(g.dense(x, w1));
    h = g.relu(g.dense(h, w2));
    g.output(g.dense(h, w3), "y");
    return g;
}

std::vector<float> run(graph::Module& m) {
    m.set_input("x", Buffer<float>::random({32, 64}, -1, 1, 9));
    m.run();
    const BufferRef& y = m.get_output(0);
    const float* p = static_cast<const float*>(y.data());
    return {p, p + y.size()};
}

// The records of one workload, in the order they were measured.
std::vector<autotune::Record> records_of(const autotune::Records& rs, const std::string& workload) {
    std::vector<autotune::Record> out;
    for (const auto& r : rs.all())
        if (r.workload == workload) out.push_back(r);
    return out;
}

}  // namespace

TEST_CASE("extract_tasks gives one task per distinct workload with a choice") {
    std::vector<graph::TuningTask> tasks = graph::extract_tasks(mlp());
    REQUIRE(tasks.size() == 2);
    CHECK(tasks[0].groups == 2);
    CHECK(tasks[1].groups == 1);
    CHECK(tasks[0].workload != tasks[1].workload);
    CHECK(tasks[0].space.size() > 1);
    CHECK(tasks[0].space.find("gemm.mr") != nullptr);
}

TEST_CASE("tune measures seeded candidates, the default first, and build applies the best") {
    const graph::Graph g = mlp();
    const fs::path path = fs::temp_directory_path() / ("weft_tune_" + std::to_string(std::random_device{}()) + ".jsonl");
    std::vector<std::string> lines;
    graph::TuneOptions options{.trials = 4, .seed = 7, .measure = {.repeats = 2}, .records_file = path.string(),
                               .progress = [&](const graph::TuneProgress& p) { lines.push_back(graph::progress_line(p)); }};
    autotune::Records records = graph::tune(g, Target::host(), options);
    CHECK(records.size() == 8);  // 2 tasks x 4 trials
    CHECK(lines.size() == 8);
    for (const auto& l : lines) CHECK(l.rfind("task ", 0) == 0);
    // An estimate of the time left once the trials are planned (after every default): none
    // while the defaults are measured, none left after the last trial.
    CHECK(lines[0].find(" left") == std::string::npos);
    CHECK(lines[1].find(" left") == std::string::npos);
    CHECK(lines[2].find(" s left") != std::string::npos);
    CHECK(lines.back().find(", ~0 s left") != std::string::npos);
    std::vector<graph::TuningTask> tasks = graph::extract_tasks(g);
    // Every task's default is measured first, then each task's other candidates.
    CHECK(records.all()[0].config == tasks[0].space.defaults());
    CHECK(records.all()[1].config == tasks[1].space.defaults());
    for (const auto& t : tasks) {
        std::vector<autotune::Record> rs = records_of(records, t.workload);
        REQUIRE(rs.size() == 4);
        for (const auto& r : rs) {
            CAPTURE(r.error);
            CHECK(r.ok());
        }
    }
    // The best of each task is at least as fast as its default (the default is a candidate).
    for (const auto& t : tasks) {
        const autotune::Record* best = records.best(autotune::target_key(Target::host()), t.workload);
        REQUIRE(best);
        double default_ms = 0;
        for (const auto& r : records.all())
            if (r.workload == t.workload && r.config == t.space.defaults()) default_ms = r.cost_ms();
        CHECK(best->cost_ms() <= default_ms);
    }
    // The same seed draws the same candidates; the file holds every record.
    autotune::Records again = graph::tune(g, Target::host(), {.trials = 4, .seed = 7, .measure = {.repeats = 1}});
    REQUIRE(again.size() == records.size());
    for (const auto& t : tasks) {
        std::vector<autotune::Record> x = records_of(again, t.workload), y = records_of(records, t.workload);
        REQUIRE(x.size() == y.size());
        for (size_t i = 0; i < x.size(); ++i) CHECK(x[i].config == y[i].config);
    }
    CHECK(autotune::Records::load(path.string()).size() == 8);
    // Built with the records: every dense group tuned, the same numbers as untuned.
    graph::Module plain = graph::build(g), tuned = graph::build(g, Target::host(), {.records_file = path.string()});
    int tuned_groups = 0, tunable_groups = 0;
    for (const auto& k : tuned.kernels()) tuned_groups += k.tuned;
    for (const auto& k : plain.kernels()) tunable_groups += k.tunable;
    CHECK(tuned_groups == 3);
    CHECK(tunable_groups == 3);
    std::vector<float> a = run(plain), b = run(tuned);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) REQUIRE(std::abs(a[i] - b[i]) <= 1e-4f * (1 + std::abs(a[i])));
    fs::remove(path);
}

TEST_CASE("the genetic tuner measures distinct points, the default first, the same for one seed") {
    const graph::Graph g = mlp();
    graph::TuneOptions o{.trials = 10, .tuner = graph::TuneOptions::Tuner::Genetic, .seed = 3,
                         .measure = {.warmup = 0, .repeats = 1}};
    autotune::Records a = graph::tune(g, Target::host(), o), b = graph::tune(g, Target::host(), o);
    std::vector<graph::TuningTask> tasks = graph::extract_tasks(g);
    REQUIRE(a.size() == 20);
    REQUIRE(b.size() == 20);
    for (size_t t = 0; t < 2; ++t) {
        std::vector<autotune::Record> ra = records_of(a, tasks[t].workload), rb = records_of(b, tasks[t].workload);
        REQUIRE(ra.size() == 10);
        REQUIRE(rb.size() == 10);
        std::set<uint64_t> seen;
        for (const auto& r : ra) {
            CHECK(r.ok());
            seen.insert(tasks[t].space.index_of(r.config));
        }
        CHECK(seen.size() == 10);
        CHECK(ra[0].config == tasks[t].space.defaults());
        // The same seed gives the same default and first random point; the bred ones that
        // follow depend on the measured costs.
        for (size_t i = 0; i < 2; ++i) CHECK(ra[i].config == rb[i].config);
    }
}

TEST_CASE("the grid tuner walks the space in index order after the default") {
    const graph::Graph g = mlp();
    autotune::Records r = graph::tune(g, Target::host(), {.trials = 3, .tuner = graph::TuneOptions::Tuner::Grid,
                                                          .measure = {.warmup = 0, .repeats = 1}});
    std::vector<graph::TuningTask> tasks = graph::extract_tasks(g);
    REQUIRE(r.size() == 6);
    const ConfigSpace& space = tasks[0].space;
    const uint64_t first = space.index_of(space.defaults()) == 0 ? 1 : 0;
    std::vector<autotune::Record> rs = records_of(r, tasks[0].workload);
    REQUIRE(rs.size() == 3);
    CHECK(rs[1].config == space.at(first));
    CHECK_THROWS_WITH_AS(graph::tune(g, Target::host(), {.trials = 0}), doctest::Contains("trials must be at least 1"),
                         Error);
}

TEST_CASE("total_trials shares the trials by the tasks' share of the run time") {
    // A large product and a tiny one: the large one takes nearly all of the run time.
    graph::Graph g;
    graph::Value x = g.input("x", {256, 256}), y = g.input("y", {4, 8});
    auto w = g.constant("w", Buffer<float>::random({256, 256}, -0.1f, 0.1f, 1));
    auto v = g.constant("v", Buffer<float>::random({8, 8}, -0.1f, 0.1f, 2));
    g.output(g.dense(x, w), "big");
    g.output(g.dense(y, v), "tiny");
    std::vector<graph::TuningTask> tasks = graph::extract_tasks(g);
    REQUIRE(tasks.size() == 2);
    autotune::Records r =
        graph::tune(g, Target::host(), {.total_trials = 12, .measure = {.warmup = 1, .repeats = 3}});
    size_t big = 0, tiny = 0;
    for (const auto& t : tasks) {
        const size_t n = records_of(r, t.workload).size();
        (t.workload.find("256") != std::string::npos ? big : tiny) = n;
    }
    CHECK(tiny >= 1);  // at least its default
    CHECK(big > tiny);
    CHECK(big + tiny <= 12 + 2);
    CHECK_THROWS_WITH_AS(graph::tune(g, Target::host(), {.total_trials = -1}),
                         doctest::Contains("total_trials must not be negative"), Error);
}
