// Package rundir is the run directory contract (DESIGN.md, "The run directory"): its file names and
// the schema of cluster.json, the resolved configuration every process of a run reads.
package rundir

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/leaderlab/leaderlab/topology"
)

// File names inside a run directory.
const (
	ClusterFile  = "cluster.json"
	ChaosFile    = "chaos.jsonl"
	LauncherFile = "launcher.jsonl"
	VerdictFile  = "verdict.json"
	ReportFile   = "report.html"
	NodesDir     = "nodes"
	// ObserversDir holds the event logs of observer processes (RSDP's failover topologies).
	ObserversDir = "observers"
	StderrDir    = "stderr"
)

// NodeLog is the path of node id's event log.
func NodeLog(dir string, id int) string {
	return filepath.Join(dir, NodesDir, strconv.Itoa(id)+".jsonl")
}

// ObserverLog is the path of observer id's event log.
func ObserverLog(dir string, id int) string {
	return filepath.Join(dir, ObserversDir, strconv.Itoa(id)+".jsonl")
}

// ObserverBase is added to an observer's number (1..M) to make its ID, so that observer IDs never
// meet node IDs (at most 4096) in logs, hellos and launcher records.
const ObserverBase = 100000

// IsObserver tells whether id is an observer's ID.
func IsObserver(id int) bool { return id > ObserverBase }

// The failure detectors (cluster.json's options.detector).
const (
	// DetectorHeartbeat is the lab's own: heartbeats along the algorithm's plan, suspicion after
	// the timeout, and at once when a peer's TCP link breaks. The default.
	DetectorHeartbeat = "heartbeat"
	// DetectorMutual is RSDP's self-regulated mutual health evaluation (Toliupa et al. 2024,
	// section 4.1): every node probes every other every health interval, start offsets staggered by
	// position.
	DetectorMutual = "mutual"
	// DetectorObserver is one observer process probing every node (section 4.2).
	DetectorObserver = "observer"
	// DetectorObservers is M observer processes that agree before they tell the nodes (4.3).
	DetectorObservers = "observers"
)

// Detectors lists the accepted detector names.
var Detectors = []string{DetectorHeartbeat, DetectorMutual, DetectorObserver, DetectorObservers}

// Option names of the failure detector in cluster.json's options.
const (
	OptDetector       = "detector"
	OptHealthInterval = "health-interval"
	OptProbeTimeout   = "probe-timeout"
)

// Detector returns the run's detector, its health interval and probe timeout (defaults: the
// heartbeat interval, and half the health interval).
func (c *Cluster) Detector() (name string, h, pt time.Duration, err error) {
	name = c.Options[OptDetector]
	if name == "" {
		name = DetectorHeartbeat
	}
	h, pt = c.Heartbeat.D(), 0
	if v, ok := c.Options[OptHealthInterval]; ok {
		if h, err = time.ParseDuration(v); err != nil || h <= 0 {
			return "", 0, 0, fmt.Errorf("cluster.json: options.%s %q: want a positive duration", OptHealthInterval, v)
		}
	}
	pt = h / 2
	if v, ok := c.Options[OptProbeTimeout]; ok {
		if pt, err = time.ParseDuration(v); err != nil || pt <= 0 {
			return "", 0, 0, fmt.Errorf("cluster.json: options.%s %q: want a positive duration", OptProbeTimeout, v)
		}
	}
	for _, d := range Detectors {
		if d == name {
			return name, h, pt, nil
		}
	}
	return "", 0, 0, fmt.Errorf("cluster.json: options.%s %q (accepted: heartbeat, mutual, observer, observers)", OptDetector, name)
}

// Stderr is the path where the launcher keeps node id's standard error (all incarnations).
func Stderr(dir string, id int) string {
	return filepath.Join(dir, StderrDir, strconv.Itoa(id)+".log")
}

// Version is the version of cluster.json's schema.
const Version = 1

// Node is one node of the cluster.
type Node struct {
	ID int `json:"id"`
	// Addr is host:port; the node listens on it for TCP (messages and control) and UDP (heartbeats).
	Addr string `json:"addr"`
	// Bind, when set, is the local address the node binds for listening and dialling (the iptables
	// backend gives each node its own loopback address). Empty: listen on Addr, dial from any.
	Bind string `json:"bind,omitempty"`
	// Mark, when set, is the firewall mark (SO_MARK) of every packet the node sends: on SSH hosts
	// the iptables backend tells a node's packets from its neighbours' on the same host by it.
	Mark int `json:"mark,omitempty"`
	// Host is the SSH host (as the user named it) that runs the node in a multi-host run (run
	// --hosts, --ssh-config); empty when the launcher runs it.
	Host string `json:"host,omitempty"`
}

// Host is one SSH host of a multi-host run and its clock, as the launcher measured it before the run.
type Host struct {
	// Agent is the host as the user named it (a --hosts line's target or an --ssh-config Host).
	Agent string `json:"agent"`
	// SSH is user@address:port as connected.
	SSH string `json:"ssh,omitempty"`
	IDs []int  `json:"ids"`
	// HostKey is the SHA256 fingerprint of the host key; HostKeyCheck says how it was checked
	// ("known_hosts FILE", or "not checked (--insecure-ignore-host-key)", ...).
	HostKey      string `json:"host_key,omitempty"`
	HostKeyCheck string `json:"host_key_check,omitempty"`
	// Binary is "uploaded" when the launcher put its binary on the host for this run, "up to date"
	// when the host had it already; Sudo that the agent ran under sudo -n.
	Binary string `json:"binary,omitempty"`
	Sudo   bool   `json:"sudo,omitempty"`
	// OffsetNS is the host's wall clock minus the launcher's (NTP-style, from the sample with the
	// shortest round trip); RTTNS that round trip, so the offset is known within ±RTTNS/2.
	OffsetNS int64 `json:"offset_ns"`
	RTTNS    int64 `json:"rtt_ns"`
	Samples  int   `json:"samples"`
}

// The worlds a run is made in (Cluster.World).
const (
	WorldReal = "real"
	WorldSim  = "sim"
)

// Cluster is cluster.json: enough to run the same cluster again.
type Cluster struct {
	Version   int    `json:"version"`
	ClusterID string `json:"cluster_id"`
	Algo      string `json:"algo"`
	// Topology is mesh, ring, biring, or a general graph's --topology value as given (grid:4x4,
	// torus:3x5, tree:2, random:3, @FILE), whose links are Edges.
	Topology string `json:"topology"`
	// Edges are a general graph's links, each once with the smaller ID first (absent for mesh and
	// rings, whose links follow from Ring).
	Edges [][2]int `json:"edges,omitempty"`
	// Placement is the --ids value as given (ascending, descending, random, worst, or a list).
	Placement string `json:"placement"`
	// Ring is the ring order of IDs (also filled for a mesh, where it is only the order of nodes).
	Ring []int `json:"ring"`
	// InitiatorsSpec is the --initiators value as given; Initiators the resolved IDs.
	InitiatorsSpec string `json:"initiators_spec"`
	Initiators     []int  `json:"initiators"`
	Nodes          []Node `json:"nodes"`
	// Observers are the observer processes of the observer and observers detectors (IDs above
	// ObserverBase); empty otherwise.
	Observers []Node `json:"observers,omitempty"`
	// Hosts are the agents of a multi-host run, with their clock offsets; empty otherwise. The
	// checker subtracts a host's offset from the times in the logs of its nodes.
	Hosts []Host `json:"hosts,omitempty"`

	Heartbeat          Duration `json:"heartbeat"`
	Timeout            Duration `json:"timeout"`
	ElectionTimeout    Duration `json:"election_timeout"`
	CoordinatorTimeout Duration `json:"coordinator_timeout"`
	Settle             Duration `json:"settle"`
	Duration           Duration `json:"duration"`
	// Grace is how long two live nodes may both believe in themselves before the checker calls it a
	// uniqueness violation.
	Grace Duration `json:"grace"`
	// TerminationBound is how long an elect may stay without a leader before it is a violation.
	TerminationBound Duration `json:"termination_bound"`

	Seed int64 `json:"seed"`
	// Chaos is the fault schedule's text, as given (after @FILE was read).
	Chaos string `json:"chaos"`
	// Options carries algorithm-specific settings by name.
	Options map[string]string `json:"options,omitempty"`
	// Secret (hex) keys the HMACs of hellos, datagrams and control requests. The file is mode 0600.
	Secret string `json:"secret"`
	// Created is when the launcher wrote the file (RFC 3339, UTC).
	Created string `json:"created"`
	// World is where the run was made: "real" (processes and sockets; "" in older files means
	// the same) or "sim" (the simulator, in virtual time; `run --sim`).
	World string `json:"world,omitempty"`
}

// Net is the cluster's network: the topology of its kind and ring order, or its general graph.
func (c *Cluster) Net() (*topology.Topology, error) {
	if topology.IsGraph(c.Topology) {
		return topology.NewGraph(c.Topology, c.Ring, c.Edges)
	}
	return topology.New(c.Topology, c.Ring)
}

// IDs returns the node IDs in ascending order of cluster.json's node list.
func (c *Cluster) IDs() []int {
	out := make([]int, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.ID
	}
	return out
}

// Key decodes the run's secret, which keys the HMACs of hellos, datagrams and control requests.
func (c *Cluster) Key() ([]byte, error) {
	k, err := hex.DecodeString(c.Secret)
	if err != nil || len(k) < 16 {
		return nil, fmt.Errorf("cluster.json: secret must be at least 16 bytes of hex")
	}
	return k, nil
}

// HostOf returns the host of node id in a multi-host run (nil when the launcher ran it).
func (c *Cluster) HostOf(id int) *Host {
	for i := range c.Hosts {
		for _, x := range c.Hosts[i].IDs {
			if x == id {
				return &c.Hosts[i]
			}
		}
	}
	return nil
}

// Observer returns the observer with the given ID.
func (c *Cluster) Observer(id int) (Node, bool) {
	for _, n := range c.Observers {
		if n.ID == id {
			return n, true
		}
	}
	return Node{}, false
}

// Node returns the node with the given ID.
func (c *Cluster) Node(id int) (Node, bool) {
	for _, n := range c.Nodes {
		if n.ID == id {
			return n, true
		}
	}
	return Node{}, false
}

// ErrNotRun is returned by Load when the directory holds no cluster.json.
var ErrNotRun = errors.New("not a run directory (no cluster.json)")

// Load reads dir/cluster.json.
func Load(dir string) (*Cluster, error) {
	b, err := os.ReadFile(filepath.Join(dir, ClusterFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", dir, ErrNotRun)
	}
	if err != nil {
		return nil, fmt.Errorf("read cluster.json: %w", err)
	}
	var c Cluster
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: cluster.json is not valid: %w", dir, err)
	}
	if c.Version != Version {
		return nil, fmt.Errorf("%s: cluster.json version %d, this leaderlab reads version %d", dir, c.Version, Version)
	}
	if len(c.Nodes) == 0 {
		return nil, fmt.Errorf("%s: cluster.json lists no nodes", dir)
	}
	return &c, nil
}

// Save writes dir/cluster.json with mode 0600 (it holds the secret), atomically: a temporary file
// renamed into place, so a reader never sees half a file.
func Save(dir string, c *Cluster) error {
	c.Version = Version
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode cluster.json: %w", err)
	}
	tmp := filepath.Join(dir, ".cluster.json.tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write cluster.json: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, ClusterFile)); err != nil {
		return fmt.Errorf("write cluster.json: %w", err)
	}
	return nil
}

// Duration is a time.Duration that reads and writes as a Go duration string ("50ms") in JSON, and
// also reads a number of nanoseconds.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("duration: want a string like \"50ms\" or nanoseconds, got %s", b)
	}
	*d = Duration(n)
	return nil
}
