package logs

import (
	"bytes"
	"math"

	"github.com/leaderlab/leaderlab/election"
)

// fastDecoder reads the lines a node's writer makes without reflection: a CR worst case at n = 1000
// is a million lines, and encoding/json took most of `check`'s time on it. It understands exactly
// one shape — an object of the contract's fields with integer and plain-string values, msg an
// object of the message's, peers and msg.ids arrays of integers, no whitespace — and reports false
// for anything else (an escape, a float, a null, whitespace, an unknown or repeated key, vc,
// a torn line), which decodeEvent then reads with encoding/json and judges as it always did. So a
// line is either decoded here exactly as encoding/json would decode it (FuzzFastEvent holds the two
// to that), or not here at all.
type fastDecoder struct {
	strs   map[string]string // event and message kinds, interned: a handful of values, a million times
	recent [4]string
	next   int
	msgs   []election.Message
	// vc, when not vcSlow, lets the decoder read a vc object of the writer's shape too (hosts in
	// (node, inc) order, each a valid name and count; anything else still goes to encoding/json):
	// vcKeep into Event.VC, vcSkip checking it and leaving Event.VC nil (the checker reads no
	// clock), vcSkim passing over it unread (a log read before, whose lines were checked then).
	// ReadNodeLog leaves vc to encoding/json.
	vc vcMode
	// one, when set, is the message every event's msg is decoded into (a stream's reader, whose
	// event lives until the next one), instead of a new one from the slab.
	one *election.Message
}

type vcMode uint8

const (
	vcSlow vcMode = iota
	vcKeep
	vcSkip
	vcSkim
)

func newFastDecoder() *fastDecoder { return &fastDecoder{strs: map[string]string{}} }

// decode fills e from line, or reports false (e is then garbage).
func (d *fastDecoder) decode(line []byte, e *Event) bool {
	*e = Event{}
	p := fastParser{b: line}
	const (
		hasTS = 1 << iota
		hasNode
		hasInc
		hasLC
		hasEv
	)
	var o objectReader
	for {
		key, more := p.nextKey(&o)
		if !more {
			break
		}
		var bit uint32
		var ok bool
		switch string(key) {
		case "ts":
			bit, ok = hasTS, p.int64(&e.TS)
		case "node":
			bit, ok = hasNode, p.int(&e.Node)
		case "inc":
			bit, ok = hasInc, p.int(&e.Inc)
		case "lc":
			bit, ok = hasLC, p.uint64(&e.LC)
		case "ev":
			bit = hasEv
			e.Ev, ok = d.interned(&p)
		case "algo":
			bit = 1 << 5
			e.Algo, ok = d.interned(&p)
		case "peers":
			bit = 1 << 6
			e.Peers, ok = p.ints()
		case "pid":
			bit, ok = 1<<7, p.int(&e.Pid)
		case "to":
			bit, ok = 1<<8, p.int(&e.To)
		case "from":
			bit, ok = 1<<9, p.int(&e.From)
		case "reason":
			bit = 1 << 10
			e.Reason, ok = d.interned(&p)
		case "peer":
			bit, ok = 1<<11, p.int(&e.Peer)
		case "round":
			bit, ok = 1<<12, p.int(&e.Round)
		case "leader":
			bit, ok = 1<<13, p.int(&e.Leader)
		case "msg":
			bit = 1 << 14
			e.Msg, ok = d.msg(&p)
		case "stats":
			bit = 1 << 15
			e.Stats, ok = d.stats(&p)
		case "pulse":
			bit, ok = 1<<16, p.int(&e.Pulse)
		case "pt":
			bit, ok = 1<<17, p.int64(&e.PT)
		case "vc":
			switch d.vc {
			case vcKeep, vcSkip:
				bit = 1 << 18
				e.VC, ok = p.vclock(d.vc == vcKeep)
			case vcSkim:
				bit, ok = 1<<18, p.skimObject()
			}
		}
		if !ok || !o.mark(bit) {
			return false
		}
	}
	const common = hasTS | hasNode | hasInc | hasLC | hasEv
	return o.whole && p.i == len(p.b) && o.seen&common == common
}

func (d *fastDecoder) msg(p *fastParser) (*election.Message, bool) {
	var m *election.Message
	if d.one != nil {
		m = d.one
		*m = election.Message{}
	} else {
		if len(d.msgs) == cap(d.msgs) {
			d.msgs = make([]election.Message, 0, 1024) // a slab: one allocation for a thousand messages
		}
		d.msgs = d.msgs[:len(d.msgs)+1]
		m = &d.msgs[len(d.msgs)-1]
	}
	var o objectReader
	for {
		key, more := p.nextKey(&o)
		if !more {
			return m, o.whole
		}
		var bit uint32
		var ok bool
		switch string(key) {
		case "id":
			bit = 1
			var s []byte
			if s, ok = p.str(); ok {
				m.ID = string(s)
			}
		case "kind":
			bit = 2
			m.Kind, ok = d.interned(p)
		case "cand":
			bit, ok = 4, p.int(&m.Cand)
		case "round":
			bit, ok = 8, p.int(&m.Round)
		case "hops":
			bit, ok = 16, p.int(&m.Hops)
		case "dir":
			bit, ok = 32, p.int(&m.Dir)
		case "origin":
			bit, ok = 64, p.int(&m.Origin)
		case "phase":
			bit, ok = 128, p.int(&m.Phase)
		case "ids":
			bit = 256
			m.IDs, ok = p.ints()
		}
		if !ok || !o.mark(bit) {
			return nil, false
		}
	}
}

// stats reads a stats object whose fields are all the writer's (integers, each at most once).
func (d *fastDecoder) stats(p *fastParser) (*Stats, bool) {
	st := &Stats{}
	var o objectReader
	for {
		key, more := p.nextKey(&o)
		if !more {
			return st, o.whole
		}
		var bit uint32
		var f *int64
		switch string(key) {
		case "hb_sent":
			bit, f = 1, &st.HeartbeatsSent
		case "hb_recv":
			bit, f = 2, &st.HeartbeatsRecv
		case "msgs_sent":
			bit, f = 4, &st.MsgsSent
		case "msgs_recv":
			bit, f = 8, &st.MsgsRecv
		case "drops":
			bit, f = 16, &st.Drops
		case "hb_drops":
			bit, f = 32, &st.HeartbeatDrops
		}
		if f == nil || !p.int64(f) || !o.mark(bit) {
			return nil, false
		}
	}
}

// interned reads a string value, shared with every equal one this decoder read.
func (d *fastDecoder) interned(p *fastParser) (string, bool) {
	b, ok := p.str()
	if !ok {
		return "", false
	}
	// A log repeats a handful of strings in runs (send, recv, election, ...): the last few found
	// are compared before the map is hashed.
	for _, s := range d.recent {
		if s == string(b) {
			return s, true
		}
	}
	if s, ok := d.strs[string(b)]; ok {
		d.recent[d.next] = s
		d.next = (d.next + 1) % len(d.recent)
		return s, true
	}
	if len(d.strs) >= 256 { // not a kind after all: no more interning
		return string(b), true
	}
	s := string(b)
	d.strs[s] = s
	return s, true
}

// objectReader walks an object's keys with fastParser.nextKey; each value is read by the caller,
// which marks the key's bit (a key of no bit, a value that fails or a key read twice fails the
// object).
type objectReader struct {
	started bool
	seen    uint32
	// whole is set when the object's closing brace was read.
	whole bool
}

// nextKey reads up to the next key's value and returns the key, or more false at the object's end
// or at anything that is not the writer's shape (o.whole tells which).
func (p *fastParser) nextKey(o *objectReader) (key []byte, more bool) {
	if !o.started {
		o.started = true
		if !p.eat('{') {
			return nil, false
		}
		if p.eat('}') {
			o.whole = true
			return nil, false
		}
	} else {
		if p.eat('}') {
			o.whole = true
			return nil, false
		}
		if !p.eat(',') {
			return nil, false
		}
	}
	key, ok := p.str()
	if !ok || !p.eat(':') {
		return nil, false
	}
	return key, true
}

// mark records a key's bit: false for a key of no bit (0) or one already read.
func (o *objectReader) mark(bit uint32) bool {
	if bit == 0 || o.seen&bit != 0 {
		return false
	}
	o.seen |= bit
	return true
}

// fastParser walks one line.
type fastParser struct {
	b []byte
	i int
}

func (p *fastParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string of printable ASCII without escapes, and returns its bytes.
func (p *fastParser) str() ([]byte, bool) {
	if !p.eat('"') {
		return nil, false
	}
	start := p.i
	for ; p.i < len(p.b); p.i++ {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			return s, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

// digits reads an integer as JSON writes one (no leading zeros, no fraction or exponent) that
// fits in max, and whether it was negative.
func (p *fastParser) digits(max uint64) (v uint64, neg, ok bool) {
	neg = p.eat('-')
	start := p.i
	for ; p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9'; p.i++ {
		d := uint64(p.b[p.i] - '0')
		if v > (max-d)/10 {
			return 0, false, false
		}
		v = v*10 + d
	}
	n := p.i - start
	if n == 0 || (n > 1 && p.b[start] == '0') {
		return 0, false, false
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, false, false
	}
	return v, neg, true
}

func (p *fastParser) int64(out *int64) bool {
	v, neg, ok := p.digits(math.MaxInt64)
	if !ok {
		return false
	}
	*out = int64(v)
	if neg {
		*out = -*out
	}
	return true
}

func (p *fastParser) int(out *int) bool {
	var v int64
	if !p.int64(&v) || v > math.MaxInt || v < math.MinInt {
		return false
	}
	*out = int(v)
	return true
}

func (p *fastParser) uint64(out *uint64) bool {
	v, neg, ok := p.digits(math.MaxUint64)
	if !ok || neg {
		return false
	}
	*out = v
	return true
}

// ints reads an array of integers ([] is an empty, non-nil slice, as encoding/json makes it).
func (p *fastParser) ints() ([]int, bool) {
	if !p.eat('[') {
		return nil, false
	}
	out := []int{}
	for first := true; ; first = false {
		if p.eat(']') {
			return out, true
		}
		if !first && !p.eat(',') {
			return nil, false
		}
		var v int
		if !p.int(&v) {
			return nil, false
		}
		out = append(out, v)
	}
}

// vclock reads a vc object as the writer makes it: {"n1.1":3,"n2.1":5}, hosts named as HostName
// names them, in (node, inc) order, counts in 1..2^53-1. Anything else (another order, a repeated
// host, a bad name or count, null) is left to encoding/json, which judges it as it always did. keep
// false checks the clock without keeping it (nil).
func (p *fastParser) vclock(keep bool) (VClock, bool) {
	var out VClock
	if keep {
		out = VClock{}
	}
	var o objectReader
	var prev Tick
	for first := true; ; first = false {
		key, more := p.nextKey(&o)
		if !more {
			return out, o.whole
		}
		node, inc, ok := hostOf(key)
		if !ok {
			return nil, false
		}
		if !first && cmpHost(prev, Tick{Node: node, Inc: inc}) >= 0 {
			return nil, false
		}
		var n uint64
		if !p.uint64(&n) || n == 0 || n > maxCount {
			return nil, false
		}
		prev = Tick{Node: node, Inc: inc, N: n}
		if keep {
			out = append(out, prev)
		}
	}
}

// hostOf reads a host name as parseHost does, without making a string of it: "n" and two positive
// decimal numbers without leading zeros that fit in an int32, joined by ".".
func hostOf(b []byte) (node, inc int, ok bool) {
	if len(b) < 4 || b[0] != 'n' {
		return 0, 0, false
	}
	b = b[1:]
	num := func() (int, bool) {
		i := 0
		v := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			v = v*10 + int(b[i]-'0')
			i++
			if v > math.MaxInt32 {
				return 0, false
			}
		}
		if i == 0 || b[0] == '0' {
			return 0, false
		}
		b = b[i:]
		return v, true
	}
	if node, ok = num(); !ok || len(b) == 0 || b[0] != '.' {
		return 0, 0, false
	}
	b = b[1:]
	if inc, ok = num(); !ok || len(b) != 0 {
		return 0, 0, false
	}
	return node, inc, true
}

// skimObject passes over an object of numbers (a vc) without reading it: to its first closing
// brace, which ends it when it holds no object or string with a brace, as a vc never does.
func (p *fastParser) skimObject() bool {
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return false
	}
	j := bytes.IndexByte(p.b[p.i:], '}')
	if j < 0 {
		return false
	}
	p.i += j + 1
	return true
}
