// Package agent is the host agent of multi-host runs: `leaderlab agent` runs one per machine, and
// the launcher on another machine drives it to start `leaderlab node` processes there, signal and
// watch them, fetch their logs and clean up.
//
// # Protocol
//
// One TCP connection carries frames of the wire package (a 4-byte big-endian length, then the
// payload; at most wire.MaxFrame bytes). A connection starts with a challenge-response under a
// shared token (at least MinTokenLen bytes, the same file on both sides):
//
//	agent  -> client  {proto: "leaderlab-agent v1", nonce: Ns}            (32 random bytes)
//	client -> agent   {proto, nonce: Nc, mac: HMAC(token, label|"client"|Ns|Nc)}
//	agent  -> client  {mac: HMAC(token, label|"server"|Ns|Nc)}
//
// Handshake frames are at most 256 bytes and the handshake must end within HandshakeTimeout. Both
// sides then derive a session key K = HMAC(token, label|"session"|Ns|Nc) and a key per direction,
// HMAC(K, "c2s") and HMAC(K, "s2c"). Every later frame is a 32-byte MAC followed by a msgpack
// message, where the MAC is HMAC(direction key, seq|message) and seq counts that direction's
// frames from 0 (8 bytes, big-endian; not sent, both sides count). So a frame cannot be forged,
// replayed (in this or another session: fresh nonces give fresh keys), reordered, dropped
// unnoticed, or reflected back to its sender. The MAC is checked before the message is decoded.
//
// A request is {op, body} and its reply {err, body}; the body is the op's own request or reply
// struct (TimeReply, PrepareRequest, ...). Requests are answered one at a time, in order. A
// refusal (a bad run ID, a node not in cluster.json, a signal not in Signals, a path outside the
// run directory, ...) is a reply with err set, and the connection stays up; a protocol violation
// (a frame too large or malformed, a bad MAC, an unknown op, a body that is not the op's msgpack,
// a handshake too slow, a connection idle past IdleTimeout) closes the connection at once. Either
// way the agent writes one line to its log naming the remote address and the reason.
//
// # Runs and leases
//
// A run lives in WorkDir/<run ID>/, laid out as the rundir package says: prepare writes its
// cluster.json and creates nodes/ and stderr/; start runs `BINARY node --run DIR --id N --inc I
// [--await-begin]` for a node listed there, where BINARY is the agent's own executable (requests
// carry no path or argv). Every request naming a run renews the run's lease; when a lease runs
// out (the launcher went away) the agent kills the run's processes. When the agent stops, it
// kills every process it started, and a node dies with the agent even when the agent is
// SIGKILLed (a parent-death signal).
//
// # Usage
//
//	c, err := agent.Dial(ctx, "10.0.0.2:7070", token, 5*time.Second)
//	off, err := agent.ClockOffset(ctx, c, 8)          // agent clock - local clock, ± off.RTT/2
//	addrs, err := c.Ports(ctx, "10.0.0.2", 3)         // fill cluster.json's node addresses
//	dir, err := c.Prepare(ctx, run, clusterJSON, 0)   // starts a lease renewer too
//	pid, err := c.Start(ctx, run, 4, 1, true)
//	evs, err := ev.Events(ctx, run, after, 5*time.Second) // on a second, dedicated Client
//	files, err := c.FetchAll(ctx, run, localRunDir)
//	_, err = c.Cleanup(ctx, run, false)
package agent
