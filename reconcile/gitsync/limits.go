package gitsync

import (
	"fmt"

	"github.com/olmsync/olmsync/check"
	"github.com/olmsync/olmsync/internal/memguard"
	"github.com/olmsync/olmsync/policy"
	"github.com/olmsync/olmsync/render"
)

// BoundedChecks are the options of every Sync's build under olmsync run: base (the policy
// deadline, the global catalog namespace) with what bounds one repository's cost to the
// process, so that whatever a repository holds fails that Sync (BuildFailed) and not every
// Sync of the process. Each of the workers builds that run at once (Options.MaxConcurrentReconciles)
// may read a workers-th share of the YAML budget of the memory ceiling — memoryLimit
// (--memory-limit; 0 for none), or what the address-space or cgroup limit leaves when that
// is less (memguard.Effective) —, and users' rules are evaluated in a policy sandbox, a
// child process stopped past its memory. olmsync run and the tests build with it.
func BoundedChecks(base check.Options, memoryLimit uint64, workers int) check.Options {
	ceiling := memguard.Effective(memoryLimit, "--memory-limit "+memguard.Bytes(memoryLimit))
	if workers <= 0 {
		workers = DefaultMaxConcurrentReconciles // as SetupWithManager
	}
	opts := base
	if opts.PolicySandbox == nil {
		opts.PolicySandbox = &policy.Sandbox{}
	}
	opts.Render.NodeBudget = render.NodeBudgetFor(ceiling.Bytes) / int64(workers)
	opts.Render.NodeBudgetFrom = fmt.Sprintf("a %d-th share (--concurrent %d) of the memory ceiling of %s", workers, workers, ceiling)
	return opts
}
