package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/olmsync/olmsync/internal/memguard"
	"github.com/olmsync/olmsync/policy"
)

// defaultMemoryLimit is --memory-limit's default (memguard.DefaultLimit), as the flag
// reads it.
var defaultMemoryLimit = memguard.Bytes(memguard.DefaultLimit)

// limitFlags bound what one check may cost: the deadline of each policy evaluation and,
// for `check`, the process's memory.
type limitFlags struct {
	policyTimeout time.Duration
	memoryLimit   string
}

func (f *limitFlags) registerTimeout(fl *pflag.FlagSet) {
	fl.DurationVar(&f.policyTimeout, "policy-timeout", policy.DefaultTimeout,
		"the longest one evaluation of the rules over one cluster may take (the built-in rules together, each package of your rules on its own); a rule that runs past it is an error naming it")
}

func (f *limitFlags) registerMemory(fl *pflag.FlagSet) {
	fl.StringVar(&f.memoryLimit, "memory-limit", defaultMemoryLimit,
		`the memory the check may use (a Kubernetes quantity: 512Mi, 2Gi; "0" for no limit): near it the collector works harder, and past 90% of it the check stops, naming the rule it was evaluating`)
}

// guardMemory puts the command under its memory ceiling — --memory-limit, or what the
// process's address-space or cgroup limit leaves when that is less (memguard.Effective) —:
// the runtime's soft limit, and a watch that cancels the command's context, with the
// ceiling as its cause, when the heap passes 90% of it. The returned function stops the
// watch and says, on an error that the ceiling caused, what stopped the check.
func (f *limitFlags) guardMemory(cmd *cobra.Command) (ceiling memguard.Ceiling, done func(error) error, err error) {
	limit, err := parseMemoryLimit(f.memoryLimit)
	if err != nil {
		return ceiling, nil, err
	}
	ceiling = memguard.Effective(limit, "--memory-limit "+memguard.Bytes(limit))
	ctx, cancel := context.WithCancelCause(cmd.Context())
	cmd.SetContext(ctx)
	stop := memguard.Watch(ceiling.Bytes, func(e *memguard.ExceededError) { cancel(e) })
	return ceiling, func(err error) error {
		stop()
		defer cancel(nil)
		var exceeded *memguard.ExceededError
		if err == nil || !errors.As(context.Cause(ctx), &exceeded) || errors.As(err, &exceeded) {
			return err
		}
		return fmt.Errorf("%w (stopped: %w, set by %s; raise it)", err, exceeded, ceiling.From)
	}, nil
}

func parseMemoryLimit(s string) (uint64, error) {
	q, err := resource.ParseQuantity(strings.TrimSpace(s))
	if err != nil || q.Sign() < 0 {
		return 0, fmt.Errorf("--memory-limit %q: want a size such as 512Mi or 2Gi, or 0", s)
	}
	return uint64(q.Value()), nil
}

// sandboxMemory is what the users' rules of a check may use in their sandbox: half the
// check's ceiling, at least 256 MiB, or the sandbox's default without a ceiling.
func sandboxMemory(c memguard.Ceiling) uint64 {
	if c.Bytes == 0 {
		return 0
	}
	return max(c.Bytes/2, 256<<20)
}
