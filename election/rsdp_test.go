package election

import (
	"testing"
	"time"
)

// rsdpNode builds node self of a five-node RSDP cluster (IDs 1..5, latest mode, status timeout
// 200ms) and starts it as a non-initiator.
func rsdpNode(t *testing.T, self int) *rsdp {
	t.Helper()
	m, err := newRSDP(Config{Self: self, IDs: []int{1, 2, 3, 4, 5}, Topology: "mesh", Incarnation: 1,
		ElectionTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	r := m.(*rsdp)
	r.Step(Input{Kind: InStart})
	return r
}

// hellos returns the sessions of the hello messages among effs, by receiver.
func hellos(effs []Effect) map[int]int {
	out := map[int]int{}
	for _, e := range effs {
		if e.Kind == EffSend && e.Msg.Kind == RSDPHello {
			out[e.To] = e.Msg.Round
		}
	}
	return out
}

// settle runs node r through session 1, in which every other node answers and shares (members,
// leader) at `at`.
func settle(t *testing.T, r *rsdp, at time.Duration, members []int, leader int) {
	t.Helper()
	r.Step(Input{Kind: InRecv, From: 1, Msg: Message{Kind: RSDPHello, Round: 1}, Now: at})
	for _, p := range r.others {
		r.Step(Input{Kind: InRecv, From: p, Msg: Message{Kind: RSDPStatus, Round: 1, IDs: members, Cand: leader}, Now: at})
		r.Step(Input{Kind: InRecv, From: p, Msg: Message{Kind: RSDPShare, Round: 1, IDs: members, Cand: leader}, Now: at})
	}
	r.Step(Input{Kind: InTimer, Timer: rsdpTimerShare, Now: at + r.shareWindow})
	if r.debating || r.Leader() != leader {
		t.Fatalf("after session 1: debating %v, leader %d, want false, %d", r.debating, r.Leader(), leader)
	}
}

// Seed 20070 (bench chaos --sim -a rsdp, link 4->5 drop): 5 suspected 4, the others' shares
// counted 4 as a member again, and when the drop healed 5 trusted 4 without a session, because 4
// was a member already; 4 led the others and 5 itself until the resync, 800ms later. Trusting a
// suspected peer opens a session, member or not.
func TestRSDPTrustOpensSession(t *testing.T) {
	r := rsdpNode(t, 5)
	all := []int{1, 2, 3, 4, 5}
	settle(t, r, 0, all, 5)
	r.Step(Input{Kind: InSuspect, From: 4, Now: 100 * time.Millisecond})
	// a share that counts 4 again (the others never lost it), as in the seed
	r.Step(Input{Kind: InRecv, From: 1, Msg: Message{Kind: RSDPShare, Round: 1, IDs: all, Cand: 5}, Now: 110 * time.Millisecond})
	r.Step(Input{Kind: InTimer, Timer: rsdpTimerShare, Now: 140 * time.Millisecond})
	for r.debating { // the session that the share of a suspected member opened
		r.Step(Input{Kind: InTimer, Timer: rsdpTimerStatus, Now: 340 * time.Millisecond})
	}
	effs := r.Step(Input{Kind: InTrust, From: 4, Now: time.Second})
	if h := hellos(effs); len(h) != 4 || h[4] == 0 {
		t.Errorf("trusting 4 again sent hellos %v, want a new session's hello to 1, 2, 3 and 4", h)
	}
}

// Seed 20006 (bench chaos --sim -a rsdp, link 3->5 loss 90%): a session closed on 4 at 1..4 (3's
// hello to 5 was lost, so 3's share left 5 out and came last) and on 5 at 5. After the heal
// nothing was lost any more, but nothing reconciled them before the resync, 500ms later: 4 and 5
// both led. A heartbeat that names another leader opens a session, at most one per half status
// timeout, and not while one is running.
func TestRSDPHeartbeatClaimOpensSession(t *testing.T) {
	all := []int{1, 2, 3, 4, 5}
	ms := time.Millisecond
	for _, c := range []struct {
		name  string
		claim int
		at    time.Duration
		open  bool
	}{
		{"another leader named", 4, 500 * ms, true},
		{"our leader named", 5, 500 * ms, false},
		{"no leader named (⊥)", 0, 500 * ms, false},
		{"within half a status timeout of the last session", 4, 90 * ms, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := rsdpNode(t, 5)
			settle(t, r, 0, all, 5)
			effs := r.Step(Input{Kind: InHeartbeat, From: 4, Claim: c.claim, Now: c.at})
			if h := hellos(effs); (len(h) > 0) != c.open {
				t.Errorf("heartbeat of 4 claiming %d at %v: hellos %v, want a session: %v", c.claim, c.at, h, c.open)
			}
		})
	}
	r := rsdpNode(t, 5)
	settle(t, r, 0, all, 5)
	r.Step(Input{Kind: InSuspect, From: 4, Now: 300 * ms})
	if h := hellos(r.Step(Input{Kind: InHeartbeat, From: 3, Claim: 4, Now: 500 * ms})); len(h) > 0 {
		t.Errorf("a claim for a suspected node opened a session: %v", h)
	}
	r = rsdpNode(t, 5)
	settle(t, r, 0, all, 5)
	r.Step(Input{Kind: InHeartbeat, From: 4, Claim: 4, Now: 500 * ms})
	if h := hellos(r.Step(Input{Kind: InHeartbeat, From: 3, Claim: 4, Now: 510 * ms})); len(h) > 0 {
		t.Errorf("a claim while a session runs opened another: %v", h)
	}
}

// Seed 300017 (bench chaos --sim -a rsdp -n 6): node 4 led 2..4 after a partial partition and
// did not count 6 a member, so it did not watch 6; when 6 paused, every session 4 took part in
// waited a status timeout for 6's reply, and the others opened sessions faster than that. The share
// windows that ended meanwhile waited for the mutex: 4 never applied a share again and led beside 5
// until 6 resumed, 780ms. A share window that ends while DEBATES waits is applied at once.
func TestRSDPShareAppliedWhileDebatesWaits(t *testing.T) {
	ms := time.Millisecond
	r := rsdpNode(t, 3)
	settle(t, r, 0, []int{1, 2, 3, 4, 5}, 5)
	r.Step(Input{Kind: InRecv, From: 1, Msg: Message{Kind: RSDPHello, Round: 2}, Now: 100 * ms})
	for _, p := range []int{1, 2, 4} { // 5 is silent and not (yet) suspected
		r.Step(Input{Kind: InRecv, From: p, Msg: Message{Kind: RSDPStatus, Round: 2, IDs: []int{1, 2, 3, 4}, Cand: 4}, Now: 101 * ms})
		r.Step(Input{Kind: InRecv, From: p, Msg: Message{Kind: RSDPShare, Round: 2, IDs: []int{1, 2, 3, 4}, Cand: 4}, Now: 102 * ms})
	}
	r.Step(Input{Kind: InTimer, Timer: rsdpTimerShare, Now: 130 * ms})
	if !r.debating || r.Leader() != 4 {
		t.Fatalf("the share window ended while session 2 waited for 5: debating %v, leader %d, want true, 4", r.debating, r.Leader())
	}
	effs := r.Step(Input{Kind: InRecv, From: 2, Msg: Message{Kind: RSDPHello, Round: 3}, Now: 200 * ms})
	if h := hellos(effs); h[1] != 3 {
		t.Errorf("node 3 did not join session 3: hellos %v", h)
	}
}

// Seed 920510: a resumed leader's hello reached a node that did not count it yet, while a share in
// its window already did; the session that hello opened waited for a node paused a moment later.
// The window decides first; a session follows only if its state still leaves the sender out.
func TestRSDPHelloOfANodeAPendingShareCounts(t *testing.T) {
	ms := time.Millisecond
	r := rsdpNode(t, 3)
	settle(t, r, 0, []int{1, 2, 3, 4}, 4)
	r.Step(Input{Kind: InRecv, From: 1, Msg: Message{Kind: RSDPShare, Round: 1, IDs: []int{1, 2, 3, 4, 5}, Cand: 5}, Now: 100 * ms})
	if h := hellos(r.Step(Input{Kind: InRecv, From: 5, Msg: Message{Kind: RSDPHello, Round: 1}, Now: 101 * ms})); len(h) > 0 {
		t.Errorf("a hello of 5, which a pending share counts, opened a session at once: %v", h)
	}
	r.Step(Input{Kind: InTimer, Timer: rsdpTimerShare, Now: 125 * ms})
	if r.Leader() != 5 {
		t.Errorf("after the window: leader %d, want 5", r.Leader())
	}
	// the other way: the window's state leaves the sender out, so the session follows
	r = rsdpNode(t, 3)
	settle(t, r, 0, []int{1, 2, 3, 4}, 4)
	r.Step(Input{Kind: InRecv, From: 1, Msg: Message{Kind: RSDPShare, Round: 1, IDs: []int{1, 2, 3, 4, 5}, Cand: 5}, Now: 100 * ms})
	r.Step(Input{Kind: InRecv, From: 5, Msg: Message{Kind: RSDPHello, Round: 1}, Now: 101 * ms})
	r.Step(Input{Kind: InRecv, From: 2, Msg: Message{Kind: RSDPShare, Round: 1, IDs: []int{1, 2, 3, 4}, Cand: 4}, Now: 102 * ms})
	if h := hellos(r.Step(Input{Kind: InTimer, Timer: rsdpTimerShare, Now: 125 * ms})); len(h) == 0 {
		t.Errorf("the window's state (latest: 1..4) left 5 out, and no session followed its hello")
	}
}
