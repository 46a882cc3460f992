// Package wire moves a node's messages: framing and the msgpack codec, the signed handshake, TCP
// links, UDP heartbeats, and the control connections of the launcher's chaos agent (DESIGN.md,
// "Wire format").
//
// How data flows. The node hands an Envelope to Transport.Send, which encodes it into a frame (a
// 4-byte big-endian length, then msgpack) and puts it on the destination's bounded queue; Send never
// blocks. One goroutine per peer dials the peer (first frame: a Hello signed with the run's secret),
// writes the queue to the connection, and reads from it only to notice at once that the peer died;
// then it reports Handler.Link(peer, false, err), drops what was queued (Handler.Drop, "link
// broke"), and re-dials, at once and then with backoff. On the other side the listener checks the
// hello (version, cluster, HMAC, a known sender), then decodes frames and calls Handler.Message in
// arrival order; anything malformed is reported through Handler.Drop and closes the connection.
// Heartbeats are single signed Datagrams on the UDP socket of the same port, delivered to
// Handler.Datagram. A hello from node 0 opens a control connection: each KindCtlReq body goes to
// Handler.Control and its answer goes back as KindCtlResp (ControlClient is the other end).
//
// Two transports implement the same Transport interface and pass the same conformance test: TCP for
// node processes, and MemNetwork for tests, which runs the same queues, link states and codec
// without sockets.
//
// Usage:
//
//	cfg := wire.DefaultTCPConfig()
//	cfg.Self, cfg.Inc, cfg.Cluster, cfg.Secret = 3, 1, clusterID, secret
//	cfg.Listen, cfg.Peers, cfg.Handler = "10.0.0.3:7003", peers, h
//	t, err := wire.NewTCP(cfg)
//	t.Connect(neighbours)
//	err = t.Send(5, &wire.Envelope{Kind: wire.KindMsg, LC: lc, Msg: msg, VC: vc}) // ErrQueueFull, ErrLinkDown...
//
// The codec is hand-written (codec.go says why); its bytes are ordinary msgpack with the keys in the
// struct tags. A message's envelope carries the sender's Lamport clock (lc) and, when the run has
// vector clocks on, its vector clock (vc: a Clock, node/incarnation/count triples; clock.go says
// what it costs).
package wire
