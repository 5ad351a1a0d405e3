// The verdict: every rule checked is listed with its outcome, failed rules
// file their findings as reasons (invalidating) or warnings, and --strict is
// decided in one place.
#include <gtest/gtest.h>

#include <algorithm>

#include "rig/scenario/ab.hpp"
#include "rig/scenario/bench.hpp"
#include "rig/scenario/rate_search.hpp"
#include "rig/scenario/verdict.hpp"

namespace rig {
namespace {

using namespace std::chrono_literals;

const RuleOutcome* find_rule(const Verdict& v, std::string_view name) {
  auto it = std::find_if(v.rules.begin(), v.rules.end(),
                         [&](const RuleOutcome& r) { return r.rule == name; });
  return it == v.rules.end() ? nullptr : &*it;
}

// Windows of `frames` frames each at these rates.
std::vector<WindowFigure> windows_of(const std::vector<double>& rates, uint64_t frames) {
  std::vector<WindowFigure> windows;
  double start = 0;
  for (double rate : rates) {
    WindowFigure w;
    w.start_s = start;
    w.inferences = frames;
    w.duration_s = static_cast<double>(frames) / rate;
    w.rate = rate;
    start += w.duration_s;
    windows.push_back(w);
  }
  return windows;
}

BenchResult good_bench() {
  BenchResult r;
  r.effective.point.repeats = 2;
  r.effective.point.min_inferences = 100;
  SteadyRepeat rep;
  rep.inferences = 500;
  rep.stable = true;
  rep.warmup_settled = true;
  r.steady.repeats = {rep, rep};
  const std::vector<double> rates = {100, 101};
  r.steady.rate = summarize(rates);
  r.latency.samples = 200;
  return r;
}

TEST(Verdict, EveryRuleIsListedWhenAllAreMet) {
  const Verdict v = judge(good_bench());
  EXPECT_TRUE(v.valid);
  EXPECT_TRUE(v.reasons.empty());
  EXPECT_TRUE(v.warnings.empty());
  for (const char* rule : {"depth_within_queue", "no_errors", "all_repeats_ran", "enough_samples",
                           "device_returned_requests", "repeat_stable", "repeats_agree",
                           "enough_lone_frames", "rig_not_limiting", "warmup_settled", "quiet_host",
                           "device_without_warnings", "real_clock"}) {
    const RuleOutcome* r = find_rule(v, rule);
    ASSERT_NE(r, nullptr) << rule;
    EXPECT_TRUE(r->met) << rule;
    EXPECT_FALSE(r->evidence.empty()) << rule;
  }
}

TEST(Verdict, FailedRulesGiveReasonsWithWhatToChange) {
  BenchResult r = good_bench();
  r.steady.repeats[1].inferences = 7;
  r.steady.repeats[1].stable = false;
  r.steady.repeats[1].last_windows_spread = 0.2;
  r.steady.repeats[1].windows = windows_of({100, 100, 100, 100, 120}, 100);
  r.steady.repeats[0].device_stuck = true;
  r.steady.repeats[0].errors = 2;
  r.steady.repeats[0].first_error = Error{ErrorCode::timeout, "no reply"};
  const std::vector<double> rates = {100, 150};
  r.steady.rate = summarize(rates);
  r.latency.samples = 3;
  const Verdict v = judge(r);
  EXPECT_FALSE(v.valid);
  auto has = [&](const char* needle) {
    return std::any_of(v.reasons.begin(), v.reasons.end(),
                       [&](const std::string& s) { return s.find(needle) != std::string::npos; });
  };
  EXPECT_TRUE(has("2 inference(s) failed; first: timeout: no reply"));
  EXPECT_TRUE(has("repeat 2: too few samples (7 < 100); raise --duration"));
  EXPECT_TRUE(has("repeat 1: the device did not return every request"));
  EXPECT_TRUE(has("repeat 2: not stable (last 3 windows differ by 20.0% > 5.0%)"));
  EXPECT_TRUE(has("repeats disagree: spread"));
  EXPECT_TRUE(has("lone-frame latency: too few samples (3 < 10)"));
  // Checked per repeat: repeat 1 had enough samples, repeat 2 did not.
  std::vector<bool> samples_met;
  for (const auto& rule : v.rules)
    if (rule.rule == "enough_samples") samples_met.push_back(rule.met);
  EXPECT_EQ(samples_met, (std::vector<bool>{true, false}));
  EXPECT_TRUE(find_rule(v, "all_repeats_ran")->met);
  // Each repeat's findings come together, in the order the repeats ran.
  const auto at = [&](const char* needle) {
    return std::find_if(v.reasons.begin(), v.reasons.end(),
                        [&](const std::string& s) { return s.find(needle) != std::string::npos; }) -
           v.reasons.begin();
  };
  EXPECT_LT(at("repeat 1: the device did not return"), at("repeat 2: too few samples"));
  EXPECT_LT(at("repeat 2: too few samples"), at("repeat 2: not stable"));
  // A timeout is a device failure: exit 3, strict or not.
  EXPECT_EQ(strict_exit_status(v, true), 3);
  EXPECT_EQ(strict_exit_status(v, false), 3);
  r.steady.repeats[0].first_error = Error{ErrorCode::invalid_argument, "bad input"};
  EXPECT_EQ(strict_exit_status(judge(r), true), 1);
  EXPECT_EQ(strict_exit_status(judge(r), false), 0);
}

// A device or link failure during the run exits 3 whatever --strict says;
// other errors leave the exit status to the verdict.
TEST(Verdict, ADeviceOrLinkFailureDuringTheRunExits3) {
  BenchResult r = good_bench();
  EXPECT_EQ(strict_exit_status(judge(r), false), 0);
  r.steady.repeats[0].errors = 1;
  r.steady.repeats[0].first_error = Error{ErrorCode::invalid_argument, "bad input"};
  EXPECT_EQ(strict_exit_status(judge(r), false), 0);
  EXPECT_EQ(strict_exit_status(judge(r), true), 1);
  r.latency.errors = 1;
  r.latency.first_error = Error{ErrorCode::disconnected, "the server went away"};
  const Verdict v = judge(r);
  ASSERT_TRUE(v.failure);
  EXPECT_EQ(v.failure->code, ErrorCode::disconnected);
  EXPECT_EQ(strict_exit_status(v, false), 3);
  EXPECT_EQ(strict_exit_status(v, true), 3);
}

// Issue 36 item 6: a spread the frame-time noise explains for windows this
// short is not instability. Windows of 20 frames whose frame times vary by
// 30% (sd / mean, at depth 1) differ by up to 5.063 x 0.3 / sqrt(20) = 34%
// by chance: a 20% spread warns "too few frames per window (20)"; the same
// spread over windows of 2000 frames (noise 3.4%) is unstable.
TEST(Verdict, StabilityIsJudgedOnEnoughFrames) {
  BenchResult r = good_bench();
  SteadyRepeat& rep = r.steady.repeats[1];
  rep.stable = false;
  rep.depth = 1;
  rep.last_windows_spread = 0.2;
  rep.windows = windows_of({100, 100, 100, 100, 120}, 20);
  rep.latency_ms.count = 1000;
  rep.latency_ms.mean = 10.0;
  rep.latency_ms.stddev = 3.0;
  Verdict v = judge(r);
  EXPECT_TRUE(v.valid) << (v.reasons.empty() ? "" : v.reasons[0]);
  const auto warned = std::find_if(v.warnings.begin(), v.warnings.end(), [](const auto& w) {
    return w.find("repeat 2: too few frames per window (20)") != std::string::npos;
  });
  ASSERT_NE(warned, v.warnings.end());
  EXPECT_NE(warned->find("raise --duration"), std::string::npos) << *warned;
  EXPECT_EQ(warned->find("throttling"), std::string::npos) << *warned;

  rep.windows = windows_of({100, 100, 100, 100, 120}, 2000);
  v = judge(r);
  EXPECT_FALSE(v.valid);
  EXPECT_TRUE(std::any_of(v.reasons.begin(), v.reasons.end(), [](const auto& s) {
    return s.find("repeat 2: not stable") != std::string::npos &&
           s.find("check for throttling") != std::string::npos;
  }));

  // Fewer than 3 windows: not judged, a warning.
  rep.windows = windows_of({100, 120}, 4);
  v = judge(r);
  EXPECT_TRUE(v.valid) << (v.reasons.empty() ? "" : v.reasons[0]);
}

// Issue 26 item 9: a repeat a dead server cut short is said to be cut short
// by its error, not "not stable"; one a signal cut short says so too.
TEST(Verdict, ARepeatCutShortIsNotCalledUnstable) {
  BenchResult r = good_bench();
  r.steady.repeats[1].stable = false;
  r.steady.repeats[1].aborted = true;
  r.steady.repeats[1].last_windows_spread = 0.032;
  r.steady.repeats[1].first_error = Error{ErrorCode::disconnected, "the server went away"};
  Verdict v = judge(r);
  // The second repeat's rule (each repeat has its own).
  auto second = [](const Verdict& verdict) -> const RuleOutcome* {
    for (const auto& rule : verdict.rules)
      if (rule.rule == "repeat_stable" && rule.evidence.rfind("repeat 2", 0) == 0) return &rule;
    return nullptr;
  };
  const RuleOutcome* o = second(v);
  ASSERT_TRUE(o);
  ASSERT_FALSE(o->findings.empty());
  EXPECT_NE(o->findings[0].find("repeat 2: cut short by"), std::string::npos) << o->findings[0];
  EXPECT_NE(o->findings[0].find("the server went away"), std::string::npos) << o->findings[0];
  EXPECT_EQ(o->findings[0].find("not stable"), std::string::npos) << o->findings[0];

  r = good_bench();
  r.cut_short = true;
  r.steady.repeats[1].stable = false;
  r.steady.repeats[1].cut_short = true;
  v = judge(r);
  EXPECT_FALSE(v.valid);
  ASSERT_TRUE(find_rule(v, "not_cut_short"));
  EXPECT_FALSE(find_rule(v, "not_cut_short")->met);
  ASSERT_TRUE(second(v));
  ASSERT_FALSE(second(v)->findings.empty());
  EXPECT_NE(second(v)->findings[0].find("cut short by a signal"), std::string::npos);
}

// Issue 24 item 11: the host's load before the run cannot move a figure on
// a virtual clock; it is not raised there, and still is on a real one.
TEST(Verdict, AHostBusyBeforeTheRunIsLeftOutOnAVirtualClock) {
  BenchResult r = good_bench();
  r.environment.warnings = {"host busy before the run: 1-minute load average 6.08 on 2 cores"};
  r.virtual_clock = true;
  EXPECT_TRUE(find_rule(judge(r), "quiet_host")->met);
  r.virtual_clock = false;
  EXPECT_FALSE(find_rule(judge(r), "quiet_host")->met);
}

TEST(Verdict, ConfoundsWarnWithoutInvalidating) {
  BenchResult r = good_bench();
  r.depth_note = "depth 64 exceeds the device's queue depth 4; clamped to 4";
  r.virtual_clock = true;
  r.environment.warnings = {"CPU scaling enabled"};
  r.device.warnings = {"reduced-performance power mode"};
  r.steady.repeats[0].warmup_settled = false;
  r.effective.point.warmup_max = 5s;
  const Verdict v = judge(r);
  EXPECT_TRUE(v.valid);
  EXPECT_EQ(strict_exit_status(v, true), 0);
  const std::vector<std::string> expected = {
      "depth 64 exceeds the device's queue depth 4; clamped to 4",
      "repeat 1: warm-up hit its cap of 5.000 s before the rate settled", "CPU scaling enabled",
      "device: reduced-performance power mode",
      "virtual clock: figures are the sim device's model, not a measurement of hardware",
      // The confound rules (issue 10) classify the same warning as a power limit.
      "power limited: the device warned (at open): \"reduced-performance power mode\"; the "
      "evidence is the runtime's own warning, not a power reading; give the device its rated "
      "supply"};
  EXPECT_EQ(v.warnings, expected);
  EXPECT_EQ(find_rule(v, "real_clock")->severity, Severity::warns);
}

TEST(Verdict, AbNeedsEnoughPairs) {
  AbResult r;
  r.ratios = {1.0, 1.1};
  Verdict v = judge(r);
  EXPECT_FALSE(v.valid);
  EXPECT_FALSE(find_rule(v, "enough_pairs")->met);
  // The U test reaches alpha 0.05 from 4 pairs.
  r.ratios = {1.0, 1.1, 1.0};
  v = judge(r);
  EXPECT_FALSE(v.valid);
  r.ratios = {1.0, 1.1, 1.0, 1.0};
  v = judge(r);
  EXPECT_TRUE(v.valid);
  EXPECT_TRUE(find_rule(v, "ab_resolved")->met);
  r.verdict = AbVerdict::ambiguous;
  r.pairs_recommended = 20;
  v = judge(r);
  EXPECT_TRUE(v.valid);  // ambiguous is an answer, not an invalid run
  EXPECT_FALSE(find_rule(v, "ab_resolved")->met);
  EXPECT_NE(v.warnings.back().find("about 20 pairs"), std::string::npos);
}

TEST(Verdict, ImpreciseCappedRepeatAndUnresolvedPercentilesWarn) {
  BenchResult r = good_bench();
  r.steady.repeats[1].capped = true;
  r.steady.repeats[1].rate_half_width = 0.031;
  std::vector<double> lone(200, 2.0);
  r.latency.overall_ms = summarize(lone);
  const Verdict v = judge(r);
  EXPECT_TRUE(v.valid);
  ASSERT_EQ(v.warnings.size(), 2u);
  EXPECT_NE(v.warnings[0].find("repeat 2: the rate's interval (+/-3.10%)"), std::string::npos)
      << v.warnings[0];
  EXPECT_NE(v.warnings[1].find("lone-frame latency p99: not enough samples (n = 200, p99 needs "
                               ">= 368 for a 95% interval); 168 more samples needed"),
            std::string::npos)
      << v.warnings[1];
}

TEST(Verdict, OfferedLoadRules) {
  BenchResult r = good_bench();
  r.steady.repeats.clear();
  OfferedRun o;
  o.offered_rate = 600;
  o.scheduled_rate = 600;
  o.achieved_rate = 500;
  o.arrivals = o.submitted = o.completed = 1200;
  o.late = 600;
  o.late_share = 0.5;
  r.offered = o;
  Verdict v = judge(r);
  EXPECT_TRUE(v.valid);  // not keeping up is the answer, not an invalid run
  EXPECT_FALSE(find_rule(v, "frames_on_time")->met);
  EXPECT_FALSE(find_rule(v, "keeps_up")->met);
  EXPECT_TRUE(find_rule(v, "no_dropped_frames")->met);
  EXPECT_EQ(find_rule(v, "all_repeats_ran"), nullptr);
  r.offered->aborted = true;
  v = judge(r);
  EXPECT_FALSE(v.valid);
  EXPECT_FALSE(find_rule(v, "offered_run_completed")->met);
}

// rig sweep --rate: a failed probe invalidates (and a device failure in it
// exits 3); an unbracketed, unresolved or under-sampled search warns.
TEST(Verdict, RateSearchRules) {
  RateSweepResult r;
  r.effective.min_rate = 10;
  r.effective.max_rate = 1000;
  r.effective.max_probes = 3;
  RateProbe met;
  met.rate = 10;
  met.run.latency_ms = summarize(std::vector<double>(20, 2.0));
  met.p99_enough = false;
  met.keeps_up = met.meets = true;
  RateProbe missed = met;
  missed.rate = 1000;
  missed.keeps_up = missed.meets = false;
  r.search.probes = {missed, met, met};
  r.search.best_rate = 10;
  r.search.first_failing_rate = 1000;
  r.search.end = RateSearchEnd::probes_exhausted;
  Verdict v = judge(r);
  EXPECT_TRUE(v.valid);
  for (const char* rule :
       {"depth_within_queue", "no_lone_frame_errors", "probes_completed", "rate_bracketed",
        "search_resolved", "probe_percentiles_resolved", "bound_outside_intervals"})
    ASSERT_NE(find_rule(v, rule), nullptr) << rule;
  EXPECT_TRUE(find_rule(v, "probes_completed")->met);
  EXPECT_TRUE(find_rule(v, "rate_bracketed")->met);
  EXPECT_FALSE(find_rule(v, "search_resolved")->met);
  EXPECT_NE(find_rule(v, "search_resolved")->findings[0].find("raise --max-probes"),
            std::string::npos);
  ASSERT_FALSE(find_rule(v, "probe_percentiles_resolved")->met);
  const auto& findings = find_rule(v, "probe_percentiles_resolved")->findings;
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_NE(findings[1].find("probe at 10.00/s"), std::string::npos) << findings[1];
  EXPECT_NE(findings[1].find("348 more samples needed (raise --duration to at least 37s)"),
            std::string::npos)
      << findings[1];
  EXPECT_EQ(strict_exit_status(v, true), 0);
  EXPECT_TRUE(find_rule(v, "bound_outside_intervals")->met);  // no interval to compare

  // The best probe's p99 interval holds the 10 ms bound: within the noise.
  {
    RateSweepResult close = r;
    std::vector<double> ms;
    for (int i = 0; i < 400; ++i) ms.push_back(8.0 + 4.0 * i / 399.0);  // 8..12 ms
    close.search.probes[1].run.latency_ms = summarize(ms);
    close.search.probes[1].p99_ms = close.search.probes[1].run.latency_ms.p99;
    close.effective.latency_bound = 12ms;
    const Verdict cv = judge(close);
    const RuleOutcome* rule = find_rule(cv, "bound_outside_intervals");
    ASSERT_NE(rule, nullptr);
    ASSERT_FALSE(rule->met);
    EXPECT_NE(rule->findings[0].find("probe at 10.00/s: the bound 12.00 ms lies inside"),
              std::string::npos)
        << rule->findings[0];
    close.effective.latency_bound = 20ms;
    EXPECT_TRUE(find_rule(judge(close), "bound_outside_intervals")->met);
  }

  r.search.end = RateSearchEnd::min_rate_failed;
  r.search.best_rate.reset();
  v = judge(r);
  EXPECT_FALSE(find_rule(v, "rate_bracketed")->met);
  EXPECT_TRUE(v.valid);

  r.search.probes[2].run.aborted = true;
  r.search.probes[2].run.errors = 1;
  r.search.probes[2].run.first_error = Error{ErrorCode::disconnected, "peer went away"};
  r.search.end = RateSearchEnd::probe_failed;
  v = judge(r);
  EXPECT_FALSE(v.valid);
  EXPECT_FALSE(find_rule(v, "probes_completed")->met);
  EXPECT_EQ(strict_exit_status(v, false), 3);
}

}  // namespace
}  // namespace rig
