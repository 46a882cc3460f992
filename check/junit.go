package check

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
)

// JUnit XML, as CI servers read it (Jenkins, GitLab, GitHub's test reporters): a run is a test
// suite, each judged property a test case, a failed property a failure whose message is its detail.
// A property that failed under the algorithm's declared limit is still a failure (the run failed),
// and its message says it is the documented limit. An inconclusive run's open properties are
// skipped cases whose message is the verdict's reason: neither passed nor failed.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr,omitempty"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr,omitempty"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// JUnitRun is one run for a JUnit report: its directory and verdict, or the error that kept it from
// being made or read (then Verdict is nil and the suite holds one errored case).
type JUnitRun struct {
	Dir     string
	Verdict *Verdict
	Err     error
}

// WriteJUnit writes runs as a JUnit XML document.
func WriteJUnit(w io.Writer, runs []JUnitRun) error {
	doc := junitSuites{Name: "leaderlab"}
	for _, r := range runs {
		s := junitSuite{Name: r.Dir, Time: "0"}
		if r.Verdict == nil {
			msg := "the run could not be made or read"
			if r.Err != nil {
				msg = r.Err.Error()
			}
			s.Tests, s.Errors = 1, 1
			s.Cases = []junitCase{{Name: "run", ClassName: "leaderlab", Error: &junitFailure{Message: msg, Type: "unusable", Text: msg}}}
		} else {
			v := r.Verdict
			s.Time = strconv.FormatFloat(float64(v.EndNS-v.BeginNS)/1e9, 'f', 3, 64)
			s.Properties = []junitProperty{{"algo", v.Algo}, {"nodes", strconv.Itoa(v.Nodes)}, {"seed", strconv.FormatInt(v.Seed, 10)}}
			if v.Leader != nil {
				s.Properties = append(s.Properties, junitProperty{"leader", strconv.Itoa(*v.Leader)})
			}
			for _, p := range v.Properties {
				c := junitCase{Name: p.Name, ClassName: "leaderlab." + v.Algo, SystemOut: p.Detail}
				switch {
				case !p.OK && v.Result() == OutcomeInconclusive:
					c.Skipped = &junitSkipped{Message: v.Reason}
					s.Skipped++
				case !p.OK:
					msg := p.Detail
					if p.Limit != "" {
						msg = fmt.Sprintf("%s (the algorithm's documented limit: %s)", p.Detail, p.Limit)
					}
					c.Failure = &junitFailure{Message: firstLineOf(msg), Type: "violation", Text: msg}
					s.Failures++
				}
				s.Cases = append(s.Cases, c)
			}
			s.Tests = len(s.Cases)
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// firstLineOf cuts s at its first newline, and at 200 characters.
func firstLineOf(s string) string {
	for i, r := range s {
		if r == '\n' || i >= 200 {
			return s[:i]
		}
	}
	return s
}
