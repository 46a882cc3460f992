package election

// SyncBFS is the synchronous breadth-first tree (Lynch §4.2): the root sends "search" in pulse 1;
// a node that first receives search in pulse i (sent in pulse i-1 by the nodes at distance i-2
// from the root) takes the lowest-ID sender as its parent, is at depth i-1, and sends search to all
// its neighbours in that same pulse, so the next level hears it in pulse i+1. With diameter+1
// pulses every node is reached, at its distance from the root. It is not an election (it is not
// registered): it shows the synchronizers are generic, since under any of them the tree is the
// synchronous one.
type SyncBFS struct {
	self, root, pulses int
	nb                 []int
	parent, depth      int
}

// SyncBFSSearch is SyncBFS's one kind.
const SyncBFSSearch = "search"

// NewSyncBFS is SyncBFS at self, rooted at root, running pulses pulses (the diameter + 1 reaches
// every node).
func NewSyncBFS(self, root int, neighbours []int, pulses int) *SyncBFS {
	return &SyncBFS{self: self, root: root, pulses: pulses, nb: neighbours, depth: -1}
}

func (b *SyncBFS) Pulses() int { return b.pulses }

// Leader is 0: a tree has no leader.
func (b *SyncBFS) Leader() int { return 0 }

// Parent is the node's parent in the tree: 0 at the root and at a node not reached.
func (b *SyncBFS) Parent() int { return b.parent }

// Depth is the node's depth in the tree (its distance from the root), -1 when not reached.
func (b *SyncBFS) Depth() int { return b.depth }

func (b *SyncBFS) Pulse(i int, inbox []SyncIn) []SyncOut {
	if b.depth >= 0 {
		return nil
	}
	switch {
	case b.self == b.root:
		b.depth = 0
	case len(inbox) > 0:
		b.parent, b.depth = inbox[0].From, i-1
		for _, in := range inbox {
			b.parent = min(b.parent, in.From)
		}
	default:
		return nil
	}
	out := make([]SyncOut, len(b.nb))
	for j, q := range b.nb {
		out[j] = SyncOut{To: q, Msg: Message{Kind: SyncBFSSearch}}
	}
	return out
}
