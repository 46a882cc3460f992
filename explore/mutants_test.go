package explore

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/explore/checker"
)

// Mutants: deliberately broken copies of the election algorithms, built here from the real
// machines by a wrapper that distorts what goes in or comes out, under names of their own (never
// registered: explored through Config.Algorithm). Each test shows that the explorer catches its mutant, with a counterexample no longer
// than the shortest one worked out by hand, and that the real algorithm passes the same
// exploration (so that only the mutation can fail it) — all but Bully without T1, which this model
// cannot tell from Bully (TestMutantBullyNoT1Escapes says why, and pins it).

const (
	mutantCRForwardsSmaller  = "mutant-cr-forwards-smaller"
	mutantBullyNoT1          = "mutant-bully-no-t1"
	variantBullyBlindWait    = "variant-bully-blind-wait"
	mutantBullyBlindWaitNoT1 = "mutant-bully-blind-wait-no-t1"
	mutantPetersonNoAlias    = "mutant-peterson-keeps-own-id"
	mutantLeLannShortCircle  = "mutant-lelann-stops-short"
	mutantCRSendsBack        = "mutant-cr-sends-back"
	mutantBullyClaimsSilence = "mutant-bully-claims-silence"
	mutantBullyFickle        = "mutant-bully-fickle"
	mutantBullyNewsSilent    = "mutant-bully-news-silent"
	mutantBullyNewsFickle    = "mutant-bully-news-fickle"
	mutantBullyEcho          = "mutant-bully-echo"
)

// mutants are the broken copies, by name: never registered (the package's other tests explore
// every registered algorithm), explored through Config.Algorithm.
var mutants = map[string]election.Algorithm{
	mutantCRForwardsSmaller: mutant(mutantCRForwardsSmaller, "chang-roberts", func(m election.Machine, c election.Config) election.Machine {
		return &crForwardsSmaller{m: m, self: c.Self, succ: mutantRingSucc(c)}
	}),
	mutantBullyNoT1: mutant(mutantBullyNoT1, "bully", func(m election.Machine, c election.Config) election.Machine {
		return &bullyNoT1{m: m, dropT1: true}
	}),
	variantBullyBlindWait: mutant(variantBullyBlindWait, "bully", func(m election.Machine, c election.Config) election.Machine {
		return &bullyNoT1{m: m, blindWait: true}
	}),
	mutantBullyBlindWaitNoT1: mutant(mutantBullyBlindWaitNoT1, "bully", func(m election.Machine, c election.Config) election.Machine {
		return &bullyNoT1{m: m, blindWait: true, dropT1: true}
	}),
	mutantPetersonNoAlias: mutant(mutantPetersonNoAlias, "peterson", func(m election.Machine, c election.Config) election.Machine {
		return &petersonKeepsOwnID{m: m, self: c.Self}
	}),
	mutantCRSendsBack: mutant(mutantCRSendsBack, "chang-roberts", func(m election.Machine, c election.Config) election.Machine {
		return &crSendsBack{m: m, pred: mutantRingPred(c)}
	}),
	mutantBullyClaimsSilence: mutant(mutantBullyClaimsSilence, "bully", func(m election.Machine, c election.Config) election.Machine {
		return &bullyClaimsSilence{m: m}
	}),
	mutantBullyFickle: mutant(mutantBullyFickle, "bully", func(m election.Machine, c election.Config) election.Machine {
		return &bullyFickle{m: m}
	}),
	mutantBullyNewsSilent: mutant(mutantBullyNewsSilent, "bully", func(m election.Machine, c election.Config) election.Machine {
		return &bullyNews{m: m, silent: true}
	}),
	mutantBullyNewsFickle: mutant(mutantBullyNewsFickle, "bully", func(m election.Machine, c election.Config) election.Machine {
		return &bullyNews{m: m}
	}),
	mutantBullyEcho: mutant(mutantBullyEcho, "bully", func(m election.Machine, c election.Config) election.Machine {
		return &bullyEcho{m: m, self: c.Self}
	}),
	mutantLeLannShortCircle: mutant(mutantLeLannShortCircle, "lelann", func(m election.Machine, c election.Config) election.Machine {
		return &leLannStopsShort{m: m, self: c.Self}
	}),
}

// mutant is the algorithm base with every machine wrapped by wrap, under name. Everything the
// explorer, the simulator and the checker read about an algorithm is base's.
func mutant(name, base string, wrap func(election.Machine, election.Config) election.Machine) election.Algorithm {
	b, err := election.Lookup(base)
	if err != nil {
		panic(err)
	}
	a := b
	a.Name = name
	a.Doc = "mutant of " + base + " (explore tests only)"
	a.New = func(c election.Config) (election.Machine, error) {
		m, err := b.New(c)
		if err != nil {
			return nil, err
		}
		return wrap(m, c), nil
	}
	return a
}

// mutantRingPred is the predecessor of c.Self in the ring order.
func mutantRingPred(c election.Config) int {
	for i, id := range c.Ring {
		if id == c.Self {
			return c.Ring[(i+len(c.Ring)-1)%len(c.Ring)]
		}
	}
	return c.Self
}

// mutantRingSucc is the successor of c.Self in the ring order (the next in Config.Ring, the last
// wrapping to the first). Without crashes it is the ring core's successor too.
func mutantRingSucc(c election.Config) int {
	for i, id := range c.Ring {
		if id == c.Self {
			return c.Ring[(i+1)%len(c.Ring)]
		}
	}
	return c.Self
}

// crForwardsSmaller is Chang-Roberts that forwards smaller IDs instead of swallowing them. The
// textbook (changroberts.go): "a node forwards an ID larger than its own, replaces a smaller one by
// its own if it has not sent its own yet, and swallows it if it has; the node whose own ID comes
// back is the largest, the leader". Here the swallow becomes a forward (the replacement is left as
// it is: a node that has not sent its own ID still sends it), so every ID goes all the way round,
// and the node whose own ID comes back is no longer the largest: the smaller IDs come home too,
// their owners declare themselves, and the larger nodes that refuse them open epoch after epoch.
type crForwardsSmaller struct {
	m    election.Machine
	self int
	succ int
	// epoch is the newest epoch the real machine has stamped on a message it sent: the election it
	// is in (a message of an older one is stale, and the real machine drops it; so does this one).
	epoch int
}

func (w *crForwardsSmaller) Leader() int       { return w.m.Leader() }
func (w *crForwardsSmaller) Participant() bool { return w.m.Participant() }

func (w *crForwardsSmaller) Step(in election.Input) []election.Effect {
	effs := w.m.Step(in)
	sentElection := false
	for _, e := range effs {
		if e.Kind == election.EffSend {
			w.epoch = max(w.epoch, e.Msg.Round)
			if e.Msg.Kind == election.CRElection {
				sentElection = true
			}
		}
	}
	m := in.Msg
	if in.Kind == election.InRecv && m.Kind == election.CRElection && m.Cand < w.self && m.Round == w.epoch && !sentElection {
		// the real machine swallowed a smaller ID: forward it
		effs = append(effs, election.Effect{Kind: election.EffSend, To: w.succ,
			Msg: election.Message{Kind: election.CRElection, Cand: m.Cand, Round: m.Round}})
	}
	return effs
}

// bullyNoT1 is Bully without its second timeout. The textbook (bully.go): T1 "waits for a
// coordinator after an ok", and when it runs out "the higher process failed meanwhile; start
// over". This one never arms T1 (the real machine still believes it armed, and cancels it in
// vain): a node that a higher node answered waits for a coordinator for ever, unless something
// else moves it.
//
// blindWait makes the wrapper withhold the failure detector's suspicions from a node while it waits
// for a coordinator, as in the textbook's own setting, which has no detector: there, T1 is the
// only way the waiting node learns that the node that answered it died. With T1 kept, that variant
// is the control of the mutant that drops both.
type bullyNoT1 struct {
	m         election.Machine
	dropT1    bool
	blindWait bool
	// waiting: the real machine waits for a coordinator (it armed T1, and neither T1 fired nor
	// was cancelled since).
	waiting bool
}

func (w *bullyNoT1) Leader() int       { return w.m.Leader() }
func (w *bullyNoT1) Participant() bool { return w.m.Participant() }

func (w *bullyNoT1) Step(in election.Input) []election.Effect {
	if w.blindWait && w.waiting && in.Kind == election.InSuspect {
		return nil
	}
	if in.Kind == election.InTimer && in.Timer == election.BullyTimerT1 {
		w.waiting = false
	}
	effs := w.m.Step(in)
	out := effs[:0]
	for _, e := range effs {
		if e.Timer == election.BullyTimerT1 {
			switch e.Kind {
			case election.EffSetTimer:
				w.waiting = true
				if w.dropT1 {
					continue
				}
			case election.EffCancelTimer:
				w.waiting = false
			}
		}
		out = append(out, e)
	}
	w.waiting = w.waiting && w.m.Participant()
	return out
}

// petersonKeepsOwnID is Peterson with the alias step skipped in what the node sends. The textbook
// (peterson.go, step 3): "if alias(N(i)) is a local maximum, greater than both its own alias and
// alias(NN(i)), it stays red, takes alias(N(i)) as its alias and begins the next round"; this one
// begins the next round sending its own ID again instead of the alias it took, so the value that
// goes on competing is no longer the local maximum that won the round. (The wrapper changes the
// message, not the machine: the real machine still holds the alias it took, and compares its
// messages with it.)
type petersonKeepsOwnID struct {
	m    election.Machine
	self int
}

func (w *petersonKeepsOwnID) Leader() int       { return w.m.Leader() }
func (w *petersonKeepsOwnID) Participant() bool { return w.m.Participant() }

func (w *petersonKeepsOwnID) Step(in election.Input) []election.Effect {
	effs := w.m.Step(in)
	if in.Kind != election.InRecv || in.Msg.Kind != election.PetersonAlias2 {
		return effs
	}
	for i := range effs {
		e := &effs[i]
		// The second message of round r, answered by the first of round r+1: the node stayed red
		// (a black node relays an alias2 as an alias2).
		if e.Kind == election.EffSend && e.Msg.Kind == election.PetersonAlias1 && e.Msg.Phase == in.Msg.Phase+1 {
			e.Msg.Cand = w.self
		}
	}
	return effs
}

// leLannStopsShort is LeLann stopping before the full circle: the predecessor of an ID's owner
// does not pass it on, so no ID comes home. The textbook (lelann.go, step 4): "P_i gets elect(i):
// its own ID came home, so its list holds the ID of every process on the ring; its leader is the
// largest" — here nobody's does, and nobody decides.
type leLannStopsShort struct {
	m    election.Machine
	self int
}

func (w *leLannStopsShort) Leader() int       { return w.m.Leader() }
func (w *leLannStopsShort) Participant() bool { return w.m.Participant() }

func (w *leLannStopsShort) Step(in election.Input) []election.Effect {
	effs := w.m.Step(in)
	out := effs[:0]
	for _, e := range effs {
		// another node's ID on its last hop (not this node's own to itself, on a ring of one)
		if e.Kind == election.EffSend && e.Msg.Kind == election.LeLannElect && e.To == e.Msg.Cand && e.Msg.Cand != w.self {
			continue
		}
		out = append(out, e)
	}
	return out
}

// mutantMaxStates keeps a search from running away if a mutant is not caught where it should be.
const mutantMaxStates = 1_000_000

// exploreMutant runs cfg and fails the test if the configuration is refused.
func exploreMutant(t *testing.T, cfg Config) (*Explorer, *Result) {
	t.Helper()
	if cfg.MaxStates == 0 {
		cfg.MaxStates = mutantMaxStates
	}
	if a, ok := mutants[cfg.Algo]; ok {
		cfg.Algorithm = &a
	}
	x, err := New(cfg)
	if err != nil {
		t.Fatalf("%s: %v", cfg.Algo, err)
	}
	return x, x.Run()
}

// mutantControlClean fails the test unless the exploration of algo under cfg is complete and finds
// nothing: the controls of a mutant, so that its test can fail only because of the mutation.
func mutantControlClean(t *testing.T, algo string, cfg Config) *Result {
	t.Helper()
	cfg.Algo = algo
	_, r := exploreMutant(t, cfg)
	if !r.Complete || len(r.Violations) > 0 {
		for _, v := range r.Violations {
			t.Errorf("%s: %s: %s", algo, v.Property, v.Detail)
		}
		t.Fatalf("%s, n=%d, crashes %d: want a complete search without violations (complete %v, %d states)", algo, cfg.N, cfg.Crashes, r.Complete, r.Distinct)
	}
	return r
}

// mutantCaught fails the test unless the exploration of the mutant under cfg finds a violation of
// prop that it promises, in at most bound transitions; it returns the explorer and the violation.
func mutantCaught(t *testing.T, mutant string, cfg Config, prop string, bound int) (*Explorer, *Violation) {
	t.Helper()
	cfg.Algo = mutant
	x, r := exploreMutant(t, cfg)
	v := r.Violation()
	if v == nil {
		t.Fatalf("%s, n=%d, crashes %d: not caught (complete %v, %d states, %d violations not promised)", mutant, cfg.N, cfg.Crashes, r.Complete, r.Distinct, len(r.Violations))
	}
	t.Logf("%s, n=%d: %d transitions (bound %d)\n%s", mutant, cfg.N, len(v.Trace), bound, x.TraceText(v))
	if v.Property != prop {
		t.Errorf("%s: caught by %s (%s), want %s", mutant, v.Property, v.Detail, prop)
	}
	if len(v.Trace) > bound {
		t.Errorf("%s: a counterexample of %d transitions, want at most %d (the shortest worked out by hand)", mutant, len(v.Trace), bound)
	}
	return x, v
}

// Chang-Roberts forwarding smaller IDs, 3 nodes on the ring 1->2->3->1, all initiators. It is
// caught by the message bound, n(n+1)/2 + n = 9, in 7 transitions at least and at most:
//
// The 3 start messages count, so 7 more must be sent. A delivery makes a node send one counted
// message (forward, replace, swallow-turned-forward, or elected on its own ID coming home), or none,
// with one exception: elected(l) reaching a node above l, which refuses a lower leader and opens a
// new epoch (election(self)) before passing elected(l) on: two. That needs a smaller ID home
// first, and links are FIFO: election(1) is queued behind election(2) on 2->3 and behind election(3)
// and election(2) on 3->1, so it comes home at the 6th delivery at the earliest (1@2, 2@3, 1@3, 3@1,
// 2@1, 1@1), as does election(2) (2@3, 3@1, 2@1, 1@2, 3@2, 2@2). So 6 deliveries send at most 6
// messages, 9 in all, not over the bound; the 7th can make it 10, and does when every delivery sends
// one.
func TestMutantChangRobertsForwardsSmaller(t *testing.T) {
	cfg := DefaultConfig("", 3)
	mutantControlClean(t, "chang-roberts", cfg)
	mutantCaught(t, mutantCRForwardsSmaller, cfg, PropBound, 7)
}

// Bully without T1. Not caught, in any configuration where the real Bully passes: with crashes
// the model tells every live node of a death (a crash breaks all of the dead node's connections,
// and each live node's detector suspects it: model.go's pEOF), and Bully's suspect() sends a node
// that waits for a coordinator into a new election once every higher node is suspected; a live
// higher node, for its part, always ends up announcing itself to the lower ones. So the wait that
// T1 guards always ends without it: the mutant's search visits exactly as many states as the real
// algorithm's, T1 never firing in a reachable state. This test pins that: the day the model hides
// a crash from a waiting node, as a real run's detector does (a participant watches at most its
// former leader), it fails, and the mutant belongs with the caught ones.
//
// (With restarts, or with initiators that all crash before anybody else has woken, the real Bully
// itself fails ElectionWillEnd or ElectionTerminationImpliesSameLeader here, so those
// configurations cannot tell the mutant from it.)
func TestMutantBullyNoT1Escapes(t *testing.T) {
	for _, c := range []struct{ n, crashes int }{{3, 1}, {3, 2}, {4, 1}} {
		cfg := DefaultConfig("", c.n)
		cfg.Crashes = c.crashes
		base := mutantControlClean(t, "bully", cfg)
		cfg.Algo = mutantBullyNoT1
		_, r := exploreMutant(t, cfg)
		t.Logf("n=%d, crashes %d: bully %d states, %s %d", c.n, c.crashes, base.Distinct, mutantBullyNoT1, r.Distinct)
		if v := r.Violation(); v != nil || !r.Complete {
			t.Errorf("%s, n=%d, crashes %d: caught (%v) or search incomplete (%v): the explorer now tells a missing T1; move this mutant to the caught ones", mutantBullyNoT1, c.n, c.crashes, v != nil, !r.Complete)
		}
	}
}

// Bully without T1, in the textbook's setting, where nothing but T1 tells a node waiting for a
// coordinator that the node that answered it died: the wrapper withholds the detector's
// suspicions from a node while it waits for a coordinator. With T1 that variant passes (the
// control); without it, it is caught by ElectionWillEnd, 3 nodes, 1 crash, in 11 transitions at
// least and at most:
//
// Only a node that waits for a coordinator can hang (every other wait ends by T, which wins, by a
// coordinator, or by a suspicion). Node 3 announces itself at the start, and its coordinator is the
// first thing on its links to 1 and 2, so a node hangs only in a later round, which only a crash
// opens (T1 is gone). If 2 crashes, 3 lives and announces itself to whoever elects: nobody hangs.
// So 3 crashes, and 2 must hang (if 2 announces itself, 1 gets that coordinator): it must get an ok
// from 3 in round 2, which can only be the ok 3 sent before dying, in answer to 2's election of
// round 1, behind its coordinator. And 2 must enter round 2 from 1's election, before it suspects
// 3 (a suspicion of its leader would make it win at once). So: 2->3 (3 answers ok), 3->2 (3's
// coordinator), crash 3, 3->1 (3's coordinator), 3->1 (1 suspects 3, and elects in round 2), 1->2
// twice (1's elections of rounds 1 and 2: 2 answers ok, joins round 2), 3->2 (the stale ok: 2
// waits), 3->2 (2's suspicion of 3, withheld), 2->1 twice (the oks; 1 waits too). Every message
// of these has to be delivered for the state to be quiescent, and none can be spared: 11.
func TestMutantBullyBlindWaitNoT1(t *testing.T) {
	cfg := DefaultConfig("", 3)
	cfg.Crashes = 1
	mutantControlClean(t, "bully", cfg)
	mutantControlClean(t, variantBullyBlindWait, cfg)
	mutantCaught(t, mutantBullyBlindWaitNoT1, cfg, PropWillEnd, 11)
}

// Peterson with the alias step skipped in what the red node sends, all initiators on the ring
// 1->2->...->n->1. On a one-way ring with FIFO links each node gets the same messages in the same
// order in every interleaving, so the counts below hold for all of them. Caught by the message
// bound 2n⌊log₂ n⌋ + 2n:
//
// n = 3 (bound 12): round 1 is 6 messages (3 alias1, 3 alias2); only node 1 stays red (its first
// is 3 > 1, its second 2 < 3) and begins round 2 with alias1(1) where the real one sends
// alias1(3); the alias1 and the alias2 of round 2 go once round: 6 more, 12. Its second is 1, below
// the alias 3 it holds: it turns black, and nobody wins. The stall timer fires only when nothing
// is in flight, after the 12 messages' 12 deliveries; it opens a new epoch and sends the 13th
// message: 13 transitions.
//
// n = 4 (bound 24): likewise 8 + 8 = 16 messages and deliveries, every node black, then the stall
// timer (17 sent), then 8 more messages are needed: a delivery sends at most two (a node woken
// into the new epoch sends its own alias1 and answers the one that woke it), only the 3 other
// nodes can be woken, and any other delivery sends at most one: 5 deliveries. 16 + 1 + 5 = 22.
func TestMutantPetersonKeepsOwnID(t *testing.T) {
	for _, c := range []struct{ n, bound int }{{3, 13}, {4, 22}} {
		cfg := DefaultConfig("", c.n)
		mutantControlClean(t, "peterson", cfg)
		mutantCaught(t, mutantPetersonNoAlias, cfg, PropBound, c.bound)
	}
}

// LeLann stopping one hop short, 3 nodes, all initiators. Caught by the message bound n² = 9:
// in the first epoch each ID is sent by its owner and forwarded once (the hop home is cut): 6
// messages, 6 deliveries, nobody decides. The stall timer fires only when nothing is in flight,
// after those 6, and sends the new epoch's first message (7); then a delivery sends at most two
// (a node woken into the new epoch sends its own ID and forwards the one that woke it): the 8th
// transition reaches 9 at most, the 9th can pass it. 6 + 1 + 2 = 9.
func TestMutantLeLannStopsShort(t *testing.T) {
	cfg := DefaultConfig("", 3)
	mutantControlClean(t, "lelann", cfg)
	mutantCaught(t, mutantLeLannShortCircle, cfg, PropBound, 9)
}

// A mutant's counterexample replays in the simulator as a run directory that the checker fails.
func TestMutantCounterexampleAsRunDir(t *testing.T) {
	for _, c := range []struct {
		algo    string
		crashes int
		prop    string
		bound   int
	}{
		{mutantCRForwardsSmaller, 0, PropBound, 7},
		{mutantBullyBlindWaitNoT1, 1, PropWillEnd, 11},
	} {
		cfg := DefaultConfig("", 3)
		cfg.Crashes = c.crashes
		x, v := mutantCaught(t, c.algo, cfg, c.prop, c.bound)
		dir := filepath.Join(t.TempDir(), "cx")
		verdict, err := x.WriteDir(v, dir)
		if err != nil {
			t.Fatalf("%s: WriteDir: %v", c.algo, err)
		}
		if verdict.OK {
			t.Errorf("%s: the checker passed the counterexample's run directory", c.algo)
		}
		for _, p := range verdict.Properties {
			if !p.OK {
				t.Logf("%s: checker: %s: %s", c.algo, p.Name, p.Detail)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, TraceFile)); err != nil {
			t.Errorf("%s: %v", c.algo, err)
		}
	}
}

// crSendsBack is Chang-Roberts sending what it passes on back to its predecessor, against the
// one-way ring, while telling its epoch as the real ring core does. It breaks no election property
// the search would see first: it breaks what the partial-order reduction assumes of a one-way ring
// in one epoch (explore.mayReach), which the search must catch and stop at, not count on.
type crSendsBack struct {
	m    election.Machine
	pred int
}

func (w *crSendsBack) Leader() int       { return w.m.Leader() }
func (w *crSendsBack) Participant() bool { return w.m.Participant() }
func (w *crSendsBack) Epoch() int        { return w.m.(election.WithEpoch).Epoch() }

func (w *crSendsBack) Step(in election.Input) []election.Effect {
	effs := w.m.Step(in)
	if in.Kind == election.InRecv {
		for i := range effs {
			if effs[i].Kind == election.EffSend {
				effs[i].To = w.pred
			}
		}
	}
	return effs
}

// The reduction's assumption is held to: a one-way ring node that answers a message of the
// current epoch backwards stops the search at the first such send (the first delivery's answer),
// and the CLI's contract (a path to it, no counts claimed) follows from Result.Broken. Without the
// reduction nothing is assumed.
func TestMutantSendsAgainstTheRingStopsTheSearch(t *testing.T) {
	mustStopBroken(t, DefaultConfig(mutantCRSendsBack, 4), 1, "back against the ring")
}

// mustStopBroken explores a mutant that breaks what the reduction assumes and fails the test
// unless the search stops at a send that breaks it, by a path of steps transitions, saying words;
// and unless the search without the reduction, which assumes nothing, runs to its end.
func mustStopBroken(t *testing.T, cfg Config, steps int, words ...string) {
	t.Helper()
	x, r := exploreMutant(t, cfg)
	if r.Broken == "" || r.BrokenAt == nil || r.Complete {
		t.Fatalf("%s: want the search stopped at a send that breaks the reduction's assumption; complete %v, broken %q", cfg.Algo, r.Complete, r.Broken)
	}
	if n := len(r.BrokenAt.Trace); n != steps {
		t.Errorf("%s: want a path of %d transitions, got %d:\n%s", cfg.Algo, steps, n, x.TraceText(r.BrokenAt))
	}
	for _, w := range words {
		if !strings.Contains(r.Broken, w) {
			t.Errorf("%s: broken: %q, want it to say %q", cfg.Algo, r.Broken, w)
		}
	}
	cfg.NoReduction = true
	if _, r := exploreMutant(t, cfg); r.Broken != "" || !r.Complete {
		t.Errorf("%s: without the reduction nothing is assumed, yet: complete %v, %s", cfg.Algo, r.Complete, r.Broken)
	}
}

// bullyClaimsSilence is Bully declaring that no message makes it send anything (election.Reactor),
// while it answers elections as Bully does: a false declaration that the reduction on a mesh would
// count on, which the search must catch and stop at.
type bullyClaimsSilence struct{ m election.Machine }

func (w *bullyClaimsSilence) Leader() int                              { return w.m.Leader() }
func (w *bullyClaimsSilence) Participant() bool                        { return w.m.Participant() }
func (w *bullyClaimsSilence) Step(in election.Input) []election.Effect { return w.m.Step(in) }
func (w *bullyClaimsSilence) Reaction(int, election.Message) election.Reaction {
	return election.ReactNone
}

// A machine's false declaration of what a message makes it send stops the search at the first
// send that contradicts it: an election delivered, which its receiver answers with an ok. Believing
// the declaration, the reduction takes node 1's transitions first (nobody would send it anything
// more): 4's coordinator to 1, then 1's election to 2, answered. Without the reduction nothing is
// assumed.
func TestMutantMisdeclaringItsAnswersStopsTheSearch(t *testing.T) {
	mustStopBroken(t, DefaultConfig(mutantBullyClaimsSilence, 4), 2, "election.ReactNone", "sent ok")
}

// bullyFickle is Bully declaring that a coordinator from above makes it send nothing until it has
// handled a message, and anything after: true of what it does each time (a coordinator from above
// never makes Bully send), but a declaration that grows while the coordinator is on its way, which
// the reduction on a mesh may not count on either.
type bullyFickle struct {
	m     election.Machine
	heard int
}

func (w *bullyFickle) Leader() int       { return w.m.Leader() }
func (w *bullyFickle) Participant() bool { return w.m.Participant() }
func (w *bullyFickle) Step(in election.Input) []election.Effect {
	if in.Kind == election.InRecv {
		w.heard++
	}
	return w.m.Step(in)
}
func (w *bullyFickle) Reaction(from int, m election.Message) election.Reaction {
	if m.Kind == election.BullyCoordinator {
		if w.heard == 0 {
			return election.ReactNone
		}
		return election.ReactAny
	}
	return w.m.(election.Reactor).Reaction(from, m)
}

// A declaration that grows while its message is on its way stops the search: node 3 announces
// itself at the start, and the first delivery at 1 or 2 that is not that coordinator (1's election
// reaching 2, say) widens what the receiver declared for the coordinator still on its way.
func TestMutantWideningItsDeclarationStopsTheSearch(t *testing.T) {
	mustStopBroken(t, DefaultConfig(mutantBullyFickle, 3), 1, "grew from ReactNone to ReactAny")
}

// The cycle search over the reduced graph agrees with the one over every interleaving: where the
// full graph has no fair cycle, neither search reports one, and the reduced one settles it alone
// (CycleCheck "reduced": its graph has no cycle at all, which proves the full one has none); where
// it has one (the Bully mutant that waits for ever), both find one.
func TestReducedCycleSearchAgreesWithFull(t *testing.T) {
	type cse struct {
		algo    string
		n       int
		crashes int
		rest    int
		hang    bool
	}
	cases := []cse{
		{"bully", 4, 1, 0, false},
		{"chang-roberts", 4, 1, 0, false},
		{"lelann", 4, 1, 0, false},
		{"peterson", 3, 1, 1, false},
		{"franklin", 4, 1, 0, false},
		{"hirschberg-sinclair", 3, 1, 0, false},
		{variantBullyBlindWait, 3, 1, 0, false},
		{mutantBullyBlindWaitNoT1, 3, 1, 0, true},
	}
	for _, c := range cases {
		cfg := DefaultConfig(c.algo, c.n)
		cfg.Crashes, cfg.Restarts = c.crashes, c.rest
		_, red := exploreMutant(t, cfg)
		cfg.NoReduction = true
		_, full := exploreMutant(t, cfg)
		for _, r := range []*Result{red, full} {
			if got := r.has(PropWillEnd); got != c.hang {
				t.Errorf("%s n=%d (reduction %v): ElectionWillEnd broken %v, want %v", c.algo, c.n, !r.Config.NoReduction, got, c.hang)
			}
		}
		if !c.hang && (red.CycleCheck != "reduced" && red.CycleCheck != "acyclic" || !red.Complete) {
			t.Errorf("%s n=%d: the reduced search settled cycles by %q (complete %v), want the reduced graph alone", c.algo, c.n, red.CycleCheck, red.Complete)
		}
		if full.CycleCheck == "reduced" {
			t.Errorf("%s n=%d: the search without reduction says it searched a reduced graph", c.algo, c.n)
		}
	}
}

// bullyNews is Bully misdeclaring what the news that a peer is gone makes it send
// (election.NewsReactor): silent, nothing ever, while a follower that hears of its leader's death
// holds an election; else nothing until it has handled a message, and Bully's own declaration
// after, which may be anything: true of each news it handles before any message, but a declaration
// that grows while the news is on its way.
type bullyNews struct {
	m      election.Machine
	silent bool
	heard  int
}

func (w *bullyNews) Leader() int       { return w.m.Leader() }
func (w *bullyNews) Participant() bool { return w.m.Participant() }
func (w *bullyNews) Step(in election.Input) []election.Effect {
	if in.Kind == election.InRecv {
		w.heard++
	}
	return w.m.Step(in)
}
func (w *bullyNews) Reaction(from int, m election.Message) election.Reaction {
	return w.m.(election.Reactor).Reaction(from, m)
}
func (w *bullyNews) SuspectReaction(p int, ahead []election.Message) election.Reaction {
	if w.silent || w.heard == 0 {
		return election.ReactNone
	}
	return w.m.(election.NewsReactor).SuspectReaction(p, ahead)
}

// A false declaration of what the news of a death makes a node send stops the search at the first
// send that contradicts it: 2 follows 3, 3 dies, and 2, hearing of it, wins (1 and 3 suspected)
// and announces itself to 1. One that grows while the news is on its way stops it where it grows:
// after 3's crash, 1's first message (2's ok) makes it declare what Bully does for the news behind
// 3's coordinator, which 1 may follow. Without the reduction nothing is assumed.
func TestMutantMisdeclaringTheNewsStopsTheSearch(t *testing.T) {
	cfg := DefaultConfig(mutantBullyNewsSilent, 3)
	cfg.Crashes = 1
	mustStopBroken(t, cfg, 3, "the news that node 3 is gone", "election.NewsReactor")
	cfg = DefaultConfig(mutantBullyNewsFickle, 3)
	cfg.Crashes = 1
	mustStopBroken(t, cfg, 5, "grew from ReactNone to ReactAny", "news that node 3 is gone")
}

// The topological sort of the graph the breadth-first search walked agrees with the depth-first
// search of the reduced graph, which makes every transition again: where one finds a cycle, so does
// the other (the Bully mutant that waits for ever has them, and so has every graph searched without
// reduction that has a state reached back).
func TestTopologicalSortAgreesWithTheCycleSearch(t *testing.T) {
	type cse struct {
		algo        string
		n, crashes  int
		rest        int
		noReduction bool
		partitions  bool
	}
	cases := []cse{
		{"bully", 4, 1, 0, false, false},
		{"bully", 3, 2, 0, true, false},
		{"peterson", 3, 1, 1, false, false},
		{"franklin", 4, 1, 0, false, false},
		{variantBullyBlindWait, 3, 1, 0, false, false},
		{mutantBullyBlindWaitNoT1, 3, 1, 0, false, false},
		{mutantBullyBlindWaitNoT1, 3, 1, 0, true, false},
		{mutantBullyEcho, 3, 1, 0, false, false},
		{mutantBullyEcho, 3, 1, 0, true, false},
		{"peterson", 3, 0, 0, false, true}, // cycles, none of them fair
	}
	sorts := map[string]int{}
	for _, c := range cases {
		cfg := DefaultConfig(c.algo, c.n)
		cfg.Crashes, cfg.Restarts, cfg.NoReduction, cfg.Partitions = c.crashes, c.rest, c.noReduction, c.partitions
		x, r := exploreMutant(t, cfg)
		if r.sorted == "" {
			continue // nothing led back: no cycle search at all
		}
		sorts[r.sorted]++
		if r.sorted == "not kept" {
			t.Errorf("%s n=%d: the graph walked was not kept", c.algo, c.n)
			continue
		}
		v, done, cyclic := checker.FindCycle(x.m, checker.Options{}, r.Distinct, !c.noReduction)
		if v != nil && !strings.HasPrefix(c.algo, "mutant-") {
			t.Errorf("%s n=%d: a fair cycle in a real algorithm: %s", c.algo, c.n, v.Detail)
		}
		if !done || cyclic != (r.sorted == "cyclic") {
			t.Errorf("%s n=%d (no reduction %v): the topological sort says %s, the depth-first search cyclic=%v (done %v)", c.algo, c.n, c.noReduction, r.sorted, cyclic, done)
		}
	}
	if sorts["acyclic"] == 0 || sorts["cyclic"] == 0 {
		t.Errorf("the cases sorted %v: want graphs with cycles and graphs without", sorts)
	}
}

// bullyEcho is Bully that, once it has heard of a death, asks again every higher node that answers
// it: an ok from above is answered with an election of the ok's own round. The higher node has taken
// part in that round, so it answers with an ok alone, which is answered again: the two exchange
// messages for ever, and nothing else changes. It declares nothing (no election.Reactor), so the
// reduction assumes nothing of it.
type bullyEcho struct {
	m     election.Machine
	self  int
	heard bool
}

func (w *bullyEcho) Leader() int       { return w.m.Leader() }
func (w *bullyEcho) Participant() bool { return w.m.Participant() }
func (w *bullyEcho) Step(in election.Input) []election.Effect {
	w.heard = w.heard || in.Kind == election.InSuspect
	out := w.m.Step(in)
	if w.heard && in.Kind == election.InRecv && in.Msg.Kind == election.BullyOK && in.From > w.self {
		out = append(out, election.Effect{Kind: election.EffSend, To: in.From, Msg: election.Message{Kind: election.BullyElection, Round: in.Msg.Round}})
	}
	return out
}

// Bully that answers every ok with an election once it has heard of a death never ends: both the
// reduced search and the full one find a cycle that fair delivery keeps (the graph walked has
// cycles, and the depth-first search finds a fair one), with its stem; the trace's cycle starts
// where the stem ends and comes back to the state it left, and every delivery and timer enabled all
// along it is taken in it. At N = 4 two lower nodes each exchange messages with the ones above them,
// and a cycle that keeps only one such exchange going leaves the other's message waiting: the
// cycle found takes both.
func TestMutantBullyEchoNeverEnds(t *testing.T) {
	for _, c := range []struct {
		n           int
		noReduction bool
	}{{3, false}, {3, true}, {4, false}} {
		noReduction := c.noReduction
		cfg := DefaultConfig(mutantBullyEcho, c.n)
		cfg.Crashes, cfg.NoReduction = 1, noReduction
		x, r := exploreMutant(t, cfg)
		v := r.Violation()
		if v == nil || v.Property != PropWillEnd || v.CycleAt < 0 || v.CycleAt >= len(v.Trace) {
			t.Fatalf("n=%d no reduction %v: want a cycle found by ElectionWillEnd; got %+v (complete %v, %d states, cycle check %q)", c.n, noReduction, v, r.Complete, r.Distinct, r.CycleCheck)
		}
		if r.sorted != "cyclic" {
			t.Errorf("n=%d no reduction %v: the topological sort said %q, want cyclic", c.n, noReduction, r.sorted)
		}
		s := x.m.initial()
		var loop []*state
		for i, ev := range v.ev {
			if i >= v.CycleAt {
				loop = append(loop, s)
			}
			s = x.m.apply(s, ev)
		}
		if s.fp != loop[0].fp {
			t.Errorf("n=%d no reduction %v: the cycle does not come back to the state it left", c.n, noReduction)
		}
		taken := v.ev[v.CycleAt:]
		for _, e := range x.m.enabled(loop[0], nil) {
			if e.kind != evDeliver && e.kind != evTimer || slices.Contains(taken, e) {
				continue
			}
			if !slices.ContainsFunc(loop, func(st *state) bool { return !slices.Contains(x.m.enabled(st, nil), e) }) {
				t.Errorf("n=%d no reduction %v: %s is enabled all along the cycle and not taken", c.n, noReduction, x.m.describe(e))
			}
		}
		t.Logf("n=%d no reduction %v: %s; cycle from step %d\n%s", c.n, noReduction, v.Detail, v.CycleAt, x.TraceText(v))
	}
}
