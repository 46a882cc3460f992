package explore

// A node's step: the machine fed one input, its effects carried out on the state, the outcome
// cached by the node's fingerprint and the input's.

import (
	"cmp"
	"slices"

	"github.com/leaderlab/leaderlab/election"
)

// step feeds in to node id's machine (a copy) and carries out its effects.
//
// A node's step depends only on its own state and the input, and the same pair recurs in many
// states of the cluster (every state where the other nodes are elsewhere): the outcome is kept in a
// cache by the node's fingerprint and the input's, and a step seen before costs no copy and no
// step of the machine.
func (x *model) step(s *state, id int, in election.Input) {
	old := s.nodes[id-1]
	x.stepMachine(s, id, in)
	x.remind(s, id, old.watch)
}

// remind is the node's detector reading the machine's new plan (detector.plan): a peer watched
// anew that the detector suspects because its link broke is suspected again, told to the machine
// (the process died; the machine may have forgotten it: the ring core forgets suspicions of nodes it
// no longer routes round); one it suspected from silence (a partition) is trusted again and gets a
// fresh timeout. Each is a step of its own after the one that changed the plan.
func (x *model) remind(s *state, id int, before []int) {
	ns := s.nodes[id-1]
	if !ns.alive() || slices.Equal(before, ns.watch) {
		return
	}
	for _, p := range ns.watch {
		bit := uint64(1) << p
		if slices.Contains(before, p) || ns.suspects&bit == 0 {
			continue
		}
		cur := s.nodes[id-1]
		if cur.byTimeout&bit != 0 {
			c := copyNode(cur)
			c.byTimeout &^= bit
			c.suspects &^= bit
			x.setNode(s, id-1, c)
			if x.onDetect != nil {
				x.onDetect(id, p, false, "")
			}
			x.stepMachine(s, id, election.Input{Kind: election.InTrust, From: p})
			continue
		}
		if x.onDetect != nil {
			x.onDetect(id, p, true, "watched again while its link is down")
		}
		x.stepMachine(s, id, election.Input{Kind: election.InSuspect, From: p})
	}
}

// stepMachine feeds in to node id's machine (a copy) and carries out its effects.
func (x *model) stepMachine(s *state, id int, in election.Input) {
	in.Now = s.now
	x.stepFrom = 0
	if in.Kind == election.InRecv {
		x.stepFrom = in.From
	}
	old := s.nodes[id-1]
	var key fingerprint
	if x.trace == nil {
		key = x.stepKey(id, old, &in)
		if r := x.cache.get(key); r != nil {
			x.cacheHits++
			x.carryOut(s, id, r)
			return
		}
	}
	ns := x.cloneNode(old)
	var effs []election.Effect
	if into, ok := ns.m.(election.WithStepInto); ok {
		effs = into.StepInto(x.effs[:0], in)
		x.effs = effs[:0]
	} else {
		effs = ns.m.Step(in)
	}
	if x.trace != nil {
		x.trace(id, in, effs)
	}
	if x.afterStep != nil {
		x.afterStep(id, ns.inc, ns.m)
	}
	r := &stepResult{ns: ns}
	for i := range effs {
		e := &effs[i]
		switch e.Kind {
		case election.EffSend:
			r.sends = append(r.sends, send{to: e.To, m: e.Msg, id: x.intern(&e.Msg), counted: x.counted[e.Msg.Kind]})
		case election.EffSetTimer:
			k := slices.IndexFunc(ns.timers, func(tm timer) bool { return tm.name == e.Timer })
			at := s.now + e.After
			if k >= 0 {
				ns.timers[k].at = at
			} else {
				ns.timers = append(ns.timers, timer{name: e.Timer, at: at})
				slices.SortFunc(ns.timers, func(a, b timer) int { return cmp.Compare(a.name, b.name) })
			}
		case election.EffCancelTimer:
			ns.timers = slices.DeleteFunc(ns.timers, func(tm timer) bool { return tm.name == e.Timer })
		case election.EffHeartbeat:
			ns.hbTo = slices.Clone(e.HeartbeatTo)
			slices.Sort(ns.hbTo)
			ns.watch = slices.Clone(e.Watch)
			slices.Sort(ns.watch)
		}
	}
	x.encodeNode(ns)
	if x.trace == nil {
		x.cache.put(key, r)
	}
	x.carryOut(s, id, r)
}

// cacheEntry is about what a step cache's entry takes, with the node it keeps.
const cacheEntry = 256

// cacheSize is how many entries the step cache (stepCache, the model's and its forks') holds before
// it is emptied: 2 M, or what a twentieth of the memory bound holds.
func cacheSize(c Config) int {
	n := 1 << 21
	if c.MaxMemory > 0 {
		n = min(n, int(c.MaxMemory/20/cacheEntry))
	}
	return max(n, 1024)
}

// stepResult is a step's outcome: the node after it, and the messages it sent in order.
type stepResult struct {
	ns    *nodeState
	sends []send
}

type send struct {
	to      int
	m       election.Message
	id      uint32 // m's number (intern)
	counted bool
}

// stepKey fingerprints a node's state and an input. The node's ID is part of it: a node's
// fingerprint leaves out its configuration (its own ID among it), and two nodes in the same state
// answer the same input differently.
func (x *model) stepKey(id int, ns *nodeState, in *election.Input) fingerprint {
	e := &x.enc
	e.b, e.ptrs = e.b[:0], e.ptrs[:0]
	e.uvarint(uint64(id))
	e.uvarint(ns.h[0])
	e.uvarint(ns.h[1])
	e.uvarint(uint64(in.Kind))
	e.varint(int64(in.Now))
	e.varint(int64(in.From))
	e.varint(int64(in.Claim))
	e.uvarint(uint64(len(in.Timer)))
	e.b = append(e.b, in.Timer...)
	if in.Kind == election.InRecv {
		if x.recvID != 0 {
			e.uvarint(uint64(x.recvID)) // the message's number stands for its content
		} else {
			// encoded from a copy of the model's: a pointer into in would move every step's
			// input to the heap
			x.keyMsg = in.Msg
			e.value(x.msgPlan, ptrOfMsg(&x.keyMsg))
		}
	}
	return hash2(e.b)
}

// carryOut puts a step's outcome into s: the node, and its messages on their links (a message to a
// crashed node is lost).
func (x *model) carryOut(s *state, id int, r *stepResult) {
	for i := range r.sends {
		m := &r.sends[i]
		if s.sent >= 0 && m.counted {
			s.sent++
		}
		if m.to >= 1 && m.to <= x.n && s.nodes[m.to-1].alive() || m.to == id {
			x.route(s, id, m.to, &m.m)
			x.push(s, id, m.to, pmsg{id: m.id})
		}
	}
	x.putNode(s, id-1, r.ns)
}
