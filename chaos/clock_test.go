package chaos

import (
	"strings"
	"testing"
	"time"
)

func TestParseClock(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"at 1s clock leader rate 3", "at 1s clock leader rate 3"},
		{"at 1s clock 2 rate 0.25", "at 1s clock 2 rate 0.25"},
		{"at 2s clock 4 bump -300ms", "at 2s clock 4 bump -300ms"},
		{"at 2s clock 4 bump 1s", "at 2s clock 4 bump +1s"},
		{"at 1s clock 2 strobe 200ms every 10ms for 1s", "at 1s clock 2 strobe +200ms every 10ms for 1s"},
		{"at 3s clock all reset", "at 3s clock all reset"},
		{"at 3s clock random reset", "at 3s clock random reset"},
	} {
		s, err := Parse(tc.in, 5)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := s.String(); got != tc.want {
			t.Errorf("Parse(%q) renders %q, want %q", tc.in, got, tc.want)
		}
		back, err := Parse(s.String(), 5)
		if err != nil || back.String() != s.String() {
			t.Errorf("%q does not parse back to itself: %v %v", s.String(), back, err)
		}
	}
	s, _ := Parse("at 1s clock 2 strobe 200ms every 10ms for 1s", 5)
	if got := s.LastFault(); got != 2*time.Second {
		t.Errorf("a strobe from 1s for 1s: LastFault = %v, want 2s (it lasts until it ends)", got)
	}
}

func TestParseClockErrors(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"at 1s clock 3 rate 99", "clock rate 99 is out of range (want 0.25..4"},
		{"at 1s clock 3 rate 0.1", "clock rate 0.1 is out of range"},
		{"at 1s clock 3 rate fast", `bad clock rate "fast" (want a number 0.25..4`},
		{"at 1s clock 3 rate NaN", `bad clock rate "NaN"`},
		{"at 1s clock 3", "clock 3 needs a fault (accepted: rate, bump, strobe, reset)"},
		{"at 1s clock", "clock needs a target and a fault"},
		{"at 1s clock 9 reset", "node 9 is out of range (the IDs are 1..5), or all"},
		{"at 1s clock 3 warp 2", `unknown clock fault "warp" (accepted: rate, bump, strobe, reset)`},
		{"at 1s clock 3 bump 0s", "a bump of 0 changes nothing"},
		{"at 1s clock 3 bump 2h", "bump offset 2h is beyond ±1h0m0s"},
		{"at 1s clock 3 bump soon", `bad bump offset "soon"`},
		{"at 1s clock 3 reset now", `unexpected "now" after clock reset`},
		{"at 1s clock 3 strobe 200ms", "clock strobe is incomplete"},
		{"at 1s clock 3 strobe 200ms each 10ms for 1s", "clock strobe is written strobe <d> every <p> for <D>"},
		{"at 1s clock 3 strobe 200ms every 100us for 1s", "strobe period 100us is below 1ms"},
		{"at 1s clock 3 strobe 200ms every 10ms for 5ms", "strobe for 5ms is shorter than its period 10ms"},
	} {
		_, err := Parse(tc.in, 5)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Parse(%q) error = %v\nwant it to contain %q", tc.in, err, tc.err)
		}
	}
}
