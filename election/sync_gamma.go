package election

// Synchronizer γ (Aguirre Janampa et al. §IV-B4): β inside clusters, α between them. The clusters
// are topology's Clusters(k) (every node computes the same ones from the graph); each cluster's
// leader is its centre, the root of a β tree built inside the cluster (joins go to members only);
// between each pair of neighbouring clusters one designated edge, the smallest, carries the
// clusters' news. The code is β's (sync_beta.go, type tree), with these steps added when there is
// more than one cluster. Pulse i:
//
//  1. the algorithm's messages and their acks, as in α;
//  2. "safe" i up the cluster's tree, as in β: at the centre, the whole cluster is safe;
//  3. "csafe" i (cluster safe) down the tree; a node at an end of a designated edge, once it knows
//     its cluster is safe, sends "xsafe" i across it;
//  4. "ready" i up the tree: a node is ready once it knows its cluster is safe, its children are
//     ready, and it has xsafe i over each of its designated edges;
//  5. the centre, ready, knows its cluster and every neighbouring cluster are safe (every neighbour
//     of every member is in one of them, and all their messages of pulse i have arrived), and
//     starts pulse i+1 with "next" i+1 down the tree.
//
// Control per pulse with c clusters and d designated edges: n-c safe, n-c csafe, n-c ready, n-c next
// (one per tree edge each) and 2d xsafe: 4(n-c)+2d, plus the acks.
//
// Set-up: pulse 0 is the trees' construction, and a cluster is safe for it when its tree is built
// (the built convergecast plays safe 0). Steps 3-5 then run for pulse 0 as for any other: csafe 0,
// xsafe 0 over the designated edges, ready 0, and next 1. So a centre starts pulse 1 only when its
// own tree and the trees of all its neighbouring clusters are built: no algorithm message of pulse
// 1 reaches a node whose cluster is still being built, and a neighbouring cluster is never more
// than one pulse ahead, from pulse 1 on. The xsafe 0 also wakes the neighbouring clusters (a node
// woken by it passes a wake to its cluster's centre). These Round 0 messages are set-up, apart from
// the pulses' count.

// clusterSafe: this node knows its cluster is safe for the pulse under way: it tells its children
// and the clusters across its designated edges.
func (t *tree) clusterSafe() {
	t.csafe = true
	for _, q := range t.members {
		if t.children[q] {
			t.send(q, Message{Kind: SyncCSafe, Round: t.pulse})
		}
	}
	for _, q := range t.desig {
		t.send(q, Message{Kind: SyncXSafe, Round: t.pulse})
	}
}

// crossed: every designated edge of this node brought xsafe for the pulse under way.
func (t *tree) crossed() bool {
	for _, q := range t.desig {
		if !t.xsafe[t.pulse][q] {
			return false
		}
	}
	return true
}
