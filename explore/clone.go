package explore

// Copying and fingerprinting a machine without its help. The election machines are plain Go structs
// behind an interface; the explorer must copy one before stepping it (the state it came from stays
// in the search) and reduce its state to bytes to recognise a state seen before. Both walk the
// machine's memory by its type, unexported fields included, so that a field added to an algorithm
// is copied and hashed without anybody remembering to: a hand-written Clone or Hash that forgot
// one would merge distinct states and hide them from the search.
//
// A field tagged `explore:"instant"` holds a time read from Input.Now (when something was last heard,
// until when to keep quiet). It is copied and hashed like any other; only the question "would more
// heartbeats change this machine?" leaves instants out (see heartbeats in model.go).
//
// A pointer to a struct marked election.Fixed (a field `_ election.Fixed` of its own) is the
// machine's configuration (its ID, the cluster's IDs, the ring order), which the machine never
// changes after New: copies share it and fingerprints leave it out, which is what keeps a copy
// cheap. The mark is the type's, wherever a pointer to it sits (a machine embeds its configuration;
// a ring algorithm reaches it through the ring core), and only a field of the struct itself counts:
// the machine that embeds the configuration is not configuration. So a machine separates its
// configuration from its state once, in the type, with no tag on any field.
// TestFixedNeverChanges holds every Fixed struct to never changing.

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/leaderlab/leaderlab/election"
)

// plan is what the walkers know of a type, computed once.
type plan struct {
	t      reflect.Type
	kind   reflect.Kind
	size   uintptr
	id     uint32      // a small number for the type, written for interfaces' dynamic types
	fields []fieldPlan // struct
	elem   *plan       // pointer, slice, array, map value
	key    *plan       // map key
	// deep: a copy must do more than copy the bytes (the type holds pointers, slices, maps or
	// interfaces that are not shared).
	deep bool
	// ptrType is the type word of *t in an interface value (see view).
	ptrType unsafe.Pointer
	// fixed: a pointer to a machine's configuration (a struct marked election.Fixed), shared by
	// copies and left out of fingerprints.
	fixed bool
}

type fieldPlan struct {
	name    string
	off     uintptr
	p       *plan
	instant bool
}

var fixedMark = reflect.TypeFor[election.Fixed]()

// isFixed tells whether t is a pointer to a struct marked election.Fixed by a field of its own.
func isFixed(t reflect.Type) bool {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return false
	}
	for i := 0; i < t.Elem().NumField(); i++ {
		if t.Elem().Field(i).Type == fixedMark {
			return true
		}
	}
	return false
}

var plans struct {
	sync.Mutex
	m    map[reflect.Type]*plan
	byID []*plan
	// done is a copy of m, made again when m grows, read without the lock: every copy and
	// fingerprint of an interface value looks its type up, in every worker at once.
	done atomic.Pointer[map[reflect.Type]*plan]
}

// planOf returns t's plan, building it (and its parts') on first use.
func planOf(t reflect.Type) *plan {
	if done := plans.done.Load(); done != nil {
		if p := (*done)[t]; p != nil {
			return p
		}
	}
	plans.Lock()
	defer plans.Unlock()
	before := len(plans.byID)
	p := planLocked(t)
	if len(plans.byID) != before { // new types: their deep flags (and nobody else's) are unknown
		for _, q := range plans.byID[before:] {
			q.deep = q.isDeep(map[*plan]bool{})
		}
		done := maps.Clone(plans.m)
		plans.done.Store(&done)
	}
	return p
}

func planLocked(t reflect.Type) *plan {
	if plans.m == nil {
		plans.m = map[reflect.Type]*plan{}
	}
	if p := plans.m[t]; p != nil {
		return p
	}
	p := &plan{t: t, kind: t.Kind(), size: t.Size(), id: uint32(len(plans.byID) + 1)}
	p.fixed = isFixed(t)
	nilPtr := reflect.Zero(reflect.PointerTo(t)).Interface()
	p.ptrType = (*eface)(unsafe.Pointer(&nilPtr)).typ
	plans.m[t] = p // before the parts: a type may refer to itself
	plans.byID = append(plans.byID, p)
	switch p.kind {
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			fp := fieldPlan{name: f.Name, off: f.Offset, p: planLocked(f.Type), instant: f.Tag.Get("explore") == "instant"}
			p.fields = append(p.fields, fp)
		}
	case reflect.Pointer, reflect.Slice, reflect.Array:
		p.elem = planLocked(t.Elem())
	case reflect.Map:
		p.key, p.elem = planLocked(t.Key()), planLocked(t.Elem())
	}
	return p
}

// isDeep tells whether a copy of p's values must do more than copy bytes.
func (p *plan) isDeep(seen map[*plan]bool) bool {
	if v, ok := seen[p]; ok {
		return v
	}
	seen[p] = true // a recursive type is deep anyway (it holds a pointer)
	d := false
	switch p.kind {
	case reflect.Pointer:
		d = !p.fixed
	case reflect.Slice, reflect.Map, reflect.Interface:
		d = true
	case reflect.Array:
		d = p.elem.isDeep(seen)
	case reflect.Struct:
		for _, f := range p.fields {
			if f.p.isDeep(seen) {
				d = true
			}
		}
	case reflect.Chan, reflect.Func, reflect.UnsafePointer:
		d = false // shared: a machine holds none, and sharing one is all a copy could do
	}
	seen[p] = d
	return d
}

// machinePlan is the plan of a machine's dynamic type, which must be a pointer to a struct.
func machinePlan(t reflect.Type) (*plan, error) {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("explore: a machine of type %v: want a pointer to a struct", t)
	}
	return planOf(t), nil
}

// eface is the layout of an interface value with methods or without: a type word and a data word.
type eface struct{ typ, data unsafe.Pointer }

// view is the value of type p.t stored at ptr, writable whatever the field's export status. It is
// reflect.NewAt(p.t, ptr).Elem() without NewAt's look-up of the pointer type, which the copies and
// fingerprints of a search would otherwise make millions of times.
func view(p *plan, ptr unsafe.Pointer) reflect.Value {
	var i any
	e := (*eface)(unsafe.Pointer(&i))
	e.typ, e.data = p.ptrType, ptr
	return reflect.ValueOf(i).Elem()
}

// copier deep-copies one machine, keeping pointers that were shared inside it shared in the copy
// (the ring core points back at the algorithm that embeds it).
type copier struct {
	from, to []unsafe.Pointer
}

func (c *copier) seen(p unsafe.Pointer) (unsafe.Pointer, bool) {
	for i, f := range c.from {
		if f == p {
			return c.to[i], true
		}
	}
	return nil, false
}

// ptr copies the object *src (of type elem) unless it was copied already, and returns the copy.
func (c *copier) ptr(elem *plan, src unsafe.Pointer) unsafe.Pointer {
	if src == nil {
		return nil
	}
	if dst, ok := c.seen(src); ok {
		return dst
	}
	n := reflect.New(elem.t)
	dst := n.UnsafePointer()
	c.from, c.to = append(c.from, src), append(c.to, dst)
	view(elem, dst).Set(view(elem, src))
	if elem.deep {
		c.fix(elem, dst)
	}
	return dst
}

// fix makes the value at dst (a byte copy of its source) independent of the source.
func (c *copier) fix(p *plan, dst unsafe.Pointer) {
	switch p.kind {
	case reflect.Struct:
		for _, f := range p.fields {
			if f.p.deep {
				c.fix(f.p, unsafe.Add(dst, f.off))
			}
		}
	case reflect.Array:
		for i := 0; i < p.t.Len(); i++ {
			c.fix(p.elem, unsafe.Add(dst, uintptr(i)*p.elem.size))
		}
	case reflect.Pointer:
		pp := (*unsafe.Pointer)(dst)
		*pp = c.ptr(p.elem, *pp)
	case reflect.Slice:
		v := view(p, dst)
		if v.IsNil() {
			return
		}
		n := reflect.MakeSlice(p.t, v.Len(), v.Len())
		reflect.Copy(n, v)
		if p.elem.deep {
			base := n.UnsafePointer()
			for i := 0; i < v.Len(); i++ {
				c.fix(p.elem, unsafe.Add(base, uintptr(i)*p.elem.size))
			}
		}
		v.Set(n)
	case reflect.Map:
		v := view(p, dst)
		if v.IsNil() {
			return
		}
		n := reflect.MakeMapWithSize(p.t, v.Len())
		it := v.MapRange()
		for it.Next() {
			k, e := it.Key(), it.Value()
			if p.key.deep {
				k = c.value(p.key, k)
			}
			if p.elem.deep {
				e = c.value(p.elem, e)
			}
			n.SetMapIndex(k, e)
		}
		v.Set(n)
	case reflect.Interface:
		v := view(p, dst)
		if v.IsNil() {
			return
		}
		dyn := v.Elem()
		dp := planOf(dyn.Type())
		if dp.fixed {
			return // shared
		}
		if dp.kind == reflect.Pointer {
			np := c.ptr(dp.elem, dyn.UnsafePointer())
			v.Set(reflect.NewAt(dp.elem.t, np))
			return
		}
		v.Set(c.value(dp, dyn))
	}
}

// value copies a value that has no address (a map's key or element, an interface's content).
func (c *copier) value(p *plan, v reflect.Value) reflect.Value {
	n := reflect.New(p.t).Elem()
	n.Set(v)
	if p.deep {
		c.fix(p, n.Addr().UnsafePointer())
	}
	return n
}

// encoder writes a machine's state as bytes: equal states give equal bytes (maps in key order), and
// different states different bytes, configuration (Fixed) apart.
type encoder struct {
	b    []byte
	ptrs []unsafe.Pointer
	// noInstants leaves out the fields tagged instant.
	noInstants bool
}

func (e *encoder) uvarint(x uint64) { e.b = binary.AppendUvarint(e.b, x) }
func (e *encoder) varint(x int64)   { e.b = binary.AppendVarint(e.b, x) }

func (e *encoder) value(p *plan, ptr unsafe.Pointer) {
	switch p.kind {
	case reflect.Bool:
		if *(*bool)(ptr) {
			e.b = append(e.b, 1)
		} else {
			e.b = append(e.b, 0)
		}
	case reflect.Int:
		e.varint(int64(*(*int)(ptr)))
	case reflect.Int8:
		e.varint(int64(*(*int8)(ptr)))
	case reflect.Int16:
		e.varint(int64(*(*int16)(ptr)))
	case reflect.Int32:
		e.varint(int64(*(*int32)(ptr)))
	case reflect.Int64:
		e.varint(*(*int64)(ptr))
	case reflect.Uint, reflect.Uintptr:
		e.uvarint(uint64(*(*uint)(ptr)))
	case reflect.Uint8:
		e.uvarint(uint64(*(*uint8)(ptr)))
	case reflect.Uint16:
		e.uvarint(uint64(*(*uint16)(ptr)))
	case reflect.Uint32:
		e.uvarint(uint64(*(*uint32)(ptr)))
	case reflect.Uint64:
		e.uvarint(*(*uint64)(ptr))
	case reflect.Float32:
		e.uvarint(uint64(math.Float32bits(*(*float32)(ptr))))
	case reflect.Float64:
		e.uvarint(math.Float64bits(*(*float64)(ptr)))
	case reflect.String:
		s := *(*string)(ptr)
		e.uvarint(uint64(len(s)))
		e.b = append(e.b, s...)
	case reflect.Struct:
		for _, f := range p.fields {
			if !(f.instant && e.noInstants) {
				e.value(f.p, unsafe.Add(ptr, f.off))
			}
		}
	case reflect.Array:
		for i := 0; i < p.t.Len(); i++ {
			e.value(p.elem, unsafe.Add(ptr, uintptr(i)*p.elem.size))
		}
	case reflect.Slice:
		// nil and empty read alike to every algorithm (len, range, slices.Equal): one encoding
		v := view(p, ptr)
		e.uvarint(uint64(v.Len()))
		if v.Len() > 0 {
			base := v.UnsafePointer()
			for i := 0; i < v.Len(); i++ {
				e.value(p.elem, unsafe.Add(base, uintptr(i)*p.elem.size))
			}
		}
	case reflect.Pointer:
		if !p.fixed {
			e.pointer(p.elem, *(*unsafe.Pointer)(ptr))
		}
	case reflect.Map:
		e.mapValue(p, view(p, ptr))
	case reflect.Interface:
		v := view(p, ptr)
		if v.IsNil() {
			e.uvarint(0)
			return
		}
		dyn := v.Elem()
		dp := planOf(dyn.Type())
		e.uvarint(uint64(dp.id))
		if dp.fixed {
			return
		}
		if dp.kind == reflect.Pointer {
			e.pointer(dp.elem, dyn.UnsafePointer())
			return
		}
		n := reflect.New(dp.t).Elem()
		n.Set(dyn)
		e.value(dp, n.Addr().UnsafePointer())
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		// shared, never state
	default:
		panic(fmt.Sprintf("explore: cannot fingerprint a %v", p.t))
	}
}

// pointer writes the object a pointer points at the first time, and a back-reference after.
func (e *encoder) pointer(elem *plan, q unsafe.Pointer) {
	if q == nil {
		e.uvarint(0)
		return
	}
	if i := slices.Index(e.ptrs, q); i >= 0 {
		e.uvarint(uint64(i) + 2)
		return
	}
	e.ptrs = append(e.ptrs, q)
	e.uvarint(1)
	e.value(elem, q)
}

// mapValue writes a map's entries in the order of their keys' encodings.
func (e *encoder) mapValue(p *plan, v reflect.Value) {
	if v.Len() == 0 {
		e.uvarint(0)
		return
	}
	type entry struct{ k, v []byte }
	entries := make([]entry, 0, v.Len())
	sub := encoder{ptrs: e.ptrs, noInstants: e.noInstants}
	it := v.MapRange()
	for it.Next() {
		k := reflect.New(p.key.t).Elem()
		k.Set(it.Key())
		val := reflect.New(p.elem.t).Elem()
		val.Set(it.Value())
		sub.b = nil
		sub.value(p.key, k.Addr().UnsafePointer())
		kb := sub.b
		sub.b = nil
		sub.value(p.elem, val.Addr().UnsafePointer())
		entries = append(entries, entry{kb, sub.b})
	}
	e.ptrs = sub.ptrs
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(string(a.k), string(b.k)) })
	e.uvarint(uint64(len(entries)))
	for _, en := range entries {
		e.b = append(e.b, en.k...)
		e.b = append(e.b, en.v...)
	}
}
