package chaos

import (
	"strings"
	"testing"
	"time"
)

// The link rules of the third stage: each form parses to its fields and renders back as written
// (the canonical text is what chaos.jsonl records and --replay reads again).
func TestParseLinkRules(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		in, want string
		rule     LinkRule
	}{
		{"delay 20ms jitter 5ms normal", "delay 20ms jitter 5ms normal", LinkRule{Kind: LinkDelay, Delay: 20 * ms, Jitter: 5 * ms, Dist: DistNormal}},
		{"delay 50ms jitter 10ms pareto corr 25%", "delay 50ms jitter 10ms pareto corr 25%", LinkRule{Kind: LinkDelay, Delay: 50 * ms, Jitter: 10 * ms, Dist: DistPareto, Corr: 25}},
		{"delay 50ms corr 25% paretonormal jitter 10ms", "delay 50ms jitter 10ms paretonormal corr 25%", LinkRule{Kind: LinkDelay, Delay: 50 * ms, Jitter: 10 * ms, Dist: DistParetoNormal, Corr: 25}},
		// uniform is the default: without a correlation it is the first form, ±
		{"delay 20ms jitter 5ms uniform", "delay 20ms±5ms", LinkRule{Kind: LinkDelay, Delay: 20 * ms, Jitter: 5 * ms}},
		{"delay 20ms jitter 5ms", "delay 20ms±5ms", LinkRule{Kind: LinkDelay, Delay: 20 * ms, Jitter: 5 * ms}},
		{"delay 20ms jitter 5ms corr 50%", "delay 20ms jitter 5ms corr 50%", LinkRule{Kind: LinkDelay, Delay: 20 * ms, Jitter: 5 * ms, Corr: 50}},
		{"loss 10% corr 50%", "loss 10% corr 50%", LinkRule{Kind: LinkLoss, Percent: 10, Corr: 50}},
		{"loss 10 % corr 50 %", "loss 10% corr 50%", LinkRule{Kind: LinkLoss, Percent: 10, Corr: 50}},
		{"burst 1% 25%", "burst 1% 25%", LinkRule{Kind: LinkBurst, Percent: 1, End: 25}},
		{"burst 0.5 % 100%", "burst 0.5% 100%", LinkRule{Kind: LinkBurst, Percent: 0.5, End: 100}},
		{"rate 20000", "rate 20000", LinkRule{Kind: LinkRate, Rate: 20000}},
		{"rate 20kB/s", "rate 20000", LinkRule{Kind: LinkRate, Rate: 20000}},
		{"rate 1.5MB/s", "rate 1500000", LinkRule{Kind: LinkRate, Rate: 1500000}},
		{"rate 300B/s", "rate 300", LinkRule{Kind: LinkRate, Rate: 300}},
		{"corrupt 5%", "corrupt 5%", LinkRule{Kind: LinkCorrupt, Percent: 5}},
		{"slowclose 2s", "slowclose 2s", LinkRule{Kind: LinkSlowClose, Delay: 2 * time.Second}},
		{"reset", "reset", LinkRule{Kind: LinkReset}},
		{"reset after 500ms", "reset after 500ms", LinkRule{Kind: LinkReset, Delay: 500 * ms}},
	} {
		s, err := Parse("at 1s link 1->2 "+tc.in, 3)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		got := *s.Steps[0].Link
		tc.rule.From, tc.rule.To = Target{Kind: TargetID, ID: 1}, Target{Kind: TargetID, ID: 2}
		if got != tc.rule {
			t.Errorf("%s: parsed as %+v, want %+v", tc.in, got, tc.rule)
		}
		if r := RuleText(got); r != tc.want {
			t.Errorf("%s: renders %q, want %q", tc.in, r, tc.want)
		}
		again, err := Parse("at 1s link 1->2 "+RuleText(got), 3)
		if err != nil || *again.Steps[0].Link != got {
			t.Errorf("%s: the canonical text %q does not parse back: %v", tc.in, RuleText(got), err)
		}
	}
}

// A bad value is refused with an error that names it and what is accepted.
func TestParseLinkRuleErrors(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"delay 20ms normal", "a delay distribution needs a jitter to spread by (e.g. delay 20ms jitter 4ms normal)"},
		{"delay 20ms corr 20%", "corr needs a jitter: a fixed delay has nothing to correlate"},
		{"delay 20ms jitter", "missing the duration after jitter"},
		{"delay 20ms jitter 30ms normal", "jitter 30ms exceeds the delay 20ms (want 0..the delay"},
		{"delay 20ms jitter 0s", "the jitter duration must be positive, got 0s"},
		{"delay 20ms jitter 5ms gaussian", `unexpected "gaussian" in delay (accepted after the duration: jitter <d>, one of uniform, normal, pareto, paretonormal, corr <p>%`},
		{"delay 20ms jitter 5ms normal pareto", "delay names its distribution twice"},
		{"delay 20ms jitter 5ms corr", "missing the percentage after corr"},
		{"delay 20ms jitter 5ms corr 120%", "corr 120% is out of range (want 0%..100%)"},
		{"delay 20ms±5ms normal", `bad delay duration "20ms±5ms"`},
		{"loss 10% corr", `corr needs a percentage such as corr 20% or corr 0.5%, got ""`},
		{"loss 10% corr -5%", "corr -5% is out of range"},
		{"loss 10% often", `loss needs a percentage such as loss 20% or loss 0.5%, got "10%often"`},
		{"burst 1%", "burst needs two percentages: the chance that a burst of loss begins, then the chance that it ends (e.g. burst 1% 25%)"},
		{"burst 1% 25% 3%", "burst needs two percentages"},
		{"burst 0% 25%", "burst begin 0% never begins a burst (want above 0%"},
		{"burst 1% 0%", "burst end 0% never ends a burst (want above 0%; link drop loses everything)"},
		{"burst 1% 125%", "burst end 125% is out of range (want 0%..100%)"},
		{"rate", "rate needs a bandwidth in bytes per second, such as rate 20000, rate 20kB/s or rate 1MB/s"},
		{"rate fast", `rate needs a bandwidth in bytes per second, such as rate 20000, rate 20kB/s or rate 1MB/s, got "fast"`},
		{"rate 0", "rate 0 is out of range (want 1 byte/s to 1000000000000 bytes/s)"},
		{"rate -5kB/s", "rate -5kB/s is out of range"},
		{"rate 2TB/s", `got "2TB/s"`},
		{"rate 1e6", `got "1e6"`},
		{"corrupt", "corrupt needs a percentage such as corrupt 20% or corrupt 0.5%"},
		{"corrupt 150%", "corrupt 150% is out of range (want 0%..100%)"},
		{"slowclose", "slowclose needs a duration: how late the receiver learns that the connection closed (e.g. slowclose 2s)"},
		{"slowclose soon", `bad slowclose duration "soon"`},
		{"slowclose -1s", "the slowclose duration must be positive, got -1s"},
		{"reset now", `unexpected "now" after reset (accepted: reset, or reset after <duration>)`},
		{"reset after", `unexpected "after" after reset`},
		{"reset after 0s", "the reset after duration must be positive, got 0s"},
	} {
		_, err := Parse("at 1s link 1->2 "+tc.in, 3)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error = %v\nwant it to contain %q", tc.in, err, tc.err)
		}
	}
}

// The composed rule a node is sent carries every new kind's parameters, as fractions.
func TestLinkRulesCompose(t *testing.T) {
	s, err := Parse("at 1s link 1->2 delay 20ms jitter 5ms normal corr 50%; at 1s link 1->2 loss 10% corr 50%; "+
		"at 1s link 1->2 burst 1% 25%; at 1s link 1->2 rate 2000; at 1s link 1->2 corrupt 5%; "+
		"at 1s link 1->2 slowclose 1s; at 1s link 1->2 reset after 300ms", 2)
	if err != nil {
		t.Fatal(err)
	}
	var f netFaults
	for _, st := range s.Steps {
		f.link(1, 2, *st.Link, st.Text)
	}
	r := f.rules([]int{1, 2})[2][0]
	if r.Delay != int64(20*time.Millisecond) || r.Jitter != int64(5*time.Millisecond) || r.Dist != "normal" || r.DelayCorr != 0.5 ||
		r.Loss != 0.1 || r.LossCorr != 0.5 || r.BurstBegin != 0.01 || r.BurstEnd != 0.25 || r.Rate != 2000 || r.Corrupt != 0.05 ||
		r.SlowClose != int64(time.Second) || !r.Reset || r.ResetAfter != int64(300*time.Millisecond) {
		t.Errorf("composed %+v", r)
	}
}
