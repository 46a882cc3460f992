package election

// Synchronizer α (Aguirre Janampa et al. §IV-B2): in pulse i a node sends the algorithm's messages,
// acks every algorithm message it receives, and once all its own messages of pulse i are acked (at
// once when it sent none) it is safe and says so to every neighbour; safe, and told safe by every
// neighbour, it starts pulse i+1. A neighbour's safe means all its messages of pulse i have
// arrived, here included. Control per pulse: 2|E| safe, plus an ack per algorithm message; the last
// pulse needs no safe (nothing follows it). A neighbour can be one pulse ahead (it had our safe, we
// do not have all of its neighbours'), so its safe and its messages are kept by pulse.
type alpha struct {
	pulser
	unacked map[[2]int]bool // (receiver, number) of this pulse's messages not acked yet
	safe    bool            // this node told its neighbours it is safe in this pulse
	// safeFrom holds, by pulse, the neighbours that said they are safe.
	safeFrom map[int]map[int]bool
}

func (a *alpha) Step(in Input) []Effect {
	switch in.Kind {
	case InStart:
		a.plan()
		if a.initiator && !a.awake {
			a.wakeUp()
			a.enter(1)
		}
	case InRecv:
		if !a.awake {
			a.wakeUp()
			a.enter(1)
		}
		a.recv(in.From, in.Msg)
	}
	return a.flush()
}

func (a *alpha) recv(from int, m Message) {
	switch m.Kind {
	case SyncAck:
		if m.Round == a.pulse {
			delete(a.unacked, [2]int{from, m.Hops})
		}
	case SyncSafe:
		if m.Round >= a.pulse {
			if a.safeFrom[m.Round] == nil {
				a.safeFrom[m.Round] = map[int]bool{}
			}
			a.safeFrom[m.Round][from] = true
		}
	default:
		if a.take(from, m) {
			a.ack(from, m)
		}
		return
	}
	a.progress()
}

// enter starts pulse p.
func (a *alpha) enter(p int) {
	a.begin(p)
	delete(a.safeFrom, p-1)
	outs := a.run()
	if a.done {
		return
	}
	a.unacked = a.sendAll(outs)
	a.safe = false
	a.progress()
}

// progress says safe when every message of the pulse is acked, and starts the next pulse when every
// neighbour is safe too.
func (a *alpha) progress() {
	if a.done {
		return
	}
	if !a.safe && len(a.unacked) == 0 {
		a.safe = true
		for _, q := range a.nb {
			a.send(q, Message{Kind: SyncSafe, Round: a.pulse})
		}
	}
	if a.safe && len(a.safeFrom[a.pulse]) == len(a.nb) {
		a.enter(a.pulse + 1)
	}
}
