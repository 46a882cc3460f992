package election

import "slices"

// Synchronizer β (Aguirre Janampa et al. §IV-B3): α's safe messages travel along a spanning tree
// instead of every edge. Set-up: the root floods "join"; a node's first join sender becomes its
// parent, and it answers "accept" to it and "reject" to every later join, and sends join to all its
// other neighbours; a node whose joins are all answered and whose children (those that accepted)
// have all reported "built" reports built to its parent; the root, built, starts pulse 1 and sends
// "next" 1 to its children. A node starts pulse i on next i from its parent and passes it on. Per
// pulse: the algorithm's messages and their acks, as in α; a node sends "safe" i to its parent once
// its own messages are acked and all its children said safe i; the root, safe with every child
// safe, knows the whole network is, and starts pulse i+1 by sending next i+1 down the tree. Control
// per pulse: 2(n-1) (a safe up and a next down each tree edge) plus the acks.
//
// The root is the lowest ID of the cluster: every node knows it without a message (the textbook's
// "designated initiator"). Initiators may be other nodes, so a node woken by anything but a join
// (InStart, a "wake") sends "wake" to its neighbours but the one that woke it: the wakes reach the
// root, which starts the joins. When the root is an initiator no wake is sent. The set-up costs at
// most 2|E| wakes, 2|E|-(n-1) joins, as many accepts and rejects together, and n-1 builts.
//
// The tree is the same code as γ's (sync_gamma.go): β is γ with one cluster, whose centre is the
// lowest ID. Messages are kept by sender and pulse, never counted, so neither a link that
// duplicates nor one that reorders confuses the set-up or the pulses.
type tree struct {
	pulser // its configuration holds the cluster: centre, members, multi, desig

	// The tree, as it is built.
	joined   bool // has a parent (the root: is awake)
	parent   int  // 0 at the root
	asked    int  // joins sent
	answered map[int]bool
	refused  map[int]bool // joins rejected, so that a duplicate join is not rejected twice
	children map[int]bool

	// The pulse under way (pulse 0: the set-up, whose "safe" is built).
	unacked   map[[2]int]bool
	safe      bool // this node's subtree is safe (built) and its parent was told
	safeKids  map[int]bool
	csafe     bool // γ: this node knows its cluster is safe
	ready     bool // γ: this node's subtree is ready and its parent was told
	readyKids map[int]bool
	// xsafe holds, by pulse, the designated neighbours that said their cluster is safe; the
	// neighbouring cluster may be a pulse ahead.
	xsafe map[int]map[int]bool
}

// newTree builds β (k = 1) or γ (k clusters) for the node p describes.
func newTree(p pulser, spec string, ids []int, edges [][2]int, k int) (*tree, error) {
	centre, designated, err := clustering(spec, ids, edges, k)
	if err != nil {
		return nil, err
	}
	cfg := p.syncConfig
	cfg.centre, cfg.multi = centre[cfg.self], countCentres(centre) > 1
	for _, q := range cfg.nb {
		if centre[q] == cfg.centre {
			cfg.members = append(cfg.members, q)
		}
	}
	for _, e := range designated {
		switch cfg.self {
		case e[0]:
			cfg.desig = append(cfg.desig, e[1])
		case e[1]:
			cfg.desig = append(cfg.desig, e[0])
		}
	}
	slices.Sort(cfg.desig)
	return &tree{pulser: p, answered: map[int]bool{}, refused: map[int]bool{}, children: map[int]bool{},
		safeKids: map[int]bool{}, readyKids: map[int]bool{}, xsafe: map[int]map[int]bool{}}, nil
}

func (t *tree) Step(in Input) []Effect {
	switch in.Kind {
	case InStart:
		t.plan()
		if t.initiator && !t.awake {
			t.wake(0, false)
		}
	case InRecv:
		if !t.awake {
			t.wake(in.From, in.Msg.Kind == SyncJoin)
		}
		t.recv(in.From, in.Msg)
	}
	return t.flush()
}

// wake starts the node: the root starts its tree; a node woken by anything but a join (from: who
// woke it, 0 for InStart) passes the wake on inside its cluster, towards the root.
func (t *tree) wake(from int, byJoin bool) {
	t.wakeUp()
	switch {
	case t.centre == t.self:
		t.joined = true
		for _, q := range t.members {
			t.send(q, Message{Kind: SyncJoin})
			t.asked++
		}
		t.progress()
	case !byJoin:
		for _, q := range t.members {
			if q != from {
				t.send(q, Message{Kind: SyncWake})
			}
		}
	}
}

func (t *tree) recv(from int, m Message) {
	switch m.Kind {
	case SyncWake:
		// Waking was all it asked.
	case SyncJoin:
		t.join(from)
	case SyncAccept:
		t.answered[from], t.children[from] = true, true
	case SyncReject:
		t.answered[from] = true
	case SyncBuilt:
		// Without FIFO a child's built may overtake its accept: it says the same and more.
		t.answered[from], t.children[from] = true, true
		if t.pulse == 0 {
			t.safeKids[from] = true
		}
	case SyncAck:
		if m.Round == t.pulse {
			delete(t.unacked, [2]int{from, m.Hops})
		}
	case SyncSafe:
		if m.Round == t.pulse && t.children[from] {
			t.safeKids[from] = true
		}
	case SyncCSafe:
		if m.Round == t.pulse && from == t.parent && !t.csafe {
			t.clusterSafe()
		}
	case SyncXSafe:
		if m.Round >= t.pulse {
			if t.xsafe[m.Round] == nil {
				t.xsafe[m.Round] = map[int]bool{}
			}
			t.xsafe[m.Round][from] = true
		}
	case SyncReady:
		if m.Round == t.pulse && t.children[from] {
			t.readyKids[from] = true
		}
	case SyncNext:
		if from == t.parent && t.joined && m.Round == t.pulse+1 {
			t.enter(m.Round)
		}
		return
	default:
		if t.take(from, m) {
			t.ack(from, m)
		}
		return
	}
	t.progress()
}

// join answers a join from a member: the first makes its sender the parent.
func (t *tree) join(from int) {
	switch {
	case !t.joined:
		t.joined, t.parent = true, from
		t.send(from, Message{Kind: SyncAccept})
		for _, q := range t.members {
			if q != from {
				t.send(q, Message{Kind: SyncJoin})
				t.asked++
			}
		}
	case from != t.parent && !t.refused[from]:
		t.refused[from] = true
		t.send(from, Message{Kind: SyncReject})
	}
}

// enter starts pulse p (on next p from the parent, or at the root) and passes next p down.
func (t *tree) enter(p int) {
	t.begin(p)
	t.safe, t.csafe, t.ready = false, false, false
	clear(t.safeKids)
	clear(t.readyKids)
	delete(t.xsafe, p-1)
	for _, q := range t.members {
		if t.children[q] {
			t.send(q, Message{Kind: SyncNext, Round: p})
		}
	}
	outs := t.run()
	if t.done {
		return
	}
	t.unacked = t.sendAll(outs)
	t.progress()
}

// quiet: this node's own part of the pulse is over: every message acked (pulse 0: every join
// answered).
func (t *tree) quiet() bool {
	if t.pulse == 0 {
		return len(t.answered) == t.asked
	}
	return len(t.unacked) == 0
}

// progress reports safe (built) up the tree once the node and its children are, and, at the root,
// starts the next pulse (β) or declares the cluster safe (γ); then γ's ready.
func (t *tree) progress() {
	if t.done || !t.joined {
		return
	}
	if !t.safe && t.quiet() && len(t.safeKids) == len(t.children) {
		t.safe = true
		switch {
		case t.parent != 0 && t.pulse == 0:
			t.send(t.parent, Message{Kind: SyncBuilt})
		case t.parent != 0:
			t.send(t.parent, Message{Kind: SyncSafe, Round: t.pulse})
		case !t.multi:
			t.enter(t.pulse + 1)
			return
		default:
			t.clusterSafe()
		}
	}
	if t.multi && t.csafe && !t.ready && len(t.readyKids) == len(t.children) && t.crossed() {
		t.ready = true
		if t.parent != 0 {
			t.send(t.parent, Message{Kind: SyncReady, Round: t.pulse})
		} else {
			t.enter(t.pulse + 1)
		}
	}
}
