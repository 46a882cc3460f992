package election

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	testT  = 100 * time.Millisecond
	testT1 = 300 * time.Millisecond
)

// bullyNode builds node self of a five-node cluster (IDs 1..5).
func bullyNode(t *testing.T, self int, initiator bool, inc int) *bully {
	t.Helper()
	m, err := newBully(Config{Self: self, IDs: []int{1, 2, 3, 4, 5}, Topology: "mesh", Initiator: initiator,
		Incarnation: inc, ElectionTimeout: testT, CoordinatorTimeout: testT1})
	if err != nil {
		t.Fatal(err)
	}
	return m.(*bully)
}

// Effect constructors, to keep the table readable.
func eElect(r int) Effect     { return Effect{Kind: EffElect, Round: r} }
func eLeader(l int) Effect    { return Effect{Kind: EffLeader, Leader: l} }
func eSetT() Effect           { return Effect{Kind: EffSetTimer, Timer: BullyTimerT, After: testT} }
func eSetT1() Effect          { return Effect{Kind: EffSetTimer, Timer: BullyTimerT1, After: testT1} }
func eCancel(n string) Effect { return Effect{Kind: EffCancelTimer, Timer: n} }
func ePlan(to, watch []int) Effect {
	return Effect{Kind: EffHeartbeat, HeartbeatTo: to, Watch: watch}
}
func eSend(to int, kind string, round, cand int) Effect {
	return Effect{Kind: EffSend, To: to, Msg: Message{Kind: kind, Round: round, Cand: cand}}
}
func eElections(r int, to ...int) []Effect {
	var out []Effect
	for _, h := range to {
		out = append(out, eSend(h, BullyElection, r, 0))
	}
	return out
}
func eCoordinators(self, r int, to ...int) []Effect {
	var out []Effect
	for _, l := range to {
		out = append(out, eSend(l, BullyCoordinator, r, self))
	}
	return out
}
func seq(parts ...any) []Effect {
	var out []Effect
	for _, p := range parts {
		switch v := p.(type) {
		case Effect:
			out = append(out, v)
		case []Effect:
			out = append(out, v...)
		default:
			panic(fmt.Sprintf("seq: %T", p))
		}
	}
	return out
}

// Inputs.
func iStart() Input { return Input{Kind: InStart} }
func iRecv(from int, kind string, round int) Input {
	return Input{Kind: InRecv, From: from, Msg: Message{Kind: kind, Round: round, Cand: from}}
}
func withNow(in Input, now time.Duration) Input { in.Now = now; return in }
func iTimer(name string) Input                  { return Input{Kind: InTimer, Timer: name} }
func iSuspect(p int) Input                      { return Input{Kind: InSuspect, From: p} }
func iTrust(p int) Input                        { return Input{Kind: InTrust, From: p} }
func iHeartbeat(from int, now time.Duration) Input {
	return Input{Kind: InHeartbeat, From: from, Claim: from, Now: now}
}

// States to start a case from: each is reached by feeding inputs to a fresh node.
type state struct {
	self, inc int
	initiator bool
	setup     []Input
	doc       string
}

var (
	// follower3: node 3 woke on 5's announcement of round 1.
	follower3 = state{self: 3, inc: 1, setup: []Input{iRecv(5, BullyCoordinator, 1)}, doc: "3 follows 5 (round 1)"}
	// electing3: node 3 started as an initiator and waits T for an ok.
	electing3 = state{self: 3, inc: 1, initiator: true, setup: []Input{iStart()}, doc: "3 waits for ok (round 1)"}
	// awaiting3: node 3 got 4's ok and waits T1 for a coordinator.
	awaiting3 = state{self: 3, inc: 1, initiator: true, setup: []Input{iStart(), iRecv(4, BullyOK, 1)}, doc: "3 waits for a coordinator"}
	// leader5: node 5 announced itself at start (round 1).
	leader5 = state{self: 5, inc: 1, initiator: true, setup: []Input{iStart()}, doc: "5 leads (round 1)"}
	// leader4: 5 is dead; 4 won round 2 after T.
	// follower3of4: node 3 follows 4 (5 is out of the picture).
	follower3of4 = state{self: 3, inc: 1, setup: []Input{iRecv(4, BullyCoordinator, 1)}, doc: "3 follows 4 (round 1)"}
	leader4      = state{self: 4, inc: 1, setup: []Input{iRecv(5, BullyCoordinator, 1), iRecv(3, BullyElection, 2), iTimer(BullyTimerT)},
		doc: "4 leads after 5 died (round 2)"}
)

func TestBullyHandlers(t *testing.T) {
	cases := []struct {
		name string
		from state
		in   []Input // the effects of the last one are checked
		want []Effect
		// leader and participant after the case.
		leader      int
		participant bool
	}{
		{"an initiator holds an election", state{self: 2, inc: 1, initiator: true}, []Input{iStart()},
			seq(eElect(1), eElections(1, 3, 4, 5), eSetT()), 0, true},
		{"the highest initiator announces itself without an election", state{self: 5, inc: 1, initiator: true}, []Input{iStart()},
			seq(eElect(1), eLeader(5), eCoordinators(5, 1, 1, 2, 3, 4), ePlan([]int{1, 2, 3, 4}, nil)), 5, false},
		{"a non-initiator sleeps", state{self: 3, inc: 1}, []Input{iStart()}, nil, 0, false},
		{"a restarted node elects at once, round unknown", state{self: 3, inc: 2}, []Input{iStart()},
			seq(eElect(0), eElections(0, 4, 5), eSetT()), 0, true},
		{"a restarted highest node announces itself", state{self: 5, inc: 2}, []Input{iStart()},
			seq(eElect(0), eLeader(5), eCoordinators(5, 0, 1, 2, 3, 4), ePlan([]int{1, 2, 3, 4}, nil)), 5, false},
		{"a sleeping node woken by an election answers and takes part", state{self: 3, inc: 1}, []Input{iStart(), iRecv(1, BullyElection, 1)},
			seq(eSend(1, BullyOK, 1, 0), eElect(1), eElections(1, 4, 5), eSetT()), 0, true},
		{"a sleeping node woken by a coordinator follows", state{self: 3, inc: 1}, []Input{iStart(), iRecv(5, BullyCoordinator, 1)},
			seq(eLeader(5), ePlan(nil, []int{5})), 5, false},
		{"a participant answers ok and nothing more", electing3, []Input{iRecv(2, BullyElection, 1)},
			seq(eSend(2, BullyOK, 1, 0)), 0, true},
		{"a follower answers a late election of its round with ok only", follower3, []Input{iRecv(1, BullyElection, 1)},
			seq(eSend(1, BullyOK, 1, 0)), 5, false},
		{"a follower takes part in a new round", follower3, []Input{iRecv(1, BullyElection, 2)},
			seq(eSend(1, BullyOK, 2, 0), eElect(2), eElections(2, 4, 5), eSetT()), 0, true},
		{"a follower takes part when a restarted node asks (round 0)", follower3, []Input{iRecv(1, BullyElection, 0)},
			seq(eSend(1, BullyOK, 1, 0), eElect(2), eElections(2, 4, 5), eSetT()), 0, true},
		{"the highest leader answers a late election of its round with ok only", leader5, []Input{iRecv(2, BullyElection, 1)},
			seq(eSend(2, BullyOK, 1, 0)), 5, false},
		{"the highest leader re-announces itself for a new round", leader5, []Input{withNow(iRecv(2, BullyElection, 2), testT)},
			seq(eSend(2, BullyOK, 2, 0), eElect(2), eLeader(5), eCoordinators(5, 2, 1, 2, 3, 4)), 5, false},
		{"...but answers j alone within T of its last announcement", leader5, []Input{withNow(iRecv(2, BullyElection, 2), testT-1)},
			seq(eSend(2, BullyOK, 2, 0), eSend(2, BullyCoordinator, 2, 5)), 5, false},
		{"a lower leader checks the IDs above it again (Staudek, step 7)", leader4, []Input{iRecv(1, BullyElection, 0)},
			seq(eSend(1, BullyOK, 2, 0), eElect(3), eElections(3, 5), eSetT(), ePlan(nil, nil)), 0, true},
		{"an election from a higher ID is not for us", follower3, []Input{iRecv(4, BullyElection, 7)}, nil, 5, false},
		{"an ok stops the wait for answers; T1 starts", electing3, []Input{iRecv(4, BullyOK, 1)},
			seq(eCancel(BullyTimerT), eSetT1()), 0, true},
		{"a second ok changes nothing", awaiting3, []Input{iRecv(5, BullyOK, 1)}, nil, 0, true},
		{"an ok from a lower ID is ignored", electing3, []Input{iRecv(2, BullyOK, 1)}, nil, 0, true},
		{"T without an ok: win", electing3, []Input{iTimer(BullyTimerT)},
			seq(eLeader(3), eCoordinators(3, 1, 1, 2), ePlan([]int{1, 2, 4, 5}, nil)), 3, false},
		{"T1 without a coordinator: start over", awaiting3, []Input{iTimer(BullyTimerT1)},
			seq(eElect(2), eElections(2, 4, 5), eSetT()), 0, true},
		{"a stale T is ignored", awaiting3, []Input{iTimer(BullyTimerT)}, nil, 0, true},
		{"a coordinator from a higher ID ends the election", electing3, []Input{iRecv(5, BullyCoordinator, 1)},
			seq(eCancel(BullyTimerT), eLeader(5), ePlan(nil, []int{5})), 5, false},
		{"a coordinator ends the wait for it", awaiting3, []Input{iRecv(4, BullyCoordinator, 1)},
			seq(eCancel(BullyTimerT1), eLeader(4), ePlan(nil, []int{4})), 4, false},
		// explore -a bully -n 5 --initiators 5 --crashes 1 --crash-targets leader: 5 announced round 1
		// and died; 3 heard of it, and 4 won round 2; 5's last coordinator reached 3 after 4's (another
		// link), and following it, 3 opened round 3 at 5's end of stream, which every node above took
		// part in again.
		{"a coordinator of an older round than ours is stale: not followed",
			follower3, []Input{iSuspect(5), iRecv(4, BullyCoordinator, 2), iRecv(5, BullyCoordinator, 1)}, nil, 4, false},
		{"...nor by a participant of a newer round", follower3, []Input{iRecv(1, BullyElection, 2), iRecv(5, BullyCoordinator, 1)},
			nil, 0, true},
		{"...but a restarted node's (round 0) is", follower3, []Input{iSuspect(5), iRecv(4, BullyCoordinator, 2), iRecv(5, BullyCoordinator, 0)},
			seq(eLeader(5), ePlan(nil, []int{5})), 5, false},
		{"a coordinator from a lower ID is bullied back", follower3, []Input{iRecv(2, BullyCoordinator, 1)},
			seq(eElect(2), eElections(2, 4, 5), eSetT()), 0, true},
		{"a participant lets its own election answer a lower coordinator", electing3, []Input{iRecv(2, BullyCoordinator, 1)}, nil, 0, true},
		{"the leader suspected: elect", follower3, []Input{iSuspect(5)},
			seq(eElect(2), eElections(2, 4, 5), eSetT(), ePlan(nil, nil)), 0, true},
		{"another peer suspected: nothing", follower3, []Input{iSuspect(4)}, nil, 5, false},
		{"the leader suspected with nobody else above: win at once", state{self: 4, inc: 1, setup: []Input{iRecv(5, BullyCoordinator, 1)}},
			[]Input{iSuspect(5)},
			seq(eElect(2), eElections(2, 5), eLeader(4), eCoordinators(4, 2, 1, 2, 3), ePlan([]int{1, 2, 3, 5}, nil)), 4, false},
		{"every higher ID suspected while waiting for answers: win at once", electing3, []Input{iSuspect(4), iSuspect(5)},
			seq(eCancel(BullyTimerT), eLeader(3), eCoordinators(3, 1, 1, 2), ePlan([]int{1, 2, 4, 5}, nil)), 3, false},
		{"every higher ID suspected while waiting for a coordinator: start over, winning at once", awaiting3, []Input{iSuspect(5), iSuspect(4)},
			seq(eCancel(BullyTimerT1), eElect(2), eElections(2, 4, 5), eLeader(3), eCoordinators(3, 2, 1, 2), ePlan([]int{1, 2, 4, 5}, nil)), 3, false},
		// Seeds 1060, 5023, 5075 (bench chaos --sim): 3 suspected 4 since 4's crash and never heard
		// from it after its restart (only the leader sends heartbeats); when 5 went silent, 3 won at
		// once, and 4's ok to its election came too late to count: 3 led beside 5 until a heal.
		{"a leader that won on a stale suspicion steps down at a higher ok, and waits for the coordinator",
			follower3, []Input{iSuspect(4), iSuspect(5), iRecv(4, BullyOK, 2)},
			seq(eElect(2), eSetT1(), ePlan(nil, nil)), 0, true},
		{"...and elects again when none comes", follower3, []Input{iSuspect(4), iSuspect(5), iRecv(4, BullyOK, 2), iTimer(BullyTimerT1)},
			seq(eElect(3), eElections(3, 4, 5), eSetT()), 0, true},
		{"a follower ignores a late ok", follower3, []Input{iRecv(4, BullyOK, 1)}, nil, 5, false},
		// explore -a bully -n 5 --crashes 1 --crash-targets leader: the answer to 3's first election
		// came after 5 died and 4 won round 2; taking its round, 3 opened round 3 at 5's end of stream,
		// which every node above took part in again.
		{"...and its round: its next election is the others' round", follower3, []Input{iRecv(4, BullyOK, 2), iSuspect(5)},
			seq(eElect(2), eElections(2, 4, 5), eSetT(), ePlan(nil, nil)), 0, true},
		{"a trusted peer counts again", electing3, []Input{iSuspect(4), iSuspect(5), iTrust(5)}, nil, 3, false},
		{"trust restores the wait", electing3, []Input{iSuspect(5), iTrust(5), iSuspect(4)}, nil, 0, true},
		{"a heartbeat of our leader: nothing", follower3, []Input{iHeartbeat(5, time.Second)}, nil, 5, false},
		{"the leader bullies back a lower claimant", leader5, []Input{iHeartbeat(4, time.Second)},
			seq(eElect(2), eLeader(5), eCoordinators(5, 2, 1, 2, 3, 4)), 5, false},
		{"...not within T of its announcement (it is on its way)", leader5, []Input{iHeartbeat(4, testT-1)}, nil, 5, false},
		{"...once per T", leader5, []Input{iHeartbeat(4, time.Second), iHeartbeat(4, time.Second+testT-1)}, nil, 5, false},
		{"...and again when the claim lasts", leader5, []Input{iHeartbeat(4, time.Second), iHeartbeat(4, time.Second+testT)},
			seq(eElect(3), eLeader(5), eCoordinators(5, 3, 1, 2, 3, 4)), 5, false},
		{"a follower bullies back a claimant below it", follower3, []Input{iHeartbeat(2, time.Second)},
			seq(eElect(2), eElections(2, 4, 5), eSetT()), 0, true},
		{"a claimant between us and our leader: nothing", follower3, []Input{iHeartbeat(4, time.Second)}, nil, 5, false},
		{"a claimant above our leader: first heard, nothing yet", follower3of4, []Input{iHeartbeat(5, time.Second)}, nil, 4, false},
		{"a claimant above our leader for T: elect, it will answer", follower3of4, []Input{iHeartbeat(5, time.Second), iHeartbeat(5, time.Second+testT)},
			seq(eElect(2), eElections(2, 4, 5), eSetT()), 0, true},
		{"two leaders: a higher claimant heard by a leader: elect at once, it will answer", leader4, []Input{iHeartbeat(5, time.Second)},
			seq(eElect(3), eElections(3, 5), eSetT(), ePlan(nil, nil)), 0, true},
		{"a node awaiting a coordinator takes a higher leader's claim for it", awaiting3, []Input{iHeartbeat(5, time.Second)},
			seq(eCancel(BullyTimerT1), eLeader(5), ePlan(nil, []int{5})), 5, false},
		{"...not a lower one's", awaiting3, []Input{iHeartbeat(2, time.Second)}, nil, 0, true},
		{"a participant ignores claims", electing3, []Input{iHeartbeat(5, time.Second), iHeartbeat(5, 2*time.Second)}, nil, 0, true},
		{"an unknown message kind is ignored", follower3, []Input{{Kind: InRecv, From: 1, Msg: Message{Kind: "probe"}}}, nil, 5, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := bullyNode(t, c.from.self, c.from.initiator, c.from.inc)
			for _, in := range c.from.setup {
				b.Step(in)
			}
			var got []Effect
			for _, in := range c.in {
				got = b.Step(in)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("from %q:\n got  %s\n want %s", c.from.doc, fmtEffects(got), fmtEffects(c.want))
			}
			if b.Leader() != c.leader || b.Participant() != c.participant {
				t.Errorf("leader %d participant %v, want %d %v", b.Leader(), b.Participant(), c.leader, c.participant)
			}
		})
	}
}

func fmtEffects(effs []Effect) string {
	var parts []string
	for _, e := range effs {
		switch e.Kind {
		case EffSend:
			parts = append(parts, fmt.Sprintf("send(%d,%s,r%d,c%d)", e.To, e.Msg.Kind, e.Msg.Round, e.Msg.Cand))
		case EffSetTimer:
			parts = append(parts, fmt.Sprintf("set(%s,%v)", e.Timer, e.After))
		case EffCancelTimer:
			parts = append(parts, fmt.Sprintf("cancel(%s)", e.Timer))
		case EffElect:
			parts = append(parts, fmt.Sprintf("elect(r%d)", e.Round))
		case EffLeader:
			parts = append(parts, fmt.Sprintf("leader(%d)", e.Leader))
		case EffHeartbeat:
			parts = append(parts, fmt.Sprintf("plan(to%v,watch%v)", e.HeartbeatTo, e.Watch))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func TestBullyStepIntoAppends(t *testing.T) {
	b := bullyNode(t, 2, true, 1)
	buf := make([]Effect, 1, 16)
	got := b.StepInto(buf, iStart())
	if len(got) != 1+1+3+1 || &got[0] != &buf[0] {
		t.Fatalf("StepInto did not append to the caller's buffer: %s", fmtEffects(got))
	}
}

func TestBullyConfigErrors(t *testing.T) {
	good := Config{Self: 2, IDs: []int{1, 2, 3}, Topology: "mesh", Incarnation: 1, ElectionTimeout: testT, CoordinatorTimeout: testT1}
	for _, c := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Topology = "ring" }, "mesh only"},
		{func(c *Config) { c.Self = 9 }, "not among IDs"},
		{func(c *Config) { c.IDs = []int{1, 3, 2} }, "ascending"},
		{func(c *Config) { c.ElectionTimeout = 0 }, "positive"},
		{func(c *Config) { c.Incarnation = 0 }, "Incarnation"},
	} {
		cfg := good
		cfg.IDs = append([]int(nil), good.IDs...)
		c.change(&cfg)
		if _, err := newBully(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one mentioning %q", err, c.want)
		}
	}
	if _, err := newBully(good); err != nil {
		t.Fatal(err)
	}
}

func TestBullyRegistered(t *testing.T) {
	a, err := Lookup("bully")
	if err != nil {
		t.Fatal(err)
	}
	if a.Accepts("mesh") != nil || a.Accepts("ring") == nil || !a.FIFO {
		t.Errorf("bully should run on a mesh only, with FIFO links")
	}
	if !a.IsElection(BullyElection) || !a.IsElection(BullyOK) || !a.IsAnnounce(BullyCoordinator) {
		t.Errorf("kinds %v, announce %v", a.Kinds, a.Announce)
	}
	for _, c := range []struct{ n, init, want int }{{1, 1, 0}, {2, 1, 3}, {5, 5, 24}, {64, 1, 4095}, {8, 0, 0}} {
		if got, ok := a.Bound(c.n, c.init); !ok || got != c.want {
			t.Errorf("Bound(%d, %d) = %d, %v; want %d", c.n, c.init, got, ok, c.want)
		}
	}
}

// Bully's declaration of what a message may make it send (Reactor), which the explorer's reduction
// on a mesh rests on, against what the node does with each message: nothing for ReactNone, sends to
// the sender alone for ReactAnswer. Node 3 in round 1, waiting for answers; then the same node after
// winning (a leader answers a late election of its round with an ok alone, and a newer one with its
// coordinator too).
func TestBullyReactionsAreWhatItDoes(t *testing.T) {
	cases := []struct {
		name string
		from int
		m    Message
		want Reaction
	}{
		{"ok", 4, Message{Kind: BullyOK, Round: 1}, ReactNone},
		{"ok of a newer round", 5, Message{Kind: BullyOK, Round: 7}, ReactNone},
		{"election of its round", 2, Message{Kind: BullyElection, Round: 1}, ReactAnswer},
		{"election of a newer round", 2, Message{Kind: BullyElection, Round: 2}, ReactAny},
		{"election of a restarted node", 1, Message{Kind: BullyElection, Round: 0}, ReactAny},
		{"election from above", 4, Message{Kind: BullyElection, Round: 1}, ReactNone},
		{"coordinator from above", 5, Message{Kind: BullyCoordinator, Round: 1, Cand: 5}, ReactNone},
		{"coordinator from below", 1, Message{Kind: BullyCoordinator, Round: 1, Cand: 1}, ReactAny},
	}
	states := map[string]func() *bully{
		"waiting": func() *bully {
			b := bullyNode(t, 3, true, 1)
			b.Step(Input{Kind: InStart})
			return b
		},
		"leading": func() *bully {
			b := bullyNode(t, 3, true, 1)
			b.Step(Input{Kind: InStart})
			b.Step(Input{Kind: InTimer, Timer: BullyTimerT, Now: testT})
			return b
		},
	}
	for sname, mk := range states {
		for _, c := range cases {
			b := mk()
			if got := b.Reaction(c.from, c.m); got != c.want {
				t.Errorf("%s, %s from %d: Reaction %d, want %d", sname, c.name, c.from, got, c.want)
			}
			effs := b.Step(Input{Kind: InRecv, From: c.from, Msg: c.m, Now: testT})
			sent := 0
			for _, e := range effs {
				if e.Kind != EffSend {
					continue
				}
				sent++
				if c.want == ReactNone || c.want == ReactAnswer && e.To != c.from {
					t.Errorf("%s, %s from %d (declared %d): sent %s to %d", sname, c.name, c.from, c.want, e.Msg.Kind, e.To)
				}
			}
			if c.want == ReactAnswer && sent == 0 {
				t.Errorf("%s, %s from %d: declared an answer, sent none", sname, c.name, c.from)
			}
		}
	}
}

// Bully's declaration of what the news that a peer is gone may make it send (NewsReactor), against
// what node 3 does with the news in each state, after the messages declared ahead of it: nothing
// where it declares ReactNone. The table says where it must declare ReactNone, so that a
// declaration of ReactAny everywhere (true, and of no use to the explorer) fails it too.
func TestBullySuspectReactionIsWhatItDoes(t *testing.T) {
	coord5 := Message{Kind: BullyCoordinator, Cand: 5, Round: 1}
	states := []struct {
		name  string
		steps []Input
		none  []int // the peers whose news (nothing ahead) it must declare ReactNone
	}{
		{"sleeping", nil, nil},
		{"waiting for answers", []Input{{Kind: InStart}}, []int{1, 2, 4, 5}},
		{"waiting, 4 suspected", []Input{{Kind: InStart}, {Kind: InSuspect, From: 4}}, []int{1, 2}},
		{"waiting for the coordinator", []Input{{Kind: InStart}, {Kind: InRecv, From: 4, Msg: Message{Kind: BullyOK, Round: 1}}}, []int{1, 2, 4, 5}},
		{"waiting for the coordinator, 5 suspected", []Input{{Kind: InStart}, {Kind: InSuspect, From: 5}, {Kind: InRecv, From: 4, Msg: Message{Kind: BullyOK, Round: 1}}}, []int{1, 2}},
		{"following 5", []Input{{Kind: InStart}, {Kind: InRecv, From: 5, Msg: coord5}}, []int{1, 2, 4}},
		{"following 5, 4 suspected", []Input{{Kind: InStart}, {Kind: InRecv, From: 5, Msg: coord5}, {Kind: InSuspect, From: 4}}, []int{1, 2}},
		{"leading", []Input{{Kind: InStart}, {Kind: InTimer, Timer: BullyTimerT, Now: testT}}, []int{1, 2, 4, 5}},
		{"following 4 in round 2", []Input{{Kind: InStart}, {Kind: InRecv, From: 1, Msg: Message{Kind: BullyElection, Round: 2}}, {Kind: InRecv, From: 4, Msg: Message{Kind: BullyCoordinator, Cand: 4, Round: 2}}}, []int{1, 2, 5}},
	}
	for _, st := range states {
		for _, p := range []int{1, 2, 4, 5} {
			for _, ahead := range [][]Message{nil, {coord5}, {{Kind: BullyOK, Round: 1}}} {
				if len(ahead) > 0 && p != 5 {
					continue // what is ahead of p's news comes from p
				}
				b := bullyNode(t, 3, st.name != "sleeping", 1)
				if st.name == "sleeping" {
					b.Step(Input{Kind: InStart})
				}
				for _, in := range st.steps {
					b.Step(in)
				}
				got := b.SuspectReaction(p, ahead)
				if len(ahead) == 0 && slices.Contains(st.none, p) && got != ReactNone {
					t.Errorf("%s: news of %d: declared %v, want ReactNone", st.name, p, got)
				}
				if st.name == "following 4 in round 2" && len(ahead) > 0 && got != ReactNone {
					// 5's coordinator of round 1 is stale: it is not followed
					t.Errorf("%s: news of %d behind %v: declared %v, want ReactNone", st.name, p, ahead, got)
				}
				if got != ReactNone {
					continue
				}
				for _, m := range ahead {
					b.Step(Input{Kind: InRecv, From: p, Msg: m, Now: testT})
				}
				for _, e := range b.Step(Input{Kind: InSuspect, From: p, Now: testT}) {
					if e.Kind == EffSend {
						t.Errorf("%s: news of %d behind %v: declared ReactNone, sent %s to %d", st.name, p, ahead, e.Msg.Kind, e.To)
					}
				}
			}
		}
	}
}
