package resolve

import (
	"errors"
	"slices"
	"strings"
)

// The solver decides which bundles a namespace gets. OLM writes the namespace as a boolean
// problem (one variable per Subscription and per candidate bundle; clauses "mandatory",
// "prohibited", "dependency" — ordered by preference —, "conflict" and "at most one") and
// has a SAT solver search it in preference order: it takes the mandatory variables, then,
// breadth first, satisfies every dependency of what it took with the first candidate that
// does not contradict what was taken before, backtracking to the latest choice when it
// runs out; it keeps nothing it was not led to. This is the same search written directly
// (every clause but dependency only forbids, so a depth-first search over the dependency
// choices is complete), with the same preference order and so the same answer; when there
// is no answer, explain reduces the clauses the search touched to a minimal set that still
// has none, which is what OLM's message lists.

type varID int
type clauseID int

type clauseKind uint8

const (
	clauseMandatory  clauseKind = iota // subject must be taken
	clauseProhibited                   // subject must not be taken
	clauseDependency                   // taking subject takes one of vars, preferring the first
	clauseConflict                     // subject and vars[0] are not both taken
	clauseAtMostOne                    // at most one of vars is taken
)

type clause struct {
	kind    clauseKind
	subject varID
	vars    []varID
	text    string
}

type variable struct {
	name string
	// deps are the dependency clauses taking this variable brings in, in order.
	deps []clauseID
	// limits are the prohibited, conflict and at-most-one clauses it takes part in.
	limits []clauseID
}

// problem is a namespace's constraint model. Clauses are added in the order their text
// should appear in an explanation.
type problem struct {
	vars    []variable
	clauses []clause
}

func (p *problem) addVar(name string) varID {
	p.vars = append(p.vars, variable{name: name})
	return varID(len(p.vars) - 1)
}

func (p *problem) add(c clause) clauseID {
	p.clauses = append(p.clauses, c)
	id := clauseID(len(p.clauses) - 1)
	switch c.kind {
	case clauseDependency:
		p.vars[c.subject].deps = append(p.vars[c.subject].deps, id)
	case clauseProhibited:
		p.vars[c.subject].limits = append(p.vars[c.subject].limits, id)
	case clauseConflict:
		p.vars[c.subject].limits = append(p.vars[c.subject].limits, id)
		p.vars[c.vars[0]].limits = append(p.vars[c.vars[0]].limits, id)
	case clauseAtMostOne:
		for _, v := range c.vars {
			p.vars[v].limits = append(p.vars[v].limits, id)
		}
	}
	return id
}

func (p *problem) mandatory(v varID, text string) clauseID {
	return p.add(clause{kind: clauseMandatory, subject: v, text: text})
}

func (p *problem) prohibit(v varID, text string) clauseID {
	return p.add(clause{kind: clauseProhibited, subject: v, text: text})
}

func (p *problem) depend(v varID, candidates []varID, text string) clauseID {
	return p.add(clause{kind: clauseDependency, subject: v, vars: candidates, text: text})
}

func (p *problem) conflict(a, b varID, text string) clauseID {
	return p.add(clause{kind: clauseConflict, subject: a, vars: []varID{b}, text: text})
}

func (p *problem) atMostOne(vars []varID, text string) clauseID {
	return p.add(clause{kind: clauseAtMostOne, vars: vars, text: text})
}

// errIncomplete means the search gave up at its step bound (OLM's message for its own
// give-up).
var errIncomplete = errors.New("cancelled before a solution could be found")

// solution is what a search found: the variables taken.
type solution struct {
	taken []bool
}

// chosen returns the first candidate of a dependency clause that the solution takes.
func (p *problem) chosen(s solution, c clauseID) (varID, bool) {
	for _, v := range p.clauses[c].vars {
		if s.taken[v] {
			return v, true
		}
	}
	return 0, false
}

type search struct {
	p        *problem
	active   []bool
	taken    []bool
	count    []int // per limit clause: how many of its variables are taken
	queue    []clauseID
	touched  []bool
	steps    int
	maxSteps int
	aborted  bool
}

// solve searches with the given clauses active. It returns the solution when there is
// one, and which clauses the search consulted (a failure is explained by those alone).
func (p *problem) solve(active []bool, maxSteps int) (solution, bool, []bool, error) {
	s := &search{
		p: p, active: active, maxSteps: maxSteps,
		taken: make([]bool, len(p.vars)), count: make([]int, len(p.clauses)), touched: make([]bool, len(p.clauses)),
	}
	for id, c := range p.clauses {
		if c.kind == clauseMandatory && active[id] {
			s.queue = append(s.queue, clauseID(id))
		}
	}
	ok := s.run(0)
	if s.aborted {
		return solution{}, false, s.touched, errIncomplete
	}
	if !ok {
		return solution{}, false, s.touched, nil
	}
	return solution{taken: s.taken}, true, s.touched, nil
}

func (s *search) candidates(c clauseID) []varID {
	cl := &s.p.clauses[c]
	if cl.kind == clauseMandatory {
		return []varID{cl.subject}
	}
	return cl.vars
}

// run satisfies the queued choices from i on, depth first.
func (s *search) run(i int) bool {
	s.steps++
	if s.steps > s.maxSteps {
		s.aborted = true
		return false
	}
	if i == len(s.queue) {
		return true
	}
	c := s.queue[i]
	s.touched[c] = true
	cands := s.candidates(c)
	for _, v := range cands {
		if s.taken[v] {
			return s.run(i + 1)
		}
	}
	mark := len(s.queue)
	for _, v := range cands {
		if !s.allowed(v) {
			continue
		}
		s.take(v, true)
		for _, d := range s.p.vars[v].deps {
			if s.active[d] {
				s.queue = append(s.queue, d)
			}
		}
		if s.run(i + 1) {
			return true
		}
		s.take(v, false)
		s.queue = s.queue[:mark]
		if s.aborted {
			return false
		}
	}
	return false
}

// allowed reports whether taking v contradicts no active clause, given what is taken.
func (s *search) allowed(v varID) bool {
	for _, l := range s.p.vars[v].limits {
		if !s.active[l] {
			continue
		}
		if s.p.clauses[l].kind == clauseProhibited || s.count[l] > 0 {
			s.touched[l] = true
			return false
		}
	}
	return true
}

func (s *search) take(v varID, on bool) {
	s.taken[v] = on
	d := 1
	if !on {
		d = -1
	}
	for _, l := range s.p.vars[v].limits {
		s.count[l] += d
	}
}

// explain returns a minimal set of active clauses that has no solution, in clause order: it
// starts from the clauses the failed search consulted and drops every clause without
// which there is still no solution. A trial that hits the step bound keeps its clause.
func (p *problem) explain(active []bool, maxSteps int) []clauseID {
	_, ok, touched, err := p.solve(active, maxSteps)
	if ok || err != nil {
		return nil
	}
	var core []clauseID
	for id := range p.clauses {
		if active[id] && touched[id] {
			core = append(core, clauseID(id))
		}
	}
	for i := 0; i < len(core); {
		trial := make([]bool, len(p.clauses))
		for j, c := range core {
			if j != i {
				trial[c] = true
			}
		}
		if _, ok, _, err := p.solve(trial, maxSteps); !ok && err == nil {
			core = append(core[:i], core[i+1:]...)
			continue
		}
		i++
	}
	return core
}

// notSatisfiable is OLM's message for a set of clauses with no solution: the clauses'
// texts in byte order, as OLM's solver sorts them (solver/lit_mapping.go Conflicts).
func (p *problem) notSatisfiable(core []clauseID) string {
	const msg = "constraints not satisfiable"
	if len(core) == 0 {
		return msg
	}
	texts := make([]string, len(core))
	for i, c := range core {
		texts[i] = p.clauses[c].text
	}
	slices.Sort(texts)
	return msg + ": " + strings.Join(texts, ", ")
}
