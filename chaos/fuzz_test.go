package chaos

import (
	"testing"
)

// FuzzParse feeds Parse arbitrary text: it must never panic, and whatever it accepts must render to
// canonical text that parses back to the same schedule, with every ID in range.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"at 1s kill leader",
		"at 1s kill leader; at 2s restart 5",
		"# c\nat 1s pause 3 for 500ms\n\nat 2s resume 3 # r",
		"at 1s partition 1-3|4-5; at 2s heal",
		"at 1s partition 5,1|2-3",
		"at 1s partition isolate leader; at 1.5s partition majorities-ring",
		"at 1s link 1->2 delay 100ms±20ms; at 2s link 2->1 loss 12.5%",
		"at 1s link leader -> 3 dup 100%; at 3s link 3->4 reorder",
		"at 0 kill 1;;; at -1s kill 2",
		"at 1s partition 3-1||",
		"at 1s link 1->2 loss NaN%",
	} {
		f.Add(s, uint8(5))
	}
	f.Fuzz(func(t *testing.T, text string, size uint8) {
		n := int(size % 16)
		s, err := Parse(text, n)
		if err != nil {
			return
		}
		canon := s.String()
		again, err := Parse(canon, n)
		if err != nil {
			t.Fatalf("canonical text %q of %q does not parse: %v", canon, text, err)
		}
		if again.String() != canon {
			t.Fatalf("canonical text is not stable:\n%s\nthen\n%s", canon, again.String())
		}
		for i, st := range s.Steps {
			if i > 0 && st.At < s.Steps[i-1].At {
				t.Fatalf("steps out of order: %v", s.Steps)
			}
			for _, tg := range targets(st) {
				if tg.Kind == TargetID && (tg.ID < 1 || tg.ID > n) {
					t.Fatalf("step %q targets node %d outside 1..%d", st.Text, tg.ID, n)
				}
			}
			seen := map[int]bool{}
			for _, g := range st.Groups {
				for _, id := range g {
					if id < 1 || id > n || seen[id] {
						t.Fatalf("step %q has bad groups %v", st.Text, st.Groups)
					}
					seen[id] = true
				}
			}
			if st.Groups != nil && len(seen) != n {
				t.Fatalf("step %q: groups %v do not cover 1..%d", st.Text, st.Groups, n)
			}
		}
	})
}

func targets(st Step) []Target {
	out := []Target{st.Target}
	if st.Link != nil {
		out = append(out, st.Link.From, st.Link.To)
	}
	return out
}
