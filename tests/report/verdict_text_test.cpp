// Every measuring command's text ends with its verdict and each rule that
// made it (issue 38, item 2): ladder and sweep printed a bare "verdict:
// INVALID", ab never said VALID or INVALID, profile and run said nothing.
#include <gtest/gtest.h>

#include <string>

#include "rig/report/ab_report.hpp"
#include "rig/report/ladder_report.hpp"
#include "rig/report/place_report.hpp"
#include "rig/report/profile_report.hpp"
#include "rig/report/run_report.hpp"
#include "rig/report/sweep_report.hpp"
#include "rig/scenario/ab.hpp"
#include "rig/scenario/input_verdict.hpp"
#include "rig/scenario/place.hpp"

namespace rig {
namespace {

// An INVALID verdict: one invalidating rule and one warning.
Verdict invalid_verdict() {
  Verdict v;
  RuleOutcome cap;
  cap.rule = "rate_within_declared_cap";
  cap.met = false;
  cap.evidence = "4k: 7.1/s";
  cap.findings = {"4k: rate 7.1/s is above the 7.0/s the device's declared costs allow"};
  v.add(cap);
  RuleOutcome warm;
  warm.rule = "repeats_agree";
  warm.severity = Severity::warns;
  warm.met = false;
  warm.findings = {"3 repeats, spread 4.0%"};
  v.add(warm);
  return v;
}

// The text's last lines from "verdict:" on.
std::string tail_from_verdict(const std::string& text) {
  const size_t at = text.rfind("verdict: ");
  return at == std::string::npos ? std::string() : text.substr(at);
}

void expect_rules_listed(const std::string& text) {
  const std::string tail = tail_from_verdict(text);
  EXPECT_EQ(tail.rfind("verdict: INVALID\n", 0), 0u) << text;
  EXPECT_NE(tail.find("  - rate_within_declared_cap: 4k: rate 7.1/s is above the 7.0/s"),
            std::string::npos)
      << text;
  EXPECT_NE(tail.find("  warning: repeats_agree: 3 repeats, spread 4.0%"), std::string::npos)
      << text;
}

TEST(VerdictText, LadderEndsWithTheRulesThatMadeIt) {
  LadderResult r;
  r.device.spec = "tcp://127.0.0.1:5757";
  r.verdict = invalid_verdict();
  expect_rules_listed(format_ladder_text(r));
}

TEST(VerdictText, SweepEndsWithTheRulesThatMadeIt) {
  SweepResult r;
  r.device.spec = "sim";
  r.model.name = "m";
  r.verdict = invalid_verdict();
  expect_rules_listed(format_sweep_text(r));
}

TEST(VerdictText, AbSaysValidOrInvalidBesideItsAnswer) {
  AbResult r;
  r.model.name = "m";
  r.verdict_text = "B (depth=8) is faster: +300.00% frames/s";
  r.judgement = invalid_verdict();
  const std::string text = format_ab_text(r);
  EXPECT_NE(text.find("result: B (depth=8) is faster"), std::string::npos) << text;
  expect_rules_listed(text);
}

TEST(VerdictText, ProfileAndRunCloseWithWhatWasChecked) {
  ProfileResult p;
  p.model.name = "m";
  p.device.spec = "cpu";
  EXPECT_NE(format_profile_text(p).find("verdict: VALID (no rule applies"), std::string::npos)
      << format_profile_text(p);
  RunResult run;
  run.model.name = "m";
  run.device.spec = "cpu";
  EXPECT_NE(format_run_text(run).find("no check: no --reference given"), std::string::npos)
      << format_run_text(run);
}

// issue 38, item 7: significant, and inside --same-within: said to be negligible.
TEST(AbDecideWording, SignificantButWithinTheMarginIsNegligible) {
  AbResult r;
  r.settings.pairs = 9;
  r.settings.same_within = 0.03;
  r.rates_a = {100.00, 100.01, 100.02, 100.03, 100.04, 100.05, 100.06, 100.07, 100.08};
  r.rates_b = {100.02, 100.03, 100.04, 100.05, 100.06, 100.07, 100.08, 100.09, 100.10};
  for (double& b : r.rates_b) b += 0.05;
  decide_ab(r);
  ASSERT_EQ(r.verdict, AbVerdict::b_faster) << r.verdict_text;
  EXPECT_NE(r.verdict_text.find("(within +/-3.0%: negligible)"), std::string::npos)
      << r.verdict_text;
  // A 10% effect is not negligible.
  for (double& b : r.rates_b) b *= 1.1;
  decide_ab(r);
  ASSERT_EQ(r.verdict, AbVerdict::b_faster) << r.verdict_text;
  EXPECT_EQ(r.verdict_text.find("negligible"), std::string::npos) << r.verdict_text;
}

// issue 38, item 8: rig place leads with its choice and the table; each
// input's problems once; each device spec once.
size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(PlaceText, ChoiceFirstEachProblemAndSpecOnce) {
  const std::string spec = "cpu:runtime=ort,threads=2,workers=1,depth=2,optimization=all";
  auto cand = [&](const std::string& device, const std::string& source, const std::string& sha,
                  double compute_ms) {
    PlaceCandidate c;
    c.source = source;
    c.device = device;
    c.model_sha256 = sha;
    c.compute_ms = c.compute_ms_per_frame = compute_ms;
    c.rate_per_s = 1e3 / compute_ms;
    c.lone_ms = compute_ms;
    c.bytes_in = 1e6;
    c.bytes_out = 1e5;
    if (source == "bad.json") c.caveats.push_back("bad.json is INVALID: repeats disagree by 9%");
    return c;
  };
  PlaceStage detect, pose;
  detect.name = "detect";
  detect.sha256 = "det";
  pose.name = "pose";
  pose.sha256 = "pose";
  auto w = parse_workload("fps=30");
  ASSERT_TRUE(w);
  auto r = place(*w, {detect, pose},
                 {cand(spec, "bad.json", "det", 5), cand("sim", "s1.json", "det", 4),
                  cand(spec, "cpu-pose.json", "pose", 3), cand("sim", "s2.json", "pose", 2)});
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->assignments.size(), 4u);
  InputVerdict bad;
  bad.source = "bad.json";
  bad.tool = "rig bench";
  bad.valid = false;
  bad.reasons = {"repeats disagree by 9%"};
  r->inputs = judge_inputs({bad}, false, "rig place");
  const std::string text = format_place_text(*r);
  const size_t choice = text.find(r->met ? "choice: " : "NOT MET: ");
  ASSERT_NE(choice, std::string::npos) << text;
  EXPECT_LT(choice, text.find("#1")) << text;
  EXPECT_LT(choice, text.find("stage detect")) << text;
  EXPECT_EQ(count_of(text, "repeats disagree by 9%"), 1u) << text;
  // Once per candidate (two models on the cpu) and once in the choice's
  // "the fastest", not once per assignment.
  EXPECT_LE(count_of(text, spec), 3u) << text;
}

}  // namespace
}  // namespace rig
