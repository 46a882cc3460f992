package node

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/wire"
)

// judge, the decision alone: a table.
func TestJudge(t *testing.T) {
	ms := func(d int) int64 { return int64(time.Duration(d) * time.Millisecond) }
	for _, c := range []struct {
		name    string
		rules   []wire.LinkRule
		why     string
		delays  []time.Duration // nil: check only the count
		copies  int
		reorder bool
	}{
		{name: "none", copies: 1, delays: []time.Duration{0}},
		{name: "drop", rules: []wire.LinkRule{{From: 1, Drop: true, Why: "at 1s partition 1|2"}}, why: "drop: at 1s partition 1|2"},
		{name: "drop without why", rules: []wire.LinkRule{{From: 4, Drop: true}}, why: "drop: link rule from node 4"},
		{name: "certain loss", rules: []wire.LinkRule{{From: 1, Loss: 1, Why: "w"}}, why: "loss 100%: w"},
		{name: "first rule to discard names it", rules: []wire.LinkRule{{From: 1, Loss: 1, Why: "a"}, {From: 1, Drop: true, Why: "b"}}, why: "loss 100%: a"},
		{name: "fixed delay", rules: []wire.LinkRule{{From: 1, Delay: ms(20)}}, copies: 1, delays: []time.Duration{20 * time.Millisecond}},
		{name: "delays add", rules: []wire.LinkRule{{From: 1, Delay: ms(20)}, {From: 1, Delay: ms(5)}}, copies: 1, delays: []time.Duration{25 * time.Millisecond}},
		{name: "reorder is any rule's", rules: []wire.LinkRule{{From: 1, Delay: ms(20)}, {From: 1, Reorder: true}}, copies: 1, reorder: true},
		{name: "certain dup", rules: []wire.LinkRule{{From: 1, Dup: 1, Delay: ms(3)}}, copies: 2, delays: []time.Duration{3 * time.Millisecond, 3 * time.Millisecond}},
		{name: "two dups", rules: []wire.LinkRule{{From: 1, Dup: 1}, {From: 1, Dup: 1}}, copies: 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := judge(&draws{rng: rand.New(rand.NewPCG(1, 2))}, c.rules)
			if f.why != c.why {
				t.Errorf("why %q, want %q", f.why, c.why)
			}
			if len(f.delays) != c.copies || f.reorder != c.reorder {
				t.Errorf("%d copies, reorder %v; want %d, %v", len(f.delays), f.reorder, c.copies, c.reorder)
			}
			for i, d := range c.delays {
				if i < len(f.delays) && f.delays[i] != d {
					t.Errorf("delay %d: %v, want %v", i, f.delays[i], d)
				}
			}
		})
	}
	// Jitter stays in its bounds and covers them; reorder without jitter draws in 0..2×delay, and
	// without a delay in 0..2×reorderDelay.
	for _, c := range []struct {
		rule   wire.LinkRule
		lo, hi time.Duration
	}{
		{wire.LinkRule{From: 1, Delay: ms(10), Jitter: ms(4)}, 6 * time.Millisecond, 14 * time.Millisecond},
		{wire.LinkRule{From: 1, Delay: ms(10), Reorder: true}, 0, 20 * time.Millisecond},
		{wire.LinkRule{From: 1, Reorder: true}, 0, 2 * reorderDelay},
		{wire.LinkRule{From: 1, Delay: ms(10), Jitter: ms(2), Reorder: true}, 8 * time.Millisecond, 12 * time.Millisecond},
	} {
		rng := rand.New(rand.NewPCG(3, 4))
		lo, hi := time.Hour, time.Duration(0)
		for range 10000 {
			d := judge(&draws{rng: rng}, []wire.LinkRule{c.rule}).delays[0]
			lo, hi = min(lo, d), max(hi, d)
		}
		near := (c.hi - c.lo) / 50
		if lo < c.lo || hi > c.hi || lo > c.lo+near || hi < c.hi-near {
			t.Errorf("%+v drew %v..%v, want to cover %v..%v", c.rule, lo, hi, c.lo, c.hi)
		}
	}
}

// Each link and channel has its own stream: the same seed, node, incarnation and peer give the
// same draws; any other gives others.
func TestStreamsPerLink(t *testing.T) {
	const testSeed = 42
	var a, b netem
	a.init(&node{self: 2, inc: 1}, testSeed)
	b.init(&node{self: 2, inc: 1}, testSeed)
	x, y := a.link(1, chFrames).rng.Uint64(), b.link(1, chFrames).rng.Uint64()
	if x != y {
		t.Error("same link, same seed: different draws")
	}
	seen := map[uint64]bool{x: true}
	for _, l := range []*inLink{a.link(1, chHeartbeats), a.link(3, chFrames)} {
		v := l.rng.Uint64()
		if seen[v] {
			t.Error("two links share a stream")
		}
		seen[v] = true
	}
	var c netem
	c.init(&node{self: 2, inc: 2}, testSeed)
	if c.link(1, chFrames).rng.Uint64() == x {
		t.Error("a new incarnation repeats the last one's draws")
	}
}
