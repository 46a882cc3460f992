package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The netem backend's kernel side (--net-backend netem): a run's link rules as Linux qdiscs on the
// egress of the interfaces its nodes send through. Each interface that carries a shaped link gets
// a root htb qdisc of ours (handle 4c4c:, "LL"); traffic no filter claims goes through htb's
// direct queue untouched, so the host's other traffic (SSH among it) passes as before. Each
// shaped link — the packets one node sends one peer — gets an htb class with a netem qdisc as its
// leaf, and a u32 filter that sends it there by the sender's firewall mark (SO_MARK, set by the
// node on every socket) and the receiver's address and port: exact when several nodes share an
// address, where the source port of a dialled connection says nothing. A rule set replaces the
// last one link by link (a link whose rule changed gets a new netem qdisc: netem's change keeps
// options it is not given); a link whose rule is gone loses its class, and an interface with no
// shaped link left loses the root qdisc, so a heal leaves the interface as it was. The request
// carries marks, addresses, ports and numbers, which are checked and rendered here: no text of a
// request reaches tc.

// NetemHandle is the major handle of the root qdisc the backend puts on an interface ("LL").
const NetemHandle = 0x4c4c

// NetemDists are the delay distributions netem takes besides its uniform default (tc reads their
// tables from iproute2's files: normal.dist, pareto.dist, paretonormal.dist).
var NetemDists = []string{"normal", "pareto", "paretonormal"}

// NetemRule shapes the packets a node of this host sends (those with firewall mark Mark) to
// Dst:Port, TCP and UDP alike, with netem's options. Probabilities are 0..1.
type NetemRule struct {
	Mark uint32 `msgpack:"mark"`
	Dst  string `msgpack:"dst"`
	Port int    `msgpack:"port"`
	// Delay and Jitter in ns: netem's delay, uniform in Delay±Jitter, or with Dist's table
	// (Jitter its standard deviation).
	Delay  int64  `msgpack:"delay,omitempty"`
	Jitter int64  `msgpack:"jitter,omitempty"`
	Dist   string `msgpack:"dist,omitempty"`
	// Loss is netem's independent loss ("loss random"); BurstBegin and BurstEnd its
	// Gilbert-Elliott model ("loss gemodel p r": nothing lost in the good state, all in the bad).
	// One of the two at most.
	Loss       float64 `msgpack:"loss,omitempty"`
	BurstBegin float64 `msgpack:"burst_begin,omitempty"`
	BurstEnd   float64 `msgpack:"burst_end,omitempty"`
	Dup        float64 `msgpack:"dup,omitempty"`
	Corrupt    float64 `msgpack:"corrupt,omitempty"`
	// Rate is the link's bandwidth in bytes per second (0: none).
	Rate int64 `msgpack:"rate,omitempty"`
	// Note names the link in the agent's log: "3->5" (digits, '-' and '>' only).
	Note string `msgpack:"note,omitempty"`
}

// maxNetemDelay bounds a delay and a jitter: netem holds packets, and an hour is no fault.
const maxNetemDelay = int64(time.Hour)

// maxNetemRate bounds a rate (chaos.MaxRate, bytes per second).
const maxNetemRate = 1_000_000_000_000

// check refuses what is not a rule; i numbers it in the error.
func (r NetemRule) check(i int) error {
	dst := net.ParseIP(r.Dst)
	switch {
	case dst == nil || dst.To4() == nil:
		return refuse("rule %d: address %q: want an IPv4 address", i, r.Dst)
	case r.Mark == 0:
		return refuse("rule %d: mark 0: want the sending node's firewall mark (1 or more)", i)
	case r.Port < 1 || r.Port > 65535:
		return refuse("rule %d: port %d: want 1..65535", i, r.Port)
	case r.Delay < 0 || r.Delay > maxNetemDelay || r.Jitter < 0 || r.Jitter > maxNetemDelay:
		return refuse("rule %d: delay %dns jitter %dns: want 0..1h each", i, r.Delay, r.Jitter)
	case r.Dist != "" && !slices.Contains(NetemDists, r.Dist):
		return refuse("rule %d: distribution %q: want none (uniform) or one of %s", i, r.Dist, strings.Join(NetemDists, ", "))
	case r.Dist != "" && r.Jitter == 0:
		return refuse("rule %d: distribution %s without a jitter: want a jitter to spread by", i, r.Dist)
	case r.Rate < 0 || r.Rate > maxNetemRate:
		return refuse("rule %d: rate %d: want 0..%d bytes/s", i, r.Rate, int64(maxNetemRate))
	case r.Loss > 0 && (r.BurstBegin > 0 || r.BurstEnd > 0):
		return refuse("rule %d: loss and burst together: netem has one loss model per link", i)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"loss", r.Loss}, {"burst begin", r.BurstBegin}, {"burst end", r.BurstEnd}, {"dup", r.Dup}, {"corrupt", r.Corrupt}} {
		if !(p.v >= 0 && p.v <= 1) {
			return refuse("rule %d: %s %v: want a probability 0..1", i, p.name, p.v)
		}
	}
	for _, c := range r.Note {
		if (c < '0' || c > '9') && c != '-' && c != '>' {
			return refuse("rule %d: note %q: want digits, '-' and '>' only", i, r.Note)
		}
	}
	return nil
}

// NetemArgs renders a rule's netem options as tc takes them after "netem".
func NetemArgs(r NetemRule) string {
	us := func(ns int64) string { return strconv.FormatInt((ns+500)/1000, 10) + "us" }
	pct := func(p float64) string { return strconv.FormatFloat(p*100, 'f', -1, 64) + "%" }
	a := []string{"limit", "1000"} // netem's default, said aloud: the transport's rate queue holds as many
	if r.Delay > 0 || r.Jitter > 0 {
		a = append(a, "delay", us(r.Delay))
		if r.Jitter > 0 {
			a = append(a, us(r.Jitter))
			if r.Dist != "" {
				a = append(a, "distribution", r.Dist)
			}
		}
	}
	switch {
	case r.BurstBegin > 0:
		a = append(a, "loss", "gemodel", pct(r.BurstBegin), pct(r.BurstEnd))
	case r.Loss > 0:
		a = append(a, "loss", "random", pct(r.Loss))
	}
	if r.Dup > 0 {
		a = append(a, "duplicate", pct(r.Dup))
	}
	if r.Corrupt > 0 {
		a = append(a, "corrupt", pct(r.Corrupt))
	}
	if r.Rate > 0 {
		a = append(a, "rate", strconv.FormatInt(r.Rate*8, 10)+"bit")
	}
	return strings.Join(a, " ")
}

// netemKey names a shaped link on an interface: the sender's mark, the receiver's address, port.
type netemKey struct {
	mark uint32
	dst  string
	port int
}

// shapedLink is one shaped link's class: its minor number (also its netem qdisc's major and its
// filter's priority) and the netem options in force.
type shapedLink struct {
	minor int
	args  string
	note  string
	// count is what the link's earlier netem qdiscs (before a change of its rule) passed and lost.
	count NetemCount
}

// NetemCount is what the kernel's netem did on one link while it was shaped: the packets it sent
// on (duplicates included) and those it lost (loss, burst, drop; a full queue). The nodes never
// see a packet the kernel lost, so these are its drops.
type NetemCount struct {
	Note    string `msgpack:"note"`
	Packets int64  `msgpack:"packets"`
	Drops   int64  `msgpack:"drops"`
}

// Shaper holds the qdiscs the netem backend put on this network namespace's interfaces, and
// changes them. Its zero value is not ready: use NewShaper.
type Shaper struct {
	mu   sync.Mutex
	devs map[string]map[netemKey]*shapedLink
	// tc runs one tc -batch script; route names the interface a packet with a mark to an address
	// leaves by. Tests replace both.
	tc    func(script string) error
	route func(dst string, mark uint32) (string, error)
	// routes caches route's answers: a run's addresses keep their interfaces, and each ip
	// command costs a process.
	routes map[netemKey]string
	// stats reads an interface's netem counters by qdisc major (tc -s); done holds the counts of
	// the links unshaped since the last TakeCounts.
	stats func(dev string) (map[int]NetemCount, error)
	done  []NetemCount
}

// NewShaper is a shaper that drives this namespace's tc and routing table.
func NewShaper() *Shaper {
	return &Shaper{devs: map[string]map[netemKey]*shapedLink{}, tc: tcBatch, route: routeDev, routes: map[netemKey]string{}, stats: netemStats}
}

// Set makes rules the complete set of shaped links. On a failure the interfaces it was changing
// are cleared (their links unshaped), so that the next Set starts from a known state.
func (s *Shaper) Set(rules []NetemRule) error {
	for i, r := range rules {
		if err := r.check(i); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	want := map[string]map[netemKey]NetemRule{}
	for _, r := range rules {
		rk := netemKey{mark: r.Mark, dst: r.Dst}
		dev, ok := s.routes[rk]
		if !ok {
			var err error
			if dev, err = s.route(r.Dst, r.Mark); err != nil {
				return err
			}
			s.routes[rk] = dev
		}
		if want[dev] == nil {
			want[dev] = map[netemKey]NetemRule{}
		}
		want[dev][netemKey{r.Mark, r.Dst, r.Port}] = r
	}
	var devs []string
	for d := range s.devs {
		devs = append(devs, d)
	}
	for d := range want {
		if s.devs[d] == nil {
			devs = append(devs, d)
		}
	}
	slices.Sort(devs)
	var errs []string
	for _, d := range devs {
		script := s.plan(d, want[d])
		if script == "" {
			continue
		}
		if err := s.tc(script); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", d, err))
			_ = s.tc("qdisc del dev " + d + " root\n")
			delete(s.devs, d)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("tc: %s", strings.Join(errs, "; "))
	}
	return nil
}

// plan renders the tc commands that take interface dev from its shaped links to want, and records
// want as its state (Set undoes that on a failure).
func (s *Shaper) plan(dev string, want map[netemKey]NetemRule) string {
	have := s.devs[dev]
	var b strings.Builder
	root := fmt.Sprintf("%x:", NetemHandle)
	s.count(dev, want)
	if len(want) == 0 {
		if have == nil {
			return ""
		}
		delete(s.devs, dev)
		return "qdisc del dev " + dev + " root\n"
	}
	if have == nil {
		have = map[netemKey]*shapedLink{}
		s.devs[dev] = have
		// direct_qlen: what no filter claims skips the classes; a device's txqueuelen may be 0.
		fmt.Fprintf(&b, "qdisc add dev %s root handle %s htb direct_qlen 10000\n", dev, root)
	}
	keys := make([]netemKey, 0, len(have))
	for k := range have {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmpKey)
	for _, k := range keys {
		l := have[k]
		r, ok := want[k]
		switch {
		case !ok:
			fmt.Fprintf(&b, "filter del dev %s parent %s protocol ip prio %d\n", dev, root, l.minor)
			fmt.Fprintf(&b, "class del dev %s classid %s%x\n", dev, root, l.minor)
			delete(have, k)
		case NetemArgs(r) != l.args:
			l.args = NetemArgs(r)
			fmt.Fprintf(&b, "qdisc del dev %s parent %s%x handle %x:\n", dev, root, l.minor, l.minor)
			fmt.Fprintf(&b, "qdisc add dev %s parent %s%x handle %x: netem %s\n", dev, root, l.minor, l.minor, l.args)
		}
	}
	keys = keys[:0]
	for k := range want {
		if have[k] == nil {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, cmpKey)
	for _, k := range keys {
		r := want[k]
		l := &shapedLink{minor: freeMinor(have), args: NetemArgs(r), note: r.Note}
		have[k] = l
		fmt.Fprintf(&b, "class add dev %s parent %s classid %s%x htb rate 10gbit quantum 200000\n", dev, root, root, l.minor)
		fmt.Fprintf(&b, "qdisc add dev %s parent %s%x handle %x: netem %s\n", dev, root, l.minor, l.minor, l.args)
		fmt.Fprintf(&b, "filter add dev %s parent %s protocol ip prio %d u32 match mark %#x 0xffffffff match ip dst %s/32 match ip dport %d 0xffff flowid %s%x\n",
			dev, root, l.minor, k.mark, k.dst, k.port, root, l.minor)
	}
	return b.String()
}

// count adds the counters of the netem qdiscs a change of dev to want removes to their links, and
// moves the links that go to done. Counters that cannot be read are left out, not guessed.
func (s *Shaper) count(dev string, want map[netemKey]NetemRule) {
	have := s.devs[dev]
	var going []netemKey
	for k, l := range have {
		if r, ok := want[k]; !ok || NetemArgs(r) != l.args {
			going = append(going, k)
		}
	}
	if len(going) == 0 {
		return
	}
	now, err := s.stats(dev)
	if err != nil {
		now = nil
	}
	slices.SortFunc(going, cmpKey)
	for _, k := range going {
		l := have[k]
		c := now[l.minor]
		l.count.Packets += c.Packets
		l.count.Drops += c.Drops
		if _, ok := want[k]; !ok {
			s.done = append(s.done, NetemCount{Note: l.note, Packets: l.count.Packets, Drops: l.count.Drops})
		}
	}
}

// TakeCounts returns the counts of the links unshaped since the last call.
func (s *Shaper) TakeCounts() []NetemCount {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.done
	s.done = nil
	return out
}

// netemStats reads dev's netem qdiscs' counters (tc -s -j), by their majors.
func netemStats(dev string) (map[int]NetemCount, error) {
	out, err := exec.Command("tc", "-s", "-j", "qdisc", "show", "dev", dev).Output()
	if err != nil {
		return nil, err
	}
	var qs []struct {
		Kind, Handle   string
		Packets, Drops int64
	}
	if err := json.Unmarshal(out, &qs); err != nil {
		return nil, err
	}
	m := map[int]NetemCount{}
	for _, q := range qs {
		if maj, err := strconv.ParseUint(strings.TrimSuffix(q.Handle, ":"), 16, 16); err == nil && q.Kind == "netem" {
			m[int(maj)] = NetemCount{Packets: q.Packets, Drops: q.Drops}
		}
	}
	return m, nil
}

func cmpKey(a, b netemKey) int {
	if a.mark != b.mark {
		return int(int64(a.mark) - int64(b.mark))
	}
	if c := strings.Compare(a.dst, b.dst); c != 0 {
		return c
	}
	return a.port - b.port
}

// freeMinor is the lowest class number no link of the interface uses: 1.., never the root's own
// major (a netem qdisc's handle is its class's number).
func freeMinor(have map[netemKey]*shapedLink) int {
	used := map[int]bool{NetemHandle: true}
	for _, l := range have {
		used[l.minor] = true
	}
	m := 1
	for used[m] {
		m++
	}
	return m
}

// Links counts the shaped links in force.
func (s *Shaper) Links() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, d := range s.devs {
		n += len(d)
	}
	return n
}

// Devices lists the interfaces that carry a root qdisc of the shaper's.
func (s *Shaper) Devices() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for d := range s.devs {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// Clear removes every qdisc the shaper put in place.
func (s *Shaper) Clear() error { return s.Set(nil) }

// tcBatch runs tc on a script of commands, stopping at the first that fails.
func tcBatch(script string) error { return feed(script, "tc", "-batch", "-") }

// feed runs a command with input on its standard input, for at most 10 s; the error carries what
// it printed, on one line.
func feed(input, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdin = strings.NewReader(input)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v: %s", err, strings.Join(strings.Fields(out.String()), " "))
	}
	return nil
}

var routeDevRE = regexp.MustCompile(`\bdev (\S+)`)

// routeDev names the interface the kernel sends a packet with mark to dst by.
func routeDev(dst string, mark uint32) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ip", "-o", "route", "get", dst, "mark", strconv.FormatUint(uint64(mark), 10)).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ip route get %s: %v: %s", dst, err, strings.TrimSpace(string(out)))
	}
	m := routeDevRE.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("ip route get %s names no interface: %s", dst, strings.TrimSpace(string(out)))
	}
	return string(m[1]), nil
}

// rootHandle is the handle of interface dev's root qdisc ("4c4c:", "0:"), "" if tc cannot say.
func rootHandle(dev string) string {
	out, err := exec.Command("tc", "qdisc", "show", "dev", dev, "root").Output()
	if err != nil {
		return ""
	}
	f := strings.Fields(string(out))
	if len(f) >= 3 && f[0] == "qdisc" {
		return f[2]
	}
	return ""
}
