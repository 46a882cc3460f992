package launcher

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/wire"
)

// The network backends (--net-backend).
const (
	// BackendTransport: the nodes' transport applies the rules, sent to each node's control
	// endpoint (no root needed; every rule kind; drops are logged by the receiver).
	BackendTransport = "transport"
	// BackendIPTables: the kernel drops packets, by rules in an iptables chain of the launcher's
	// own; each node gets its own loopback address. Needs root; drop and loss only.
	BackendIPTables = "iptables"
)

// Backends lists the accepted --net-backend values.
var Backends = []string{BackendTransport, BackendIPTables, BackendNetem}

// netBackend carries out link rules.
type netBackend interface {
	// set makes rules (every node's complete rule set) the network's, and tells the nodes in send
	// now; a node of send that cannot be told now (dead, paused) is told when it runs again.
	set(rules map[int][]wire.LinkRule, send []int) map[int]delivery
	// up is called when node id runs again: resumed, or a restarted incarnation is ready (which
	// waits for its begin until then). then, if not nil, runs once the node was told.
	up(id int, then func())
	// close removes what the backend put in place (the iptables chain, the netem qdiscs); the
	// transport has nothing.
	close() error
}

// delivery is what became of one node's rules.
type delivery struct {
	ack     int64  // when the node (or the kernel) took them, Unix ns; 0 if not (yet)
	pending bool   // paused or dead: it is told when it runs again
	err     string // it was told and did not take them
}

// netStep carries out a partition, link or heal step and records it with the nodes' acks.
func (r *runner) netStep(st chaos.Step, rng *rand.Rand) {
	rec := logs.ChaosRecord{TS: time.Now().UnixNano(), Op: st.Op, Step: st.Text, At: int64(st.At), Targets: []int{}}
	ch, err := r.exec.Net(st, rng)
	if err != nil {
		rec.Error = err.Error()
		r.say("leaderlab: %s %s: not applied: %v", r.since(), st.Text, err)
		r.recordChaos(rec)
		return
	}
	what, send := ch.What, ch.Send
	rec.Targets, rec.Groups, rec.Reach = send, ch.Groups, ch.Reach
	if st.Op == chaos.OpLink {
		rec.From, rec.To, rec.Rule = ch.From, ch.To, ch.Rule
	}
	got := r.net.set(r.exec.Rules(), send)
	acked, pending, failed := tally(got, send)
	if len(acked) > 0 {
		rec.Acks = map[string]int64{}
		for _, id := range acked {
			rec.Acks[strconv.Itoa(id)] = got[id].ack
		}
	}
	if len(send) > 0 && len(acked) == 0 && len(pending) == 0 {
		rec.Error = "no node took the rules: " + strings.Join(failed, "; ")
		r.say("leaderlab: %s %s: not applied: %s", r.since(), what, rec.Error)
	} else {
		note := fmt.Sprintf("%d/%d nodes acked", len(acked), len(send))
		if len(send) == 1 {
			note = fmt.Sprintf("node %d acked", send[0])
			if len(acked) == 0 {
				note = fmt.Sprintf("node %d is not running now (told when it runs again)", send[0])
			}
		}
		if len(pending) > 0 && len(send) > 1 {
			note += fmt.Sprintf(", not running now: %v (told when they run again)", pending)
		}
		if len(failed) > 0 {
			note += "; refused: " + strings.Join(failed, "; ")
		}
		r.fault(what, note)
	}
	r.recordChaos(rec)
}

// kernelDelivery is what a kernel backend's change means for the nodes of send: the kernel holds
// the rules for dead and paused nodes too, so every one took them when the kernel did (or none).
func kernelDelivery(send []int, err error) map[int]delivery {
	ts := time.Now().UnixNano()
	out := make(map[int]delivery, len(send))
	for _, id := range send {
		if err != nil {
			out[id] = delivery{err: err.Error()}
		} else {
			out[id] = delivery{ack: ts}
		}
	}
	return out
}

// tally sorts deliveries into the nodes that acked, those told later, and the refusals.
func tally(got map[int]delivery, send []int) (acked, pending []int, failed []string) {
	for _, id := range send {
		d := got[id]
		switch {
		case d.ack != 0:
			acked = append(acked, id)
		case d.pending:
			pending = append(pending, id)
		default:
			failed = append(failed, fmt.Sprintf("node %d: %s", id, d.err))
		}
	}
	return acked, pending, failed
}

// transportNet sends each node its complete rule set through its control endpoint (CtlRules).
// It keeps the rule set every node should hold, so that a node that could not be told at once
// (paused, dead) is told when it runs again, and a node's pushes are serialised so that the last
// one to arrive is always the newest set.
type transportNet struct {
	r     *runner
	mu    sync.Mutex
	want  map[int][]wire.LinkRule
	gen   map[int]int    // bumped at every change of want[id]
	have  map[int][2]int // the (incarnation, gen) the node acknowledged
	locks map[int]*sync.Mutex
}

func newTransportNet(r *runner) *transportNet {
	return &transportNet{r: r, want: map[int][]wire.LinkRule{}, gen: map[int]int{}, have: map[int][2]int{}, locks: map[int]*sync.Mutex{}}
}

var _ netBackend = (*transportNet)(nil)

func (t *transportNet) set(rules map[int][]wire.LinkRule, send []int) map[int]delivery {
	t.mu.Lock()
	for id, set := range rules {
		t.want[id] = set
		t.gen[id]++
	}
	t.mu.Unlock()
	out := make(map[int]delivery, len(send))
	var mu sync.Mutex
	_ = fanOut(send, controlParallel(), func(id int) error {
		d := t.push(id, true)
		mu.Lock()
		out[id] = d
		mu.Unlock()
		return nil
	})
	return out
}

func (t *transportNet) up(id int, then func()) {
	go func() {
		d := t.push(id, false)
		if then != nil {
			defer then()
		}
		switch {
		case d.ack != 0:
			t.mu.Lock()
			n := len(t.want[id])
			t.mu.Unlock()
			t.r.say("leaderlab: %s node %d runs again: told its %d link rules", t.r.since(), id, n)
		case d.err != "":
			t.r.say("leaderlab: %s node %d runs again but refused its link rules: %s", t.r.since(), id, d.err)
		}
	}()
}

func (t *transportNet) close() error { return nil }

// push sends node id the newest rule set. Unless always, it sends only when the node's current
// incarnation does not hold it yet (a fresh incarnation holds the empty set).
func (t *transportNet) push(id int, always bool) delivery {
	t.mu.Lock()
	l := t.locks[id]
	if l == nil {
		l = &sync.Mutex{}
		t.locks[id] = l
	}
	t.mu.Unlock()
	l.Lock()
	defer l.Unlock()
	pr := t.r.procs.current(id)
	if pr == nil || !pr.running() || pr.paused.Load() {
		return delivery{pending: true}
	}
	select {
	case <-pr.ready:
	default:
		return delivery{pending: true} // a restarting incarnation: told when it is ready
	}
	t.mu.Lock()
	set, gen, have := t.want[id], t.gen[id], t.have[id]
	t.mu.Unlock()
	fresh := have[0] != pr.inc
	if !always && (have == [2]int{pr.inc, gen} || (fresh && len(set) == 0)) {
		return delivery{}
	}
	n, _ := t.r.cluster.Node(id)
	var rep wire.CtlReply
	err := retry(pr.running, func() (err error) { // a rule set replaces the last: idempotent
		rep, err = t.r.call(n, wire.CtlRequest{Op: wire.CtlRules, Rules: set})
		return err
	})
	if err != nil {
		return delivery{err: err.Error()}
	}
	if rep.Rules != len(set) {
		return delivery{err: fmt.Sprintf("holds %d rules after being sent %d", rep.Rules, len(set))}
	}
	ts := time.Now().UnixNano()
	t.mu.Lock()
	t.have[id] = [2]int{pr.inc, gen}
	t.mu.Unlock()
	return delivery{ack: ts}
}
