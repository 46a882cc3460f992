package logs

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/leaderlab/leaderlab/election"
)

// AppendEvent appends e's JSON line (with its newline) to b: the bytes json.Marshal writes for e,
// written field by field. A node writes a line for every message it sends and receives, and
// json.Marshal's reflection cost more than the rest of the line's way to the file but the write
// itself (go test -bench EventLogWrite ./logs/). A line with a string that JSON must escape (a
// quote, a backslash, a control or non-ASCII byte, or <, > and &, which encoding/json escapes for
// HTML) is left to json.Marshal, so the bytes are always json.Marshal's; TestAppendEventAsMarshal
// holds the two together.
func AppendEvent(b []byte, e *Event) ([]byte, error) {
	if !plainEvent(e) {
		j, err := json.Marshal(e)
		if err != nil {
			return b, fmt.Errorf("encode event: %w", err)
		}
		b = append(b, j...)
		return append(b, '\n'), nil
	}
	b = append(b, `{"ts":`...)
	b = strconv.AppendInt(b, e.TS, 10)
	if e.PT != 0 {
		b = appendIntField(b, `,"pt":`, e.PT)
	}
	b = appendIntField(b, `,"node":`, int64(e.Node))
	b = appendIntField(b, `,"inc":`, int64(e.Inc))
	b = append(b, `,"lc":`...)
	b = strconv.AppendUint(b, e.LC, 10)
	b = appendStrField(b, `,"ev":`, e.Ev)
	if e.Algo != "" {
		b = appendStrField(b, `,"algo":`, e.Algo)
	}
	if len(e.Peers) > 0 {
		b = appendInts(append(b, `,"peers":`...), e.Peers)
	}
	b = appendNonZero(b, `,"pid":`, e.Pid)
	b = appendNonZero(b, `,"to":`, e.To)
	b = appendNonZero(b, `,"from":`, e.From)
	if e.Msg != nil {
		b = appendMsg(append(b, `,"msg":`...), e.Msg)
	}
	if e.Reason != "" {
		b = appendStrField(b, `,"reason":`, e.Reason)
	}
	b = appendNonZero(b, `,"peer":`, e.Peer)
	b = appendNonZero(b, `,"round":`, e.Round)
	b = appendNonZero(b, `,"leader":`, e.Leader)
	b = appendNonZero(b, `,"pulse":`, e.Pulse)
	if s := e.Stats; s != nil {
		b = appendIntField(b, `,"stats":{"hb_sent":`, s.HeartbeatsSent)
		b = appendIntField(b, `,"hb_recv":`, s.HeartbeatsRecv)
		b = appendIntField(b, `,"msgs_sent":`, s.MsgsSent)
		b = appendIntField(b, `,"msgs_recv":`, s.MsgsRecv)
		b = appendIntField(b, `,"drops":`, s.Drops)
		b = appendIntField(b, `,"hb_drops":`, s.HeartbeatDrops)
		b = append(b, '}')
	}
	if len(e.VC) > 0 {
		b = e.VC.appendJSON(append(b, `,"vc":`...))
	}
	return append(b, '}', '\n'), nil
}

// appendMsg appends m as json.Marshal writes an election.Message.
func appendMsg(b []byte, m *election.Message) []byte {
	b = appendStrField(b, `{"id":`, m.ID)
	b = appendStrField(b, `,"kind":`, m.Kind)
	b = appendNonZero(b, `,"cand":`, m.Cand)
	b = appendNonZero(b, `,"round":`, m.Round)
	b = appendNonZero(b, `,"hops":`, m.Hops)
	b = appendNonZero(b, `,"dir":`, m.Dir)
	b = appendNonZero(b, `,"origin":`, m.Origin)
	if len(m.IDs) > 0 {
		b = appendInts(append(b, `,"ids":`...), m.IDs)
	}
	b = appendNonZero(b, `,"phase":`, m.Phase)
	return append(b, '}')
}

// plainEvent tells whether every string of e is written by JSON as it is, between quotes.
func plainEvent(e *Event) bool {
	ok := plain(e.Ev) && plain(e.Algo) && plain(e.Reason)
	if m := e.Msg; m != nil {
		ok = ok && plain(m.ID) && plain(m.Kind)
	}
	return ok
}

// plain tells whether encoding/json writes s as it is: printable ASCII but for the characters it
// escapes (", \ and, for HTML, <, > and &).
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

func appendStrField(b []byte, key, s string) []byte {
	b = append(b, key...)
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendIntField(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(append(b, key...), v, 10)
}

// appendNonZero appends key and v unless v is 0 (omitempty).
func appendNonZero(b []byte, key string, v int) []byte {
	if v == 0 {
		return b
	}
	return appendIntField(b, key, int64(v))
}

func appendInts(b []byte, vs []int) []byte {
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return append(b, ']')
}
