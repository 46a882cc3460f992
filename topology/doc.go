// Package topology says who talks to whom: the kind of network (a full mesh, a one-way ring, a
// two-way ring), where each ID sits around the ring, and which nodes start the first election.
//
// It is pure: no I/O, no clock, and randomness only from the seed it is given, so a run's layout is
// reproduced from cluster.json. The launcher turns the --topology, --ids and --initiators flags into a
// Topology and a list of initiators with ParseKind, Place and ParseInitiators and writes them to
// cluster.json; the node process rebuilds the Topology with New and asks it for its neighbours, the
// peers to dial, and the next live node around the ring when a neighbour is suspected.
//
// Usage:
//
//	kind, _ := topology.ParseKind("ring")
//	order, _ := topology.Place(5, "worst", seed) // [5 4 3 2 1]
//	topo, _ := topology.New(kind, order)
//	next, ok := topo.NextLive(3, +1, alive) // the first live node after 3 in the direction of travel
//	inits, _ := topology.ParseInitiators("one", order, seed) // [1]
package topology
