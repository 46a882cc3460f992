package chaos

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// parseLinkArgs reads what follows a link rule's kind into r. Every value is checked here, so that
// a bad schedule is refused before the run starts; the error names the value and what is accepted.
func parseLinkArgs(r *LinkRule, args []string) error {
	var err error
	joined := strings.Join(args, "")
	switch r.Kind {
	case LinkDrop, LinkReorder:
		if len(args) > 0 {
			return fmt.Errorf("unexpected %q after %s (%s takes nothing)", strings.Join(args, " "), r.Kind, r.Kind)
		}
	case LinkDelay:
		return parseDelay(r, args)
	case LinkLoss:
		i := slices.Index(args, "corr")
		if i < 0 {
			i = len(args)
		}
		if r.Percent, err = parsePercent("loss", strings.Join(args[:i], "")); err != nil {
			return err
		}
		return parseCorr(r, args[i:], "loss")
	case LinkDup, LinkCorrupt:
		if r.Percent, err = parsePercent(r.Kind, joined); err != nil {
			return err
		}
	case LinkBurst:
		const how = "burst needs two percentages: the chance that a burst of loss begins, then the chance that it ends (e.g. burst 1% 25%)"
		parts := strings.SplitAfter(joined, "%")
		if len(parts) != 3 || parts[2] != "" {
			return fmt.Errorf("%s, got %q", how, strings.Join(args, " "))
		}
		if r.Percent, err = parsePercent("burst begin", parts[0]); err != nil {
			return err
		}
		if r.End, err = parsePercent("burst end", parts[1]); err != nil {
			return err
		}
		if r.Percent == 0 {
			return fmt.Errorf("burst begin %s never begins a burst (want above 0%%; %s)", args[0], how)
		}
		if r.End == 0 {
			return fmt.Errorf("burst end %s never ends a burst (want above 0%%; link drop loses everything)", args[1])
		}
	case LinkRate:
		r.Rate, err = parseRate(joined)
		return err
	case LinkSlowClose:
		if joined == "" {
			return fmt.Errorf("slowclose needs a duration: how late the receiver learns that the connection closed (e.g. slowclose 2s)")
		}
		r.Delay, err = positiveDuration("slowclose", joined)
		return err
	case LinkReset:
		if len(args) == 0 {
			return nil
		}
		if args[0] != "after" || len(args) != 2 {
			return fmt.Errorf("unexpected %q after reset (accepted: reset, or reset after <duration>)", strings.Join(args, " "))
		}
		r.Delay, err = positiveDuration("reset after", args[1])
		return err
	default:
		return fmt.Errorf("unknown link rule %q (accepted: %s)", r.Kind, strings.Join(LinkKinds, ", "))
	}
	return nil
}

// parseDelay reads "delay <d>[±<j>]" (the first form, kept) or
// "delay <d> [jitter <j>] [uniform|normal|pareto|paretonormal] [corr <c>%]".
func parseDelay(r *LinkRule, args []string) error {
	const eg = "e.g. delay 100ms, delay 100ms±20ms or delay 100ms jitter 20ms normal corr 25%"
	if len(args) == 0 {
		return fmt.Errorf("delay needs a duration, optionally with a jitter (%s)", eg)
	}
	long := slices.ContainsFunc(args, func(a string) bool { return a == "jitter" || a == "corr" || slices.Contains(Dists, a) })
	var err error
	if !long {
		arg := strings.Join(args, "")
		d, j, hasJitter := strings.Cut(arg, "±")
		if !hasJitter {
			d, j, hasJitter = strings.Cut(arg, "+-")
		}
		if r.Delay, err = positiveDuration("delay", d); err != nil {
			return err
		}
		if hasJitter {
			if r.Jitter, err = positiveDuration("jitter", j); err != nil {
				return err
			}
		}
		return checkJitter(r)
	}
	if r.Delay, err = positiveDuration("delay", args[0]); err != nil {
		return err
	}
	rest := args[1:]
	seen := map[string]bool{}
	for len(rest) > 0 {
		word := rest[0]
		key := word
		if slices.Contains(Dists, word) {
			key = "distribution"
		}
		if seen[key] {
			return fmt.Errorf("delay names its %s twice (%s)", key, eg)
		}
		seen[key] = true
		switch {
		case word == "jitter":
			if len(rest) < 2 {
				return fmt.Errorf("missing the duration after jitter (%s)", eg)
			}
			if r.Jitter, err = positiveDuration("jitter", rest[1]); err != nil {
				return err
			}
			rest = rest[2:]
		case word == "corr":
			if len(rest) < 2 {
				return fmt.Errorf("missing the percentage after corr (%s)", eg)
			}
			if r.Corr, err = parsePercent("corr", rest[1]); err != nil {
				return err
			}
			rest = rest[2:]
		case key == "distribution":
			if word != DistUniform {
				r.Dist = word
			}
			rest = rest[1:]
		default:
			return fmt.Errorf("unexpected %q in delay (accepted after the duration: jitter <d>, one of %s, corr <p>%%; %s)", word, strings.Join(Dists, ", "), eg)
		}
	}
	if r.Jitter == 0 && seen["distribution"] {
		return fmt.Errorf("a delay distribution needs a jitter to spread by (e.g. delay %s jitter %s normal)", r.Delay, r.Delay/5)
	}
	if r.Jitter == 0 && seen["corr"] {
		return fmt.Errorf("corr needs a jitter: a fixed delay has nothing to correlate (e.g. delay %s jitter %s corr 25%%)", r.Delay, r.Delay/5)
	}
	return checkJitter(r)
}

func checkJitter(r *LinkRule) error {
	if r.Jitter > r.Delay {
		return fmt.Errorf("jitter %s exceeds the delay %s (want 0..the delay, so that a delay stays mostly above zero)", r.Jitter, r.Delay)
	}
	return nil
}

// parseCorr reads an optional "corr <c>%" after a rule's value.
func parseCorr(r *LinkRule, rest []string, kind string) error {
	if len(rest) == 0 {
		return nil
	}
	if rest[0] != "corr" {
		return fmt.Errorf("unexpected %q after %s (accepted: %s <p>%% [corr <c>%%])", strings.Join(rest, " "), kind, kind)
	}
	var err error
	r.Corr, err = parsePercent("corr", strings.Join(rest[1:], ""))
	return err
}

// parseRate reads a bandwidth in bytes per second: "20000", "20000B/s", "20kB/s", "2MB/s".
func parseRate(s string) (int64, error) {
	const how = "rate needs a bandwidth in bytes per second, such as rate 20000, rate 20kB/s or rate 1MB/s"
	if s == "" {
		return 0, fmt.Errorf("%s", how)
	}
	num, mult := s, 1.0
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"kB/s", 1e3}, {"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9}, {"B/s", 1}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = n, u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || strings.ContainsAny(num, "xXpP_eEiInN") {
		return 0, fmt.Errorf("%s, got %q", how, s)
	}
	b := v * mult
	if b < 1 || b > MaxRate {
		return 0, fmt.Errorf("rate %s is out of range (want 1 byte/s to %d bytes/s)", s, int64(MaxRate))
	}
	return int64(b), nil
}

// linkArgs renders a rule's values as the language writes them after its kind ("" for none).
func linkArgs(r *LinkRule) string {
	pct := func(p float64) string { return strconv.FormatFloat(p, 'g', -1, 64) + "%" }
	corr := ""
	if r.Corr > 0 {
		corr = " corr " + pct(r.Corr)
	}
	switch r.Kind {
	case LinkDelay:
		if r.Dist == "" && r.Corr == 0 {
			if r.Jitter > 0 {
				return r.Delay.String() + "±" + r.Jitter.String()
			}
			return r.Delay.String()
		}
		s := r.Delay.String() + " jitter " + r.Jitter.String()
		if r.Dist != "" {
			s += " " + r.Dist
		}
		return s + corr
	case LinkLoss:
		return pct(r.Percent) + corr
	case LinkDup, LinkCorrupt:
		return pct(r.Percent)
	case LinkBurst:
		return pct(r.Percent) + " " + pct(r.End)
	case LinkRate:
		return strconv.FormatInt(r.Rate, 10)
	case LinkSlowClose:
		return r.Delay.String()
	case LinkReset:
		if r.Delay > 0 {
			return "after " + r.Delay.String()
		}
	}
	return ""
}

// DelayBound is the longest delay a rule can give one message: the delay plus the jitter for the
// uniform distribution, plus DistCut jitters for the others (their draws are cut there).
func (r *LinkRule) DelayBound() time.Duration {
	switch {
	case r.Kind != LinkDelay:
		return 0
	case r.Dist == "":
		return r.Delay + r.Jitter
	}
	return r.Delay + DistCut*r.Jitter
}

// DistCut is where the normal, pareto and paretonormal delays are cut, in jitters above the delay
// (and they are cut at zero below): pareto's tail is long, and a message held for ever is a drop.
const DistCut = 10
