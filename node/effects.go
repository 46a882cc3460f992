package node

// The machine's step, and its effects carried out: messages sent, timers set and cancelled, events
// written to the log.

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/wire"
)

// step feeds one input to the machine and carries out its effects in order.
func (n *node) step(in election.Input) {
	if n.stopping || n.finished {
		return // the machine had its last word
	}
	in.Now = n.clk.Now().Sub(n.origin)
	// The effects go into the node's buffer when the machine can (election.WithStepInto), unless
	// this step runs inside another's effects, which still use the buffer.
	outer := n.into != nil && !n.stepping
	var effs []election.Effect
	if outer {
		n.stepping = true
		effs = n.into.StepInto(n.effs[:0], in)
		n.effs = effs
	} else {
		effs = n.m.Step(in)
	}
	for _, e := range effs {
		switch e.Kind {
		case election.EffSend:
			n.send(e.To, e.Msg)
		case election.EffSetTimer:
			n.setTimer(e.Timer, e.After)
		case election.EffCancelTimer:
			n.cancelTimer(e.Timer)
		case election.EffElect:
			n.emit(&logs.Event{Ev: logs.EvElect, Round: e.Round})
			n.answerSince = n.w.Now()
		case election.EffLeader:
			n.emit(&logs.Event{Ev: logs.EvLeader, Leader: e.Leader})
			n.answerSince = n.w.Now()
		case election.EffHeartbeat:
			n.det.plan(e.HeartbeatTo, e.Watch)
		case election.EffPulse:
			n.emit(&logs.Event{Ev: logs.EvPulse, Pulse: e.Round})
		}
	}
	if outer {
		n.stepping = false
	}
}

func (n *node) send(to int, msg election.Message) {
	n.seq++
	n.idBuf = strconv.AppendUint(append(n.idBuf[:0], n.idPrefix...), n.seq, 10)
	msg.ID = string(n.idBuf)
	e := n.msgLine(logs.EvSend, &msg)
	e.To = to
	n.emit(e)
	n.stats.MsgsSent++
	if to == n.self {
		lc, m := n.lc, msg
		n.post(func() { n.deliver(to, n.inc, &wire.Envelope{Kind: wire.KindMsg, LC: lc, Msg: m}) })
		return
	}
	env := &wire.Envelope{Kind: wire.KindMsg, LC: n.lc, Msg: msg, VC: n.vc.wire()}
	if err := n.tr.Send(to, env); err != nil {
		n.stats.Drops++
		m := msg // a copy, so that msg itself stays off the heap
		n.emit(&logs.Event{Ev: logs.EvDrop, To: to, Msg: &m, Reason: err.Error()})
		if errors.Is(err, wire.ErrLinkDown) && !n.net.closing(to) {
			// The machine sent to a peer whose process is gone: it may have forgotten an old
			// suspicion (a ring node forgets the nodes it no longer routes round). Remind it, after
			// the effects of the current step. Under slowclose the node has not heard yet that the
			// connection closed: to it the message went out and was lost.
			n.post(func() { n.det.remind(to, "send failed: "+err.Error()) })
		}
	}
}

// deliver hands a message from incarnation inc of a peer to the machine.
func (n *node) deliver(from, inc int, env *wire.Envelope) {
	if n.stopping || n.finished {
		return // lost with the process, which is going
	}
	if !n.begun {
		n.early = append(n.early, func() { n.deliver(from, inc, env) })
		return
	}
	if env.LC > n.lc {
		n.lc = env.LC
	}
	n.vc.merge(env.VC)
	msg := env.Msg
	n.stats.MsgsRecv++
	e := n.msgLine(logs.EvRecv, &msg)
	e.From = from
	n.emit(e)
	n.det.heard(from, inc)
	n.step(election.Input{Kind: election.InRecv, From: from, Msg: msg})
}

func (n *node) setTimer(name string, after time.Duration) {
	if t := n.timers[name]; t != nil {
		t.Stop()
	}
	n.timerGen[name]++
	gen := n.timerGen[name]
	n.timers[name] = n.clk.After(after, func() {
		if n.timerGen[name] != gen || n.timers[name] == nil {
			return // cancelled or re-armed since
		}
		delete(n.timers, name)
		n.step(election.Input{Kind: election.InTimer, Timer: name})
	})
}

func (n *node) cancelTimer(name string) {
	if t := n.timers[name]; t != nil {
		t.Stop()
		delete(n.timers, name)
	}
	n.timerGen[name]++
}

// msgLine is the line of a send or recv of msg, in the node's one scratch event: a sink has an event
// only until its Write returns (EventSink), so the lines of every message need not be allocated.
func (n *node) msgLine(ev string, msg *election.Message) *logs.Event {
	n.lineMsg = *msg
	n.line = logs.Event{Ev: ev, Msg: &n.lineMsg}
	return &n.line
}

// emit stamps an event with the node's identity and clocks and appends it to the log. A log that
// cannot be written ends the node: a run without its log is worthless.
func (n *node) emit(e *logs.Event) {
	n.lc++
	if n.vc.on {
		if e.Ev != logs.EvStats {
			n.vc.tick()
		}
		e.VC = n.vc.cur // written before emit returns, so the line may borrow it
	}
	now := n.w.Now()
	e.TS, e.PT = now.UnixNano(), 0
	if n.clk.skewed() {
		e.PT = n.clk.read(now).UnixNano()
	}
	e.Node, e.Inc, e.LC = n.self, n.inc, n.lc
	if err := n.log.Write(e); err != nil && !n.finished {
		n.finish(fmt.Errorf("node %d: event log: %w", n.self, err))
	}
}

func (n *node) emitStats() {
	s := n.stats
	s.HeartbeatDrops = n.net.hbDrops
	n.emit(&logs.Event{Ev: logs.EvStats, Stats: &s})
}
