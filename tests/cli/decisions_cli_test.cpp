// rig fit, place, history and diff end to end through the executable.
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "rig/report/document.hpp"

namespace rig {
namespace {

using rig::test::CliRun;
namespace fs = std::filesystem;

class Decisions : public rig::test::CliFixture {
 protected:
  std::string history() const { return "--history " + path("h/history.sqlite"); }
  std::string bench(const std::string& device, const std::string& extra) {
    return "bench " + model_ + " -d " + device +
           " --duration 0.5s --repeats 3 --latency-samples 10 --min-inferences 10 " + extra;
  }
};

nlohmann::json read_json(const std::string& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

TEST_F(Decisions, EveryMeasuringRunIsAppendedAndDiffed) {
  CliRun a = test::rig(bench("sim:compute=1ms", history() + " --json " + path("a.json")));
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find("rig: history: run 1"), std::string::npos) << a.output;
  CliRun b = test::rig(bench("sim:compute=2ms", history()));
  ASSERT_EQ(b.status, 0) << b.output;
  CliRun skipped = test::rig(bench("sim:compute=3ms", history() + " --no-history"));
  ASSERT_EQ(skipped.status, 0) << skipped.output;
  CliRun list = test::rig("history " + history() + " --json " + path("l.json"));
  ASSERT_EQ(list.status, 0) << list.output;
  EXPECT_NE(list.output.find("2 runs"), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("sim:compute=2ms"), std::string::npos) << list.output;
  EXPECT_EQ(list.output.find("sim:compute=3ms"), std::string::npos) << list.output;
  const auto listing = read_json(path("l.json"));
  EXPECT_EQ(listing["kind"], "history");
  ASSERT_EQ(listing["runs"].size(), 2u);
  EXPECT_EQ(listing["runs"][1]["verdict"], "VALID");
  // The stored document is the one written.
  CliRun show = test::rig("history " + history() + " --show 1");
  ASSERT_EQ(show.status, 0);
  EXPECT_EQ(nlohmann::json::parse(show.output), read_json(path("a.json")));
  EXPECT_EQ(read_json(path("a.json"))["model"]["sha256"].get<std::string>().size(), 64u);
  // Twice the compute: the rate halves, outside the noise; the specs differ.
  CliRun d = test::rig("diff 1 2 " + history() + " --json " + path("d.json"));
  EXPECT_EQ(d.status, 1) << d.output;
  EXPECT_NE(d.output.find("steady.rate_per_s"), std::string::npos) << d.output;
  EXPECT_NE(d.output.find("OUTSIDE"), std::string::npos) << d.output;
  EXPECT_NE(d.output.find("environments differ"), std::string::npos) << d.output;
  EXPECT_EQ(read_json(path("d.json"))["kind"], "diff");
  // A run against its own file: nothing changed.
  CliRun same = test::rig("diff 1 " + path("a.json") + " " + history());
  EXPECT_EQ(same.status, 0) << same.output;
  // --tool filters; an unknown id is named.
  EXPECT_NE(test::rig("history " + history() + " --tool 'rig ladder'").output.find("0 runs"),
            std::string::npos);
  CliRun missing = test::rig("diff 1 7 " + history());
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_NE(missing.output.find("no run 7"), std::string::npos) << missing.output;
}

// Issue 26, item 6: an unusable history is found before the measurement,
// not after it: the run is refused at once, naming the file and the way out
// (--no-history), and nothing was measured or printed.
TEST_F(Decisions, ACorruptHistoryIsRefusedBeforeMeasuring) {
  fs::create_directories(dir_ / "h");
  std::ofstream(path("h/history.sqlite")) << std::string(4096, 'x');
  CliRun r = test::rig(bench("sim:compute=1ms", history() + " --json " + path("r.json")));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("file is not a database"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(path("h/history.sqlite")), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--no-history"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing was measured"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("steady"), std::string::npos) << r.output;  // no report
  EXPECT_FALSE(fs::exists(path("r.json")));
  // With --no-history the same run measures and writes its result.
  CliRun ok =
      test::rig(bench("sim:compute=1ms", history() + " --no-history -q --json " + path("r.json")));
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_EQ(read_json(path("r.json"))["tool"], "rig bench");
}

TEST_F(Decisions, FitAModelFileAndTheSeedsCount) {
  CliRun r =
      test::rig("fit " + model_ + " --device-memory 1MB --link usb3-gen2 --json " + path("f.json"));
  ASSERT_EQ(r.status, 0) << r.output;
  const auto doc = read_json(path("f.json"));
  EXPECT_EQ(doc["kind"], "fit");
  EXPECT_TRUE(doc["model"]["from_graph"].get<bool>());
  EXPECT_GT(doc["model"]["parameters"].get<uint64_t>(), 0u);
  CliRun seed = test::rig("fit --params 12.0225e9 --device-memory 8GB --bits 16,4");
  ASSERT_EQ(seed.status, 0) << seed.output;
  EXPECT_NE(seed.output.find("STREAMED"), std::string::npos) << seed.output;
  EXPECT_NE(seed.output.find("RESIDENT"), std::string::npos) << seed.output;
  CliRun bad = test::rig("fit --params 10 --device-memory 8GB --ladder " + model_);
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("not JSON"), std::string::npos) << bad.output;
  CliRun none = test::rig("fit --params 10");
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.output.find("--device-memory"), std::string::npos);
}

TEST_F(Decisions, PlaceExitsOneWhenNothingMeetsTheWorkload) {
  ASSERT_EQ(
      test::rig(bench("sim:compute=2ms,bw=100MB/s", "-q --no-history --json " + path("b.json")))
          .status,
      0);
  CliRun ok = test::rig("place " + path("b.json") + " --workload fps=30,latency=50ms --json " +
                        path("p.json"));
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_TRUE(read_json(path("p.json"))["results"]["met"].get<bool>());
  CliRun pipeline =
      test::rig("place " + path("b.json") + " --workload fps=30 --pipeline only:" + model_);
  EXPECT_EQ(pipeline.status, 0) << pipeline.output;  // matched by the model's sha256
  CliRun miss = test::rig("place " + path("b.json") + " --workload fps=100000");
  EXPECT_EQ(miss.status, 1) << miss.output;
  EXPECT_NE(miss.output.find("NOT MET"), std::string::npos) << miss.output;
}

// Issue 27, item 5: predict, fit and place state each input's verdict and
// carry it into their own; --strict refuses an INVALID input by name (exit
// 2) and writes nothing.
TEST_F(Decisions, PredictFitAndPlaceCarryTheirInputsVerdicts) {
  constexpr auto npos = std::string::npos;
  // Too few lone frames: INVALID (enough_lone_frames), on the sim's clock.
  CliRun bad = test::rig("bench " + model_ +
                         " -d sim:compute=1ms --duration 0.5s --repeats 3 --min-inferences 10 "
                         "--latency-samples 5 -q --no-history --json " +
                         path("bad.json"));
  ASSERT_EQ(bad.status, 0) << bad.output;
  ASSERT_FALSE(read_json(path("bad.json"))["verdict"]["valid"].get<bool>());
  CliRun good = test::rig(bench("sim:compute=1ms", "-q --no-history --json " + path("good.json")));
  ASSERT_EQ(good.status, 0) << good.output;
  ASSERT_TRUE(read_json(path("good.json"))["verdict"]["valid"].get<bool>());

  CliRun p =
      test::rig("predict " + path("bad.json") + " --link usb3-gen2 --json " + path("p.json"));
  EXPECT_EQ(p.status, 0) << p.output;
  EXPECT_NE(p.output.find("input " + path("bad.json") + " (rig bench): INVALID (lone-frame"), npos)
      << p.output;
  EXPECT_NE(p.output.find("verdict: INVALID"), npos) << p.output;
  const auto pj = read_json(path("p.json"));
  EXPECT_EQ(pj["schema_version"], kJsonSchemaVersion);
  EXPECT_EQ(pj["verdict"]["status"], "INVALID");
  EXPECT_EQ(pj["verdict"]["rules"][0]["rule"], "input_valid");
  EXPECT_EQ(pj["inputs"][0]["status"], "INVALID");
  EXPECT_FALSE(pj["settings"]["strict"].get<bool>());
  CliRun strict = test::rig("predict " + path("bad.json") + " --link usb3-gen2 --strict --json " +
                            path("ps.json"));
  EXPECT_EQ(strict.status, 2) << strict.output;
  EXPECT_NE(strict.output.find("predict --strict: " + path("bad.json") + " is INVALID"), npos)
      << strict.output;
  EXPECT_FALSE(fs::exists(path("ps.json")));
  CliRun valid = test::rig("predict " + path("good.json") + " --link usb3-gen2 --strict --json " +
                           path("pg.json"));
  EXPECT_EQ(valid.status, 0) << valid.output;
  EXPECT_EQ(read_json(path("pg.json"))["verdict"]["status"], "VALID");

  // place: one INVALID result makes the placement INVALID; so does a
  // prediction from one (its own verdict, schema 6).
  CliRun pl = test::rig("place " + path("good.json") + " " + path("bad.json") +
                        " --workload fps=1 --json " + path("pl.json"));
  EXPECT_EQ(pl.status, 0) << pl.output;
  const auto plj = read_json(path("pl.json"));
  EXPECT_EQ(plj["verdict"]["status"], "INVALID");
  EXPECT_EQ(plj["inputs"][0]["status"], "VALID");
  EXPECT_EQ(plj["inputs"][1]["status"], "INVALID");
  EXPECT_NE(pl.output.find("verdict: INVALID"), npos) << pl.output;
  CliRun pl_strict = test::rig("place " + path("good.json") + " " + path("bad.json") +
                               " --workload fps=1 --strict");
  EXPECT_EQ(pl_strict.status, 2) << pl_strict.output;
  EXPECT_NE(pl_strict.output.find("place --strict: " + path("bad.json") + " is INVALID"), npos)
      << pl_strict.output;
  CliRun from_prediction =
      test::rig("place " + path("p.json") + " --workload fps=1 --json " + path("pp.json"));
  EXPECT_EQ(from_prediction.status, 0) << from_prediction.output;
  EXPECT_EQ(read_json(path("pp.json"))["verdict"]["status"], "INVALID");
  CliRun place_good = test::rig("place " + path("good.json") + " --workload fps=1 --strict");
  EXPECT_EQ(place_good.status, 0) << place_good.output;
  EXPECT_NE(place_good.output.find("verdict: VALID"), npos) << place_good.output;

  // fit --ladder: the fixture ladder is INVALID.
  const std::string ladder = std::string(RIG_FIXTURES) + "/ladder-v2.json";
  CliRun fit = test::rig("fit --params 1e6 --device-memory 8GB --ladder " + ladder + " --json " +
                         path("f.json"));
  EXPECT_EQ(fit.status, 0) << fit.output;
  EXPECT_NE(fit.output.find("(rig ladder): INVALID"), npos) << fit.output;
  EXPECT_EQ(read_json(path("f.json"))["verdict"]["status"], "INVALID");
  CliRun fit_strict = test::rig("fit --params 1e6 --device-memory 8GB --strict --ladder " + ladder);
  EXPECT_EQ(fit_strict.status, 2) << fit_strict.output;
  EXPECT_NE(fit_strict.output.find("fit --strict: " + ladder + " is INVALID"), npos)
      << fit_strict.output;
  // Without a result read: nothing to carry, VALID.
  CliRun plain = test::rig("fit --params 1e6 --device-memory 8GB --json " + path("f0.json"));
  EXPECT_EQ(plain.status, 0) << plain.output;
  EXPECT_EQ(read_json(path("f0.json"))["verdict"]["status"], "VALID");
}

}  // namespace
}  // namespace rig
