package wire

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// The control protocol: the launcher's chaos agent (hello node 0) sends a CtlRequest in the Body of a
// KindCtlReq frame; the node answers with a CtlReply in a KindCtlResp frame.

// Control operations.
const (
	CtlStatus = "status" // report the node's state
	CtlBegin  = "begin"  // start the algorithm (the launcher's barrier once every node is ready)
	// CtlRules replaces every link rule of the node by Rules (an empty list heals the node). Rules
	// apply on the receiving side, like Maelstrom's: to every frame and heartbeat from the peer.
	CtlRules = "rules"
	// CtlVerdict carries a failure detector's verdict from an observer process (RSDP's failover
	// topologies): the nodes in Down are gone, the nodes in Up are back.
	CtlVerdict = "verdict"
	// CtlClock applies a fault to the node's clock (Clock): how it perceives time, never the host's.
	CtlClock = "clock"
)

// CtlRequest is one control request.
type CtlRequest struct {
	Op string `msgpack:"op"`
	// Rules is the node's complete set of link rules (CtlRules only).
	Rules []LinkRule `msgpack:"rules,omitempty"`
	// Down and Up are a verdict's nodes (CtlVerdict only); By is the observer that gives it.
	Down []int `msgpack:"down,omitempty"`
	Up   []int `msgpack:"up,omitempty"`
	By   int   `msgpack:"by,omitempty"`
	// At is when to begin (CtlBegin only): Unix ns on the receiving host's clock; 0 or a past time
	// begins at once. The launcher tells every node the same instant, ahead of time, so that a
	// thousand nodes begun a few at a time still begin together.
	At int64 `msgpack:"at,omitempty"`
	// Clock is the fault to apply (CtlClock only).
	Clock *ClockOp `msgpack:"clock,omitempty"`
}

// The bounds of a ClockOp: the rates the lab emulates, and the largest jump either way.
const (
	MinClockRate = 0.25
	MaxClockRate = 4.0
	MaxClockJump = int64(3600e9) // an hour, ns
)

// ClockOp is a clock fault as the node applies it (chaos.ClockFault on the wire): Kind "rate" sets
// the rate its clock and timers run at (Rate, 0.25..4); "bump" moves its clock by By ns; "strobe"
// flips its clock between +0 and +By every Every ns for For ns; "reset" returns it to the true clock.
//
// The node refuses a ClockOp outside these bounds, as the chaos language does.
type ClockOp struct {
	Kind  string  `msgpack:"kind"`
	Rate  float64 `msgpack:"rate,omitempty"`
	By    int64   `msgpack:"by,omitempty"`
	Every int64   `msgpack:"every,omitempty"`
	For   int64   `msgpack:"for,omitempty"`
}

// LinkRule is one fault on the link from peer From to the node that holds the rule. The faults of
// one rule compose: a frame is dropped (Drop), else lost (Loss, Burst), else damaged (Corrupt: the
// link is reset), else queued behind the link's bandwidth (Rate) and delivered after Delay, varied
// by Jitter after Dist (in order unless Reorder), and duplicated with probability Dup. The node's
// netem (package node) gives each field its exact meaning.
type LinkRule struct {
	From    int     `msgpack:"from"`
	Drop    bool    `msgpack:"drop,omitempty"`
	Delay   int64   `msgpack:"delay,omitempty"`  // ns
	Jitter  int64   `msgpack:"jitter,omitempty"` // ns: the most either way (uniform), else the standard deviation
	Loss    float64 `msgpack:"loss,omitempty"`   // probability 0..1
	Dup     float64 `msgpack:"dup,omitempty"`    // probability 0..1
	Reorder bool    `msgpack:"reorder,omitempty"`
	// Dist is the delay's distribution: "" (uniform), "normal", "pareto" or "paretonormal".
	Dist string `msgpack:"dist,omitempty"`
	// DelayCorr and LossCorr correlate a message's delay and loss with the last message's (0..1).
	DelayCorr float64 `msgpack:"dcorr,omitempty"`
	LossCorr  float64 `msgpack:"lcorr,omitempty"`
	// BurstBegin and BurstEnd are Gilbert-Elliott's chances (0..1) that a burst of loss begins
	// (at a message delivered) and ends (at a message lost); both 0: no burst rule.
	BurstBegin float64 `msgpack:"burst_begin,omitempty"`
	BurstEnd   float64 `msgpack:"burst_end,omitempty"`
	// Rate is the link's bandwidth in bytes per second (0: unlimited).
	Rate int64 `msgpack:"rate,omitempty"`
	// Corrupt is the probability (0..1) that a frame is damaged (a heartbeat, too).
	Corrupt float64 `msgpack:"corrupt,omitempty"`
	// SlowClose holds the news that the connection to From closed, in ns.
	SlowClose int64 `msgpack:"slowclose,omitempty"`
	// Reset resets From's connection at its frames, the first ResetAfter ns after the rule began.
	Reset      bool  `msgpack:"reset,omitempty"`
	ResetAfter int64 `msgpack:"reset_after,omitempty"`
	// Why names the chaos step that made the rule; it becomes the reason of the drops it causes.
	Why string `msgpack:"why,omitempty"`
}

// CtlReply is a node's answer: its state at the moment, and an error for a refused request.
type CtlReply struct {
	Node        int   `msgpack:"node"`
	Inc         int   `msgpack:"inc"`
	Pid         int   `msgpack:"pid"`
	Begun       bool  `msgpack:"begun"`
	Leader      int   `msgpack:"leader"`
	Participant bool  `msgpack:"participant"`
	LinksUp     []int `msgpack:"links_up,omitempty"`
	// Since is when the node last changed its answer (a leader, or electing): Unix ns on its host's
	// clock; 0 before it began.
	Since int64 `msgpack:"since,omitempty"`
	// Rules is the number of link rules in force after the request.
	Rules int    `msgpack:"rules,omitempty"`
	Error string `msgpack:"error,omitempty"`
}

// EncodeCtl encodes a control request or reply body.
func EncodeCtl(v any) ([]byte, error) { return msgpack.Marshal(v) }

// DecodeCtlRequest decodes a control request body.
func DecodeCtlRequest(b []byte) (CtlRequest, error) {
	var r CtlRequest
	if err := oneValue(b); err != nil {
		return r, fmt.Errorf("control request: %w", err)
	}
	if err := msgpack.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("control request: %w", err)
	}
	return r, nil
}

// DecodeCtlReply decodes a control reply body.
func DecodeCtlReply(b []byte) (CtlReply, error) {
	var r CtlReply
	if err := oneValue(b); err != nil {
		return r, fmt.Errorf("control reply: %w", err)
	}
	if err := msgpack.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("control reply: %w", err)
	}
	return r, nil
}
