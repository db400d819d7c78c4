package policy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"
	"sync/atomic"
)

// compiled is the rules compiled and their queries prepared: what an Engine evaluates, the
// same for every Engine made from the same sources, and never changed once made.
type compiled struct {
	queries []ruleQuery
	// libraryQueries are queries of the rules marked for library roots alone, which a
	// library root's input is evaluated with.
	libraryQueries []ruleQuery
	rules          []Rule
	// fingerprint is the digest of the rules' sources, built-in and users' (the
	// FindingsCache's keys start with it).
	fingerprint string
}

// CompileCache keeps compiled rules by the digest of their sources, built-in and users',
// so that an Engine made again from the same rules — the reconciler makes one for every
// Sync and revision, and most leave the rules as they were — is not parsed and compiled
// again, which is most of what New costs. Engines made at once from the same rules wait
// for one compilation. A rule that fails to compile is never kept. It holds the last
// MaxCompiled sets of rules. Safe for concurrent use; make one with NewCompileCache. A nil
// *CompileCache keeps nothing.
type CompileCache struct {
	mu      sync.Mutex
	entries map[string]*compiling
	order   []string // the keys, oldest first
	// Hits and Misses count lookups, for tests and benchmarks.
	Hits, Misses atomic.Int64
}

// compiling is one set of rules in the cache: done is closed once made or err is set.
type compiling struct {
	done chan struct{}
	made *compiled
	err  error
}

// MaxCompiled is how many sets of rules a CompileCache holds: the built-in rules alone
// (every Sync without rules of its own) and those of the repositories with rules.
const MaxCompiled = 16

// NewCompileCache returns an empty cache.
func NewCompileCache() *CompileCache {
	return &CompileCache{entries: map[string]*compiling{}}
}

// compile returns the rules of user files with the built-in ones compiled: kept ones
// when the sources are byte for byte those of a kept set, or of one being compiled.
func (c *CompileCache) compile(ctx context.Context, user []regoFile, sandboxed bool) (*compiled, error) {
	key := sourceDigest(user)
	if sandboxed {
		key += "+sandboxed"
	}
	if c == nil {
		return compile(ctx, key, user, sandboxed)
	}
	c.mu.Lock()
	if kept, ok := c.entries[key]; ok {
		c.mu.Unlock()
		select {
		case <-kept.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if kept.err != nil {
			// Its compilation failed (its context may have ended): this one compiles.
			c.Misses.Add(1)
			return compile(ctx, key, user, sandboxed)
		}
		c.Hits.Add(1)
		return kept.made, nil
	}
	mine := &compiling{done: make(chan struct{})}
	if len(c.order) == MaxCompiled {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
	c.entries[key] = mine
	c.order = append(c.order, key)
	c.mu.Unlock()
	c.Misses.Add(1)

	mine.made, mine.err = compile(ctx, key, user, sandboxed)
	close(mine.done)
	if mine.err != nil {
		c.mu.Lock()
		if c.entries[key] == mine {
			delete(c.entries, key)
			c.order = slices.DeleteFunc(c.order, func(k string) bool { return k == key })
		}
		c.mu.Unlock()
	}
	return mine.made, mine.err
}

// sourceDigest is the digest of the built-in rules' files and the users', names and bytes.
func sourceDigest(user []regoFile) string {
	return digest([]byte(builtinDigest()), user)
}

// builtinFiles are the built-in rules' files, read once: they are embedded in the binary.
var builtinFiles = sync.OnceValue(func() []regoFile {
	files, problems := readFolder(PolicySource{Root: builtinRoot, FS: builtinFS}, false)
	if len(problems) > 0 {
		panic(problems) // embedded at build time: unreadable only in a broken build
	}
	return files
})

// builtinDigest is the digest of builtinFiles, the start of every sourceDigest.
var builtinDigest = sync.OnceValue(func() string { return digest(nil, builtinFiles()) })

// digest hashes prefix, then each file's name and bytes.
func digest(prefix []byte, files []regoFile) string {
	h := sha256.New()
	h.Write(prefix)
	for _, f := range files {
		h.Write([]byte(f.name))
		h.Write([]byte{0})
		h.Write(f.data)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
