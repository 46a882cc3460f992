package launcher

// Control calls: one request to a node's control port, and its retries while the node runs.

import (
	"encoding/hex"
	"time"

	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// controlRetry is control for an idempotent request, retried while the node's process runs.
func (r *runner) controlRetry(n rundir.Node, op string) error {
	return r.callRetry(n, wire.CtlRequest{Op: op})
}

// callRetry is call for an idempotent request, retried (retry) while the node's process runs.
func (r *runner) callRetry(n rundir.Node, req wire.CtlRequest) error {
	alive := func() bool {
		pr := r.procs.current(n.ID)
		return pr != nil && pr.running()
	}
	return retry(alive, func() error { _, err := r.call(n, req); return err })
}

// controlTimeout bounds one control call (its dial, and its request and reply).
const controlTimeout = 2 * time.Second

// control sends one control request to a node.
func (r *runner) control(n rundir.Node, op string) (wire.CtlReply, error) {
	return r.call(n, wire.CtlRequest{Op: op})
}

// call sends a control request to a node and returns its reply; a refusal is an error.
func (r *runner) call(n rundir.Node, req wire.CtlRequest) (wire.CtlReply, error) {
	secret, _ := hex.DecodeString(r.cluster.Secret)
	cl, err := wire.DialControl(n.Addr, r.cluster.ClusterID, secret, controlTimeout)
	if err != nil {
		return wire.CtlReply{}, err
	}
	defer cl.Close()
	body, err := wire.EncodeCtl(req)
	if err != nil {
		return wire.CtlReply{}, err
	}
	resp, err := cl.Call(body)
	if err != nil {
		return wire.CtlReply{}, err
	}
	rep, err := wire.DecodeCtlReply(resp)
	if err != nil {
		return rep, err
	}
	if rep.Error != "" {
		return rep, &refusal{rep.Error}
	}
	return rep, nil
}
