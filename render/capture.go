package render

import (
	"bufio"
	"io"
	"log"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// kustomize prints outside its return values in two ways:
//
//   - the deprecation warnings of a kustomization (bases, commonLabels, vars...) go to
//     os.Stderr with fmt.Fprintf, once per kustomization per build — for a base shared by
//     fifty apps, fifty times;
//   - a few messages go through the standard log package ("well-defined vars that were
//     never replaced", the git:: prefix warning).
//
// olmsync reports the deprecations itself, once per file (see plan.noteDeprecations), so
// while it builds, kustomize's stderr copies are dropped. os.Stderr and the standard
// logger are process-wide, so they are redirected once for all builds running at the same
// time (reference-counted), never per build; everything that is not a known kustomize
// deprecation is forwarded unchanged to the real stderr and logger. Builds whose
// messages must be attributed (those with vars) run alone (see plan.exclusive), so a line
// that arrives while one runs is that build's.
//
// Nothing is redirected for a render that needs none of it (see needsCapture).
var stray = &outputCapture{}

type outputCapture struct {
	mu    sync.Mutex
	users int

	origStderr *os.File
	origLog    io.Writer
	pipeW      *os.File
	readerDone chan struct{}

	// sink collects the lines of the build running alone, if any.
	sink atomic.Pointer[lineSink]

	syncMu   sync.Mutex
	syncSeq  int
	syncWait map[string]chan struct{}
}

// lineSink collects the lines of one build.
type lineSink struct {
	mu    sync.Mutex
	lines []string
}

func (s *lineSink) add(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines = append(s.lines, line)
}

func (s *lineSink) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...)
}

// syncMarker is written through the stderr pipe to know that every earlier line has been
// read. It cannot be confused with output: it starts with a NUL byte.
const syncMarker = "\x00olmsync-stderr-sync-"

// acquire starts redirecting (if no build is redirecting yet) and returns the function
// that ends it for this caller.
func (c *outputCapture) acquire() (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.users == 0 {
		if err := c.start(); err != nil {
			return nil, err
		}
	}
	c.users++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.users--
			if c.users == 0 {
				c.stop()
			}
		})
	}, nil
}

func (c *outputCapture) start() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	c.origStderr, c.origLog, c.pipeW = os.Stderr, log.Writer(), w
	c.readerDone = make(chan struct{})
	c.syncWait = map[string]chan struct{}{}
	go c.readStderr(r, c.origStderr)
	os.Stderr = w
	log.SetOutput(logWriter{c})
	return nil
}

func (c *outputCapture) stop() {
	os.Stderr = c.origStderr
	log.SetOutput(c.origLog)
	_ = c.pipeW.Close()
	<-c.readerDone
}

// readStderr drops kustomize's deprecation lines and forwards the rest.
func (c *outputCapture) readStderr(r *os.File, forward io.Writer) {
	defer close(c.readerDone)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, syncMarker); ok {
			c.syncMu.Lock()
			if ch := c.syncWait[id]; ch != nil {
				close(ch)
				delete(c.syncWait, id)
			}
			c.syncMu.Unlock()
			continue
		}
		if kustomizeDeprecationLines[line] {
			continue
		}
		if s := c.sink.Load(); s != nil {
			s.add(line)
			continue
		}
		_, _ = io.WriteString(forward, line+"\n")
	}
	// Unblock anyone still waiting for a marker (the pipe is closed).
	c.syncMu.Lock()
	for id, ch := range c.syncWait {
		close(ch)
		delete(c.syncWait, id)
	}
	c.syncMu.Unlock()
}

// flushStderr waits until every line written to the pipe so far has been read.
func (c *outputCapture) flushStderr() {
	c.syncMu.Lock()
	c.syncSeq++
	id := strconv.Itoa(c.syncSeq)
	ch := make(chan struct{})
	c.syncWait[id] = ch
	c.syncMu.Unlock()
	if _, err := io.WriteString(c.pipeW, syncMarker+id+"\n"); err != nil {
		return
	}
	<-ch
}

// collect runs fn with every line kustomize prints (other than deprecations) collected
// and returned. The caller guarantees no other build runs meanwhile.
func (c *outputCapture) collect(fn func()) []string {
	c.mu.Lock()
	active := c.users > 0
	c.mu.Unlock()
	if !active {
		fn()
		return nil
	}
	s := &lineSink{}
	c.sink.Store(s)
	defer c.sink.Store(nil)
	fn()
	c.flushStderr()
	return s.all()
}

// logWriter receives the standard logger's output while builds run.
type logWriter struct{ c *outputCapture }

// logPrefixRE matches the date and time the standard logger puts before a message.
var logPrefixRE = regexp.MustCompile(`^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}(\.\d+)? `)

func (w logWriter) Write(p []byte) (int, error) {
	if s := w.c.sink.Load(); s != nil {
		for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
			line = strings.TrimPrefix(line, log.Prefix())
			s.add(logPrefixRE.ReplaceAllString(line, ""))
		}
		return len(p), nil
	}
	return w.c.origLog.Write(p)
}
