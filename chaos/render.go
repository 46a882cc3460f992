package chaos

import (
	"strconv"
	"strings"
)

// String renders the schedule in canonical text, one step per line in time order; Parse reads it
// back to the same schedule. Durations are written as Go prints them (1.5s, 250ms, 1m0s) and the
// nodes an explicit partition left out are written as their own group.
func (s *Schedule) String() string {
	lines := make([]string, len(s.Steps))
	for i, st := range s.Steps {
		lines[i] = st.String()
	}
	return strings.Join(lines, "\n")
}

// String renders one step in canonical text.
func (st Step) String() string {
	var b strings.Builder
	b.WriteString("at " + st.At.String() + " " + st.Op)
	switch st.Op {
	case OpKill, OpStop, OpRestart, OpResume:
		b.WriteString(" " + st.Target.String())
	case OpPause:
		b.WriteString(" " + st.Target.String())
		if st.For > 0 {
			b.WriteString(" for " + st.For.String())
		}
	case OpPartition:
		switch {
		case st.Shape == ShapeIsolate:
			b.WriteString(" " + st.Shape + " " + st.Target.String())
		case st.Shape != "":
			b.WriteString(" " + st.Shape)
		default:
			b.WriteString(" " + FormatGroups(st.Groups))
		}
	case OpLink:
		if st.Link != nil {
			b.WriteString(" " + st.Link.String())
		}
	case OpClock:
		if st.Clock != nil {
			b.WriteString(" " + st.Target.String() + " " + st.Clock.String())
		}
	}
	return b.String()
}

// String renders a target as the language writes it: the ID, or its kind.
func (t Target) String() string {
	if t.Kind == TargetID {
		return strconv.Itoa(t.ID)
	}
	return t.Kind
}

// String renders a rule as the language writes it, without the leading "link".
func (r *LinkRule) String() string {
	s := r.From.String() + "->" + r.To.String() + " " + r.Kind
	if a := linkArgs(r); a != "" {
		s += " " + a
	}
	return s
}

// FormatGroups writes partition sides as the language does: runs of IDs as ranges, "1-3|4,6".
func FormatGroups(groups [][]int) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		var items []string
		for j := 0; j < len(g); {
			k := j
			for k+1 < len(g) && g[k+1] == g[k]+1 {
				k++
			}
			if k > j {
				items = append(items, strconv.Itoa(g[j])+"-"+strconv.Itoa(g[k]))
			} else {
				items = append(items, strconv.Itoa(g[j]))
			}
			j = k + 1
		}
		parts[i] = strings.Join(items, ",")
	}
	return strings.Join(parts, "|")
}
