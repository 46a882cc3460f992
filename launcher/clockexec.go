package launcher

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/wire"
)

// clockStep carries out a clock step: the fault goes to each target's control endpoint, where the
// node's clock seam applies it (node/clock.go), and is recorded with each node's ack. A clock fault
// lives in the process: a restarted incarnation starts on the true clock. A request is sent once,
// not retried: a bump applied twice would be another fault.
func (r *runner) clockStep(st chaos.Step, rng *rand.Rand) {
	rec := logs.ChaosRecord{TS: time.Now().UnixNano(), Op: st.Op, Step: st.Text, At: int64(st.At), Targets: []int{}, Clock: st.Clock.String()}
	ids, err := r.exec.Clock(st, rng)
	if err != nil {
		rec.Error = err.Error()
		r.say("leaderlab: %s %s: not applied: %v", r.since(), st.Text, err)
		r.recordChaos(rec)
		return
	}
	rec.Targets, rec.Acks = ids, map[string]int64{}
	var mu sync.Mutex
	var refused []string
	_ = fanOut(ids, controlParallel(), func(id int) error {
		n, _ := r.cluster.Node(id)
		rep, err := r.call(n, wire.CtlRequest{Op: wire.CtlClock, Clock: st.Clock.Op()})
		at := time.Now().UnixNano()
		if err == nil && rep.Error != "" {
			err = fmt.Errorf("%s", rep.Error)
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			refused = append(refused, fmt.Sprintf("node %d: %v", id, err))
		} else {
			rec.Acks[strconv.Itoa(id)] = at
		}
		return nil
	})
	what := fmt.Sprintf("clock %s %s%s", idsText(ids), st.Clock, TargetNote(st.Target))
	if len(refused) > 0 {
		rec.Error = "refused: " + strings.Join(refused, "; ")
		r.say("leaderlab: %s %s: not applied everywhere: %s", r.since(), what, rec.Error)
	}
	if len(rec.Acks) == 0 {
		rec.Acks = nil
	} else {
		r.fault(what, fmt.Sprintf("%d/%d nodes acked", len(rec.Acks), len(ids)))
	}
	r.recordChaos(rec)
}

// idsText writes IDs as the language's groups do: "3", "1-5", "1,3".
func idsText(ids []int) string { return chaos.FormatGroups([][]int{ids}) }
