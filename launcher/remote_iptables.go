package launcher

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/leaderlab/leaderlab/agent"
	"github.com/leaderlab/leaderlab/wire"
)

// remoteIPTablesNet is the iptables backend of a multi-host run: each agent installs, in a chain of
// the run's jumped to from its host's OUTPUT chain, the drops of the packets its nodes must not send,
// each named by the sender's firewall mark and the receiver's address and port (agent/netrules.go
// says why by mark).
type remoteIPTablesNet struct {
	r  *runner
	mu sync.Mutex
}

func (t *remoteIPTablesNet) set(rules map[int][]wire.LinkRule, send []int) map[int]delivery {
	t.mu.Lock()
	defer t.mu.Unlock()
	rm := t.r.remote
	addr := map[int]*net.UDPAddr{}
	for _, n := range t.r.cluster.Nodes {
		if a, err := net.ResolveUDPAddr("udp", n.Addr); err == nil {
			addr[n.ID] = a
		}
	}
	// Each rule goes to the sender's host, which drops what the sender sends to the receiver.
	per := map[*remoteHost][]agent.DropRule{}
	for x, rs := range rules {
		dst := addr[x]
		if dst == nil {
			continue
		}
		for _, r := range rs {
			h := rm.at[r.From]
			if h == nil || (!r.Drop && r.Loss <= 0) {
				continue
			}
			d := agent.DropRule{Mark: nodeMark(r.From), Dst: dst.IP.String(), Port: dst.Port, Note: fmt.Sprintf("%d->%d", r.From, x)}
			if !r.Drop {
				d.Loss = r.Loss
			}
			per[h] = append(per[h], d)
		}
	}
	return rm.perHost(send, func(ctx context.Context, h *remoteHost) (int64, error) {
		rep, err := h.c.NetRules(ctx, h.run, per[h])
		return rep.TS, err
	})
}

// perHost makes a kernel backend's change on every host at once (do returns when the host's agent
// made it, on the host's clock), and says what it means for the nodes of send: a node's rules are
// in force when its host's are.
func (rm *remote) perHost(send []int, do func(ctx context.Context, h *remoteHost) (int64, error)) map[int]delivery {
	acks := map[*remoteHost]delivery{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, h := range rm.hosts {
		wg.Add(1)
		go func(h *remoteHost) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ts, err := do(ctx, h)
			d := delivery{ack: ts - int64(h.offset.Offset)}
			if err != nil {
				d = delivery{err: fmt.Sprintf("host %s: %v", h.name(), err)}
			}
			mu.Lock()
			acks[h] = d
			mu.Unlock()
		}(h)
	}
	wg.Wait()
	out := make(map[int]delivery, len(send))
	for _, id := range send {
		if h := rm.at[id]; h != nil {
			out[id] = acks[h]
		}
	}
	return out
}

// markBase is the top half of the firewall marks of a run's nodes on SSH hosts: node id marks its
// packets with markBase|id, a value other software is unlikely to use.
const markBase = 0x4c4c0000

// nodeMark is node id's firewall mark.
func nodeMark(id int) uint32 { return markBase | uint32(id&0xffff) }

// up: the kernel's rules hold for every incarnation.
func (t *remoteIPTablesNet) up(_ int, then func()) {
	if then != nil {
		then()
	}
}

// close empties every host's rules (cleanup removes the chains too).
func (t *remoteIPTablesNet) close() error {
	t.set(map[int][]wire.LinkRule{}, nil)
	return nil
}
