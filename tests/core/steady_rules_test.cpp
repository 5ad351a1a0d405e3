// The steady state's rules on their own (rig/engine.hpp): the warm-up
// (WarmupRule) and the stop rule of a repeat (SteadyStopRule), fed scripted
// completion times, with no device.
#include <gtest/gtest.h>

#include <vector>

#include "rig/engine.hpp"

namespace rig {
namespace {

using namespace std::chrono_literals;

// Feeds `cycles` pipeline cycles of `depth` slots in order; within a cycle the
// completions come `gaps` apart (cycling through the list), so uneven gaps
// make clumps. Returns the time of the last completion fed.
template <class Feed>
Nanos feed_cycles(Feed feed, Nanos t, uint32_t depth, int cycles, const std::vector<Nanos>& gaps) {
  size_t g = 0;
  for (int c = 0; c < cycles; ++c)
    for (uint32_t slot = 0; slot < depth; ++slot) {
      t += gaps[g++ % gaps.size()];
      if (!feed(slot, t)) return t;
    }
  return t;
}

// Issue 24 item 8: clumped completions (2 inputs and 2 outputs on a
// half-duplex link deliver them in bursts) made windows that closed on any
// completion alternate between two rates, and the warm-up never settled. On
// whole cycles it settles at the second window.
TEST(WarmupRule, ClumpedCompletionsSettleOnWholeCycles) {
  WarmupRule rule({.window = 200ms, .max = 5s, .tolerance = 0.05, .rate_cap = std::nullopt}, 0ns);
  WarmupRule::State state = WarmupRule::State::warming;
  int completions = 0;
  // Depth 8: 7 completions 0.2 ms apart, then a 12.6 ms gap (a 14 ms cycle).
  std::vector<Nanos> gaps(7, 200us);
  gaps.push_back(12600us);
  feed_cycles(
      [&](uint32_t slot, Nanos t) {
        ++completions;
        state = rule.complete(slot, t);
        return state == WarmupRule::State::warming;
      },
      0ns, 8, 1000, gaps);
  EXPECT_EQ(state, WarmupRule::State::settled);
  ASSERT_TRUE(rule.last_rate());
  EXPECT_NEAR(*rule.last_rate(), 8 / 14e-3, 1e-6);
  EXPECT_LT(completions, 8 * 40);  // two windows of ~15 cycles
}

TEST(WarmupRule, ARateAboveTheDeclaredCapIsNotSettled) {
  // 1000/s steady, but the device declares it cannot exceed 900/s.
  WarmupRule rule({.window = 100ms, .max = 1s, .tolerance = 0.05, .rate_cap = 900.0}, 0ns);
  WarmupRule::State state = WarmupRule::State::warming;
  Nanos end = feed_cycles(
      [&](uint32_t slot, Nanos t) {
        state = rule.complete(slot, t);
        return state == WarmupRule::State::warming;
      },
      0ns, 4, 100000, {1ms});
  EXPECT_EQ(state, WarmupRule::State::capped);
  EXPECT_GE(end, 1s);
}

TEST(WarmupRule, ChangingRatesWarmUntilTheyAgree) {
  WarmupRule rule({.window = 100ms, .max = 10s, .tolerance = 0.05, .rate_cap = std::nullopt}, 0ns);
  // 150 ms at 1 frame/ms, then 2 frames/ms: the windows read 1000, 1500,
  // 2000 and 2000/s, so it settles at the fourth (400 ms), after the change.
  Nanos t{0};
  WarmupRule::State state = WarmupRule::State::warming;
  uint32_t slot = 0;
  while (state == WarmupRule::State::warming) {
    t += t < 150ms ? 1ms : 500us;
    state = rule.complete(slot, t);
    slot = (slot + 1) % 2;
  }
  EXPECT_EQ(state, WarmupRule::State::settled);
  EXPECT_GE(t, 400ms);  // two whole windows at the new rate
  EXPECT_NEAR(*rule.last_rate(), 2000, 1e-6);
}

SteadyStopRule::Settings stop_settings() {
  return {.min_duration = 2s,
          .max_duration = 20s,
          .min_inferences = 100,
          .windows = 10,
          .stability_tolerance = 0.05,
          .rate_tolerance = 0.02,
          .warm_cycles = {},
          .rate_cap = std::nullopt};
}

// Issue 24 item 12: a deterministic pattern of completions (depth 5; three
// short cycles then a long one) made 200 ms windows hold 90 or 95 frames and
// the repeat unstable at 5.5% for the whole cap. Cycles ranging over 80% of
// their mean get windows of 0.8 x 2 / tolerance cycles, which keeps it
// within half the tolerance: stable, and it stops near its minimums with the
// pattern's exact rate.
TEST(SteadyStopRule, APeriodicPatternOfCyclesIsStable) {
  const std::vector<Nanos> pattern = {
      1751us, 1751us, 1751us, 1751us, 1751us,  // a 8.755 ms cycle, three times
      1751us, 1751us, 1751us, 1751us, 1751us, 1751us, 1751us, 1751us,
      1751us, 1751us, 3502us, 3502us, 3502us, 3502us, 3502us};  // then a 17.51 ms one
  const double rate = 20 / (3 * 8.755e-3 + 17.51e-3);
  SteadyStopRule rule(stop_settings(), 4, 0ns);
  SteadyStopRule::Step step;
  feed_cycles(
      [&](uint32_t slot, Nanos t) {
        step = rule.complete(slot, t);
        return !step.stop;
      },
      0ns, 5, 100000, pattern);
  EXPECT_TRUE(rule.stable());
  EXPECT_TRUE(rule.precise());
  EXPECT_TRUE(rule.met());
  EXPECT_LT(rule.last() - rule.start(), 3s);
  // Cycles of 8.755 and 17.51 ms around a 10.94 ms mean range over 80% of
  // it: 0.8 x 2 / 0.05 = 32 cycles a window.
  EXPECT_EQ(rule.window_cycles_wanted(), 32u);
  for (const auto& w : rule.windows()) EXPECT_NEAR(w.rate, rate, 0.025 * rate);
  EXPECT_NEAR(static_cast<double>(rule.inferences()) / to_seconds(rule.last() - rule.start()), rate,
              0.005 * rate);
}

TEST(SteadyStopRule, ARateAboveTheDeclaredCapGoesOnToTheCap) {
  SteadyStopRule::Settings s = stop_settings();
  s.rate_cap = 990;
  SteadyStopRule rule(s, 0, 0ns);
  Nanos t{0};
  SteadyStopRule::Step step;
  while (!step.stop) step = rule.complete(0, t += 1ms);
  EXPECT_FALSE(rule.met());
  EXPECT_TRUE(rule.above_cap());
  EXPECT_TRUE(rule.stable());
  EXPECT_GE(t, 20s);
}

// Cycles that all last the same need no more than one a window: the
// windows keep their base length (min_duration / windows).
TEST(SteadyStopRule, EvenCyclesKeepShortWindows) {
  SteadyStopRule rule(stop_settings(), 0, 0ns);
  Nanos t{0};
  SteadyStopRule::Step step;
  while (!step.stop) step = rule.complete(0, t += 10ms);
  EXPECT_EQ(rule.window_cycles_wanted(), 1u);
  ASSERT_FALSE(rule.windows().empty());
  EXPECT_NEAR(rule.windows().front().duration_s, 0.2, 1e-9);
  EXPECT_TRUE(rule.met());
}

// A long pattern (31 cycles of 64.8 ms, then one of 129.6 ms: depth 32 on a
// half-duplex USB link) is held by windows of up to a third of the cap.
TEST(SteadyStopRule, ALongPatternIsHeldByWindowsOfUpToAThirdOfTheCap) {
  SteadyStopRule::Settings s = stop_settings();
  s.max_duration = 10s;
  SteadyStopRule rule(s, 0, 0ns);
  Nanos t{0};
  SteadyStopRule::Step step;
  for (int c = 0; !step.stop; ++c)
    step = rule.complete(0, t += (c % 32 == 31 ? 129624us : 64812us));
  EXPECT_TRUE(rule.stable()) << *rule.last_windows_spread();
  EXPECT_TRUE(rule.met());
  // One completion a cycle here: 32 cycles per pattern.
  const double rate = 32 / (31 * 64.812e-3 + 129.624e-3);
  EXPECT_NEAR(static_cast<double>(rule.inferences()) / to_seconds(rule.last() - rule.start()), rate,
              0.01 * rate);
}

TEST(SteadyStopRule, WindowsCloseOnlyOnTheReferenceSlot) {
  SteadyStopRule rule(stop_settings(), 2, 0ns);
  Nanos t{0};
  for (int i = 0; i < 30000; ++i) {
    const auto step = rule.complete(static_cast<uint32_t>(i % 3), t += 333us);
    if (step.closed) {
      EXPECT_EQ(i % 3, 2);
      EXPECT_EQ(step.closed->inferences % 3, 0u);
    }
    if (step.stop) break;
  }
  EXPECT_FALSE(rule.windows().empty());
}

}  // namespace
}  // namespace rig
