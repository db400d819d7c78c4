package policy

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/olmsync/olmsync/internal/memguard"
)

// A Rego built-in runs to its end once called: replace() growing a string, concat() of a
// large array, allocate what they allocate before a deadline or the memory watch can stop
// them, and a Go process that runs out of memory dies ("fatal error: out of memory") with
// every check or Sync it was serving. Users' rules — from --policy, a repository's
// olmsync.yaml or a Sync's spec.policy.rules, anyone who can open a pull request — are
// therefore compiled and evaluated in a child process of this binary, the sandbox, whose
// memory the parent watches and bounds: a rule that exhausts it kills the child, and its
// evaluation is a problem naming the rule. The built-in rules, olmsync's own, are
// evaluated in the process.

// SandboxEnv is the environment variable that makes this binary serve as a sandbox.
const SandboxEnv = "OLMSYNC_POLICY_SANDBOX"

// Sandbox says how users' rules are evaluated out of the process.
type Sandbox struct {
	// MemoryLimit is the memory the child may use, in bytes: past it, it is stopped. 0
	// means DefaultSandboxMemory.
	MemoryLimit uint64
	// Command starts the child; by default the running executable with SandboxEnv set.
	// Its stdin and stdout carry the request and the results.
	Command func() *exec.Cmd
}

// DefaultSandboxMemory is a sandbox's memory when none is given: the built-in rules over
// the largest repositories measured (300 apps, 5,000 objects) take under 200 MB.
const DefaultSandboxMemory = 512 << 20

// ServeSandboxIfAsked serves as a sandbox, and exits, when the environment says this
// process is one (SandboxEnv); otherwise it returns at once. Call it first in main, and
// in the TestMain of tests that evaluate users' rules in a sandbox.
func ServeSandboxIfAsked() {
	if os.Getenv(SandboxEnv) != "1" {
		return
	}
	if err := serveSandbox(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "policy sandbox:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// sandboxRequest is what the parent sends the child: the users' rule files, the inputs
// (completed, as their JSON values), the deadline of each evaluation and the memory.
type sandboxRequest struct {
	Files       []sandboxFile    `json:"files"`
	Inputs      []map[string]any `json:"inputs"`
	Timeout     time.Duration    `json:"timeout"`
	MemoryLimit uint64           `json:"memoryLimit"`
}

type sandboxFile struct {
	Name string `json:"name"`
	Data string `json:"data"`
}

// sandboxMessage is one line the child writes: where it is (Input and Rule set, nothing
// else), the results of one package over one input (Bindings), or a problem (Problems:
// of the compilation when Input is -1).
type sandboxMessage struct {
	Input    int            `json:"input"`
	Rule     string         `json:"rule,omitempty"`
	Bindings map[string]any `json:"bindings,omitempty"`
	Problems []Problem      `json:"problems,omitempty"`
	Done     bool           `json:"done,omitempty"`
}

// serveSandbox is the child: it reads one request, compiles the rules, evaluates every
// package of users' rules over every input, and writes a message before and after each.
func serveSandbox(in io.Reader, out io.Writer) error {
	var req sandboxRequest
	dec := json.NewDecoder(in)
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("read the request: %w", err)
	}
	limit := cmp.Or(req.MemoryLimit, DefaultSandboxMemory)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := memguard.Watch(limit, func(e *memguard.ExceededError) { cancel(e) })
	defer stop()
	debug.SetMemoryLimit(int64(limit))

	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	send := func(m sandboxMessage) error {
		if err := enc.Encode(m); err != nil {
			return err
		}
		return w.Flush()
	}
	files := make([]regoFile, len(req.Files))
	for i, f := range req.Files {
		files[i] = regoFile{name: f.Name, data: []byte(f.Data)}
	}
	c, err := compile(ctx, sourceDigest(files), files, false)
	if err != nil {
		var pe *PolicyError
		if !errors.As(err, &pe) {
			pe = &PolicyError{Problems: []Problem{{Message: err.Error()}}}
		}
		return send(sandboxMessage{Input: -1, Problems: pe.Problems})
	}
	e := &Engine{compiled: c, timeout: req.Timeout}
	for i, raw := range req.Inputs {
		value, err := ast.InterfaceToValue(raw)
		if err != nil {
			return fmt.Errorf("input %d: %w", i, err)
		}
		for qi := range c.queries {
			q := &c.queries[qi]
			if q.rule == nil {
				continue // the built-in rules are the parent's
			}
			if err := send(sandboxMessage{Input: i, Rule: q.rule.ID}); err != nil {
				return err
			}
			rs, err := e.eval(ctx, q, value)
			if err != nil {
				var pe *PolicyError
				if !errors.As(policyErrorFrom(err), &pe) {
					pe = &PolicyError{Problems: []Problem{{File: q.rule.File, Message: err.Error()}}}
				}
				if err := send(sandboxMessage{Input: i, Rule: q.rule.ID, Problems: pe.Problems}); err != nil {
					return err
				}
				continue
			}
			if err := send(sandboxMessage{Input: i, Rule: q.rule.ID, Bindings: rs[0].Bindings}); err != nil {
				return err
			}
		}
	}
	return send(sandboxMessage{Done: true})
}

// sandboxResults are what the sandbox found over one input: the bindings of each users'
// package, by rule ID, and the problems of those that failed.
type sandboxResults struct {
	bindings map[string]map[string]any
	problems []Problem
}

// evaluateInSandbox runs the users' rules over inputs (their JSON values) in a child
// process and returns what it found for each input. A problem of the rules themselves
// (one that does not compile) or a child that died — past its memory, past every
// deadline, or crashing — is a *PolicyError naming the rule it was evaluating.
func (e *Engine) evaluateInSandbox(ctx context.Context, inputs []map[string]any) ([]sandboxResults, error) {
	s := e.sandbox
	limit := cmp.Or(s.MemoryLimit, DefaultSandboxMemory)
	cmd := defaultSandboxCommand()
	if s.Command != nil {
		cmd = s.Command()
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &stderr, left: 64 << 10}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the policy sandbox: %w", err)
	}
	files := make([]sandboxFile, len(e.userFiles))
	for i, f := range e.userFiles {
		files[i] = sandboxFile{Name: f.name, Data: string(f.data)}
	}
	go func() {
		// A write error is the child gone: its exit says why.
		_ = json.NewEncoder(stdin).Encode(sandboxRequest{Files: files, Inputs: inputs, Timeout: e.timeout, MemoryLimit: limit})
		_ = stdin.Close()
	}()

	var (
		mu      sync.Mutex
		stopped string // why the parent stopped the child
	)
	stop := func(why string) {
		mu.Lock()
		defer mu.Unlock()
		if stopped == "" {
			stopped = why
			_ = cmd.Process.Kill()
		}
	}
	watchDone := make(chan struct{})
	defer close(watchDone)
	heard := make(chan struct{}, 1)
	go watchSandbox(ctx, cmd.Process.Pid, limit, e.timeout, heard, watchDone, stop)

	out := make([]sandboxResults, len(inputs))
	var current sandboxMessage
	dec := json.NewDecoder(stdout)
	dec.UseNumber()
	var compileProblems []Problem
	done := false
	for !done {
		var m sandboxMessage
		if err := dec.Decode(&m); err != nil {
			break
		}
		select {
		case heard <- struct{}{}:
		default:
		}
		switch {
		case m.Done:
			done = true
		case m.Input == -1:
			compileProblems = m.Problems
		case m.Input < 0 || m.Input >= len(inputs):
			stop("it wrote an input it was not given")
		case m.Problems != nil:
			out[m.Input].problems = append(out[m.Input].problems, m.Problems...)
		case m.Bindings != nil:
			if out[m.Input].bindings == nil {
				out[m.Input].bindings = map[string]map[string]any{}
			}
			out[m.Input].bindings[m.Rule] = m.Bindings
		default:
			current = m
		}
	}
	waitErr := cmd.Wait()
	if ctxErr := ctx.Err(); ctxErr != nil && !done {
		return nil, ctxErr
	}
	if len(compileProblems) > 0 {
		return nil, &PolicyError{Problems: compileProblems}
	}
	if done && waitErr == nil {
		return out, nil
	}
	mu.Lock()
	why := stopped
	mu.Unlock()
	if why == "" {
		why = "it ended: " + childEnd(waitErr, stderr.String())
	}
	what, file := "the users' rules", ""
	if current.Rule != "" {
		what = "rule " + current.Rule
		if r, ok := e.Rule(current.Rule); ok {
			what, file = fmt.Sprintf("rule %s (%s)", r.ID, strings.TrimPrefix(r.Package, "data.")), r.File
		}
	}
	return nil, &PolicyError{Problems: []Problem{{File: file, Message: fmt.Sprintf("%s stopped the policy sandbox: %s", what, why)}},
		cause: ErrSandbox}
}

// ErrSandbox is wrapped by the PolicyError of a users' rule whose sandbox was stopped.
var ErrSandbox = errors.New("the policy sandbox was stopped")

// watchSandbox stops the child when its resident memory passes limit (read every 5 ms
// from /proc), when ctx ends, or when it says nothing for longer than the policy timeout
// and a second: each evaluation in the child has that deadline, and the compilation of the
// rules, which has none of its own (a chain of 10,000 rules takes 10 s), gets it here.
// heard is told of every message.
func watchSandbox(ctx context.Context, pid int, limit uint64, timeout time.Duration, heard <-chan struct{}, done <-chan struct{}, stop func(string)) {
	tick := time.NewTicker(memguard.Interval)
	defer tick.Stop()
	idle := timeout + time.Second
	var deadline <-chan time.Time
	var timer *time.Timer
	if timeout > 0 {
		timer = time.NewTimer(idle)
		defer timer.Stop()
		deadline = timer.C
	}
	compiled := false
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			stop("the check was stopped")
			return
		case <-heard:
			compiled = true
			if timer != nil {
				timer.Reset(idle)
			}
			continue
		case <-deadline:
			what := "an evaluation"
			if !compiled {
				what = "compiling the rules"
			}
			stop(fmt.Sprintf("%s took longer than the policy timeout of %s", what, timeout))
			return
		case <-tick.C:
		}
		if rss, ok := residentBytes(pid); ok && rss > limit {
			// Not how much it used: that differs at every run, and a Sync retried every
			// 30 s would write its status and an Event each time its message changed.
			stop(fmt.Sprintf("it used memory over its limit of %s", memguard.Bytes(limit)))
			return
		}
	}
}

// residentBytes is a process's resident memory, from /proc/<pid>/statm.
func residentBytes(pid int) (uint64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(data)
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseUint(string(f[1]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}

// childEnd says how a child ended that did not finish: its exit and the first line of
// what it wrote to stderr ("fatal error: out of memory").
func childEnd(err error, stderr string) string {
	msg := "it stopped before it finished"
	if err != nil {
		msg = err.Error()
	}
	for _, line := range strings.Split(stderr, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "runtime:") {
			return msg + ": " + line
		}
	}
	return msg
}

func defaultSandboxCommand() *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), SandboxEnv+"=1")
	return cmd
}

// limitedBuffer keeps the first bytes written to it.
type limitedBuffer struct {
	b    *bytes.Buffer
	left int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if l.left > 0 {
		keep := p[:min(len(p), l.left)]
		l.b.Write(keep)
		l.left -= len(keep)
	}
	return n, nil
}
