package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The iptables rules of a multi-host run with --net-backend iptables: the launcher computes, for the
// nodes of this host, which of their packets to drop, and the agent installs them in a chain of its
// own for the run, jumped to from OUTPUT, with one iptables-restore (the chain is rewritten whole at
// every change; an empty set is a heal). The packets are dropped where they are sent: a node marks
// every packet it sends with its own firewall mark (rundir.Node.Mark, SO_MARK), so a rule names the
// sender by its mark and the receiver by its address and port — exact even when several nodes
// share the host's address, where the source port of a dialled connection would say nothing. The
// request carries only marks, an address, a port and a probability, which the agent checks and
// renders itself: no text of the request reaches iptables. The chain goes at cleanup, at lease
// expiry and when the agent stops.

// OpNetRules replaces the run's iptables rules on this host.
const OpNetRules = "netrules"

// DropRule drops the packets a node of this host sends (those with firewall mark Mark) to Dst:Port,
// both TCP (its messages, on the connection it dialled) and UDP (its datagrams), always, or with
// probability Loss when it is above 0.
type DropRule struct {
	Mark uint32  `msgpack:"mark"`
	Dst  string  `msgpack:"dst"`
	Port int     `msgpack:"port"`
	Loss float64 `msgpack:"loss,omitempty"`
	// Note names the rule in the chain's comments: "3->5" (digits, '-' and '>' only).
	Note string `msgpack:"note,omitempty"`
}

// NetRulesRequest is a run's complete rule set on this host.
type NetRulesRequest struct {
	Run   string     `msgpack:"run"`
	Rules []DropRule `msgpack:"rules"`
}

// NetRulesReply says how many rules are in force and when they were (the agent's clock).
type NetRulesReply struct {
	Rules int   `msgpack:"rules"`
	TS    int64 `msgpack:"ts"`
}

// maxNetRules bounds one request: a rule per ordered pair of 256 nodes and then some.
const maxNetRules = 1 << 17

// netChain is the run's chain name (iptables allows 28 characters).
func netChain(run string) string {
	h := sha256.Sum256([]byte(run))
	return "LEADERLAB-A" + hex.EncodeToString(h[:6])
}

// renderNetRules checks the rules and renders the chain for iptables-restore --noflush.
func renderNetRules(chain string, rules []DropRule) (string, error) {
	if len(rules) > maxNetRules {
		return "", refuse("%d rules: at most %d", len(rules), maxNetRules)
	}
	var b strings.Builder
	b.WriteString("*filter\n:" + chain + " - [0:0]\n")
	for i, r := range rules {
		dst := net.ParseIP(r.Dst)
		if dst == nil || dst.To4() == nil {
			return "", refuse("rule %d: address %q: want an IPv4 address", i, r.Dst)
		}
		if r.Mark == 0 {
			return "", refuse("rule %d: mark 0: want the sending node's firewall mark (1 or more)", i)
		}
		if r.Port < 1 || r.Port > 65535 {
			return "", refuse("rule %d: port %d: want 1..65535", i, r.Port)
		}
		if r.Loss < 0 || r.Loss >= 1 {
			return "", refuse("rule %d: loss %v: want 0 (drop all) or a probability below 1", i, r.Loss)
		}
		for _, c := range r.Note {
			if (c < '0' || c > '9') && c != '-' && c != '>' {
				return "", refuse("rule %d: note %q: want digits, '-' and '>' only", i, r.Note)
			}
		}
		match := ""
		if r.Loss > 0 {
			match = " -m statistic --mode random --probability " + strconv.FormatFloat(r.Loss, 'f', 4, 64)
		}
		for _, proto := range []string{"tcp", "udp"} {
			fmt.Fprintf(&b, "-A %s -m mark --mark %#x -d %s/32 -p %s --dport %d%s -m comment --comment \"%s\" -j DROP\n",
				chain, r.Mark, dst, proto, r.Port, match, r.Note)
		}
	}
	b.WriteString("COMMIT\n")
	return b.String(), nil
}

func (s *Server) opNetRules(body []byte) (any, error) {
	var req NetRulesRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	r, err := s.lookup(req.Run)
	if err != nil {
		return nil, err
	}
	chain := netChain(r.id)
	text, err := renderNetRules(chain, req.Rules)
	if err != nil {
		return nil, err
	}
	if err := installChain(chain, text); err != nil {
		return nil, refuse("iptables on this host: %v", err)
	}
	r.mu.Lock()
	r.netChain = chain
	r.mu.Unlock()
	s.log.Info("iptables rules in force", "run", r.id, "chain", chain, "rules", len(req.Rules))
	return NetRulesReply{Rules: len(req.Rules), TS: s.opts.Now().UnixNano()}, nil
}

// installChain makes sure the chain exists and OUTPUT jumps to it, then replaces its rules.
func installChain(chain, text string) error {
	if err := ipt("-n", "-L", chain); err != nil {
		if err := ipt("-N", chain); err != nil {
			return err
		}
	}
	if err := ipt("-C", "OUTPUT", "-j", chain); err != nil {
		if err := ipt("-I", "OUTPUT", "-j", chain); err != nil {
			return err
		}
	}
	if err := feed(text, "iptables-restore", "-w", "--noflush"); err != nil {
		return fmt.Errorf("iptables-restore: %w", err)
	}
	return nil
}

// dropNetChain removes a run's chain (no error when it is not there).
func dropNetChain(chain string) {
	if chain == "" {
		return
	}
	for ipt("-D", "OUTPUT", "-j", chain) == nil {
	}
	_ = ipt("-F", chain)
	_ = ipt("-X", chain)
}

func ipt(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "iptables", append([]string{"-w"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("iptables %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// NetRules replaces run's iptables rules on the agent's host; an empty list removes them all.
func (c *Client) NetRules(ctx context.Context, run string, rules []DropRule) (NetRulesReply, error) {
	var rep NetRulesReply
	return rep, c.call(ctx, OpNetRules, NetRulesRequest{Run: run, Rules: rules}, &rep, 10*time.Second)
}
