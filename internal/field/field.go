// Package field is the error a configuration's validate returns about one of its fields: which
// field, what it held, what is accepted. The libraries name their fields ("Config.Nodes 0: want
// 1..10000"); the command line, which sets them from flags, writes the same error in its flags
// (Format) from one table of fields to flags, without reading the message.
package field

import (
	"fmt"
	"strings"
)

// Error is a value of a configuration's field that is not accepted.
type Error struct {
	// Field is the field at fault, named as the message names it: its type and its name
	// ("Config.Nodes", "explore.Config.N", "RSDPPlan.Loss"), or an algorithm's option by its key
	// ("option rsdp-mode").
	Field string
	// Value is what the field held, written with %v (a caller that wants a string quoted passes it
	// quoted); nil when the message shows none.
	Value any
	// Want is what is accepted, or why the value is not. It follows the value after a colon, or
	// after a space when it is a parenthesis ("(accepted: a, b)").
	Want string
	// Also are the other fields Want names, by the same kind of name as Field.
	Also []string
	// Err is the error Want reports, when a parser said it (Want already holds its text); Unwrap
	// returns it.
	Err error
}

func (e *Error) Error() string { return e.Format(nil) }

func (e *Error) Unwrap() error { return e.Err }

// Format writes the error with every field it names (Field, then Also in Want) written by name;
// nil keeps the fields' own names.
func (e *Error) Format(name func(field string) string) string {
	if name == nil {
		name = func(f string) string { return f }
	}
	var b strings.Builder
	b.WriteString(name(e.Field))
	if e.Value != nil {
		fmt.Fprintf(&b, " %v", e.Value)
	}
	if e.Want == "" {
		return b.String()
	}
	if strings.HasPrefix(e.Want, "(") {
		b.WriteString(" ")
	} else {
		b.WriteString(": ")
	}
	want := e.Want
	for _, f := range e.Also {
		want = ReplaceName(want, f, name(f))
	}
	b.WriteString(want)
	return b.String()
}

// Fields are the fields the error names: Field, then Also.
func (e *Error) Fields() []string { return append([]string{e.Field}, e.Also...) }

// ReplaceName replaces every whole occurrence of the field name f in s by by: not one that is part of
// a longer name ("Config.Nemesis" in "Config.NemesisInterval", "Config.N" in "explore.Config.N").
func ReplaceName(s, f, by string) string {
	if f == by {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, f)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(f)
		whole := (end == len(s) || !isNameByte(s[end])) && (i == 0 || !isNameByte(s[i-1]) && s[i-1] != '.')
		b.WriteString(s[:i])
		if whole {
			b.WriteString(by)
		} else {
			b.WriteString(f)
		}
		s = s[end:]
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
