package launcher

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/leaderlab/leaderlab/agent"
	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/internal/field"
	"github.com/leaderlab/leaderlab/node"
	"github.com/leaderlab/leaderlab/wire"
)

// The netem backend (--net-backend netem): link rules and partitions become the kernel's netem
// qdiscs on the sender's egress (agent/netem.go installs them): what node a sends b — its messages
// on the connection it dialled to b and its heartbeats to b — is held, lost, duplicated, damaged
// or rate-limited by the kernel, told apart from its neighbours' packets by a's firewall mark and
// b's address and port. On SSH hosts (and VMs) each host's agent installs the rules of the nodes
// that send from it. On one machine the qdiscs would go on the loopback every other run and
// program shares, so a one-host run happens in a network namespace of its own (privnet.go): the
// launcher, its nodes and their loopback, gone with the run.
//
// What netem takes is refused before the run starts when it cannot mean what the language says:
// slowclose and reset are about connections, which a qdisc never sees; a delay's corr (netem blends
// its uniform draws, which narrows the spread and shifts the mean, where the language keeps both:
// DESIGN.md, "The chaos language"); loss and burst on one link (netem has one loss model). A
// correlated loss is exact: "loss p% corr c%" is the two-state chain netem's Gilbert-Elliott
// model ("loss gemodel") draws, with a burst beginning at (1−c)·p and ending at (1−c)·(1−p).
// Per packet, not per message: TCP resends what netem loses, so on the nodes' connections loss,
// corrupt and drop turn into retransmission delay, and the heartbeats (UDP) are the ones lost.

// BackendNetem: the kernel's netem qdiscs, on the egress of the sending nodes' hosts.
const BackendNetem = "netem"

// NetemLinkKinds are the link rules the netem backend carries out.
var NetemLinkKinds = []string{chaos.LinkDrop, chaos.LinkDelay, chaos.LinkLoss, chaos.LinkDup, chaos.LinkReorder,
	chaos.LinkBurst, chaos.LinkRate, chaos.LinkCorrupt}

// netemAccepts says what the netem backend takes, for the errors that refuse a rule.
const netemAccepts = "the netem backend carries out drop, delay (uniform, normal, pareto, paretonormal; no corr), loss (corr too), burst, rate, corrupt, dup and reorder, not loss and burst on one link; slowclose, reset and a delay's corr are the nodes' own (use Config.NetBackend transport)"

// checkNetemSchedule refuses the steps the netem backend cannot carry out, naming the step.
func checkNetemSchedule(s *chaos.Schedule) error {
	type link struct{ from, to string }
	lossy := map[link]string{} // the first loss or burst step on a link since the last heal
	for _, st := range s.Steps {
		if st.Op == chaos.OpHeal {
			clear(lossy)
		}
		if st.Op != chaos.OpLink {
			continue
		}
		l := st.Link
		why := ""
		switch {
		case !slices.Contains(NetemLinkKinds, l.Kind):
			why = fmt.Sprintf("netem has no %s (a qdisc sees packets, not connections)", l.Kind)
		case l.Kind == chaos.LinkDelay && l.Corr > 0:
			why = "netem's delay correlation blends its uniform draws, which narrows the spread and shifts the mean; the language's corr keeps both"
		case l.Kind == chaos.LinkLoss || l.Kind == chaos.LinkBurst:
			k := link{l.From.String(), l.To.String()}
			if prev, ok := lossy[k]; ok && !strings.Contains(prev, " "+l.Kind+" ") {
				why = fmt.Sprintf("netem has one loss model per link, and %q gave this link the other", prev)
			} else if !ok {
				lossy[k] = st.Text
			}
		}
		if why != "" {
			return fmt.Errorf("step %d %q: %s (%s)", st.Pos, st.Text, why, netemAccepts)
		}
	}
	return nil
}

// netemOf is a composed link rule as netem's options (the link's ends are the caller's).
func netemOf(r wire.LinkRule) (agent.NetemRule, error) {
	if r.Drop {
		return agent.NetemRule{Loss: 1}, nil
	}
	switch {
	case r.SlowClose > 0, r.Reset:
		return agent.NetemRule{}, fmt.Errorf("%s: netem has no slowclose or reset", r.Why)
	case r.DelayCorr > 0:
		return agent.NetemRule{}, fmt.Errorf("%s: netem's delay correlation is not the language's", r.Why)
	case r.Loss > 0 && r.BurstBegin > 0:
		return agent.NetemRule{}, fmt.Errorf("%s: loss and burst on one link: netem has one loss model per link", r.Why)
	}
	delay, jitter := node.Spread(r) // reorder: a uniform spread, as the nodes' own netem draws it
	n := agent.NetemRule{Delay: delay, Jitter: jitter, Dist: r.Dist, Dup: r.Dup, Corrupt: r.Corrupt, Rate: r.Rate}
	switch {
	case r.BurstBegin > 0:
		n.BurstBegin, n.BurstEnd = r.BurstBegin, r.BurstEnd
	case r.Loss > 0 && r.LossCorr > 0:
		// With chance c a message meets the last one's fate, else it is lost with chance p: a
		// delivered message is followed by a loss with (1−c)·p, a lost one by a delivery with
		// (1−c)·(1−p). Gilbert-Elliott with nothing lost in the good state and all in the bad.
		c := r.LossCorr
		n.BurstBegin, n.BurstEnd = (1-c)*r.Loss, (1-c)*(1-r.Loss)
		if n.BurstBegin == 0 { // corr 100%: the first message's fate, delivered, for ever
			n.BurstEnd = 0
		}
	default:
		n.Loss = r.Loss
	}
	return n, nil
}

// netemBySender turns every node's rule set (keyed by the receiver, as the executor makes it) into
// netem rules keyed by the sending node. An error names each rule netem cannot carry out.
func netemBySender(rules map[int][]wire.LinkRule, addr map[int]*net.UDPAddr) (map[int][]agent.NetemRule, error) {
	out := map[int][]agent.NetemRule{}
	var bad []string
	xs := make([]int, 0, len(rules))
	for x := range rules {
		xs = append(xs, x)
	}
	sort.Ints(xs)
	for _, x := range xs {
		dst := addr[x]
		if dst == nil {
			continue
		}
		for _, r := range rules[x] {
			n, err := netemOf(r)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%d->%d: %v", r.From, x, err))
				continue
			}
			n.Mark, n.Dst, n.Port, n.Note = nodeMark(r.From), dst.IP.String(), dst.Port, fmt.Sprintf("%d->%d", r.From, x)
			out[r.From] = append(out[r.From], n)
		}
	}
	if len(bad) > 0 {
		return out, fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return out, nil
}

// netemDists lists the delay distributions a schedule uses, whose tables the hosts need.
func netemDists(s *chaos.Schedule) []string {
	var out []string
	for _, st := range s.Steps {
		if st.Op == chaos.OpLink && st.Link.Dist != "" && !slices.Contains(out, st.Link.Dist) {
			out = append(out, st.Link.Dist)
		}
	}
	sort.Strings(out)
	return out
}

// nodeUDPAddrs resolves every node's address.
func nodeUDPAddrs(r *runner) map[int]*net.UDPAddr {
	addr := map[int]*net.UDPAddr{}
	for _, n := range r.cluster.Nodes {
		if a, err := net.ResolveUDPAddr("udp", n.Addr); err == nil {
			addr[n.ID] = a
		}
	}
	return addr
}

// localNetemNet is the netem backend of a one-host run, in the run's own network namespace.
type localNetemNet struct {
	r      *runner
	shaper *agent.Shaper
}

var _ netBackend = (*localNetemNet)(nil)

func (t *localNetemNet) set(rules map[int][]wire.LinkRule, send []int) map[int]delivery {
	by, err := netemBySender(rules, nodeUDPAddrs(t.r))
	var all []agent.NetemRule
	for _, rs := range by {
		all = append(all, rs...)
	}
	if err == nil {
		err = t.shaper.Set(all)
	}
	sayNetemCounts(t.r, t.shaper.TakeCounts())
	return kernelDelivery(send, err)
}

// sayNetemCounts prints what the kernel did on the links a change unshaped: the nodes never see
// the packets netem lost, so this is where its drops show.
func sayNetemCounts(r *runner, counts []agent.NetemCount) {
	for _, c := range counts {
		pct := 0.0
		if all := c.Packets + c.Drops; all > 0 {
			pct = 100 * float64(c.Drops) / float64(all)
		}
		r.say("leaderlab: %s the kernel's netem on %s, now unshaped: %d packets passed, %d lost (%.1f%%)", r.since(), c.Note, c.Packets, c.Drops, pct)
	}
}

// up: the kernel's rules hold for every incarnation.
func (t *localNetemNet) up(_ int, then func()) {
	if then != nil {
		then()
	}
}

func (t *localNetemNet) close() error {
	err := t.shaper.Clear()
	sayNetemCounts(t.r, t.shaper.TakeCounts())
	if err != nil {
		return fmt.Errorf("remove the netem qdiscs: %w (they go with the run's network namespace in any case)", err)
	}
	return nil
}

// remoteNetemNet is the netem backend of a multi-host run: each rule goes to the sender's host,
// whose agent shapes what the sender sends the receiver.
type remoteNetemNet struct {
	r  *runner
	mu sync.Mutex
}

var _ netBackend = (*remoteNetemNet)(nil)

// probeNetemHosts asks every host's agent, before the run begins, whether it can carry out netem
// rules with the schedule's distributions (and to remove what a crashed agent left there).
func probeNetemHosts(ctx context.Context, rm *remote, dists []string) error {
	errs := make([]string, len(rm.hosts))
	var wg sync.WaitGroup
	for k, h := range rm.hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if _, err := h.c.Netem(cctx, h.run, nil, true, dists); err != nil {
				errs[k] = fmt.Sprintf("host %s: %v", h.name(), err)
			}
		}()
	}
	wg.Wait()
	var bad []string
	for _, e := range errs {
		if e != "" {
			bad = append(bad, e)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return nil
}

func (t *remoteNetemNet) set(rules map[int][]wire.LinkRule, send []int) map[int]delivery {
	t.mu.Lock()
	defer t.mu.Unlock()
	rm := t.r.remote
	by, berr := netemBySender(rules, nodeUDPAddrs(t.r))
	per := map[*remoteHost][]agent.NetemRule{}
	for from, rs := range by {
		if h := rm.at[from]; h != nil {
			per[h] = append(per[h], rs...)
		}
	}
	var counts []agent.NetemCount
	var mu sync.Mutex
	out := rm.perHost(send, func(ctx context.Context, h *remoteHost) (int64, error) {
		rep, err := h.c.Netem(ctx, h.run, per[h], false, nil)
		mu.Lock()
		counts = append(counts, rep.Counts...)
		mu.Unlock()
		return rep.TS, err
	})
	slices.SortFunc(counts, func(a, b agent.NetemCount) int { return strings.Compare(a.Note, b.Note) })
	sayNetemCounts(t.r, counts)
	if berr != nil { // a rule netem cannot carry out (a moving target met another rule): refused
		for _, id := range send {
			out[id] = delivery{err: berr.Error()}
		}
	}
	return out
}

// up: the kernel's rules hold for every incarnation.
func (t *remoteNetemNet) up(_ int, then func()) {
	if then != nil {
		then()
	}
}

// close removes every host's qdiscs of the run (the agents' cleanup and lease would too).
func (t *remoteNetemNet) close() error {
	var bad []string
	for _, d := range t.set(map[int][]wire.LinkRule{}, t.r.cluster.IDs()) {
		if d.err != "" && !slices.Contains(bad, d.err) {
			bad = append(bad, d.err)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("remove the netem qdiscs: %s (the agents remove them at cleanup and when the run's lease runs out)", strings.Join(bad, "; "))
	}
	return nil
}

// netemHere makes ready, and checks, the network of a one-host run with the netem backend: the
// run's own namespace with its loopback up, and a kernel that has the qdiscs (with dists' tables).
func netemHere(cfg Config, dists []string) error {
	bad := func(err error) error {
		return &field.Error{Field: "Config.NetBackend", Value: BackendNetem, Want: err.Error(), Err: err}
	}
	if !inPrivateNet() {
		return bad(fmt.Errorf("%w: a one-host run with netem happens in a network namespace of its own, so that its qdiscs shape no other program's loopback (leaderlab run moves there by itself; a caller of the library calls RunInPrivateNet)", agent.ErrNetem))
	}
	if ip := net.ParseIP(cfg.Host); ip == nil || !ip.IsLoopback() {
		return &field.Error{Field: "Config.Host", Value: cfg.Host, Want: "a one-host run with netem has only its own namespace's loopback: want 127.0.0.1 (the default)", Also: []string{"Config.NetBackend"}}
	}
	if err := loopbackUp(); err != nil {
		return bad(fmt.Errorf("%w: %v", agent.ErrNetem, err))
	}
	if err := agent.NetemProbe(dists); err != nil {
		return bad(err)
	}
	return nil
}
