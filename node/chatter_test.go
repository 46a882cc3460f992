package node

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/election"
)

// test-chatter is a test-only "algorithm" that makes traffic for the link-rule tests: at start, and
// then every chatter-every until it has sent chatter-batches batches, it sends chatter-count
// messages to each peer in chatter-to. Each message's Round numbers it on its link from 1, so that
// a receiver can see order, loss and duplicates. It heartbeats every peer and, with chatter-watch,
// watches them all (so that blocked heartbeats cause suspicions). It never elects anyone. The tests
// in package node_test (simworld_test.go and the rest) run it by this name.
const chatterAlgo = "test-chatter"

// ChatterKind is the kind of the chatter's only message.
const chatterKind = "chat"

func init() {
	election.Register(election.Algorithm{
		Name:       chatterAlgo,
		Topologies: []string{"mesh"},
		New:        newChatter,
		Kinds:      []string{chatterKind},
		Announce:   []string{},
		Bound:      func(int, int) (int, bool) { return 0, false },
		Doc:        "test only: sends numbered messages to its peers",
	})
}

type chatter struct {
	self    int
	peers   []int
	to      []int
	count   int
	batches int
	every   time.Duration
	watch   bool

	sent int
	seq  map[int]int
}

func newChatter(cfg election.Config) (election.Machine, error) {
	c := &chatter{self: cfg.Self, count: 10, batches: 1, every: 20 * time.Millisecond, seq: map[int]int{}}
	for _, id := range cfg.IDs {
		if id != cfg.Self {
			c.peers = append(c.peers, id)
		}
	}
	c.to = c.peers
	o := cfg.Options
	var err error
	if v := o["chatter-count"]; v != "" {
		if c.count, err = strconv.Atoi(v); err != nil {
			return nil, err
		}
	}
	if v := o["chatter-batches"]; v != "" {
		if c.batches, err = strconv.Atoi(v); err != nil {
			return nil, err
		}
	}
	if v := o["chatter-every"]; v != "" {
		if c.every, err = time.ParseDuration(v); err != nil {
			return nil, err
		}
	}
	if v := o["chatter-to"]; v != "" {
		c.to = nil
		for _, f := range strings.Split(v, ",") {
			id, err := strconv.Atoi(f)
			if err != nil {
				return nil, err
			}
			if id != cfg.Self && slices.Contains(c.peers, id) {
				c.to = append(c.to, id)
			}
		}
	}
	c.watch = o["chatter-watch"] == "true"
	return c, nil
}

func (c *chatter) Step(in election.Input) []election.Effect {
	var out []election.Effect
	switch in.Kind {
	case election.InStart:
		plan := election.Effect{Kind: election.EffHeartbeat, HeartbeatTo: c.peers}
		if c.watch {
			plan.Watch = c.peers
		}
		out = append(out, plan)
		out = c.batch(out)
	case election.InTimer:
		out = c.batch(out)
	}
	return out
}

func (c *chatter) batch(out []election.Effect) []election.Effect {
	for _, p := range c.to {
		for range c.count {
			c.seq[p]++
			out = append(out, election.Effect{Kind: election.EffSend, To: p,
				Msg: election.Message{Kind: chatterKind, Cand: c.self, Round: c.seq[p]}})
		}
	}
	c.sent++
	if c.sent < c.batches {
		out = append(out, election.Effect{Kind: election.EffSetTimer, Timer: "chat", After: c.every})
	}
	return out
}

func (c *chatter) Leader() int       { return 0 }
func (c *chatter) Participant() bool { return false }
