package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/olmsync/olmsync/olm/semverrange"
)

// OrderFailure says why a channel has no order.
type OrderFailure string

// The three ways OLM's resolver fails to order a channel.
const (
	OrderNoHeads        OrderFailure = "NoHeads"
	OrderCycle          OrderFailure = "Cycle"
	OrderMultipleChains OrderFailure = "MultipleChains"
)

// ChannelOrderError is why a channel cannot be ordered, with OLM's exact message. At
// runtime OLM reports it on the Subscription as ErrorPreventedResolution.
type ChannelOrderError struct {
	Package string
	Channel string
	Failure OrderFailure
	// Head is the head whose replacement chain has a cycle (OrderCycle).
	Head string
	// Chains summarise each chain found, "head...tail" (OrderMultipleChains).
	Chains []string
}

// Error is OLM's own message for the failure.
func (e *ChannelOrderError) Error() string {
	switch e.Failure {
	case OrderNoHeads:
		return fmt.Sprintf("no channel heads (entries not replaced by another entry) found in channel %q of package %q", e.Channel, e.Package)
	case OrderCycle:
		return fmt.Sprintf("a cycle exists in the chain of replacement beginning with %q in channel %q of package %q", e.Head, e.Channel, e.Package)
	default:
		return fmt.Sprintf("a unique replacement chain within a channel is required to determine the relative order between channel entries, but %d replacement chains were found in channel %q of package %q: %s",
			len(e.Chains), e.Channel, e.Package, strings.Join(e.Chains, ", "))
	}
}

// Order returns the channel's entries in the order OLM's resolver prefers them (its
// sortChannel): the head first, then down the replaces chain. An entry is replaced when
// another entry of the channel replaces or skips it; the one entry nothing replaces is the
// head. Entries named in some entry's skips are dropped from the order (they can never be
// picked as a new install or a dependency), although the walk passes through them; entries
// the head's chain never reaches are ignored. Edges to names outside the channel count for
// nothing. A channel without a head, with a cycle, or with more than one chain is an error
// (*ChannelOrderError) carrying OLM's message.
func (c *Channel) Order() ([]ChannelEntry, error) {
	if len(c.Entries) == 0 {
		return nil, nil
	}
	lookup := make(map[string]int, len(c.Entries)) // a name given twice: the last one, as OLM's map does
	for i, e := range c.Entries {
		lookup[e.Name] = i
	}
	replacedBy := make(map[int]bool, len(c.Entries))
	replaces := make(map[int]int, len(c.Entries))
	skipped := make(map[string]bool)
	for i, e := range c.Entries {
		if r, ok := lookup[e.Replaces]; ok && e.Replaces != "" {
			replacedBy[r] = true
			replaces[i] = r
		}
		for _, s := range e.Skips {
			if r, ok := lookup[s]; ok {
				replacedBy[r] = true
				skipped[s] = true
			}
		}
	}

	var heads []int
	for i := range c.Entries {
		if !replacedBy[i] {
			heads = append(heads, i)
		}
	}
	if len(heads) == 0 {
		return nil, &ChannelOrderError{Package: c.Package, Channel: c.Name, Failure: OrderNoHeads}
	}

	chains := make([][]ChannelEntry, 0, len(heads))
	for _, head := range heads {
		var chain []ChannelEntry
		visited := map[int]bool{}
		for cur := head; ; {
			visited[cur] = true
			if !skipped[c.Entries[cur].Name] {
				chain = append(chain, c.Entries[cur])
			}
			next, ok := replaces[cur]
			if !ok {
				break
			}
			if visited[next] {
				return nil, &ChannelOrderError{Package: c.Package, Channel: c.Name, Failure: OrderCycle, Head: c.Entries[head].Name}
			}
			cur = next
		}
		chains = append(chains, chain)
	}
	if len(chains) > 1 {
		e := &ChannelOrderError{Package: c.Package, Channel: c.Name, Failure: OrderMultipleChains}
		for _, chain := range chains {
			e.Chains = append(e.Chains, summariseChain(chain))
		}
		return nil, e
	}
	return chains[0], nil
}

// summariseChain writes a chain as OLM does in its error: "head...tail", the one name,
// or "[]" for a chain whose every entry is skipped.
func summariseChain(chain []ChannelEntry) string {
	switch len(chain) {
	case 0:
		return "[]"
	case 1:
		return chain[0].Name
	default:
		return chain[0].Name + "..." + chain[len(chain)-1].Name
	}
}

// CanReplace reports whether the entry is an upgrade from the installed CSV named name at
// version (nil when unknown), by OLM's three predicates: the entry replaces it, skips it,
// or has a skipRange containing its version. A skipRange that does not parse matches
// nothing, as OLM's resolver silently ignores it (validation reports it).
func (e ChannelEntry) CanReplace(name string, version *semver.Version) bool {
	if name != "" && (e.Replaces == name || slices.Contains(e.Skips, name)) {
		return true
	}
	if e.SkipRange == "" || version == nil {
		return false
	}
	r, err := semverrange.Parse(e.SkipRange)
	return err == nil && r(*version)
}
