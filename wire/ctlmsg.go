package wire

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// The control protocol: the launcher's chaos agent (hello node 0) sends a CtlRequest in the Body of a
// KindCtlReq frame; the node answers with a CtlReply in a KindCtlResp frame.

// Control operations.
const (
	CtlStatus = "status" // report the node's state
	CtlBegin  = "begin"  // start the algorithm (the launcher's barrier once every node is ready)
)

// CtlRequest is one control request.
type CtlRequest struct {
	Op string `msgpack:"op"`
}

// CtlReply is a node's answer: its state at the moment, and an error for a refused request.
type CtlReply struct {
	Node        int    `msgpack:"node"`
	Inc         int    `msgpack:"inc"`
	Pid         int    `msgpack:"pid"`
	Begun       bool   `msgpack:"begun"`
	Leader      int    `msgpack:"leader"`
	Participant bool   `msgpack:"participant"`
	LinksUp     []int  `msgpack:"links_up,omitempty"`
	Error       string `msgpack:"error,omitempty"`
}

// EncodeCtl encodes a control request or reply body.
func EncodeCtl(v any) ([]byte, error) { return msgpack.Marshal(v) }

// DecodeCtlRequest decodes a control request body.
func DecodeCtlRequest(b []byte) (CtlRequest, error) {
	var r CtlRequest
	if err := msgpack.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("control request: %w", err)
	}
	return r, nil
}

// DecodeCtlReply decodes a control reply body.
func DecodeCtlReply(b []byte) (CtlReply, error) {
	var r CtlReply
	if err := msgpack.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("control reply: %w", err)
	}
	return r, nil
}
