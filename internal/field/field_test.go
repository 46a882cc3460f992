package field

import (
	"errors"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	flag := func(f string) string { return "--" + strings.ToLower(f[strings.LastIndex(f, ".")+1:]) }
	cause := errors.New("unknown algorithm \"nope\"")
	for _, c := range []struct {
		e          Error
		own, flags string
	}{
		{Error{Field: "Config.Nodes", Value: 0, Want: "want 1..10"}, "Config.Nodes 0: want 1..10", "--nodes 0: want 1..10"},
		{Error{Field: "Config.Timeout", Value: "10ms", Want: "want longer than Config.Heartbeat 50ms", Also: []string{"Config.Heartbeat"}},
			"Config.Timeout 10ms: want longer than Config.Heartbeat 50ms", "--timeout 10ms: want longer than --heartbeat 50ms"},
		{Error{Field: "Config.NemesisRestart", Want: "they need Config.Nemesis (not Config.NemesisX)", Also: []string{"Config.Nemesis"}},
			"Config.NemesisRestart: they need Config.Nemesis (not Config.NemesisX)", "--nemesisrestart: they need --nemesis (not Config.NemesisX)"},
		{Error{Field: "option rsdp-mode", Value: `"x"`, Want: "(accepted: latest, popular)"}, `option rsdp-mode "x" (accepted: latest, popular)`, `--option rsdp-mode "x" (accepted: latest, popular)`},
		{Error{Field: "Config.Algo", Want: cause.Error(), Err: cause}, `Config.Algo: unknown algorithm "nope"`, `--algo: unknown algorithm "nope"`},
		{Error{Field: "Config.Sim"}, "Config.Sim", "--sim"},
	} {
		if got := c.e.Error(); got != c.own {
			t.Errorf("Error() = %q, want %q", got, c.own)
		}
		if got := c.e.Format(flag); got != c.flags {
			t.Errorf("Format(flag) = %q, want %q", got, c.flags)
		}
	}
	e := &Error{Field: "Config.Algo", Want: "x", Err: cause}
	if !errors.Is(e, cause) {
		t.Error("Unwrap does not give the cause")
	}
}
