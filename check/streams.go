package check

// What each property keeps of the run while it is played, and how the play hands it the points and
// the events. Each keeps a few numbers, the current election, the messages of the last election
// it still needs, and what its verdict lists (elections, overlaps, failovers): nothing per event.

import "github.com/leaderlab/leaderlab/logs"

// streams is the checker's state during and after the play.
type streams struct {
	// endPt is the point in force at the end (nil when none was).
	endPt *point
	uniq  *uniqState
	elec  *elecState
	terms *termState
	recv  recvState
	pls   *pulseState
	susp  suspState
	obs   observerState
	// the faults' measures
	watches  []*agreeWatch
	failing  []failoverWatch
	healing  []healWatch
	partTime int64
	// detections
	detect     []*detectEntry
	detectOf   map[int][]*detectEntry
	detectNext map[[2]int]int
	// faults that never bit
	pauseBefore        map[int][]nodeState
	bit                map[int]bool
	carried            map[int]bool
	linksFrom, linksTo map[int][]linkWatch
	hbState            map[int]*hbCount
	// agreement's declared limit: a fault of its kinds in force less than its Recovery before the
	// end (limitKinds empty: not asked).
	limitKinds   map[string]bool
	limitSince   int64
	limitNearEnd bool
	// totals
	messagesTotal, dropsTotal int
	// probes are more questions to ask the play (tests)
	probes []probeAt
	// clock faults: their warnings, held from the play until a property names them (clocks.go)
	quiet     bool
	clockHeld bool
	clockWarn []string
}

// startStreams readies every property before the play, and asks the probes.
func (c *checker) startStreams(p *player) {
	// The clock faults' spans are known before the play; their warnings are said where the
	// properties first name the clock faults, as before.
	saved := c.warn
	c.warn = nil
	c.clockSpans()
	c.clockWarn, c.clockHeld = c.warn, true
	c.warn = saved
	c.quiet = true

	p.probe(c.end, func(pt *point) { c.endPt = pt })
	for _, q := range c.probes {
		p.probe(q.t, q.fn)
	}
	c.unacknowledged(p)
	c.uniqStart()
	c.elec = &elecState{}
	c.termStart()
	c.pulseStart()
	c.failoverStart(p)
	c.healStart(p)
	c.neverBitStart(p)
	c.agreementLimitStart()
}

// agreementLimitStart readies the part of agreementLimit the points answer: was a fault of the
// declared kinds in force less than the limit's Recovery before the end.
func (c *checker) agreementLimitStart() {
	kinds, _ := c.limitsOf(PropAgreement)
	recovery := c.recoveryOf(PropAgreement)
	if len(kinds) == 0 || recovery == 0 {
		return
	}
	c.limitKinds, c.limitSince = kinds, c.end-recovery
}

// pointStretch hands out a point's stretch, [pt.t, to) (next: to is the next point's time; else
// the stretch runs on past the end), and the point before it.
func (c *checker) pointStretch(pt, prev *point, to int64, next bool) {
	if !next {
		to = forever
	}
	c.uniqPoint(pt, prev, to)
	c.partitionedPoint(pt, to)
	if c.limitKinds != nil && !c.limitNearEnd {
		end := to
		if !next {
			end = c.end
		}
		if end > c.limitSince && pt.net.inForce(c.limitKinds, c.faults, 0) {
			c.limitNearEnd = true
		}
	}
}

// newPoint hands out a new point.
func (c *checker) newPoint(pt *point) {
	c.elecPoint(pt)
	c.watchPoint(pt)
	c.partitionsThatBit(pt)
	c.suspNet(pt)
}

// onEvents hands out the events of an instant, after its point.
func (c *checker) onEvents(t int64, evs []*mEvent) {
	for _, e := range evs {
		x := c.incOf(e.node, e.Inc)
		if t <= c.end {
			c.elecEvent(e, x)
			switch e.Ev {
			case logs.EvSend:
				c.messagesTotal++
			case logs.EvDrop:
				c.dropsTotal++
			}
		}
		c.termEvent(e, x)
		c.pulseEvent(e)
		c.linkCarried(e)
		switch e.Ev {
		case logs.EvRecv:
			if e.Msg != nil {
				c.matchRecv(e)
			}
		case logs.EvSuspect:
			c.suspEvent(e)
			c.detectSuspect(e.node, e.Peer, t)
		}
	}
}

// finishStreams closes what the play left open.
func (c *checker) finishStreams() {
	c.termFinish()
	c.quiet = false
}

// endState is the state in force at the end (a zero state before the first point).
func (c *checker) endState() []nodeState {
	if c.endPt != nil {
		return c.endPt.state
	}
	return make([]nodeState, len(c.ids))
}

// flushClockWarnings says the clock faults' warnings held during the play, once a property names
// the clock faults (clockSpans).
func (c *checker) flushClockWarnings() {
	if c.clockHeld && !c.quiet {
		c.warn = append(c.warn, c.clockWarn...)
		c.clockWarn, c.clockHeld = nil, false
	}
}
