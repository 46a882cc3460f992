package launcher

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/internal/field"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// Config is everything `leaderlab run` needs. main maps flags onto it; nothing else does.
type Config struct {
	// Algo is the election algorithm (election.Names()).
	Algo string
	// Nodes is N; the nodes get IDs 1..N.
	Nodes int
	// Topology is mesh, ring or biring; empty means the algorithm's own.
	Topology string
	// IDs places the IDs around the ring: ascending, descending, random, worst, or a list.
	IDs string
	// Initiators says who starts the first election: all, one, or a list of IDs.
	Initiators string
	// Chaos is the fault schedule in the chaos language (already read from @FILE). With Nemesis it
	// must be empty or the default: the nemesis draws the schedule.
	Chaos string
	// Nemesis lists the fault kinds the seeded random nemesis draws a schedule from (a
	// comma-separated list of chaos.NemesisKinds); empty: no nemesis, Chaos is the schedule.
	Nemesis string
	// NemesisInterval is the mean gap between the nemesis's faults (gaps are uniform in 0..2×).
	NemesisInterval time.Duration
	// NemesisOverlap lets a nemesis fault start while earlier ones are still in force.
	NemesisOverlap bool
	// NemesisRestart restarts every node the nemesis kills, after the fault's hold.
	NemesisRestart bool
	// NemesisShapes are the partition shapes the nemesis draws from (comma-separated, of
	// chaos.Shapes); empty: chaos.NemesisShapes.
	NemesisShapes string
	// NetBackend carries out partitions and link faults: BackendTransport (the nodes' transport,
	// told through their control endpoints), BackendIPTables (kernel DROP rules; root only) or
	// BackendNetem (the kernel's netem qdiscs; root, and on one host a network namespace of the
	// run's own: RunInPrivateNet).
	NetBackend string
	// Seed seeds every random choice of the run. SeedSet tells whether the user gave one.
	Seed    int64
	SeedSet bool
	// Duration is how long the run lasts from the cluster's begin.
	Duration time.Duration
	// UntilElected lets the run go on past Duration while nodes are still electing, up to the
	// termination bound (run sets it when --duration is not given).
	UntilElected bool
	// Settle is the quiet time after the last fault that the convergence checks need.
	Settle time.Duration
	// Heartbeat and Timeout set the failure detector: heartbeat interval and suspicion timeout.
	// With ScaleDetector (run's default when neither flag is given) both are multiplied by
	// DetectorScale of the most nodes one host runs; a simulated run is never scaled.
	Heartbeat     time.Duration
	Timeout       time.Duration
	ScaleDetector bool
	// ElectionTimeout (Bully's T) and CoordinatorTimeout (T1); zero derives them from Timeout
	// (T = Timeout, T1 = 3 × Timeout: long enough for a higher node's own election to finish).
	ElectionTimeout    time.Duration
	CoordinatorTimeout time.Duration
	// Grace is how long two live nodes may both believe in themselves before the checker reports a
	// uniqueness violation; zero means Timeout.
	Grace time.Duration
	// TerminationBound is how long an elect may stay open; zero means max(2s, 5 × (T + T1)).
	TerminationBound time.Duration
	// Out is the run directory; empty means runs/<UTC time>-<algo>-n<N>.
	Out string
	// Host is the address the nodes listen on.
	Host string
	// Binary is the leaderlab executable the nodes run; empty means this one.
	Binary string
	// ReadyTimeout bounds the wait for every node to report ready; zero means 10s + 20ms × N.
	ReadyTimeout time.Duration
	// StopGrace is how long nodes get to exit after SIGTERM before SIGKILL.
	StopGrace time.Duration
	// Options carries algorithm-specific settings by name.
	Options map[string]string
	// VClock says whether messages and event lines carry vector clocks: VClockAuto (on for up to
	// wire.AutoClockNodes nodes), VClockOn, or VClockOff (Lamport clocks alone). cluster.json
	// records the outcome as options.vclock, "on" or "off".
	VClock string
	// Detector is the failure detector: rundir.DetectorHeartbeat (the default), or RSDP's
	// failover topologies mutual, observer and observers (Toliupa et al. 2024, section 4).
	Detector string
	// Observers is M, the number of observer processes of the observers detector (default 3).
	Observers int
	// HealthInterval is h (mutual) or h_o (observers); zero means Heartbeat. ProbeTimeout is how long
	// a probe waits for its answer; zero means half the health interval.
	HealthInterval, ProbeTimeout time.Duration
	// Hosts is a --hosts inventory file: the nodes run on the SSH hosts it lists ([user@]host[:port]
	// [ids=...] a line). SSHConfig is an OpenSSH client configuration (as `vagrant ssh-config`
	// writes it): the hosts are its Host entries when Hosts is empty, and it resolves the names
	// of Hosts otherwise (~/.ssh/config does when it is empty).
	Hosts, SSHConfig string
	// InsecureIgnoreHostKey takes any host key (cluster.json records that it was not checked).
	InsecureIgnoreHostKey bool
	// Sim makes the run in the simulator (package sim): the same cluster, schedule and nemesis, the
	// node's own code over an in-memory network in virtual time, the same run directory with
	// cluster.json "world": "sim". Same seed, same bytes.
	Sim bool
	// Hand, when set, drives the run by hand while it runs (leaderlab ui): faults when asked, the
	// stop when asked (Duration is then a bound), the hand steps saved in cluster.json's chaos.
	Hand *Hand
	// Stdout receives the verdict table; Progress the progress lines (stderr).
	Stdout   io.Writer
	Progress io.Writer
}

// DefaultConfig is `leaderlab run` with no flags: 5 nodes, Bully, the leader killed after a moment.
func DefaultConfig() Config {
	return Config{
		Algo:            "bully",
		Nodes:           5,
		IDs:             "ascending",
		Initiators:      "all",
		Chaos:           "at 1s kill leader",
		NemesisInterval: time.Second,
		NetBackend:      BackendTransport,
		VClock:          VClockAuto,
		Duration:        5 * time.Second,
		Settle:          time.Second,
		Heartbeat:       50 * time.Millisecond,
		Timeout:         200 * time.Millisecond,
		Host:            "127.0.0.1",
		StopGrace:       2 * time.Second,
		Stdout:          os.Stdout,
		Progress:        os.Stderr,
	}
}

// remote tells whether the nodes run on SSH hosts.
func (c Config) remote() bool { return c.Hosts != "" || c.SSHConfig != "" }

// NodesPerBeat is how many nodes on one host the default detector's pace is for. Past it the
// heartbeat interval and the timeout grow in proportion (DetectorScale), so that the host's
// heartbeat traffic stays what NodesPerBeat nodes make at the defaults. Every heartbeat sent or
// received wakes a process, and a woken process costs CPU whatever it does: past some hundreds of
// nodes per core at the default pace, nodes go unscheduled for longer than the timeout and are
// suspected while alive (docs/running.md, "Large clusters", has the measurements and their
// commands).
const NodesPerBeat = 100

// DetectorScale is the factor run's default heartbeat and timeout are multiplied by when one host
// runs perHost nodes: 1 up to NodesPerBeat, then ceil(perHost / NodesPerBeat); for an algorithm
// whose timeouts wait for answers through an O(n²) burst (election.Algorithm.AnswerWaits),
// ceil((perHost / NodesPerBeat)²).
func DetectorScale(perHost int, answerWaits bool) int {
	if answerWaits {
		return max(1, (perHost*perHost+NodesPerBeat*NodesPerBeat-1)/(NodesPerBeat*NodesPerBeat))
	}
	return max(1, (perHost+NodesPerBeat-1)/NodesPerBeat)
}

// MaxNodes is the largest cluster `run` starts.
const MaxNodes = 4096

// The values of Config.VClock.
const (
	VClockAuto = "auto"
	VClockOn   = "on"
	VClockOff  = "off"
)

// vclockOn resolves Config.VClock for a cluster of n nodes.
func vclockOn(mode string, n int) bool {
	return mode == VClockOn || (mode != VClockOff && n <= wire.AutoClockNodes)
}

func (c *Config) validate() error {
	switch {
	case c.Nodes < 1 || c.Nodes > MaxNodes:
		return &field.Error{Field: "Config.Nodes", Value: c.Nodes, Want: fmt.Sprintf("want 1..%d", MaxNodes)}
	case c.Duration <= 0:
		return &field.Error{Field: "Config.Duration", Value: c.Duration, Want: "want a positive duration like 5s"}
	case c.Settle < 0:
		return &field.Error{Field: "Config.Settle", Value: c.Settle, Want: "want 0 or more"}
	case c.Heartbeat < time.Millisecond:
		return &field.Error{Field: "Config.Heartbeat", Value: c.Heartbeat, Want: "want at least 1ms"}
	case c.Timeout <= c.Heartbeat:
		return &field.Error{Field: "Config.Timeout", Value: c.Timeout, Want: fmt.Sprintf("want longer than Config.Heartbeat %v", c.Heartbeat), Also: []string{"Config.Heartbeat"}}
	case c.ElectionTimeout < 0:
		return &field.Error{Field: "Config.ElectionTimeout", Value: c.ElectionTimeout, Want: "want a positive duration (0: derived from Config.Timeout)", Also: []string{"Config.Timeout"}}
	case c.CoordinatorTimeout < 0:
		return &field.Error{Field: "Config.CoordinatorTimeout", Value: c.CoordinatorTimeout, Want: "want a positive duration (0: derived from Config.Timeout)", Also: []string{"Config.Timeout"}}
	case c.Grace < 0:
		return &field.Error{Field: "Config.Grace", Value: c.Grace, Want: "want a positive duration (0: derived from Config.Timeout)", Also: []string{"Config.Timeout"}}
	case c.TerminationBound < 0:
		return &field.Error{Field: "Config.TerminationBound", Value: c.TerminationBound, Want: "want a positive duration (0: derived from the timeouts)"}
	case c.remote() && c.Host != "" && c.Host != DefaultConfig().Host:
		return &field.Error{Field: "Config.Host", Value: c.Host, Want: "with Config.Hosts or Config.SSHConfig each node listens on its SSH host's address, so Config.Host cannot be given", Also: []string{"Config.Hosts", "Config.SSHConfig", "Config.Host"}}
	case !c.remote() && c.InsecureIgnoreHostKey:
		return &field.Error{Field: "Config.InsecureIgnoreHostKey", Want: "it goes with Config.Hosts or Config.SSHConfig (it skips their host-key check)", Also: []string{"Config.Hosts", "Config.SSHConfig"}}
	case c.StopGrace <= 0:
		return fmt.Errorf("stop grace %v: want a positive duration", c.StopGrace)
	case c.NetBackend != "" && !slices.Contains(Backends, c.NetBackend):
		return &field.Error{Field: "Config.NetBackend", Value: fmt.Sprintf("%q", c.NetBackend), Want: fmt.Sprintf("want one of %s", strings.Join(Backends, ", "))}
	case c.Nemesis != "" && c.NemesisInterval <= 0:
		return &field.Error{Field: "Config.NemesisInterval", Value: c.NemesisInterval, Want: "want a positive duration such as 1s"}
	case c.Nemesis != "" && c.Chaos != "" && c.Chaos != DefaultConfig().Chaos:
		return &field.Error{Field: "Config.Nemesis", Value: c.Nemesis, Want: fmt.Sprintf("it draws the fault schedule, so it cannot be combined with Config.Chaos %q (give one or the other)", c.Chaos), Also: []string{"Config.Chaos"}}
	case c.VClock != "" && c.VClock != VClockAuto && c.VClock != VClockOn && c.VClock != VClockOff:
		return &field.Error{Field: "Config.VClock", Value: fmt.Sprintf("%q", c.VClock), Want: fmt.Sprintf("want auto (on up to %d nodes), on or off", wire.AutoClockNodes)}
	case c.Detector != "" && !slices.Contains(rundir.Detectors, c.Detector):
		return &field.Error{Field: "Config.Detector", Value: fmt.Sprintf("%q", c.Detector), Want: fmt.Sprintf("want one of %s", strings.Join(rundir.Detectors, ", "))}
	case c.Observers < 0 || c.Observers > 64:
		return &field.Error{Field: "Config.Observers", Value: c.Observers, Want: "want 1..64"}
	case c.Observers > 0 && c.Detector != rundir.DetectorObservers:
		return &field.Error{Field: "Config.Observers", Value: c.Observers, Want: "only the observers detector has several observers (give Config.Detector observers)", Also: []string{"Config.Detector"}}
	case c.HealthInterval < 0:
		return &field.Error{Field: "Config.HealthInterval", Value: c.HealthInterval, Want: "want a positive duration"}
	case c.ProbeTimeout < 0:
		return &field.Error{Field: "Config.ProbeTimeout", Value: c.ProbeTimeout, Want: "want a positive duration"}
	case (c.HealthInterval > 0 || c.ProbeTimeout > 0) && (c.Detector == "" || c.Detector == rundir.DetectorHeartbeat):
		return c.notProbing()
	case c.Sim && c.remote():
		return &field.Error{Field: "Config.Sim", Want: "it runs every node in the simulator, so it takes no Config.Hosts or Config.SSHConfig", Also: []string{"Config.Hosts", "Config.SSHConfig"}}
	case c.Sim && (c.NetBackend == BackendIPTables || c.NetBackend == BackendNetem):
		return &field.Error{Field: "Config.Sim", Want: fmt.Sprintf("the simulated network applies the link rules itself; Config.NetBackend %s needs real processes", c.NetBackend), Also: []string{"Config.NetBackend"}}
	case c.Sim && (c.Detector == rundir.DetectorObserver || c.Detector == rundir.DetectorObservers):
		return &field.Error{Field: "Config.Detector", Value: c.Detector, Want: "observer processes are not simulated yet (accepted with Config.Sim: heartbeat, mutual)", Also: []string{"Config.Sim"}}
	case c.Nemesis == "" && c.NemesisShapes != "":
		return &field.Error{Field: "Config.NemesisShapes", Value: c.NemesisShapes, Want: "the shapes the nemesis's partitions are drawn from: they need Config.Nemesis", Also: []string{"Config.Nemesis"}}
	case c.Nemesis == "" && (c.NemesisOverlap || c.NemesisRestart):
		return c.noNemesis()
	}
	// the algorithm's options: its own checked by it, another's refused (an unknown algorithm is
	// resolve's to name)
	if alg, err := election.Lookup(c.Algo); err == nil {
		if err := alg.ValidOptions(c.Options, c.Nodes); err != nil {
			return err
		}
	}
	return nil
}

// notProbing is the error of a probing detector's setting given to a detector that does not probe.
func (c *Config) notProbing() error {
	e := &field.Error{Field: "Config.HealthInterval", Value: c.HealthInterval,
		Want: "Config.HealthInterval and Config.ProbeTimeout set the probing detectors: give Config.Detector mutual, observer or observers",
		Also: []string{"Config.HealthInterval", "Config.ProbeTimeout", "Config.Detector"}}
	if c.HealthInterval == 0 {
		e.Field, e.Value = "Config.ProbeTimeout", c.ProbeTimeout
	}
	return e
}

// noNemesis is the error of the nemesis's shape given without a nemesis.
func (c *Config) noNemesis() error {
	e := &field.Error{Field: "Config.NemesisOverlap", Value: true,
		Want: "Config.NemesisOverlap and Config.NemesisRestart shape the nemesis's faults: they need Config.Nemesis",
		Also: []string{"Config.NemesisOverlap", "Config.NemesisRestart", "Config.Nemesis"}}
	if !c.NemesisOverlap {
		e.Field = "Config.NemesisRestart"
	}
	return e
}

// derive fills the zero values that follow from others.
func (c *Config) derive() {
	t := rundir.Timings{ElectionTimeout: c.ElectionTimeout, CoordinatorTimeout: c.CoordinatorTimeout, Grace: c.Grace, TerminationBound: c.TerminationBound}
	t.Derive(c.Timeout)
	c.ElectionTimeout, c.CoordinatorTimeout, c.Grace, c.TerminationBound = t.ElectionTimeout, t.CoordinatorTimeout, t.Grace, t.TerminationBound
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = 10*time.Second + time.Duration(c.Nodes)*20*time.Millisecond
	}
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if c.NetBackend == "" {
		c.NetBackend = BackendTransport
	}
	if c.NemesisInterval == 0 {
		c.NemesisInterval = time.Second
	}
	if c.Stdout == nil {
		c.Stdout = io.Discard
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}
