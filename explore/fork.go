package explore

// The model's forks, one for each of the checker's workers (checker.Parallel). States refer to
// numbered things — the distinct messages sent (a link holds their numbers, and fingerprints hash
// them), and the nodes and links a level stows (stow.go) — so the numbers must be one set for every
// fork: those tables are shared, appended to under a lock and read without one. The step cache is
// shared too (cache.go). Everything else a transition touches (the scratch states, the link pool,
// the encoders) is each fork's own.

import (
	"sync"
	"sync/atomic"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/explore/checker"
)

var _ checker.Parallel[*state, event] = (*model)(nil)

// list is an append-only list, in chunks that never move: the owner appends under its lock, and
// anyone reads an element whose number they were given (through the lock, or in a state handed
// over between goroutines) without one.
type list[V any] struct {
	chunks atomic.Pointer[[]*[listChunk]V]
	n      uint32
}

const listChunk = 1024

func (l *list[V]) at(i uint32) *V { return &(*l.chunks.Load())[i/listChunk][i%listChunk] }

// add appends v (under the owner's lock) and returns its number.
func (l *list[V]) add(v V) uint32 {
	cs := l.chunks.Load()
	if cs == nil || int(l.n/listChunk) == len(*cs) {
		var grown []*[listChunk]V
		if cs != nil {
			grown = append(grown, *cs...)
		}
		grown = append(grown, new([listChunk]V))
		l.chunks.Store(&grown)
		cs = &grown
	}
	(*cs)[l.n/listChunk][l.n%listChunk] = v
	l.n++
	return l.n - 1
}

func (l *list[V]) len() int { return int(l.n) }

// messages numbers the distinct messages sent, by their encoding (intern).
type messages struct {
	mu    sync.Mutex
	index map[string]uint32
	list  list[election.Message]
}

func (t *messages) at(id uint32) *election.Message { return t.list.at(id) }

// number is m's number, given key, its encoding; a message not seen before gets the next.
func (t *messages) number(key []byte, m *election.Message) uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.index[string(key)]; ok {
		return id
	}
	if t.index == nil {
		t.index = map[string]uint32{}
	}
	id := t.list.add(*m)
	t.index[string(key)] = id
	return id
}

func (t *messages) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.list.len()
}

// Fork is a model for one more worker: the configuration, the numbered tables and the step cache
// shared, the scratch its own.
func (x *model) Fork() checker.Model[*state, event] {
	f := *x
	f.scratch, f.hbScratch = state{}, state{}
	f.pool, f.copier, f.enc, f.menc = linkPool{}, copier{}, encoder{}, encoder{}
	f.effs, f.ahead = nil, nil
	f.cacheHits = 0
	f.pre, f.preOne, f.stepFrom, f.recvID, f.breach = nil, 0, 0, 0, ""
	f.maxInFlight, f.mostMessages = 0, 0
	f.timerNames = nil // Pack and Unpack are the merge's, on the model itself
	f.trace, f.onDetect = nil, nil
	f.forks, f.isFork = nil, true
	fp := &f
	x.forks = append(x.forks, fp)
	return fp
}

// shareHooks makes the tests' hooks take a lock, for a search whose forks call them too, and
// returns what puts them back.
func (x *model) shareHooks() (restore func()) {
	q, v, a := x.onQuiescent, x.onVisit, x.afterStep
	var mu sync.Mutex
	if q != nil {
		x.onQuiescent = func(s *state) { mu.Lock(); defer mu.Unlock(); q(s) }
	}
	if v != nil {
		x.onVisit = func(s *state) { mu.Lock(); defer mu.Unlock(); v(s) }
	}
	if a != nil {
		x.afterStep = func(id, inc int, m election.Machine) { mu.Lock(); defer mu.Unlock(); a(id, inc, m) }
	}
	return func() { x.onQuiescent, x.onVisit, x.afterStep = q, v, a }
}

// figures gathers the search's figures from the model and its forks.
func (x *model) figures() (maxInFlight, mostMessages int) {
	maxInFlight, mostMessages = x.maxInFlight, x.mostMessages
	for _, f := range x.forks {
		maxInFlight, mostMessages = max(maxInFlight, f.maxInFlight), max(mostMessages, f.mostMessages)
	}
	return maxInFlight, mostMessages
}
