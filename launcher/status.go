package launcher

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Progress on a terminal: the lines the run prints (configuration, readiness, faults, stop) and,
// below them while the nodes run, one status line rewritten in place a few times a second:
//
//	+3.4s | 4/5 up | leader 4: 1-4 | last fault +1.002s kill 5 (leader)
//
// Anywhere else (a file, a pipe, TERM=dumb) the status line is not drawn, and the cluster's view
// is printed as a plain line whenever it changes, as before.

// status is what the status line shows.
type status struct {
	Elapsed time.Duration
	// Up counts the nodes running and not paused; Paused the paused ones; Total is N.
	Up, Paused, Total int
	// Groups maps each leader to the nodes that follow it, 0 to the nodes electing (no leader);
	// Answered tells whether any node answered yet.
	Groups   map[int][]int
	Answered bool
	// LastFault is the last fault applied, with its time: "+1.002s kill 5 (leader)".
	LastFault string
}

// statusLine renders s in at most width columns (counted in runes). When the line does not fit,
// the node lists give way to counts if even the part before the last fault is too long, and then
// the line is cut with "…" (the last fault goes first).
func statusLine(s status, width int) string {
	if width <= 0 {
		width = 80
	}
	line := s.render(true, true)
	if utf8.RuneCountInString(line) > width && utf8.RuneCountInString(s.render(true, false)) > width {
		line = s.render(false, true)
	}
	if utf8.RuneCountInString(line) > width {
		r := []rune(line)
		line = string(r[:max(width-1, 0)]) + "…"
	}
	return line
}

func (s status) render(lists, fault bool) string {
	parts := []string{fmt.Sprintf("+%.1fs", s.Elapsed.Seconds())}
	up := fmt.Sprintf("%d/%d up", s.Up, s.Total)
	if s.Paused > 0 {
		up += fmt.Sprintf(", %d paused", s.Paused)
	}
	parts = append(parts, up, s.groups(lists))
	if fault && s.LastFault != "" {
		parts = append(parts, "last fault "+s.LastFault)
	}
	return strings.Join(parts, " | ")
}

// groups renders who follows whom, leaders from the highest, electing last: "leader 4: 1-3; electing: 5".
func (s status) groups(lists bool) string {
	if !s.Answered {
		return "no node answers yet"
	}
	if len(s.Groups) == 0 {
		return "no node answers"
	}
	var leaders []int
	for l := range s.Groups {
		leaders = append(leaders, l)
	}
	sort.Slice(leaders, func(i, j int) bool { return leaders[j] == 0 || (leaders[i] != 0 && leaders[i] > leaders[j]) })
	var out []string
	for _, l := range leaders {
		ids := s.Groups[l]
		who := idRanges(ids)
		if !lists {
			who = strconv.Itoa(len(ids)) + " node"
			if len(ids) != 1 {
				who += "s"
			}
		}
		if l == 0 {
			out = append(out, "electing: "+who)
		} else {
			out = append(out, "leader "+strconv.Itoa(l)+": "+who)
		}
	}
	return strings.Join(out, "; ")
}

// idRanges writes IDs compactly: 1,2,4 and 1-5 (runs of three or more).
func idRanges(ids []int) string {
	ids = append([]int(nil), ids...)
	sort.Ints(ids)
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		switch {
		case j-i >= 2:
			fmt.Fprintf(&b, "%d-%d", ids[i], ids[j])
		case j > i:
			fmt.Fprintf(&b, "%d,%d", ids[i], ids[j])
		default:
			b.WriteString(strconv.Itoa(ids[i]))
		}
		i = j + 1
	}
	return b.String()
}

// ANSI: carriage return, then clear to the end of the line.
const (
	cr        = "\r"
	clearLine = "\x1b[K"
)

// console writes the progress. When it is live (a terminal), it keeps the status line at the
// bottom: a line printed meanwhile clears it, goes above it, and the status line is drawn again.
// Each change is one Write, so the terminal never shows half of one.
type console struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool
	width func() int
	shown string // the status line on screen, "" when none
}

// newConsole makes w's console: live when w is a terminal (and TERM is not dumb).
func newConsole(w io.Writer) *console {
	c := &console{w: w, width: func() int { return 0 }}
	if f, ok := w.(*os.File); ok && os.Getenv("TERM") != "dumb" && isTerminal(f.Fd()) {
		c.live = true
		c.width = func() int { return termWidth(f.Fd()) }
	}
	return c
}

// println prints a line (above the status line, when one is shown).
func (c *console) println(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shown == "" {
		io.WriteString(c.w, s+"\n")
		return
	}
	io.WriteString(c.w, cr+clearLine+s+"\n"+c.shown)
}

// show draws the status line in place of the one shown (live consoles only). It leaves the last
// column free: a line that fills it makes some terminals wrap.
func (c *console) show(s status) {
	if !c.live {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.width()
	if w <= 0 {
		w = 80
	}
	c.shown = statusLine(s, w-1)
	io.WriteString(c.w, cr+c.shown+clearLine)
}

// clear removes the status line.
func (c *console) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shown != "" {
		io.WriteString(c.w, cr+clearLine)
		c.shown = ""
	}
}
